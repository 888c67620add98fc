import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  formatRouteTrace,
  type RouteProbe,
  type RouteTrace,
  type TraceRouteOptions,
  traceRoute,
} from '../../src/net/traceroute/index.js';
import { icmpAddonBuilt } from '../helpers/icmp.js';
import { createRoutedPath, type RoutedPath } from '../helpers/netns-route.js';
import { commandWorks, ipv6Missing, missingRequirement, netnsWorks } from '../helpers/requirements.js';

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
  { ok: commandWorks('setpriv', ['--version']), what: 'setpriv', install: 'apt-get install util-linux' },
]);
const ipv6 = missing === null && !ipv6Missing();

const ROOT = join(import.meta.dirname, '..', '..');
const TSX_CLI = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const CHILD = join(import.meta.dirname, 'traceroute-child.ts');
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];

const answered = (address: string, count = 3): RouteProbe[] =>
  Array.from({ length: count }, () => ({
    address,
    rttMs: expect.any(Number) as unknown as number,
    annotation: null,
  }));
const lost = (count = 3): RouteProbe[] =>
  Array.from({ length: count }, () => ({ address: null, rttMs: null, annotation: null }));

function rtts(trace: RouteTrace): number[] {
  return trace.hops.flatMap((hop) => hop.probes.map((probe) => probe.rttMs ?? Number.NaN));
}

describe.skipIf(missing !== null)('traceRoute over loopback', () => {
  it('traces 127.0.0.1 in one hop with ICMP over a raw socket, timed by the kernel', async () => {
    const trace = await traceRoute('127.0.0.1', { socketPreference: 'raw' });

    expect(trace).toMatchObject({
      target: '127.0.0.1',
      resolvedIp: '127.0.0.1',
      protocol: 'icmp',
      socketType: 'raw',
      reached: true,
      timedOut: false,
      sendError: null,
      maxHops: 30,
      hops: [{ ttl: 1, probes: answered('127.0.0.1') }],
    });
    for (const rtt of rtts(trace)) {
      expect(rtt).toBeGreaterThan(0);
      expect(rtt).toBeLessThan(10);
    }
    expect(trace.durationMs).toBeLessThan(500);
  });

  it('traces 127.0.0.1 with UDP probes, ended by the port unreachable', async () => {
    const trace = await traceRoute('127.0.0.1', { protocol: 'udp', probesPerHop: 2 });

    expect(trace).toMatchObject({
      protocol: 'udp',
      socketType: 'datagram',
      reached: true,
      hops: [{ ttl: 1, probes: answered('127.0.0.1', 2) }],
    });
    expect(Math.min(...rtts(trace))).toBeGreaterThan(0);
  });

  it.skipIf(!ipv6)('traces ::1 in one hop', async () => {
    const trace = await traceRoute('::1', { ipFamily: 'IPv6', socketPreference: 'raw', probesPerHop: 1 });

    expect(trace).toMatchObject({ resolvedIp: '::1', reached: true, hops: [{ probes: answered('::1', 1) }] });
  });

  it('resolves localhost and formats the trace as traceroute does', async () => {
    const trace = await traceRoute('localhost', { socketPreference: 'raw', probesPerHop: 2 });

    const lines = formatRouteTrace(trace).split('\n');
    expect(lines[0]).toBe('traceroute to localhost (127.0.0.1), 30 hops max, icmp probes, raw socket');
    expect(lines[1]).toMatch(/^ 1 {2}127\.0\.0\.1 {2}\d+\.\d{3} ms {2}\d+\.\d{3} ms$/);
    expect(lines[2]).toMatch(/^reached 127\.0\.0\.1 at hop 1 in [\d.]+ ms$/);
  });

  it('rejects bad options with the option name, what it must be and what it was', async () => {
    await expect(traceRoute('127.0.0.1', { maxHops: 0 })).rejects.toThrow(
      'maxHops must be an integer from 1 to 255; got 0',
    );
    await expect(traceRoute('127.0.0.1', { probesPerHop: 2.5 })).rejects.toThrow(/^probesPerHop must be/);
    await expect(traceRoute('127.0.0.1', { protocol: 'tcp' as 'udp' })).rejects.toThrow(/^protocol must be/);
    await expect(traceRoute('127.0.0.1', { protocol: 'udp', port: 65_500 })).rejects.toThrow(
      /each UDP probe takes the next port/,
    );
  });
});

