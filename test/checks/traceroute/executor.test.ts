import { Value } from '@sinclair/typebox/value';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTracerouteExecutor } from '../../../src/checks/traceroute/index.js';
import { RunOutcomeSchema, type TracerouteCheckResult } from '../../../src/protocol/index.js';
import { type DnsStub, startDnsStub } from '../../helpers/dns-stub.js';
import { icmpAddonBuilt } from '../../helpers/icmp.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';
import { createRoutedPath, type RoutedPath } from '../../helpers/netns-route.js';
import { missingRequirement, netnsWorks } from '../../helpers/requirements.js';

/**
 * TRACEROUTE monitors over a two-hop path of network namespaces this test makes (this namespace ↔ router
 * ↔ target): the router at hop 1 and the target at hop 2 with ICMP and UDP probes, a black-holed target
 * cut off by maxUnknownHops, maxHops cutting the trace before the target, the assertion sources, and PTR
 * lookups asked of a DNS stub on loopback. No probe leaves the machine.
 */
const missing = missingRequirement([
  { ok: icmpAddonBuilt(), what: 'the native ICMP addon', install: 'npm rebuild (needs python3, make, gcc)' },
  {
    ok: process.getuid?.() === 0,
    what: 'root (CAP_NET_RAW, CAP_NET_ADMIN)',
    install: 'run the tests as root',
  },
  {
    ok: netnsWorks(),
    what: 'network namespaces (ip netns) and nft',
    install: 'apt-get install iproute2 nftables',
  },
]);

let path: RoutedPath;
let stub: DnsStub;

beforeAll(async () => {
  if (missing) return;
  path = createRoutedPath({ clientNamespace: false });
  stub = await startDnsStub({});
});
afterEach(() => path?.setRouterForwardRules([]));
afterAll(async () => {
  path?.destroy();
  await stub?.close();
});

const request = (fields: Record<string, unknown>) => ({
  url: path.ipv4.target,
  protocol: 'ICMP',
  port: null,
  ipFamily: 'IPv4',
  maxHops: 30,
  maxUnknownHops: 15,
  ptrLookup: false,
  timeout: 10,
  assertions: [],
  ...fields,
});

async function run(fields: Record<string, unknown>, overrides: Parameters<typeof jobOf>[2] = {}) {
  const executor = createTracerouteExecutor({ dnsServers: [stub.server], socketPreference: 'raw' });
  const outcome = await executor.run(
    jobOf('TRACEROUTE', request(fields), { timeoutMs: 30_000, ...overrides }),
    contextOf(),
  );
  expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
  return { outcome, part: outcome.tracerouteCheckResult as TracerouteCheckResult };
}

