import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIcmpExecutor, type IcmpExecutor } from '../../../src/checks/icmp/index.js';
import type { Job, JobCheck, RunOutcome } from '../../../src/protocol/index.js';
import {
  CLOSED_PING_GROUP_RANGE,
  icmpAddonBuilt,
  iputilsAverageRttMs,
  pingGroupRangeWritable,
  setPingGroupRange,
} from '../../helpers/icmp.js';
import { createTestHost, startDelayedResponder, type TestHost } from '../../helpers/netns.js';
import { commandWorks, ipv6Missing, missingRequirement, netnsWorks } from '../../helpers/requirements.js';

const silent = pino({ level: 'silent' });

function icmpJob(request: Record<string, unknown>, check: Partial<JobCheck> = {}, timeoutMs = 30_000): Job {
  return {
    jobId: 'job-1',
    accountId: 'account-1',
    check: {
      id: 'check-1',
      name: 'ping',
      checkType: 'ICMP',
      request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 3, assertions: [], ...request },
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: null,
      ...check,
    },
    environmentVariables: [],
    runLocation: 'test',
    runSource: 'TRIGGER_API',
    checkSessionId: null,
    attempt: 1,
    timeoutMs,
    leaseMs: 300_000,
  };
}

function run(executor: IcmpExecutor, job: Job): Promise<RunOutcome> {
  return executor.run(job, { signal: AbortSignal.timeout(job.timeoutMs + 5000), log: silent });
}

describe('ICMP executor: malformed jobs', () => {
  const executor = createIcmpExecutor({ socketPreference: 'raw' });
  afterAll(() => executor.close());

  it.each([
    [{ pingCount: 51 }, /invalid ICMP request: \/pingCount .*50.* \(got 51\)/],
    [{ hostname: undefined }, /invalid ICMP request: \/hostname/],
    [{ ipFamily: 'IPv5' }, /invalid ICMP request: \/ipFamily/],
    [
      { assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      /source STATUS_CODE is not/,
    ],
    [
      { assertions: [{ source: 'LATENCY', property: 'p99', comparison: 'LESS_THAN', target: '1' }] },
      /LATENCY property/,
    ],
  ])('%j gives hasErrors with the reason and sends nothing', async (request, reason) => {
    const outcome = await run(executor, icmpJob(request));

    expect(outcome).toMatchObject({
      status: 'FAILED',
      hasErrors: true,
      errorMessage: expect.stringMatching(reason),
    });
    expect(outcome.icmpCheckResult).toBeUndefined();
  });

  it('refuses a job of another check type', async () => {
    const outcome = await run(executor, icmpJob({}, { checkType: 'DNS' }));
    expect(outcome).toMatchObject({ hasErrors: true, errorMessage: 'check type DNS is not ICMP' });
  });
});

const missingBasics = missingRequirement([
  { ok: icmpAddonBuilt(), what: 'the native ICMP addon', install: 'npm rebuild (needs python3, make, gcc)' },
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW)', install: 'run the tests as root' },
]);

