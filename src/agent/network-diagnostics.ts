import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { connect, createServer, isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckResult, HttpCheckResult, HttpConnection, Job, RunOutcome } from '../protocol/index.js';
import { Scrubber } from '../common/scrub.js';
import { executorEntry } from '../checks/registry.js';
import type { RouteTrace } from '../net/traceroute/index.js';
import type { Logger } from '../common/logger.js';
import type { ServiceClient } from './service-client.js';

/**
 * Error codes of a failed HTTP run that call for network diagnostics: the connection could not
 * be made or was cut (not DNS, TLS or HTTP-level failures, which a route trace cannot explain).
 */
export const DIAGNOSED_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** Largest packet capture the diagnostics keep, bytes: the repeated attempt sends no payload. */
export const CAPTURE_MAX_BYTES = 256 * 1024;

/** Bytes kept per packet of the diagnostics' capture: headers, options, ICMP quotes (≤ 1280 bytes). */
export const CAPTURE_SNAPLEN_BYTES = 4096;

/** Names of the artifacts the diagnostics upload. */
export const ROUTE_TRACE_ARTIFACT = 'route-trace.json';
export const PACKET_CAPTURE_ARTIFACT = 'connection.pcap';

/**
 * The connection a failed run could not make or keep: the remote address and port (and IP
 * family) of the failing request's own connection, as the connector dialled it after DNS and
 * after every redirect (`httpCheckResult.connection`).
 */
export type DiagnosticTarget = { address: string; port: number; family: 4 | 6 };

/**
 * The target to diagnose for a run, or null: only runs of the check types the registry marks
 * for network diagnostics (API and URL, src/checks/registry.ts) that FAILED on one of
 * {@link DIAGNOSED_ERROR_CODES} after their final request opened a connection.
 * The address and the port both come from that one connection (`httpCheckResult.connection`),
 * never from different hops: a run that redirected from a live service to a refused port is
 * diagnosed on the refused port. A result without a recorded connection (an older agent's) is
 * diagnosed only when it made a single request (its URL's port, its resolved address).
 */
export function diagnosticTargetOf(job: Pick<Job, 'check'>, outcome: RunOutcome): DiagnosticTarget | null {
  if (!executorEntry(job.check.checkType)?.networkDiagnostics) return null;
  const http = outcome.httpCheckResult;
  if (outcome.status !== 'FAILED' || !http) return null;
  if (http.errorCode === null || !DIAGNOSED_ERROR_CODES.has(http.errorCode)) return null;
  const connection = http.connection ?? legacyConnectionOf(http);
  if (connection === null || connection.protocol !== 'tcp') return null;
  const family = isIP(connection.remoteAddress);
  const port = connection.remotePort;
  if (family !== connection.family || !(Number.isInteger(port) && port >= 1 && port <= 65_535)) return null;
  return { address: connection.remoteAddress, port, family: connection.family };
}

/**
 * The connection of a result from an agent that did not record one: only when the run made a
 * single request (no redirect), whose URL and resolved address then belong to the same hop.
 * After a redirect the failing hop's URL is not in the result: null, never a mix of hops.
 */