describe.skipIf(missing)('TRACEROUTE executor over a routed path', () => {
  it.each(['ICMP', 'UDP'] as const)(
    'shows the router at hop 1 and the target at hop 2 (%s)',
    async (protocol) => {
      const { outcome, part } = await run({ protocol });

      expect(outcome.status).toBe('PASSED');
      expect(outcome.errorMessage).toBeNull();
      expect(part).toMatchObject({ totalHops: 2, destinationReached: true, requestError: null });
      const response = part.response!;
      expect(response).toMatchObject({
        resolvedIp: path.ipv4.target,
        truncationReason: 'destinationReached',
        probeProtocol: protocol,
        port: protocol === 'UDP' ? 33_434 : null,
      });
      expect(
        response.hops.map((h) => [h.hop_number, h.main_ip, h.sent, h.received, h.loss_percentage]),
      ).toEqual([
        [1, path.ipv4.router, 3, 3, 0],
        [2, path.ipv4.target, 3, 3, 0],
      ]);
      for (const hop of response.hops) {
        expect(hop.rtt!.best_ms).toBeGreaterThan(0);
        expect(hop.rtt!.best_ms).toBeLessThanOrEqual(hop.rtt!.avg_ms);
        expect(hop.rtt!.avg_ms).toBeLessThanOrEqual(hop.rtt!.worst_ms);
      }
      expect(part.finalHopLatency.avg).toBe(response.hops[1]!.rtt!.avg_ms);
      expect(outcome.responseTime).toBe(part.finalHopLatency.avg);
    },
  );

  it('fails a black-holed target, cut off after maxUnknownHops silent hops', async () => {
    path.setRouterForwardRules([`ip daddr ${path.ipv4.target} drop`]);
    const started = performance.now();

    const { outcome, part } = await run({ maxUnknownHops: 3 });

    expect(outcome.status).toBe('FAILED');
    expect(part.destinationReached).toBe(false);
    expect(part.response?.truncationReason).toBe('maxUnknownHops');
    // Hop 1 answers, hops 2–4 stay silent: the trace stops at hop 4, not at 30.
    expect(part.totalHops).toBe(4);
    expect(part.response?.hops.slice(1).map((h) => [h.main_ip, h.received, h.loss_percentage])).toEqual([
      [null, 0, 100],
      [null, 0, 100],
      [null, 0, 100],
    ]);
    expect(part.finalHopLatency).toEqual({ avg: null, min: null, max: null, stdDev: null });
    expect(outcome.errorMessage).toMatch(/did not reach .*: maxUnknownHops after 4 hops/);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('stops at maxHops before the target', async () => {
    const { outcome, part } = await run({ maxHops: 1 });

    expect(outcome.status).toBe('FAILED');
    expect(part.response?.truncationReason).toBe('maxHops');
    expect(part.response?.hops.map((h) => h.main_ip)).toEqual([path.ipv4.router]);
  });

  it('fails when the router answers the target unreachable, marking the hop', async () => {
    path.setRouterForwardRules([`ip daddr ${path.ipv4.target} reject with icmp type admin-prohibited`]);

    const { outcome, part } = await run({});

    expect(outcome.status).toBe('FAILED');
    expect(part.response?.truncationReason).toBe('unreachable');
    expect(part.response?.hops[1]).toMatchObject({ main_ip: path.ipv4.router, annotations: ['!X'] });
  });

  it('judges HOP_COUNT, RESPONSE_TIME, LATENCY, PACKET_LOSS and JSON_RESPONSE assertions', async () => {
    const { outcome } = await run({
      assertions: [
        { source: 'HOP_COUNT', comparison: 'EQUALS', target: '2' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '500' },
        { source: 'LATENCY', property: 'max', comparison: 'LESS_THAN', target: '500' },
        { source: 'PACKET_LOSS', comparison: 'EQUALS', target: '0' },
        {
          source: 'JSON_RESPONSE',
          property: '$.hops[0].main_ip',
          comparison: 'EQUALS',
          target: path.ipv4.router,
        },
        { source: 'HOP_COUNT', comparison: 'LESS_THAN', target: '2' },
      ],
    });

    expect(outcome.assertions.map((a) => a.error === null)).toEqual([true, true, true, true, true, false]);
    expect(outcome.assertions[1]).toMatchObject({ property: 'avg' });
    expect(outcome.status).toBe('FAILED');
    expect(outcome.errorMessage).toMatch(/assertion HOP_COUNT LESS_THAN 2 failed/);
  });

  it('asks the name server for each hop name when ptrLookup is on, and keeps the name empty when there is none', async () => {
    const { part } = await run({ ptrLookup: true });

    const reversed = (ip: string) => `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
    const asked = stub.questions.filter((q) => q.type === 12).map((q) => q.name);
    expect(asked).toEqual(expect.arrayContaining([reversed(path.ipv4.router), reversed(path.ipv4.target)]));
    expect(part.response?.hops.map((h) => h.main_host)).toEqual(['', '']);
  });

  it('fails a name that does not resolve, and refuses a malformed request as an error of the job', async () => {
    const executor = createTracerouteExecutor({ socketPreference: 'raw' });
    const bad = await executor.run(jobOf('TRACEROUTE', { url: 'x', protocol: 'TCP' }), contextOf());
    expect(bad.hasErrors).toBe(true);
    expect(bad.errorMessage).toMatch(/invalid TRACEROUTE request/);

    // Asked of the DNS stub, which knows no name.
    const { outcome, part } = await run({ url: 'nowhere.outpost.test' });
    expect(outcome.status).toBe('FAILED');
    expect(part.requestError).toMatch(/nowhere\.outpost\.test/);
    expect(stub.questions.map((q) => q.name)).toContain('nowhere.outpost.test');
  });
});
