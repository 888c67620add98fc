import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pinger } from '../../../src/net/icmp/index.js';
import {
  CLOSED_PING_GROUP_RANGE,
  icmpAddonBuilt,
  iputilsAverageRttMs,
  OPEN_PING_GROUP_RANGE,
  pingGroupRangeWritable,
  setPingGroupRange,
} from '../../helpers/icmp.js';
import { commandWorks, ipv6Missing, missingRequirement } from '../../helpers/requirements.js';

const missing = missingRequirement([
  { ok: icmpAddonBuilt(), what: 'the native ICMP addon', install: 'npm rebuild (needs python3, make, gcc)' },
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW)', install: 'run the tests as root' },
  { ok: pingGroupRangeWritable(), what: 'write access to net.ipv4.ping_group_range', install: 'run as root' },
  { ok: commandWorks('ping', ['-V']), what: 'iputils ping', install: 'apt-get install iputils-ping' },
]);
const ipv6 = missing === null && !ipv6Missing();

function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {}
}

describe.skipIf(missing !== null).each([
  { kind: 'raw', range: CLOSED_PING_GROUP_RANGE },
  { kind: 'datagram', range: OPEN_PING_GROUP_RANGE },
] as const)('Pinger over $kind sockets', ({ kind, range }) => {
  let restore: () => void;
  let pinger: Pinger;
  beforeAll(() => {
    restore = setPingGroupRange(range);
    pinger = new Pinger();
  });
  afterAll(() => {
    pinger.close();
    restore();
  });

  it('pings 127.0.0.1 and reports the socket kind, RTT and TTL of each reply', async () => {
    const outcome = await pinger.ping({ address: '127.0.0.1', family: 4, count: 3, intervalMs: 10 });

    expect(outcome.socketType).toBe(kind);
    expect(outcome.replies.map((r) => r.sequence)).toEqual([1, 2, 3]);
    for (const reply of outcome.replies) {
      expect(reply).toMatchObject({ success: true, ttl: 64, sendError: null });
      expect(reply.rttMs).toBeGreaterThan(0);
      expect(reply.rttMs).toBeLessThan(10);
    }
  });

  it.skipIf(!ipv6)('pings ::1 and reports the hop limit', async () => {
    const outcome = await pinger.ping({ address: '::1', family: 6, count: 2, intervalMs: 10 });

    expect(outcome.socketType).toBe(kind);
    expect(outcome.replies.map((r) => [r.success, r.ttl])).toEqual([
      [true, 64],
      [true, 64],
    ]);
  });

  it('runs many concurrent pings over one socket without mixing their replies', async () => {
    const targets = Array.from(
      { length: 250 },
      (_, i) => `127.0.${1 + Math.floor(i / 200)}.${1 + (i % 200)}`,
    );
    // 20 runs to the same address at once: only the sequence numbers keep them apart.
    const addresses = [...targets, ...Array.from({ length: 20 }, () => '127.0.0.1')];

    const outcomes = await Promise.all(
      addresses.map((address) =>
        pinger.ping({ address, family: 4, count: 3, intervalMs: 5, timeoutMs: 2000 }),
      ),
    );

    const received = outcomes.flatMap((o) => o.replies).filter((r) => r.success).length;
    expect(received).toBe(addresses.length * 3);
  });

  it('measures RTT on the kernel clock, not when the busy event loop reads the reply', async () => {
    const run = pinger.ping({ address: '127.0.0.1', family: 4, count: 1 });
    busyWait(60);

    const [reply] = (await run).replies;

    expect(reply?.success).toBe(true);
    expect(reply?.rttMs).toBeLessThan(5);
  });

  it('agrees with iputils ping on the average RTT to 127.0.0.1 within 0.5 ms', async () => {
    const ours = await pinger.ping({ address: '127.0.0.1', family: 4, count: 20, intervalMs: 20 });
    const theirs = iputilsAverageRttMs('127.0.0.1', 20, 0.02);

    const rtts = ours.replies.map((r) => r.rttMs ?? Number.NaN);
    const average = rtts.reduce((a, b) => a + b, 0) / rtts.length;
    expect(Math.abs(average - theirs)).toBeLessThan(0.5);
  });

  it('rejects with OUTPOST_ERR_ABORTED when the signal aborts, and stops sending', async () => {
    const started = performance.now();
    const run = pinger.ping({
      address: '127.0.0.1',
      family: 4,
      count: 10,
      intervalMs: 1000,
      signal: AbortSignal.timeout(50),
    });

    await expect(run).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe.skipIf(missing !== null)('Pinger without a usable socket', () => {
  let restore: () => void;
  beforeAll(() => {
    restore = setPingGroupRange(CLOSED_PING_GROUP_RANGE);
  });
  afterAll(() => restore());

  it('names what to grant when no datagram socket is allowed', async () => {
    const pinger = new Pinger({ socketPreference: 'datagram' });

    const run = pinger.ping({ address: '127.0.0.1', family: 4 });

    await expect(run).rejects.toMatchObject({
      code: 'OUTPOST_ERR_ICMP_SOCKET',
      message: expect.stringMatching(/ping_group_range="0 2147483647".*CAP_NET_RAW.*--cap-add NET_RAW/),
    });
    pinger.close();
  });

  it('survives close() from the continuation of a ping, which runs inside the receive callback', () => {
    const root = join(import.meta.dirname, '..', '..', '..');
    const script = join(root, 'test', 'helpers', 'close-after-ping.ts');

    const child = spawnSync(join(root, 'node_modules', '.bin', 'tsx'), [script], {
      encoding: 'utf8',
      timeout: 30_000,
    });

    expect({ status: child.status, signal: child.signal, stdout: child.stdout.trim() }).toEqual({
      status: 0,
      signal: null,
      stdout: 'closed',
    });
  });

  it('rejects runs in flight when closed', async () => {
    const pinger = new Pinger({ socketPreference: 'raw' });
    const run = pinger.ping({ address: '127.0.0.1', family: 4, count: 5, intervalMs: 1000 });

    pinger.close();

    await expect(run).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
  });

  it('rejects bad options with the option name', async () => {
    const pinger = new Pinger({ socketPreference: 'raw' });
    await expect(pinger.ping({ address: '127.0.0.1', family: 4, count: 0 })).rejects.toThrow(
      /^count must be/,
    );
    await expect(pinger.ping({ address: 'example.com', family: 4 })).rejects.toThrow(
      /^address must be a numeric/,
    );
    await expect(pinger.ping({ address: '::1', family: 4 })).rejects.toThrow(/IPv4/);
    pinger.close();
  });
});
