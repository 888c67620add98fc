import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUrlExecutor } from '../../../src/checks/url/index.js';
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

describe.skipIf(missing !== null)('URL executor against a firewalled test host', () => {
  let host: TestHost;
  const executor = createUrlExecutor();
  beforeAll(() => {
    host = createTestHost();
    host.setInputRules(['tcp dport 80 drop', 'tcp dport 81 reject with icmp type host-unreachable']);
  });
  afterAll(() => host?.destroy());

  const job = (url: string, timeoutMs: number) =>
    jobOf(
      'URL',
      { url, followRedirects: true, skipSSL: false, ipFamily: 'IPv4', assertions: [] },
      { timeoutMs },
    );

  it('fails with UND_ERR_CONNECT_TIMEOUT on time when SYNs are dropped', async () => {
    const started = performance.now();

    const outcome = await executor.run(job(`http://${host.peerAddress}/`, 1500), contextOf());

    const elapsedMs = performance.now() - started;
    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult).toMatchObject({
      errorCode: 'UND_ERR_CONNECT_TIMEOUT',
      resolvedIp: host.peerAddress,
      response: null,
    });
    expect(outcome.errorMessage).toMatch(/TCP connection did not complete within 13\d\d ms/);
    expect(outcome.httpCheckResult!.timings.connect).toBeNull();
    // 1500 ms minus the 150 ms kept for posting the result.
    expect(elapsedMs).toBeGreaterThanOrEqual(1345);
    expect(elapsedMs).toBeLessThan(1500);
  });

  it('fails with EHOSTUNREACH when the host answers ICMP host-unreachable', async () => {
    const outcome = await executor.run(job(`http://${host.peerAddress}:81/`, 5000), contextOf());

    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult!.errorCode).toBe('EHOSTUNREACH');
  });
});