function legacyConnectionOf(http: HttpCheckResult): HttpConnection | null {
  if (http.redirects.length > 0 || http.resolvedIp === null) return null;
  const family = isIP(http.resolvedIp);
  if (family === 0) return null;
  let url: URL;
  try {
    url = new URL(http.request.url);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const remotePort = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { protocol: 'tcp', family: family as 4 | 6, remoteAddress: http.resolvedIp, remotePort };
}

/** The modules the diagnostics use, imported on the first failure (an idle agent never loads them). */
type Tools = {
  trace: typeof import('../net/traceroute/index.js');
  pcap: typeof import('../net/pcap/index.js');
};

async function loadTools(): Promise<Tools> {
  return { trace: await import('../net/traceroute/index.js'), pcap: await import('../net/pcap/index.js') };
}

/** Options of {@link createNetworkDiagnostics}. */
export type NetworkDiagnosticsOptions = {
  client: Pick<ServiceClient, 'uploadArtifact'>;
  /** Where working files go (a fresh directory per job, removed after upload). Default os.tmpdir(). */
  tmpRoot?: string;
  /** Budget of the route trace, ms. Default 10 000. */
  traceTimeoutMs?: number;
  /**
   * Diagnostics running at once, at most; a failure beyond them is posted without artifacts
   * (logged), so an outage of many checks cannot pile up traces and tcpdump processes. Default 4.
   */
  maxConcurrent?: number;
  /** How long the repeated connection attempt waits for its connection, ms. Default 3 000. */
  connectTimeoutMs?: number;
};

/**
 * Ports the kernel hands out to unbound sockets (`net.ipv4.ip_local_port_range`, which covers
 * IPv6 too); Linux's default when it cannot be read.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low as number, high as number];
  } catch {
    // not Linux, or /proc hidden: the default below
  }
  return [32_768, 60_999];
}

/** A random port from 1024–65535 outside the ephemeral range, so no unbound socket is given it. */
function unusualPort(): number {
  const [low, high] = ephemeralRange();
  const ports: [number, number][] = [
    [1024, Math.min(low, 65_536) - 1],
    [Math.max(high, 1023) + 1, 65_535],
  ].filter(([a, b]) => (b as number) >= (a as number)) as [number, number][];
  const total = ports.reduce((sum, [a, b]) => sum + b - a + 1, 0);
  if (total === 0) return 0;
  let pick = randomInt(total);
  for (const [a, b] of ports) {
    if (pick <= b - a) return a + pick;
    pick -= b - a + 1;
  }
  return 0;
}

/** The source address the kernel picks for `target` (a route lookup: a connected UDP socket sends nothing). */
async function sourceAddressFor(target: DiagnosticTarget): Promise<string> {
  const socket = createSocket(target.family === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(target.port, target.address, () => resolve());
    });
    return socket.address().address;
  } finally {
    socket.close();
  }
}

/**
 * The local end of the repeated connection attempt, chosen before tcpdump starts so the capture
 * filter names both ends of that one connection: the source address the route gives and a port
 * held by a listening socket until `release()` (no other socket can bind it, and a port outside
 * the ephemeral range is never handed to an unbound one). The probe binds it right after the release.
 */
async function reserveLocalEndpoint(
  target: DiagnosticTarget,
): Promise<{ address: string; port: number; release: () => void }> {
  const address = await sourceAddressFor(target);
  for (let attempt = 0; ; attempt++) {
    // After a few taken ports, any free one the kernel picks (held all the same).
    const wanted = attempt < 8 ? unusualPort() : 0;
    const server = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: address, port: wanted, exclusive: true, backlog: 0 }, () => resolve());
      });
    } catch (err) {
      server.close();
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 9) continue;
      throw err;
    }
    const bound = server.address();
    if (bound === null || typeof bound === 'string') {
      server.close();
      throw new Error('the local port reserved for the probe has no address');
    }
    let held = true;
    const release = () => {
      if (held) server.close();
      held = false;
    };
    return { address, port: bound.port, release };
  }
}

/** Codes of a probe that could not bind its reserved local end: someone else's packets may share its filter. */
const BIND_FAILURES = new Set(['EADDRINUSE', 'EADDRNOTAVAIL']);

/**
 * One TCP connection attempt from `local` to the target, settled on connect, error or timeout
 * (resolving what happened), except when the local end could not be bound: then it rejects, as
 * the capture cannot tell our packets from another socket's.
 */
