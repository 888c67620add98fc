import { TypeCompiler } from '@sinclair/typebox/compiler';
import { isIP } from 'node:net';
import { pino } from 'pino';
import {
  type IcmpCheckResult,
  type IcmpRequest,
  IcmpRequestSchema,
  ICMP_ASSERTION_SOURCES,
  type Job,
  type RunOutcome,
} from '../../protocol/index.js';
import { Pinger, type PingOutcome, type SocketPreference } from '../../net/icmp/index.js';
import { hasCode } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { propertySource } from '../assertions/index.js';
import { evaluateAssertionsWithJsonPath } from '../assertions/off-thread.js';
import { isoNow, roundMs } from '../../common/clock.js';
import type { Executor, ExecutorContext } from '../executor.js';
import { decideStatus } from '../status.js';
import { type ResolvedTarget, resolveTarget } from './resolve.js';
import { ResolveError } from '../../net/resolve.js';
import { RunLogRecorder } from '../run-log.js';
import { packetLossPercent, summarizeLatency } from './statistics.js';
import { assertionFailures, errorRunOutcome, explainStatus } from '../outcome.js';
import { runBudgetMs } from '../time-budget.js';

/** Options of the ICMP executor. */
export type IcmpExecutorOptions = {
  /** Agent-level logger (socket kind, IPv6 fallback); each run also logs to its job logger. Default: silent. */
  log?: Logger;
  /** A Pinger to share; the executor then does not close it. Default: its own. */
  pinger?: Pinger;
  /** Socket kind of its own Pinger. Default `auto` (datagram, else raw). */
  socketPreference?: SocketPreference;
  /**
   * Time between two echo requests of one check, ms. Default 200: iputils ping's 1000 ms
   * would make 50 packets outlast the 30 s limit of an ICMP run. Shrunk when the job's
   * timeout could not hold `pingCount` packets at this pace.
   */
  intervalMs?: number;
  /** How long one echo request waits for its reply, ms. Default 2000. Shrunk to fit the job's timeout. */
  packetTimeoutMs?: number;
  /** ICMP payload, bytes. Default 56, as iputils ping (84-byte IPv4 packets). */
  payloadSizeBytes?: number;
};

