import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckResult, Job, RunOutcome } from '../protocol/index.js';
import { Scrubber } from '../sandbox/scrub.js';
import type { RouteTrace } from '../net/traceroute/index.js';
import type { Logger } from '../shared/logger.js';
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

/** Names of the artifacts the diagnostics upload. */
export const ROUTE_TRACE_ARTIFACT = 'route-trace.json';
export const PACKET_CAPTURE_ARTIFACT = 'connection.pcap';

/** Where a failed run tried to connect: the address it resolved and the port of its URL. */
export type DiagnosticTarget = { address: string; port: number };

/**
 * The target to diagnose for a run, or null: only API and URL runs that FAILED on one of
 * {@link DIAGNOSED_ERROR_CODES} after resolving an address (release history: "packet and
 * route traces captured on network failures of API checks and URL monitors").
 */
export function diagnosticTargetOf(job: Pick<Job, 'check'>, outcome: RunOutcome): DiagnosticTarget | null {
  if (job.check.checkType !== 'API' && job.check.checkType !== 'URL') return null;
  const http = outcome.httpCheckResult;
  if (outcome.status !== 'FAILED' || !http || http.resolvedIp === null) return null;
  if (http.errorCode === null || !DIAGNOSED_ERROR_CODES.has(http.errorCode)) return null;
  let url: URL;
  try {
    url = new URL(http.redirects.length > 0 ? (http.response?.url ?? http.request.url) : http.request.url);
  } catch {
    return null;
  }
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { address: http.resolvedIp, port };
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

/** One TCP connection attempt to `address:port`, settled (never rejecting) on connect, error or timeout. */
function connectOnce(address: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, signal });
    const done = (what: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done('ETIMEDOUT'), timeoutMs);
    socket.once('connect', () => done('connected'));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
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
      return await diagnose(job, target, signal, log);
    } finally {
      running -= 1;
    }
  };

  async function diagnose(
    job: Job,
    target: DiagnosticTarget,
    signal: AbortSignal,
    log: Logger,
  ): Promise<CheckResult['artifacts']> {
    tools ??= loadTools();
    const { trace: traceroute, pcap } = await tools;
    const scrubber = new Scrubber(job.environmentVariables.filter((v) => v.secret).map((v) => v.value));
    const dir = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'outpost-diag-'));
    const artifacts: CheckResult['artifacts'] = [];
    try {
      const tracePath = join(dir, ROUTE_TRACE_ARTIFACT);
      const pcapPath = join(dir, PACKET_CAPTURE_ARTIFACT);
      const traceTimeoutMs = options.traceTimeoutMs ?? 10_000;
      const routeTrace = (async () => {
        // ICMP first (ping or raw sockets); UDP probes need no privilege when ICMP is not allowed.
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
        await writeFile(tracePath, scrubber.text(JSON.stringify({ text, trace }, null, 2)));
        return tracePath;
      })();
      const capture = (async () => {
        const connectTimeoutMs = options.connectTimeoutMs ?? 3000;
        const result = await pcap.capturePackets({
          host: target.address,
          port: target.port,
          file: pcapPath,
          signal,
          during: async () => {
            const answer = await connectOnce(target.address, target.port, connectTimeoutMs, signal);
            log.debug({ answer }, 'repeated connection attempt for the packet capture');
          },
        });
        if (result.packets === 0) log.info('the packet capture saw no packets');
        await writeFile(pcapPath, pcap.scrubPcap(await readFile(pcapPath), scrubber));
        return pcapPath;
      })();
      const settled = await Promise.allSettled([routeTrace, capture]);
      for (const [index, result] of settled.entries()) {
        const what = index === 0 ? 'route trace' : 'packet capture';
        if (result.status === 'rejected') {
          log.warn(
            { err: (result.reason as Error)?.message ?? String(result.reason) },
            `${what} not recorded`,
          );
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
      if (artifacts.length > 0) log.info({ artifacts, target }, 'network diagnostics attached');
      return artifacts;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