function connectOnce(
  target: DiagnosticTarget,
  local: { address: string; port: number },
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: target.address,
      port: target.port,
      family: target.family,
      localAddress: local.address,
      localPort: local.port,
      signal,
    });
    const done = (what: string | Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (typeof what === 'string') resolve(what);
      else reject(what);
    };
    const timer = setTimeout(() => done('ETIMEDOUT'), timeoutMs);
    socket.once('connect', () => done('connected'));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (BIND_FAILURES.has(err.code ?? '')) {
        done(
          new Error(`the probe could not bind ${local.address}:${local.port} (${err.code}); capture dropped`),
        );
      } else done(err.code ?? err.message);
    });
  });
}

/**
 * The agent's network diagnostics (dispatcher `afterRun`): when an API or URL run failed on a
 * network error ({@link diagnosticTargetOf}), records a route trace to the address (our own
 * traceroute over ICMP, UDP when ICMP sockets are not allowed) and, at the same time, a packet
 * capture of a repeated connection attempt (tcpdump; skipped with a log line where it is
 * missing or not permitted); scrubs both with the job's secret values; uploads them through
 * `PUT /v1/agent/jobs/{jobId}/artifacts/{name}`; and returns the artifacts for the result.
 * Never throws: what fails is logged and left out.
 */
export function createNetworkDiagnostics(
  options: NetworkDiagnosticsOptions,
): (
  job: Job,
  outcome: RunOutcome,
  context: { signal: AbortSignal; log: Logger },
) => Promise<CheckResult['artifacts']> {
  let tools: Promise<Tools> | undefined;
  let running = 0;
  const maxConcurrent = options.maxConcurrent ?? 4;
  return async (job, outcome, { signal, log }) => {
    const target = diagnosticTargetOf(job, outcome);
    if (target === null) return [];
    if (running >= maxConcurrent) {
      log.info({ target, running }, 'network diagnostics skipped: too many running at once');
      return [];
    }
    running += 1;
    try {
      tools ??= loadTools();
      return await diagnose({ job, target, signal, log, options }, await tools);
    } finally {
      running -= 1;
    }
  };
}

/** One run's diagnosis: the job, the connection to diagnose, the job's signal and log, the options. */
type Diagnosis = {
  job: Job;
  target: DiagnosticTarget;
  signal: AbortSignal;
  log: Logger;
  options: NetworkDiagnosticsOptions;
};

/**
 * Records the route trace and the packet capture at the same time in a fresh working directory,
 * uploads what was recorded, and returns those artifacts; nothing when the job's secrets could not
 * all be scrubbed (the scrubber overflowed). The directory is removed at the end.
 */