/** sendto errors of an IPv6 socket that mean "this host has no IPv6 route": fall back to IPv4. */
const IPV6_UNAVAILABLE = new Set(['ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

type Plan = { request: IcmpRequest } | { problem: string };

/** Compiled once: checking a request then costs microseconds, not a schema walk. */
const requestChecker = TypeCompiler.Compile(IcmpRequestSchema);

/** Validates the job's request against IcmpRequestSchema and the ICMP assertion rules. */
function planOf(job: Job): Plan {
  if (job.check.checkType !== 'ICMP') return { problem: `check type ${job.check.checkType} is not ICMP` };
  const request: unknown = job.check.request;
  if (!requestChecker.Check(request)) {
    const problems = [...requestChecker.Errors(request)]
      .slice(0, 3)
      .map((e) => `${e.path || '/'} ${e.message} (got ${JSON.stringify(e.value) ?? 'nothing'})`);
    return { problem: `invalid ICMP request: ${problems.join('; ')}` };
  }
  for (const [index, assertion] of request.assertions.entries()) {
    if (!(ICMP_ASSERTION_SOURCES as readonly string[]).includes(assertion.source)) {
      return {
        problem: `assertion ${index + 1}: source ${assertion.source} is not one of LATENCY, JSON_RESPONSE`,
      };
    }
    if (
      assertion.source === 'LATENCY' &&
      !['avg', 'min', 'max', 'stdDev'].includes(assertion.property ?? '')
    ) {
      return { problem: `assertion ${index + 1}: LATENCY property must be avg, min, max or stdDev` };
    }
  }
  return { request };
}

function emptyResult(request: IcmpRequest, payloadSizeBytes: number): IcmpCheckResult {
  return {
    hostname: request.hostname,
    resolvedIp: null,
    ipFamily: request.ipFamily,
    pingCount: request.pingCount,
    packetSize: payloadSizeBytes,
    packetsSent: 0,
    packetsReceived: 0,
    packetLoss: 100,
    latency: { min: null, avg: null, max: null, stdDev: null },
    dnsResolutionTime: 0,
    socketType: null,
    pingResults: [],
  };
}

/**
 * Runs ICMP checks (docs/checks.md, "ICMP"): resolves the hostname for the
 * requested family, sends `pingCount` echo requests over the shared socket of a Pinger,
 * and judges packet loss, average latency and the LATENCY / JSON_RESPONSE assertions.
 */
export class IcmpExecutor implements Executor {
  readonly checkType = 'ICMP' as const;
  readonly #pinger: Pinger;
  readonly #ownsPinger: boolean;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #packetTimeoutMs: number;
  readonly #payloadSizeBytes: number;
  readonly #announced = new Set<string>();

  constructor(options: IcmpExecutorOptions = {}) {
    for (const name of ['intervalMs', 'packetTimeoutMs', 'payloadSizeBytes'] as const) {
      const value = options[name];
      if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
        throw new RangeError(`${name} must be a number ≥ 0; got ${String(value)}`);
      }
    }
    if (
      options.payloadSizeBytes !== undefined &&
      !(Number.isInteger(options.payloadSizeBytes) && options.payloadSizeBytes <= 65_000)
    ) {
      throw new RangeError(
        `payloadSizeBytes must be an integer from 0 to 65000; got ${options.payloadSizeBytes}`,
      );
    }
    this.#pinger = options.pinger ?? new Pinger({ socketPreference: options.socketPreference ?? 'auto' });
    this.#ownsPinger = options.pinger === undefined;
    this.#log = options.log ?? pino({ level: 'silent' });
    this.#intervalMs = options.intervalMs ?? 200;
    this.#packetTimeoutMs = options.packetTimeoutMs ?? 2000;
    this.#payloadSizeBytes = options.payloadSizeBytes ?? 56;
  }

  /**
   * Runs one ICMP job. Never throws for a bad job or an unreachable target: those are
   * outcomes (a malformed job or no ICMP socket → `hasErrors`). Throws OUTPOST_ERR_ABORTED
   * when `context.signal` aborts; the dispatcher reports that.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const logs = new RunLogRecorder(context.log);
    const plan = planOf(job);
    if ('problem' in plan) {
      return errorRunOutcome(startedAt, logs, plan.problem);
    }
    const { request } = plan;
    const icmp = emptyResult(request, this.#payloadSizeBytes);
    const deadline = t0 + runBudgetMs(job.timeoutMs);

    let pinged: { target: ResolvedTarget; outcome: PingOutcome };
    try {
      pinged = await this.#resolveAndPing(request, deadline, context.signal, logs);
    } catch (err) {
      if (hasCode(err, 'OUTPOST_ERR_ABORTED')) throw err;
      if (err instanceof ResolveError) {
        return await this.#judge(job, request, icmp, { startedAt, logs, unreachable: err.message });
      }
      if (hasCode(err, 'OUTPOST_ERR_ICMP_SOCKET')) {
        return { ...errorRunOutcome(startedAt, logs, err.message), icmpCheckResult: icmp };
      }
      throw err;
    }

    const { target, outcome } = pinged;
    const rtts = outcome.replies.flatMap((reply) => (reply.rttMs === null ? [] : [reply.rttMs]));
    icmp.resolvedIp = target.address;
    icmp.ipFamily = target.family === 6 ? 'IPv6' : 'IPv4';
    icmp.dnsResolutionTime = roundMs(target.dnsResolutionTimeMs);
    icmp.socketType = outcome.socketType;
    icmp.packetsSent = outcome.replies.filter((reply) => reply.sendError === null).length;
    icmp.packetsReceived = rtts.length;
    icmp.packetLoss = packetLossPercent(request.pingCount, rtts.length);
    icmp.latency = summarizeLatency(rtts);
    icmp.pingResults = outcome.replies.map((reply) => ({
      sequence: reply.sequence,
      success: reply.success,
      rtt: reply.rttMs === null ? null : roundMs(reply.rttMs),
      ttl: reply.ttl,
    }));
    logs.add(
      'INFO',
      `${icmp.packetsSent} packets transmitted, ${icmp.packetsReceived} received, ${icmp.packetLoss}% packet loss` +
        (icmp.latency.avg === null
          ? ''
          : `, rtt min/avg/max/mdev = ${icmp.latency.min}/${icmp.latency.avg}/${icmp.latency.max}/${icmp.latency.stdDev} ms`),
    );
    const sendError = outcome.replies.find((reply) => reply.sendError !== null)?.sendError;
    let unreachable: string | null = null;
    if (rtts.length === 0) {
      unreachable = sendError
        ? `cannot send to ${target.address}: ${sendError}`
        : `no reply from ${target.address} (100% packet loss)`;
    }
    return await this.#judge(job, request, icmp, { startedAt, logs, unreachable });
  }

  /** Closes the Pinger's sockets when the executor created it. Idempotent. */
  async close(): Promise<void> {
    if (this.#ownsPinger) this.#pinger.close();
  }

  async #resolveAndPing(
    request: IcmpRequest,
    deadline: number,
    signal: AbortSignal,
    logs: RunLogRecorder,
  ): Promise<{ target: ResolvedTarget; outcome: PingOutcome }> {
    const wanted = request.ipFamily === 'IPv6' ? 6 : 4;
    let target: ResolvedTarget;
    try {
      target = await resolveTarget(request.hostname, wanted, signal);
    } catch (err) {
      if (wanted !== 6 || !(err instanceof ResolveError)) throw err;
      target = await resolveTarget(request.hostname, 4, signal);
      this.#fallback(logs, `${request.hostname} has no IPv6 address (${err.code})`);
    }
    if (target.dnsResolutionTimeMs > 0) {
      logs.add(
        'DEBUG',
        `resolved ${request.hostname} to ${target.address} in ${roundMs(target.dnsResolutionTimeMs)} ms`,
      );
    }
    // Only a name can fall back: it may have an IPv4 address too.
    const canFallBack = target.family === 6 && isIP(request.hostname) === 0;
    let why: string;
    try {
      const outcome = await this.#ping(target, request.pingCount, deadline, signal, logs);
      const sendError = outcome.replies[0]?.sendError;
      if (!canFallBack || !sendError || !IPV6_UNAVAILABLE.has(sendError)) return { target, outcome };
      why = `sending to ${target.address} failed with ${sendError}`;
    } catch (err) {
      const code = (err as { cause?: { code?: unknown } }).cause?.code;
      if (!canFallBack || !hasCode(err, 'OUTPOST_ERR_ICMP_SOCKET') || code !== 'EAFNOSUPPORT') throw err;
      why = 'the kernel has no IPv6 (EAFNOSUPPORT)';
    }
    this.#fallback(logs, why);
    return this.#retryOverIpv4(request, target, deadline, signal, logs);
  }

  async #ping(
    target: ResolvedTarget,
    count: number,
    deadline: number,
    signal: AbortSignal,
    logs: RunLogRecorder,
  ): Promise<PingOutcome> {
    const socketType = this.#pinger.socketType(target.family);
    const how =
      socketType === 'datagram' ? 'an unprivileged datagram ICMP socket' : 'a raw ICMP socket (CAP_NET_RAW)';
    logs.add('INFO', `pinging ${target.address} ${count} times over ${how}`, { socketType });
    if (!this.#announced.has(`${target.family}:${socketType}`)) {
      this.#announced.add(`${target.family}:${socketType}`);
      this.#log.info({ family: target.family, socketType }, 'ICMP socket opened');
    }
    // Fit count packets and the last one's wait into what is left of the job's time.
    const remainingMs = Math.max(1, deadline - performance.now());
    const timeoutMs = Math.max(1, Math.min(this.#packetTimeoutMs, remainingMs));
    const intervalMs =
      count > 1 ? Math.min(this.#intervalMs, Math.max(0, (remainingMs - timeoutMs) / (count - 1))) : 0;
    return this.#pinger.ping({
      address: target.address,
      family: target.family,
      count,
      timeoutMs,
      intervalMs,
      payloadSizeBytes: this.#payloadSizeBytes,
      signal,
    });
  }

  async #retryOverIpv4(
    request: IcmpRequest,
    previous: ResolvedTarget,
    deadline: number,
    signal: AbortSignal,
    logs: RunLogRecorder,
  ): Promise<{ target: ResolvedTarget; outcome: PingOutcome }> {
    const v4 = await resolveTarget(request.hostname, 4, signal);
    const target = { ...v4, dnsResolutionTimeMs: previous.dnsResolutionTimeMs + v4.dnsResolutionTimeMs };
    return { target, outcome: await this.#ping(target, request.pingCount, deadline, signal, logs) };
  }

  #fallback(logs: RunLogRecorder, why: string): void {
    logs.add('WARN', `IPv6 requested but ${why}; falling back to IPv4`);
    this.#log.warn({ why }, 'ICMP check fell back from IPv6 to IPv4');
  }

  async #judge(
    job: Job,
    request: IcmpRequest,
    icmp: IcmpCheckResult,
    run: { startedAt: Date; logs: RunLogRecorder; unreachable: string | null },
  ): Promise<RunOutcome> {
    const { check } = job;
    const latency = icmp.latency as Record<string, unknown>;
    // JSONPath over the result runs in an assertion worker with a deadline (off-thread.ts).
    // Most ICMP checks have no assertions: they skip that step and its promise.
    const assertions =
      request.assertions.length === 0
        ? { results: [], allPassed: true }
        : await evaluateAssertionsWithJsonPath(
            request.assertions,
            { LATENCY: propertySource(latency) },
            'JSON_RESPONSE',
            icmp,
          );
    const decision = decideStatus({
      failed: run.unreachable !== null || !assertions.allPassed,
      responseTimeMs: icmp.latency.avg,
      degradedResponseTimeMs: check.degradedResponseTime,
      maxResponseTimeMs: check.maxResponseTime,
      packetLossPercent: icmp.packetsSent > 0 ? icmp.packetLoss : null,
      degradedPacketLossThreshold: check.degradedPacketLossThreshold,
      maxPacketLossThreshold: check.maxPacketLossThreshold,
      shouldFail: check.shouldFail,
    });

    const failures: string[] = [];
    const degradations: string[] = [];
    if (run.unreachable !== null) failures.push(run.unreachable);
    const loss = icmp.packetLoss;
    if (
      run.unreachable === null &&
      check.maxPacketLossThreshold !== null &&
      loss >= check.maxPacketLossThreshold
    ) {
      failures.push(`packet loss ${loss}% is at or above the maximum of ${check.maxPacketLossThreshold}%`);
    } else if (check.degradedPacketLossThreshold !== null && loss >= check.degradedPacketLossThreshold) {
      degradations.push(
        `packet loss ${loss}% is at or above the degraded threshold of ${check.degradedPacketLossThreshold}%`,
      );
    }
    const avg = icmp.latency.avg;
    if (avg !== null && decision.overMaxResponseTime) {
      failures.push(`average latency ${avg} ms is at or above maxResponseTime ${check.maxResponseTime} ms`);
    } else if (avg !== null && check.degradedResponseTime !== null && avg >= check.degradedResponseTime) {
      degradations.push(
        `average latency ${avg} ms is at or above degradedResponseTime ${check.degradedResponseTime} ms`,
      );
    }
    failures.push(...assertionFailures(assertions.results));
    const errorMessage = explainStatus(decision.status, check.shouldFail, failures, run.logs, degradations);
    // The decision's fields one by one: spreading it into this literal cost V8 ~10 µs per run
    // (measured), a third of a check's CPU at fping's pace.
    return {
      status: decision.status,
      hasFailures: decision.hasFailures,
      isDegraded: decision.isDegraded,
      overMaxResponseTime: decision.overMaxResponseTime,
      hasErrors: false,
      responseTime: icmp.latency.avg ?? 0,
      startedAt: run.startedAt.toISOString(),
      stoppedAt: isoNow(),
      errorMessage,
      assertions: assertions.results,
      logs: run.logs.lines,
      icmpCheckResult: icmp,
    };
  }
}

/** Creates the ICMP executor (see IcmpExecutorOptions). */
export function createIcmpExecutor(options: IcmpExecutorOptions = {}): IcmpExecutor {
  return new IcmpExecutor(options);
}
