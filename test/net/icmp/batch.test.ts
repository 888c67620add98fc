import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IcmpAddon, loadIcmpAddon, OPEN_FLAGS } from '../../../src/net/icmp/addon.js';
import { Pinger, type PingOutcome } from '../../../src/net/icmp/index.js';
import { ProbeSocket } from '../../../src/net/traceroute/probe-socket.js';
import {
  CLOSED_PING_GROUP_RANGE,
  icmpAddonBuilt,
  OPEN_PING_GROUP_RANGE,
  pingGroupRangeWritable,
  setPingGroupRange,
} from '../../helpers/icmp.js';
import { createTestHost, startDelayedResponder, type TestHost } from '../../helpers/netns.js';
import { commandWorks, missingRequirement, netnsWorks } from '../../helpers/requirements.js';

const missing = missingRequirement([
  { ok: icmpAddonBuilt(), what: 'the native ICMP addon', install: 'npm rebuild (needs python3, make, gcc)' },
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW)', install: 'run the tests as root' },
  { ok: pingGroupRangeWritable(), what: 'write access to net.ipv4.ping_group_range', install: 'run as root' },
  {
    ok: netnsWorks(),
    what: 'network namespaces with nftables',
    install: 'apt-get install iproute2 nftables; run as root',
  },
  {
    ok: commandWorks('fping', ['--version']),
    what: 'fping (another pinger on the host)',
    install: 'apt-get install fping',
  },
]);

/** One echo request as the addon sent it. */
type SentRequest = { address: string; txMs: number };

/** Hooks into the real addon's batch calls, run before the addon does its part. */
type AddonHooks = {
  /** Before each sendEchoes call, with the addresses it is about to send to. */
  beforeSend?: (addresses: readonly string[]) => void;
  /** Before each batch of replies reaches the socket (a socket without batches: each message, as one). */
  beforeReplies?: (count: number) => void;
};

/**
 * The real addon, recording every echo request it sent (address, send time) and every
 * sendEchoes call, with `hooks` run inside those calls.
 */
function recordingAddon(hooks: AddonHooks = {}): { addon: IcmpAddon; sent: SentRequest[]; calls: number[] } {
  const real = loadIcmpAddon();
  const sent: SentRequest[] = [];
  const calls: number[] = [];
  const addon: IcmpAddon = {
    ...real,
    open: ((family, preference, receiveType, listener, flags) =>
      real.open(
        family,
        preference,
        receiveType,
        flags === OPEN_FLAGS.batch
          ? (count: number) => {
              hooks.beforeReplies?.(count);
              (listener as (count: number) => void)(count);
            }
          : (((...args: unknown[]) => {
              hooks.beforeReplies?.(1);
              (listener as (...a: unknown[]) => void)(...args);
            }) as typeof listener),
        flags,
      )) as IcmpAddon['open'],
    sendEchoes(socket, type, identifier, payloadBytes, addresses, sequences, count, txMs, errors, words) {
      hooks.beforeSend?.(addresses.slice(0, count));
      real.sendEchoes(
        socket,
        type,
        identifier,
        payloadBytes,
        addresses,
        sequences,
        count,
        txMs,
        errors,
        words,
      );
      calls.push(count);
      for (let i = 0; i < count; i++) {
        if (errors[i] === 0) sent.push({ address: addresses[i]!, txMs: txMs[i]! });
      }
    },
  };
  return { addon, sent, calls };
}

/** `count` distinct loopback addresses of 127.3.0.0/16 (all answered by lo). */
function loopbackAddresses(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `127.3.${Math.floor(i / 250)}.${1 + (i % 250)}`);
}

