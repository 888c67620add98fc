import { lookupService, Resolver } from 'node:dns/promises';
import { abortedError } from '../../common/abort.js';
import { roundMs } from '../../common/clock.js';
import { OutpostError } from '../../common/errors.js';
import type { SocketPreference } from '../../net/icmp/pinger.js';
import { createDnsResolver, ResolveError } from '../../net/resolve.js';
import { type RouteHop, type RouteTrace, traceRoute } from '../../net/traceroute/index.js';
import {
  type Job,
  type RunOutcome,
  TRACEROUTE_ASSERTION_SOURCES,
  type TracerouteCheckResult,
  type TracerouteHop,
  type TracerouteRequest,
  TracerouteRequestSchema,
  type TracerouteResponse,
} from '../../protocol/index.js';
import { type AssertionSourceReader, propertySource, valueSource } from '../assertions/index.js';
import { evaluateAssertionsWithJsonPath } from '../assertions/off-thread.js';
import type { Executor, ExecutorContext } from '../executor.js';
import { errorRunOutcome, judgeRun, runScrubbed, validateRequest } from '../outcome.js';
import type { RunLogRecorder } from '../run-log.js';
import { runBudgetMs } from '../time-budget.js';

/** Options of the TRACEROUTE executor. */
export type TracerouteExecutorOptions = {
  /** Resolve the target, and hop names, with the OS resolver instead of querying DNS. Default false. */
  useOsDnsResolver?: boolean;
  /**
   * Name servers the target's resolution and the hops' PTR lookups query instead of /etc/resolv.conf's
   * (`"127.0.0.1:5353"`).
   */
  dnsServers?: readonly string[];
  /** ICMP probes: which socket kind to open. Default `auto` (an unprivileged ping socket, else a raw one). */
  socketPreference?: SocketPreference;
};

/** Probes sent per hop (as traceroute). */
export const PROBES_PER_HOP = 3;
/** How long each probe waits for its answer, ms. */
export const PROBE_TIMEOUT_MS = 1000;
/** Time kept after the trace for the hops' PTR lookups, ms; each lookup is cut there. */
export const PTR_BUDGET_MS = 1000;
/** First UDP destination port when the request names none (as traceroute). */
export const DEFAULT_UDP_PORT = 33_434;
/** Longest hop name kept, characters (a DNS name's limit). */
const MAX_NAME_CHARS = 253;

/** Mean, population standard deviation, min and max of `values` (non-empty), ms. */
function stats(values: number[]): { avg: number; min: number; max: number; stdDev: number } {
  const avg = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - avg) ** 2, 0) / values.length;
  return { avg, min: Math.min(...values), max: Math.max(...values), stdDev: Math.sqrt(variance) };
}

/** One traced hop in the hosted API's words; `main_host` is filled in by the PTR lookups. */
export function describeHop(hop: RouteHop): TracerouteHop {
  const counts = new Map<string, number>();
  for (const probe of hop.probes) {
    if (probe.address !== null) counts.set(probe.address, (counts.get(probe.address) ?? 0) + 1);
  }
  let main: string | null = null;
  for (const [address, count] of counts) if (main === null || count > (counts.get(main) ?? 0)) main = address;
  const rtts = hop.probes.flatMap((p) => (p.rttMs === null ? [] : [p.rttMs]));
  const sent = hop.probes.length;
  const s = rtts.length > 0 ? stats(rtts) : null;
  return {
    hop_number: hop.ttl,
    main_ip: main,
    main_host: '',
    addresses: [...counts.keys()],
    sent,
    received: rtts.length,
    loss_percentage: sent === 0 ? 100 : roundMs(((sent - rtts.length) / sent) * 100),
    rtt: s
      ? {
          last_ms: roundMs(rtts.at(-1) ?? 0),
          avg_ms: roundMs(s.avg),
          best_ms: roundMs(s.min),
          worst_ms: roundMs(s.max),
          stddev_ms: roundMs(s.stdDev),
        }
      : null,
    annotations: [...new Set(hop.probes.flatMap((p) => (p.annotation === null ? [] : [p.annotation])))],
  };
}

/** Why the trace stopped, in the hosted API's words. */
function truncationReason(trace: RouteTrace): TracerouteResponse['truncationReason'] {
  if (trace.reached) return 'destinationReached';
  if (trace.sendError !== null) return 'sendError';
  if (trace.unknownHopsLimit) return 'maxUnknownHops';
  if (trace.timedOut) return 'timeout';
  if (trace.hops.length >= trace.maxHops) return 'maxHops';
  return 'unreachable';
}