describe.skipIf(missingBasics !== null)('ICMP executor on loopback', () => {
  const executor = createIcmpExecutor({ intervalMs: 10 });
  afterAll(() => executor.close());

  it('pings 127.0.0.1 and passes with the ICMP result filled in', async () => {
    const outcome = await run(
      executor,
      icmpJob({
        pingCount: 4,
        assertions: [
          { source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '50' },
          { source: 'JSON_RESPONSE', property: '$.pingResults[*].ttl', comparison: 'EQUALS', target: '64' },
          { source: 'JSON_RESPONSE', property: '$.packetLoss', comparison: 'EQUALS', target: '0' },
        ],
      }),
    );

    expect(outcome).toMatchObject({
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      errorMessage: null,
    });
    expect(outcome.assertions.map((a) => a.error)).toEqual([null, null, null]);
    expect(outcome.icmpCheckResult).toMatchObject({
      hostname: '127.0.0.1',
      resolvedIp: '127.0.0.1',
      ipFamily: 'IPv4',
      pingCount: 4,
      packetSize: 56,
      packetsSent: 4,
      packetsReceived: 4,
      packetLoss: 0,
      dnsResolutionTime: 0,
      socketType: expect.stringMatching(/^(raw|datagram)$/),
    });
    const { latency, pingResults } = outcome.icmpCheckResult!;
    expect(pingResults.map((p) => p.sequence)).toEqual([1, 2, 3, 4]);
    expect(latency.min!).toBeLessThanOrEqual(latency.avg!);
    expect(latency.avg!).toBeLessThanOrEqual(latency.max!);
    expect(outcome.responseTime).toBe(latency.avg);
    expect(outcome.logs.map((l) => l.msg).join('\n')).toMatch(
      /over (an unprivileged datagram|a raw) ICMP socket/,
    );
  });

  it('fails with the assertion named when an assertion does not hold', async () => {
    const outcome = await run(
      executor,
      icmpJob({
        assertions: [{ source: 'LATENCY', property: 'max', comparison: 'GREATER_THAN', target: '1000' }],
      }),
    );

    expect(outcome).toMatchObject({ status: 'FAILED', hasFailures: true, hasErrors: false });
    expect(outcome.errorMessage).toMatch(
      /^assertion LATENCY max GREATER_THAN 1000 failed: [\d.]+ is not greater than 1000$/,
    );
  });

  it('resolves a hostname from /etc/hosts and measures the lookup', async () => {
    const outcome = await run(executor, icmpJob({ hostname: 'localhost', pingCount: 1 }));

    expect(outcome.status).toBe('PASSED');
    expect(outcome.icmpCheckResult).toMatchObject({ hostname: 'localhost', resolvedIp: '127.0.0.1' });
    expect(outcome.icmpCheckResult!.dnsResolutionTime).toBeGreaterThan(0);
  });

  it.skipIf(ipv6Missing())('pings ::1 over IPv6', async () => {
    const outcome = await run(executor, icmpJob({ hostname: '::1', ipFamily: 'IPv6', pingCount: 2 }));

    expect(outcome.status).toBe('PASSED');
    expect(outcome.icmpCheckResult).toMatchObject({
      resolvedIp: '::1',
      ipFamily: 'IPv6',
      packetsReceived: 2,
    });
  });

  it('rejects with OUTPOST_ERR_ABORTED when the job signal aborts', async () => {
    const job = icmpJob({ pingCount: 10 });
    const run = executor.run(job, { signal: AbortSignal.timeout(30), log: silent });

    await expect(run).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
  });

  it('inverts pass and fail with shouldFail', async () => {
    const outcome = await run(executor, icmpJob({ pingCount: 1 }, { shouldFail: true }));
    expect(outcome).toMatchObject({
      status: 'FAILED',
      errorMessage: 'the check passed but shouldFail is set',
    });
  });
});

const noSysctl =
  missingBasics ??
  missingRequirement([
    {
      ok: pingGroupRangeWritable(),
      what: 'a writable net.ipv4.ping_group_range',
      install: 'run as root, outside a read-only /proc/sys',
    },
  ]);

describe.skipIf(noSysctl !== null)('ICMP executor without an ICMP socket', () => {
  let restore: () => void;
  beforeAll(() => {
    restore = setPingGroupRange(CLOSED_PING_GROUP_RANGE);
  });
  afterAll(() => restore());

  it('gives hasErrors naming what to grant', async () => {
    const executor = createIcmpExecutor({ socketPreference: 'datagram' });
    const outcome = await run(executor, icmpJob({}));
    await executor.close();

    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: true });
    expect(outcome.errorMessage).toMatch(/ping_group_range="0 2147483647".*CAP_NET_RAW/);
    expect(outcome.icmpCheckResult).toMatchObject({ packetsSent: 0, socketType: null });
  });
});