describe.skipIf(missing !== null).each([
  { kind: 'raw', range: CLOSED_PING_GROUP_RANGE },
  { kind: 'datagram', range: OPEN_PING_GROUP_RANGE },
] as const)('batched echo requests over $kind sockets', ({ kind, range }) => {
  let restore: () => void;
  let host: TestHost;
  beforeAll(() => {
    restore = setPingGroupRange(range);
    host = createTestHost();
  });
  afterAll(() => {
    host?.destroy();
    restore?.();
  });

  it('sends a batch through the addon: a bad address fails its request only, short arrays are refused', async () => {
    const addon = loadIcmpAddon();
    let replies = 0;
    const opened = addon.open(
      4,
      kind === 'raw' ? 2 : 1,
      0,
      (count) => {
        replies += count;
      },
      OPEN_FLAGS.batch,
    );
    try {
      const identifier = opened.identifier ?? 4242;
      const addresses = ['127.0.0.1', 'not an address', '127.0.0.2'];
      const sequences = Int32Array.from([1, 2, 3]);
      const txMs = new Float64Array(3);
      const errors = new Int32Array(3);
      const words = new Float64Array(12);

      addon.sendEchoes(opened.socket, 8, identifier, 56, addresses, sequences, 3, txMs, errors, words);

      expect([...errors]).toEqual([0, 22, 0]); // EINVAL for the one that is not an address
      expect(words[0]).toBe(0x7f000001);
      expect(words[8]).toBe(0x7f000002);
      expect(txMs[2]).toBeGreaterThanOrEqual(txMs[0]!);
      await expect
        .poll(() => {
          addon.receive(opened.socket);
          return replies;
        })
        .toBeGreaterThanOrEqual(2);
      expect(() =>
        addon.sendEchoes(
          opened.socket,
          8,
          identifier,
          56,
          addresses,
          sequences,
          3,
          txMs,
          errors,
          new Float64Array(8),
        ),
      ).toThrow(RangeError);
      expect(() =>
        addon.sendEchoes(opened.socket, 8, identifier, 56, addresses, sequences, 4, txMs, errors, words),
      ).toThrow(RangeError);
    } finally {
      addon.close(opened.socket);
    }
  });

  it('matches replies that come out of order and twice to the right run and request', async () => {
    // The responder answers after (payload - 56) ms, and once more 1 ms later. Runs of four
    // payload sizes share one address: only the sequence numbers keep their replies apart,
    // and replies to later requests of the short-delay runs overtake the long-delay ones.
    await startDelayedResponder(host, [], ['--delay-from-size=56', '--duplicate-after=1']);
    const pinger = new Pinger({ socketPreference: kind });
    const delaysMs = [0, 100, 200, 300];
    try {
      const runs = Array.from({ length: 40 }, (_, i) => delaysMs[i % delaysMs.length]!);
      const outcomes = await Promise.all(
        runs.map((delayMs) =>
          pinger.ping({
            address: host.peerAddress,
            family: 4,
            count: 4,
            intervalMs: 5,
            timeoutMs: 2000,
            payloadSizeBytes: 56 + delayMs,
          }),
        ),
      );

      expect(outcomes[0]!.socketType).toBe(kind);
      for (const [i, outcome] of outcomes.entries()) {
        const delayMs = runs[i]!;
        expect(outcome.replies.map((r) => r.sequence)).toEqual([1, 2, 3, 4]);
        for (const reply of outcome.replies) {
          expect(reply).toMatchObject({ success: true, sendError: null });
          // Another run's reply would be 100 ms or more off; the responder's timer may fire
          // up to a millisecond early, and late on a loaded machine.
          expect(reply.rttMs!).toBeGreaterThanOrEqual(delayMs - 1);
          expect(reply.rttMs!).toBeLessThan(delayMs + 99);
        }
      }
    } finally {
      pinger.close();
    }
  });

  it('keeps the interval of every run sharing the pacing scheduler, and starves none', async () => {
    const recording = recordingAddon();
    const pinger = new Pinger({ socketPreference: kind, addon: recording.addon });
    const addresses = loopbackAddresses(300);
    const intervalsMs = [5, 10, 20, 35];
    const count = 6;
    try {
      const outcomes = await Promise.all(
        addresses.map((address, i) =>
          pinger.ping({ address, family: 4, count, intervalMs: intervalsMs[i % intervalsMs.length]! }),
        ),
      );

      expect(outcomes.flatMap((o) => o.replies).every((r) => r.success)).toBe(true);
      for (const [i, address] of addresses.entries()) {
        const intervalMs = intervalsMs[i % intervalsMs.length]!;
        const times = recording.sent.filter((s) => s.address === address).map((s) => s.txMs);
        expect(times).toHaveLength(count);
        for (let k = 1; k < count; k++) {
          const gapMs = times[k]! - times[k - 1]!;
          expect(gapMs).toBeGreaterThanOrEqual(intervalMs - 0.001);
          // Late by the time a batch takes and the event loop's delays on a loaded machine, no more.
          expect(gapMs).toBeLessThan(intervalMs + 60);
        }
      }
      // Shared batches: far fewer native calls than requests.
      expect(recording.calls.length).toBeLessThan((addresses.length * count) / 4);
    } finally {
      pinger.close();
    }
  });

  it('sends thousands of requests due at once over several event-loop turns, not in one', async () => {
    // A repeating setImmediate counts the event loop's turns; each native send call notes the turn.
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const perTurn = new Map<number, number>();
    const recording = recordingAddon({
      beforeSend: (batch) => perTurn.set(turn, (perTurn.get(turn) ?? 0) + batch.length),
    });
    const pinger = new Pinger({ socketPreference: kind, addon: recording.addon });
    try {
      const outcomes = await Promise.all(
        loopbackAddresses(3000).map((address) => pinger.ping({ address, family: 4, count: 1 })),
      );

      expect(outcomes.every((o) => o.replies[0]!.success)).toBe(true);
      expect(recording.sent).toHaveLength(3000);
      expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(1024);
    } finally {
      ticking = false;
      pinger.close();
    }
  });

  it("never takes in another pinger's echo replies, even while the event loop is blocked", async () => {
    // A raw socket receives every ICMP message of the host. fping's 3,000 replies arrive while this event loop
    // waits in spawnSync: queued, they would fill the socket's 1 MB buffer (about 3 MB of them) and the
    // kernel would drop our next replies, which checks would report as packet loss.
    let records = 0;
    const recording = recordingAddon({
      beforeReplies: (count) => {
        records += count;
      },
    });
    const pinger = new Pinger({ socketPreference: kind, addon: recording.addon });
    try {
      const opened = await pinger.ping({ address: '127.0.0.1', family: 4, count: 1 });
      expect(opened.replies[0]!.success).toBe(true);
      records = 0;
      const foreign = loopbackAddresses(1000);
      const fping = spawnSync('fping', ['-c', '3', '-q', '-p', '10', '-i', '0', '-t', '1000', ...foreign], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(fping.error).toBeUndefined();
      expect(fping.stderr).toContain(`${foreign[999]} : xmt/rcv/%loss = 3/3/0%`);

      const ours = await Promise.all(
        loopbackAddresses(64).map((address) => pinger.ping({ address, family: 4, count: 1 })),
      );

      expect(ours.flatMap((o) => o.replies).filter((r) => !r.success)).toEqual([]);
      // Only our 64 replies ever reached the socket's records: the kernel dropped fping's.
      expect(records).toBe(64);
    } finally {
      pinger.close();
    }
  });

  it("a route tracer's socket hears none of another pinger's replies either", async () => {
    let heard = 0;
    const recording = recordingAddon({
      beforeReplies: (count) => {
        heard += count;
      },
    });
    const socket = new ProbeSocket(recording.addon, 4, 'icmp', kind === 'raw' ? 2 : 1);
    try {
      expect(socket.kind).toBe(kind);
      const fping = spawnSync(
        'fping',
        ['-c', '2', '-q', '-p', '10', '-i', '0', '-t', '1000', ...loopbackAddresses(300)],
        {
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(fping.stderr).toContain('xmt/rcv/%loss = 2/2/0%');
      socket.flush();
      expect(heard).toBe(0);
      // Its own probe is still answered.
      const answer = await new Promise((resolve) => socket.send('127.0.0.1', 64, 2000, resolve));
      expect(answer).toMatchObject({ kind: 'reply', address: '127.0.0.1' });
      expect(heard).toBe(1);
    } finally {
      socket.close();
    }
  });

  it('stops runs aborted in the middle of a batch, while it is being sent or received', async () => {
    const addresses = loopbackAddresses(120);
    const controllers = addresses.map(() => new AbortController());
    const abortedInSend = new Set([0, ...Array.from({ length: 10 }, (_, i) => 60 + i)]);
    // Sent in the first call: their replies come in the first batch the socket reads.
    const abortedInReceive = new Set(Array.from({ length: 10 }, (_, i) => 1 + i));
    let firstSend = true;
    let firstReplies = true;
    const recording = recordingAddon({
      beforeSend: (batch) => {
        if (!firstSend) return;
        firstSend = false;
        // The first call holds run 0; runs 60–69 wait for later calls of the same batch.
        expect(batch).toContain(addresses[0]);
        expect(batch).not.toContain(addresses[60]);
        for (const i of abortedInSend) controllers[i]!.abort();
      },
      beforeReplies: () => {
        if (!firstReplies) return;
        firstReplies = false;
        for (const i of abortedInReceive) controllers[i]!.abort();
      },
    });
    const pinger = new Pinger({ socketPreference: kind, addon: recording.addon });
    try {
      const settled = await Promise.allSettled(
        addresses.map((address, i) =>
          pinger.ping({ address, family: 4, count: 3, intervalMs: 10, signal: controllers[i]!.signal }),
        ),
      );

      for (const [i, result] of settled.entries()) {
        const sentTo = recording.sent.filter((s) => s.address === addresses[i]).length;
        if (abortedInSend.has(i) || abortedInReceive.has(i)) {
          expect(result).toMatchObject({ status: 'rejected', reason: { code: 'OUTPOST_ERR_ABORTED' } });
          // Runs 0–10 went out in the first call only; 60–69, due in later calls, never.
          expect(sentTo).toBe(i <= 10 ? 1 : 0);
        } else {
          expect(result.status).toBe('fulfilled');
          const outcome = (result as PromiseFulfilledResult<PingOutcome>).value;
          expect(outcome.replies.every((r) => r.success)).toBe(true);
          expect(sentTo).toBe(3);
        }
      }
      // The socket goes on serving new runs.
      const after = await pinger.ping({ address: '127.0.0.1', family: 4, count: 2, intervalMs: 1 });
      expect(after.replies.every((r) => r.success)).toBe(true);
    } finally {
      pinger.close();
    }
  });
});