/**
 * Runs TRACEROUTE monitors (docs/checks.md, "TRACEROUTE") on src/net/traceroute: ICMP echo or UDP probes
 * with rising TTL, 3 per hop, each waiting 1 s, hops in flight together, within the request's `timeout`;
 * the trace stops at the target, at `maxHops`, after `maxUnknownHops` silent hops in a row, or at a hop
 * answering Destination Unreachable. Hop names come from PTR lookups (`ptrLookup`) bounded to 1 s after
 * the trace. A run FAILS when the destination is not reached, on a failed assertion or at
 * `maxResponseTime` (the final hop's average RTT), and is DEGRADED at `degradedResponseTime`.
 */
export class TracerouteExecutor implements Executor {
  readonly checkType = 'TRACEROUTE' as const;
  readonly #useOs: boolean;
  readonly #servers: readonly string[] | undefined;
  readonly #resolver: Resolver | undefined;
  readonly #preference: SocketPreference;

  constructor(options: TracerouteExecutorOptions = {}) {
    this.#useOs = options.useOsDnsResolver ?? false;
    this.#servers = options.dnsServers;
    this.#resolver = options.dnsServers ? createDnsResolver({ servers: options.dnsServers }) : undefined;
    this.#preference = options.socketPreference ?? 'auto';
  }

  /**
   * Runs one TRACEROUTE job. Never throws for a malformed job or an agent that cannot open a probe socket
   * (→ `hasErrors`) or an unreachable target (→ FAILED). Throws OUTPOST_ERR_ABORTED when `context.signal`
   * aborts.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    // Secret variables are scrubbed from everything the run reports; agent-log lines are written scrubbed at the end.
    return runScrubbed(job, context, (logs) => this.#run(job, context, logs));
  }

  async #run(job: Job, context: ExecutorContext, logs: RunLogRecorder): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    if (job.check.checkType !== 'TRACEROUTE') {
      return errorRunOutcome(startedAt, logs, `check type ${job.check.checkType} is not TRACEROUTE`);
    }
    const plan = validateRequest(
      'TRACEROUTE',
      TracerouteRequestSchema,
      job.check.request,
      TRACEROUTE_ASSERTION_SOURCES,
    );
    if ('problem' in plan) return errorRunOutcome(startedAt, logs, plan.problem);
    const { request } = plan;
    const port = request.protocol === 'UDP' ? (request.port ?? DEFAULT_UDP_PORT) : null;
    const part: TracerouteCheckResult = {
      totalHops: 0,
      destinationReached: false,
      finalHopLatency: { avg: null, min: null, max: null, stdDev: null },
      timingPhases: { dns: 0, total: 0 },
      requestError: null,
      request: {
        url: request.url,
        protocol: request.protocol,
        port,
        ipFamily: request.ipFamily,
        maxHops: request.maxHops,
        maxUnknownHops: request.maxUnknownHops,
        ptrLookup: request.ptrLookup,
        timeout: request.timeout,
      },
      response: null,
    };
    const budgetMs = runBudgetMs(job.timeoutMs) - (request.ptrLookup ? PTR_BUDGET_MS : 0);
    const totalTimeoutMs = Math.max(1, Math.floor(Math.min(request.timeout * 1000, budgetMs)));

    let trace: RouteTrace;
    try {
      trace = await traceRoute(request.url, {
        protocol: request.protocol === 'UDP' ? 'udp' : 'icmp',
        ipFamily: request.ipFamily,
        maxHops: request.maxHops,
        maxUnknownHops: request.maxUnknownHops,
        probesPerHop: PROBES_PER_HOP,
        probeTimeoutMs: Math.min(PROBE_TIMEOUT_MS, totalTimeoutMs),
        totalTimeoutMs,
        ...(port !== null ? { port } : {}),
        socketPreference: this.#preference,
        useOsDnsResolver: this.#useOs,
        ...(this.#resolver ? { resolver: this.#resolver } : {}),
        signal: context.signal,
      });
    } catch (err) {
      if (context.signal.aborted) throw abortedError(context.signal);
      part.timingPhases.total = roundMs(performance.now() - t0);
      if (err instanceof ResolveError) {
        part.requestError = err.message;
        return this.#judge(job, request, part, { startedAt, logs, unreachable: err.message });
      }
      const message = err instanceof OutpostError || err instanceof RangeError ? err.message : String(err);
      part.requestError = message;
      // The agent cannot run this trace (no probe socket, a probe port range past 65535): not the target's fault.
      const outcome = errorRunOutcome(startedAt, logs, message, { responseTimeMs: part.timingPhases.total });
      outcome.tracerouteCheckResult = part;
      return outcome;
    }

    const hops = trace.hops.map(describeHop);
    if (request.ptrLookup)
      await this.#names(hops, Math.max(1, budgetMs + PTR_BUDGET_MS - (performance.now() - t0)));
    const last = trace.hops.at(-1);
    const lastRtts = last?.probes.flatMap((p) => (p.rttMs === null ? [] : [p.rttMs])) ?? [];
    const final = trace.reached && lastRtts.length > 0 ? stats(lastRtts) : null;
    const finalHopLatency = {
      avg: final ? roundMs(final.avg) : null,
      min: final ? roundMs(final.min) : null,
      max: final ? roundMs(final.max) : null,
      stdDev: final ? roundMs(final.stdDev) : null,
    };
    const response: TracerouteResponse = {
      hostname: request.url,
      resolvedIp: trace.resolvedIp,
      port,
      ipFamily: trace.resolvedIp.includes(':') ? 'IPv6' : 'IPv4',
      maxHops: request.maxHops,
      totalHops: hops.length,
      destinationReached: trace.reached,
      truncationReason: truncationReason(trace),
      probeProtocol: request.protocol,
      socketType: trace.socketType,
      finalHopLatency,
      hops,
    };
    part.response = response;
    part.totalHops = hops.length;
    part.destinationReached = trace.reached;
    part.finalHopLatency = finalHopLatency;
    part.timingPhases.total = roundMs(performance.now() - t0);
    logs.add(
      'INFO',
      `traced ${request.url} (${trace.resolvedIp}) over ${hops.length} hops in ${roundMs(trace.durationMs)} ms: ${response.truncationReason}`,
    );
    const unreachable = trace.reached
      ? null
      : `did not reach ${request.url} (${trace.resolvedIp}): ${response.truncationReason}${trace.sendError ? ` (${trace.sendError})` : ''} after ${hops.length} hops`;
    return this.#judge(job, request, part, { startedAt, logs, unreachable });
  }

  /** Nothing shared to release. */
  async close(): Promise<void> {}

