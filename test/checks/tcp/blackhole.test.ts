import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTcpExecutor } from '../../../src/checks/tcp/index.js';
import { createTestHost, type TestHost } from '../../helpers/netns.js';
import { missingRequirement, netnsWorks } from '../../helpers/requirements.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';

// A test host in a network namespace (veth pair, private /30 that exists only on that link)
// whose nftables input chain drops or rejects our SYNs: nothing leaves this machine.

const missing = missingRequirement([
  {
    ok: netnsWorks(),
    what: 'network namespaces with nftables',
    install: 'apt-get install iproute2 nftables; run as root',
  },
]);

describe.skipIf(missing !== null)('TCP executor against a firewalled test host', () => {
  let host: TestHost;
  const executor = createTcpExecutor();
  beforeAll(() => {
    host = createTestHost();
    host.setInputRules([
      'tcp dport 9 drop',
      'tcp dport 10 reject with icmp type host-unreachable',
      'tcp dport 11 reject with tcp reset',
    ]);
  });
  afterAll(() => host?.destroy());

  const request = (port: number) => ({
    hostname: host.peerAddress,
    port,
    data: null,
    ipFamily: 'IPv4',
    assertions: [],
  });

  it('times out on time with ETIMEDOUT when SYNs are dropped', async () => {
    const started = performance.now();

    const outcome = await executor.run(jobOf('TCP', request(9), { timeoutMs: 1500 }), contextOf());

    const elapsedMs = performance.now() - started;
    expect(outcome.status).toBe('FAILED');
    expect(outcome.tcpCheckResult).toMatchObject({
      connected: false,
      errorCode: 'ETIMEDOUT',
      resolvedIp: host.peerAddress,
    });
    expect(outcome.errorMessage).toContain(`connect ETIMEDOUT ${host.peerAddress}:9`);
    // 1500 ms minus the 150 ms kept for posting the result.
    expect(elapsedMs).toBeGreaterThanOrEqual(1345);
    expect(elapsedMs).toBeLessThan(1500);
    expect(outcome.tcpCheckResult!.timings.connect).toBeGreaterThanOrEqual(1340);
  });

  it('fails with EHOSTUNREACH when the host answers ICMP host-unreachable', async () => {
    const outcome = await executor.run(jobOf('TCP', request(10)), contextOf());

    expect(outcome.status).toBe('FAILED');
    expect(outcome.tcpCheckResult!.errorCode).toBe('EHOSTUNREACH');
    expect(outcome.responseTime).toBeLessThan(1000);
  });

  it('fails with ECONNREFUSED when the host resets', async () => {
    const outcome = await executor.run(jobOf('TCP', request(11)), contextOf());

    expect(outcome.tcpCheckResult!.errorCode).toBe('ECONNREFUSED');
  });

  it('passes a timed-out connection when shouldFail is set', async () => {
    const outcome = await executor.run(
      jobOf('TCP', request(9), { timeoutMs: 500, shouldFail: true }),
      contextOf(),
    );

    expect(outcome.status).toBe('PASSED');
    expect(outcome.tcpCheckResult!.errorCode).toBe('ETIMEDOUT');
  });
});