const missingNetns =
  missingBasics ??
  missingRequirement([
    {
      ok: netnsWorks(),
      what: 'network namespaces with nftables',
      install: 'apt-get install iproute2 nftables; run as root',
    },
    { ok: commandWorks('ping', ['-V']), what: 'iputils ping', install: 'apt-get install iputils-ping' },
  ]);

describe.skipIf(missingNetns !== null)('ICMP executor against a test host in a network namespace', () => {
  let host: TestHost;
  const executor = createIcmpExecutor({ intervalMs: 10, packetTimeoutMs: 500 });
  beforeAll(() => {
    host = createTestHost();
  });
  afterAll(async () => {
    await executor.close();
    host?.destroy();
  });

  it.each([
    // degraded %, max %, expected status for exactly 25 % loss (every 4th request dropped)
    [30, 50, 'PASSED'],
    [20, 30, 'DEGRADED'],
    [10, 25, 'FAILED'],
  ] as const)('thresholds %d/%d percent give %s at 25 percent loss', async (degraded, max, status) => {
    host.setInputRules(['icmp type echo-request numgen inc mod 4 == 0 drop']);

    const outcome = await run(
      executor,
      icmpJob(
        { hostname: host.peerAddress, pingCount: 8 },
        { degradedPacketLossThreshold: degraded, maxPacketLossThreshold: max },
      ),
    );

    expect(outcome.status).toBe(status);
    expect(outcome.icmpCheckResult).toMatchObject({ packetsSent: 8, packetsReceived: 6, packetLoss: 25 });
    expect(outcome.icmpCheckResult!.pingResults.map((p) => p.success)).toEqual([
      false,
      true,
      true,
      true,
      false,
      true,
      true,
      true,
    ]);
    if (status !== 'PASSED') expect(outcome.errorMessage).toMatch(/packet loss 25% is at or above/);
  });

  it('fails with 100 % loss, within the job timeout, when nothing answers', async () => {
    host.setInputRules(['icmp type echo-request drop']);
    const started = performance.now();

    const outcome = await run(executor, icmpJob({ hostname: host.peerAddress, pingCount: 5 }, {}, 3000));

    expect(performance.now() - started).toBeLessThan(3000);
    expect(outcome).toMatchObject({
      status: 'FAILED',
      hasFailures: true,
      hasErrors: false,
      errorMessage: `no reply from ${host.peerAddress} (100% packet loss)`,
    });
    expect(outcome.icmpCheckResult).toMatchObject({ packetsSent: 5, packetsReceived: 0, packetLoss: 100 });
    expect(outcome.icmpCheckResult!.latency).toEqual({ min: null, avg: null, max: null, stdDev: null });
  });

  it('agrees with iputils ping on the average RTT within 0.5 ms', async () => {
    host.setInputRules([]);

    const outcome = await run(executor, icmpJob({ hostname: host.peerAddress, pingCount: 20 }));
    const theirs = iputilsAverageRttMs(host.peerAddress, 20, 0.01);

    expect(outcome.icmpCheckResult!.packetsReceived).toBe(20);
    expect(Math.abs(outcome.icmpCheckResult!.latency.avg! - theirs)).toBeLessThan(0.5);
  });

  describe('with replies delayed by a responder in the namespace', () => {
    beforeAll(async () => {
      host.setInputRules([]);
      // Four requests per run: three answered at once, one after 90 ms → avg ≈ 22.5 ms, max ≈ 90 ms.
      await startDelayedResponder(host, [0, 0, 0, 90]);
    });

    it.each([
      // degradedResponseTime, maxResponseTime, status: judged on the average, not the maximum.
      // Bounds leave room for a userspace responder that answers late on a loaded machine.
      [60, 100, 'PASSED'],
      [20, 100, 'DEGRADED'],
      [10, 20, 'FAILED'],
    ] as const)(
      'avg ≈ 22.5 ms (max 90 ms) with degraded %d ms / max %d ms is %s',
      async (degraded, max, status) => {
        const outcome = await run(
          executor,
          icmpJob(
            { hostname: host.peerAddress, pingCount: 4 },
            { degradedResponseTime: degraded, maxResponseTime: max },
          ),
        );

        const latency = outcome.icmpCheckResult!.latency;
        // The responder's 90 ms timer may fire up to a millisecond early (Node rounds timers).
        expect(latency.max!).toBeGreaterThanOrEqual(88);
        expect(latency.avg!).toBeGreaterThan(22);
        // Well below the 90 ms maximum, so the status below can only come from the average.
        expect(latency.avg!).toBeLessThan(60);
        expect(outcome.status).toBe(status);
        expect(outcome.overMaxResponseTime).toBe(status === 'FAILED');
      },
    );

    it('counts a reply later than the packet timeout as lost', async () => {
      const impatient = createIcmpExecutor({ intervalMs: 10, packetTimeoutMs: 50 });
      const outcome = await run(impatient, icmpJob({ hostname: host.peerAddress, pingCount: 4 }));
      await impatient.close();

      expect(outcome.icmpCheckResult!.pingResults.map((p) => p.success)).toEqual([true, true, true, false]);
      expect(outcome.icmpCheckResult!.packetLoss).toBe(25);
    });
  });
});