async function diagnose(
  run: Diagnosis,
  { trace: traceroute, pcap }: Tools,
): Promise<CheckResult['artifacts']> {
  const { job, target, log, options } = run;
  const scrubber = new Scrubber(job.environmentVariables.filter((v) => v.secret).map((v) => v.value));
  if (scrubber.overflowed) {
    // Its artifacts could not be promised scrubbed: none are recorded.
    log.warn(`network diagnostics withheld: the job has ${scrubber.overflowReason}`);
    return [];
  }
  const dir = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'outpost-diag-'));
  try {
    const routeTrace = recordRouteTrace(traceroute, run, scrubber, join(dir, ROUTE_TRACE_ARTIFACT));
    const capture = recordCapture(pcap, run, scrubber, join(dir, PACKET_CAPTURE_ARTIFACT));
    const artifacts = await uploadArtifacts(run, await Promise.allSettled([routeTrace, capture]));
    if (artifacts.length > 0) log.info({ artifacts, target }, 'network diagnostics attached');
    return artifacts;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Traces the route to the target, over ICMP first (ping or raw sockets), then UDP (no privilege
 * needed) when ICMP is not allowed; writes the trace, scrubbed, as JSON (`text` as traceroute
 * prints it, and `trace`) to `path`, and returns `path`.
 * @throws what the UDP trace throws, or the ICMP one's error when `signal` aborted.
 */
async function recordRouteTrace(
  traceroute: Tools['trace'],
  { target, signal, log, options }: Diagnosis,
  scrubber: Scrubber,
  path: string,
): Promise<string> {
  const traceTimeoutMs = options.traceTimeoutMs ?? 10_000;
  let trace: RouteTrace | undefined;
  for (const protocol of ['icmp', 'udp'] as const) {
    try {
      trace = await traceroute.traceRoute(target.address, {
        signal,
        totalTimeoutMs: traceTimeoutMs,
        protocol,
      });
      break;
    } catch (err) {
      if (signal.aborted || protocol === 'udp') throw err;
      log.info({ err: (err as Error).message }, 'ICMP route trace failed; trying UDP');
    }
  }
  const text = traceroute.formatRouteTrace(trace as RouteTrace);
  await writeFile(path, scrubber.text(JSON.stringify({ text, trace }, null, 2)));
  return path;
}

/**
 * Captures one repeated connection attempt to the target from a reserved local end (so the
 * capture holds that one connection only), keeps only that connection's records, writes the file
 * scrubbed to `path`, and returns `path`.
 * @throws what the capture throws (tcpdump missing or not permitted, the local end not bound…).
 */
async function recordCapture(
  pcap: Tools['pcap'],
  { target, signal, log, options }: Diagnosis,
  scrubber: Scrubber,
  path: string,
): Promise<string> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 3000;
  const local = await reserveLocalEndpoint(target);
  let result: Awaited<ReturnType<typeof pcap.capturePackets>>;
  try {
    result = await pcap.capturePackets({
      host: target.address,
      port: target.port,
      local,
      file: path,
      // One connection attempt without payload: a few KB. The bound keeps the synchronous
      // filtering and scrubbing of the file short.
      maxBytes: CAPTURE_MAX_BYTES,
      // Headers and quoted ICMP packets fit; tcpdump's ring (one slot per snaplen) then holds
      // hundreds of packets, where whole 256 KB slots fit 7 and a busy agent lost the rest.
      snaplenBytes: CAPTURE_SNAPLEN_BYTES,
      signal,
      during: async () => {
        local.release();
        const answer = await connectOnce(target, local, connectTimeoutMs, signal);
        log.debug({ answer, local }, 'repeated connection attempt for the packet capture');
      },
    });
  } finally {
    local.release();
  }
  if (result.packets === 0) log.info('the packet capture saw no packets');
  // Defence in depth behind the filter: any record not of the probe's own connection goes.
  const own = pcap.keepConnection(await readFile(path), local, target);
  if (own.dropped > 0) log.warn({ dropped: own.dropped }, 'packets of other flows dropped from the capture');
  await writeFile(path, pcap.scrubPcap(own.file, scrubber));
  return path;
}

/**
 * Uploads the route trace and the packet capture that were recorded (`settled`, in that order),
 * each as its artifact of the job; what was not recorded or not uploaded is logged and left out.
 */
async function uploadArtifacts(
  { job, signal, log, options }: Diagnosis,
  settled: PromiseSettledResult<string>[],
): Promise<CheckResult['artifacts']> {
  const artifacts: CheckResult['artifacts'] = [];
  for (const [index, result] of settled.entries()) {
    const what = index === 0 ? 'route trace' : 'packet capture';
    if (result.status === 'rejected') {
      log.warn({ err: (result.reason as Error)?.message ?? String(result.reason) }, `${what} not recorded`);
      continue;
    }
    const name = index === 0 ? ROUTE_TRACE_ARTIFACT : PACKET_CAPTURE_ARTIFACT;
    try {
      const sizeBytes = await options.client.uploadArtifact(job.jobId, name, result.value, signal);
      artifacts.push({ name, sizeBytes });
    } catch (err) {
      log.warn(
        { err: (err as Error).message, name, sizeBytes: (await stat(result.value)).size },
        `${what} not uploaded`,
      );
    }
  }
  return artifacts;
}