describe.skipIf(missing !== null)('traceRoute through a router, from this namespace', () => {
  let path: RoutedPath;
  beforeAll(() => {
    path = createRoutedPath({ clientNamespace: false });
  });
  afterEach(() => path.setRouterForwardRules([]));
  afterAll(() => path?.destroy());

  it.each([
    { protocol: 'icmp', socketType: 'raw' },
    { protocol: 'udp', socketType: 'datagram' },
  ] as const)(
    'shows the router at hop 1 and the target at hop 2 ($protocol)',
    async ({ protocol, socketType }) => {
      const trace = await traceRoute(path.ipv4.target, { protocol, socketPreference: 'raw' });

      expect(trace).toMatchObject({
        protocol,
        socketType,
        reached: true,
        timedOut: false,
        hops: [
          { ttl: 1, probes: answered(path.ipv4.router) },
          { ttl: 2, probes: answered(path.ipv4.target) },
        ],
      });
      expect(Math.min(...rtts(trace))).toBeGreaterThan(0);
      expect(trace.durationMs).toBeLessThan(500);
    },
  );

  it.skipIf(!ipv6).each(['icmp', 'udp'] as const)('traces the IPv6 path too ($0)', async (protocol) => {
    const trace = await traceRoute(path.ipv6.target, { protocol, ipFamily: 'IPv6', socketPreference: 'raw' });

    expect(trace).toMatchObject({
      resolvedIp: path.ipv6.target,
      reached: true,
      hops: [{ probes: answered(path.ipv6.router) }, { probes: answered(path.ipv6.target) }],
    });
  });

  it('shows * past the router when the target is black-holed, up to maxHops, within the total timeout', async () => {
    path.setRouterForwardRules([`ip daddr ${path.ipv4.target} drop`]);

    const trace = await traceRoute(path.ipv4.target, { socketPreference: 'raw' });

    expect(trace).toMatchObject({ reached: false, timedOut: false, sendError: null });
    expect(trace.hops.map((hop) => hop.ttl)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(trace.hops[0]?.probes).toEqual(answered(path.ipv4.router));
    for (const hop of trace.hops.slice(1)) expect(hop.probes).toEqual(lost());
    // 30 hops, 16 at a time, one 1 s probe timeout per wave: about 2 s.
    expect(trace.durationMs).toBeGreaterThan(1000);
    expect(trace.durationMs).toBeLessThan(3000);
    expect(formatRouteTrace(trace)).toContain(`\n 2  * * *\n`);
  });

  it('ends with what it has when the total timeout runs out', async () => {
    path.setRouterForwardRules([`ip daddr ${path.ipv4.target} drop`]);

    const trace = await traceRoute(path.ipv4.target, {
      protocol: 'udp',
      totalTimeoutMs: 1500,
      simultaneousHops: 4,
    });

    expect(trace).toMatchObject({ reached: false, timedOut: true });
    expect(trace.hops[0]?.probes).toEqual(answered(path.ipv4.router));
    // Hops 1–4 go out at once; the router answers hop 1 at once, so hop 5 follows; hops 6–9
    // follow the first probe timeout; the budget ends before theirs.
    expect(trace.hops.map((hop) => hop.ttl)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // libuv measures timers on its cached loop clock: one may fire a fraction of a ms early.
    expect(trace.durationMs).toBeGreaterThan(1490);
    expect(trace.durationMs).toBeLessThan(1700);
    expect(formatRouteTrace(trace)).toMatch(/the time limit ran out/);
  });

  it('stops at a hop that answers administratively prohibited, marking it !X', async () => {
    path.setRouterForwardRules([`ip daddr ${path.ipv4.target} reject with icmp type admin-prohibited`]);

    const trace = await traceRoute(path.ipv4.target, { socketPreference: 'raw' });

    expect(trace.reached).toBe(false);
    expect(trace.hops).toEqual([
      { ttl: 1, probes: answered(path.ipv4.router) },
      {
        ttl: 2,
        probes: Array.from({ length: 3 }, () => ({
          address: path.ipv4.router,
          rttMs: expect.any(Number),
          annotation: '!X',
        })),
      },
    ]);
    expect(trace.durationMs).toBeLessThan(500);
    expect(formatRouteTrace(trace).split('\n')[2]).toMatch(/^ 2 {2}[\d.]+ {2}[\d.]+ ms !X {2}[\d.]+ ms !X/);
  });

  it('rejects with OUTPOST_ERR_ABORTED as soon as the signal aborts', async () => {
    path.setRouterForwardRules([`ip daddr ${path.ipv4.target} drop`]);
    const started = performance.now();

    const run = traceRoute(path.ipv4.target, { signal: AbortSignal.timeout(100) });

    await expect(run).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe.skipIf(missing !== null)('traceRoute as nobody (unprivileged) in a client namespace', () => {
  let path: RoutedPath;
  beforeAll(() => {
    path = createRoutedPath({ clientNamespace: true });
    // ping_group_range belongs to the namespace: this opens ping sockets there only.
    path.exec(path.clientNamespace!, 'sysctl', ['-q', '-w', 'net.ipv4.ping_group_range=0 2147483647']);
  });
  afterEach(() => path.setRouterForwardRules([]));
  afterAll(() => path?.destroy());

  async function traceAsNobody(
    target: string,
    options: TraceRouteOptions,
  ): Promise<{ trace?: RouteTrace; error?: { code: string; message: string } }> {
    const child = path.spawnInClient(
      process.execPath,
      [TSX_CLI, CHILD, target, JSON.stringify(options)],
      NOBODY,
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    const [status] = await once(child, 'exit');
    if (status !== 0) throw new Error(`traceroute child exited ${status}: ${stderr}`);
    return JSON.parse(stdout);
  }

  it('traces over a datagram ping socket, the errors coming from the error queue (IP_RECVERR)', async () => {
    const { trace } = await traceAsNobody(path.ipv4.target, { socketPreference: 'datagram' });

    expect(trace).toMatchObject({
      socketType: 'datagram',
      reached: true,
      hops: [{ probes: answered(path.ipv4.router) }, { probes: answered(path.ipv4.target) }],
    });
    expect(Math.min(...rtts(trace!))).toBeGreaterThan(0);
  });

  it.skipIf(!ipv6)('traces the IPv6 path over a datagram ping socket (IPV6_RECVERR)', async () => {
    const { trace } = await traceAsNobody(path.ipv6.target, {
      ipFamily: 'IPv6',
      socketPreference: 'datagram',
    });

    expect(trace).toMatchObject({
      socketType: 'datagram',
      reached: true,
      hops: [{ probes: answered(path.ipv6.router) }, { probes: answered(path.ipv6.target) }],
    });
  });

  it('traces with UDP probes', async () => {
    const { trace } = await traceAsNobody(path.ipv4.target, { protocol: 'udp' });

    expect(trace).toMatchObject({
      protocol: 'udp',
      reached: true,
      hops: [{ probes: answered(path.ipv4.router) }, { probes: answered(path.ipv4.target) }],
    });
  });

  it('shows * past the router for a black-holed target', async () => {
    path.setRouterForwardRules([`ip daddr ${path.ipv4.target} drop`]);

    const { trace } = await traceAsNobody(path.ipv4.target, { maxHops: 5, probeTimeoutMs: 300 });

    expect(trace).toMatchObject({ socketType: 'datagram', reached: false, timedOut: false });
    expect(trace!.hops.map((hop) => hop.probes)).toEqual([
      answered(path.ipv4.router),
      lost(),
      lost(),
      lost(),
      lost(),
    ]);
  });

  it('names what to grant when ping sockets are not allowed, and UDP still works', async () => {
    path.exec(path.clientNamespace!, 'sysctl', ['-q', '-w', 'net.ipv4.ping_group_range=1 0']);
    try {
      const icmp = await traceAsNobody(path.ipv4.target, {});
      const udp = await traceAsNobody(path.ipv4.target, { protocol: 'udp' });

      expect(icmp.error).toMatchObject({
        code: 'OUTPOST_ERR_ICMP_SOCKET',
        message: expect.stringMatching(/ping_group_range="0 2147483647".*CAP_NET_RAW/),
      });
      expect(udp.trace).toMatchObject({ reached: true, hops: [{}, {}] });
    } finally {
      path.exec(path.clientNamespace!, 'sysctl', ['-q', '-w', 'net.ipv4.ping_group_range=0 2147483647']);
    }
  });
});