describe.skipIf(missingNetns !== null)('ICMP executor on a host without IPv6', () => {
  let host: TestHost;
  beforeAll(() => {
    host = createTestHost();
    host.exec('sysctl', [
      '-q',
      '-w',
      'net.ipv6.conf.all.disable_ipv6=1',
      'net.ipv6.conf.default.disable_ipv6=1',
    ]);
    host.exec('sysctl', ['-q', '-w', 'net.ipv6.conf.lo.disable_ipv6=1']);
    // Names resolve from this hosts file only; no resolver is reachable from the namespace.
    host.writeEtcFile('hosts', '127.0.0.1 localhost\n::1 dualstack\n127.0.0.1 dualstack\n');
    host.writeEtcFile('resolv.conf', 'nameserver 127.0.0.1\n');
  });
  afterAll(() => host?.destroy());

  function runInNamespace(job: Job): RunOutcome {
    const tsx = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'tsx');
    const script = join(import.meta.dirname, '..', '..', 'helpers', 'run-icmp-job.ts');
    const output = execFileSync('ip', ['netns', 'exec', host.namespace, tsx, script, JSON.stringify(job)], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    return JSON.parse(output) as RunOutcome;
  }

  it.each([
    ['dualstack', 'an IPv6 address that cannot be reached', /sending to ::1 failed with E[A-Z]+/],
    ['localhost', 'no IPv6 address', /localhost has no IPv6 address/],
  ])('falls back from IPv6 to IPv4 for %s (%s) and logs why', (hostname, _case, why) => {
    const outcome = runInNamespace(icmpJob({ hostname, ipFamily: 'IPv6', pingCount: 2 }));

    expect(outcome.status).toBe('PASSED');
    expect(outcome.icmpCheckResult).toMatchObject({
      resolvedIp: '127.0.0.1',
      ipFamily: 'IPv4',
      packetsReceived: 2,
    });
    const warning = outcome.logs.find((line) => line.level === 'WARN');
    expect(warning?.msg).toMatch(/^IPv6 requested but .*; falling back to IPv4$/);
    expect(warning?.msg).toMatch(why);
  });

  it('fails, without hasErrors, for an IPv6 literal it cannot reach', () => {
    const outcome = runInNamespace(icmpJob({ hostname: '::1', ipFamily: 'IPv6', pingCount: 2 }));

    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: false });
    expect(outcome.errorMessage).toMatch(/^cannot send to ::1: E[A-Z]+$/);
  });
});