  /**
   * Fills each hop's `main_host` with the PTR name of its `main_ip`, all lookups at once and each cut at
   * `budgetMs`; a failed or late lookup leaves the name empty.
   */
  async #names(hops: TracerouteHop[], budgetMs: number): Promise<void> {
    const addresses = [...new Set(hops.flatMap((h) => (h.main_ip === null ? [] : [h.main_ip])))];
    if (addresses.length === 0) return;
    const resolver = new Resolver({ timeout: Math.ceil(budgetMs), tries: 1 });
    if (this.#servers) resolver.setServers([...this.#servers]);
    const lookup = async (address: string): Promise<string> => {
      if (this.#useOs) return (await lookupService(address, 0)).hostname;
      return (await resolver.reverse(address))[0] ?? '';
    };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), budgetMs);
    });
    const names = new Map<string, string>();
    await Promise.race([
      late,
      Promise.all(
        addresses.map(async (address) => {
          try {
            const name = await lookup(address);
            if (name !== address) names.set(address, name.slice(0, MAX_NAME_CHARS));
          } catch {
            // No name: the hop keeps an empty one.
          }
        }),
      ),
    ]);
    clearTimeout(timer);
    resolver.cancel();
    for (const hop of hops) hop.main_host = hop.main_ip === null ? '' : (names.get(hop.main_ip) ?? '');
  }

  async #judge(
    job: Job,
    request: TracerouteRequest,
    part: TracerouteCheckResult,
    run: { startedAt: Date; logs: RunLogRecorder; unreachable: string | null },
  ): Promise<RunOutcome> {
    const lastHop = part.response?.hops.at(-1);
    const byStatistic = propertySource(part.finalHopLatency as Record<string, unknown>);
    // An assertion naming no statistic reads the average, as the hosted API's do.
    const latency: AssertionSourceReader = (a) => byStatistic({ ...a, property: a.property || 'avg' });
    const assertions = await evaluateAssertionsWithJsonPath(
      request.assertions,
      {
        RESPONSE_TIME: latency,
        LATENCY: latency,
        HOP_COUNT: valueSource(part.totalHops),
        PACKET_LOSS: valueSource(lastHop ? lastHop.loss_percentage : null),
      },
      'JSON_RESPONSE',
      part.response ?? {},
    );
    for (const result of assertions.results) {
      if (result.property === '' && (result.source === 'RESPONSE_TIME' || result.source === 'LATENCY')) {
        result.property = 'avg';
      }
    }
    const outcome = judgeRun({
      check: job.check,
      startedAt: run.startedAt,
      logs: run.logs,
      responseTimeMs: part.finalHopLatency.avg ?? part.timingPhases.total,
      unreachable: run.unreachable,
      failures: [],
      assertions,
    });
    outcome.tracerouteCheckResult = part;
    return outcome;
  }
}

/** Creates the TRACEROUTE executor (see TracerouteExecutorOptions). */
export function createTracerouteExecutor(options: TracerouteExecutorOptions = {}): TracerouteExecutor {
  return new TracerouteExecutor(options);
}
