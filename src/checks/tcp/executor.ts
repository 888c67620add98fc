import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import {
  type Job,
  type RunOutcome,
  TCP_ASSERTION_SOURCES,
  type TcpRequest,
  TcpRequestSchema,
} from '../../protocol/index.js';
import type { TcpCheckResult } from '../../protocol/tcp-result.js';
import { createDnsResolver, ResolveError, type ResolvedAddress, resolveHost } from '../../net/resolve.js';
import { DEFAULT_MAX_KEPT_BYTES, DEFAULT_REPLY_IDLE_MS, probeTcp } from '../../net/tcp/probe.js';
import { abortedError } from '../../common/abort.js';
import { evaluateAssertions, valueSource } from '../assertions/index.js';
import { roundMs } from '../../common/clock.js';
import type { Executor, ExecutorContext } from '../executor.js';
import { errorRunOutcome, judgeRun, validateRequest } from '../outcome.js';
import { RunLogRecorder } from '../run-log.js';
import { runBudgetMs } from '../time-budget.js';

/** Options of the TCP executor. */
export type TcpExecutorOptions = {
  /**
   * Resolve with the OS resolver (getaddrinfo: /etc/hosts, search domains) instead of querying
   * the name server of /etc/resolv.conf directly. The agent sets it from `USE_OS_DNS_RESOLVER=true`.
   * Default false.
   */
  useOsDnsResolver?: boolean;
  /** Name servers to query instead of /etc/resolv.conf's (`"127.0.0.1:5353"`); ignored with useOsDnsResolver. */
  dnsServers?: readonly string[];
  /** Reply bytes kept in `responseData`; all are counted. Default 64 KiB. */
  maxResponseBytes?: number;
  /** A reply ends after this long without new bytes, ms. Default 100 (see TcpProbeOptions.replyIdleMs). */
  replyIdleMs?: number;
};

function deadlineOf(job: Job, t0: number): number {
  return t0 + runBudgetMs(job.timeoutMs);
}

function emptyPart(request: TcpRequest, resolver: 'dns' | 'os'): TcpCheckResult {
  return {
    hostname: request.hostname,
    port: request.port,
    resolvedIp: null,
    ipFamily: request.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4',
    resolver,
    connected: false,
    errorCode: null,
    timings: { dns: 0, connect: 0, firstByte: null, total: 0 },
    bytesSent: 0,
    bytesReceived: 0,
    responseData: '',
    responseTruncated: false,
  };
}

function checkOptions(options: TcpExecutorOptions): void {
  for (const name of ['maxResponseBytes', 'replyIdleMs'] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      throw new RangeError(`${name} must be a number ≥ 0; got ${String(value)}`);
    }
  }
}

/**
 * Runs TCP checks (docs/checks.md, "TCP"): resolves the hostname for the requested
 * family, connects, optionally sends `data` and reads the reply, then judges RESPONSE_DATA and
 * RESPONSE_TIME assertions and the response-time limits. A reply is awaited when `data` is
 * sent or a RESPONSE_DATA assertion needs one; otherwise the check is a plain port check.
 */
export class TcpExecutor implements Executor {
  readonly checkType = 'TCP' as const;
  readonly #useOs: boolean;
  readonly #resolver: Resolver | undefined;
  readonly #maxKept: number;
  readonly #idleMs: number;

  constructor(options: TcpExecutorOptions = {}) {
    checkOptions(options);
    this.#useOs = options.useOsDnsResolver ?? false;
    this.#resolver = options.dnsServers ? createDnsResolver({ servers: options.dnsServers }) : undefined;
    this.#maxKept = options.maxResponseBytes ?? DEFAULT_MAX_KEPT_BYTES;
    this.#idleMs = options.replyIdleMs ?? DEFAULT_REPLY_IDLE_MS;
  }

  /**
   * Runs one TCP job. Never throws for a malformed job (→ `hasErrors`) or an unreachable
   * target (→ FAILED with the system code). Throws OUTPOST_ERR_ABORTED when `context.signal`
   * aborts; the dispatcher reports that.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const logs = new RunLogRecorder(context.log);
    if (job.check.checkType !== 'TCP') {
      return errorRunOutcome(startedAt, logs, `check type ${job.check.checkType} is not TCP`);
    }
    const plan = validateRequest('TCP', TcpRequestSchema, job.check.request, TCP_ASSERTION_SOURCES);
    if ('problem' in plan) return errorRunOutcome(startedAt, logs, plan.problem);
    const { request } = plan;
    const part = emptyPart(request, this.#useOs ? 'os' : 'dns');

    let resolved: ResolvedAddress;
    try {
      resolved = await resolveHost(request.hostname, {
        ipFamily: part.ipFamily,
        useOsDnsResolver: this.#useOs,
        signal: context.signal,
        resolver: this.#resolver,
      });
    } catch (err) {
      if (!(err instanceof ResolveError)) throw err;
      part.errorCode = err.code;
      part.timings.dns = part.timings.total = roundMs(performance.now() - t0);
      return this.#judge(job, request, part, { startedAt, logs, unreachable: err.message });
    }
    part.resolvedIp = resolved.address;
    part.ipFamily = resolved.family === 6 ? 'IPv6' : 'IPv4';
    part.timings.dns = roundMs(resolved.durationMs);
    if (request.ipFamily === 'IPv6' && resolved.family === 4 && isIP(request.hostname) === 0) {
      logs.add('WARN', `${request.hostname} has no IPv6 address; falling back to IPv4`);
    }
    if (resolved.durationMs > 0) {
      logs.add(
        'DEBUG',
        `resolved ${request.hostname} to ${resolved.address} in ${part.timings.dns} ms (${resolved.resolver})`,
      );
    }

    const data = request.data === null ? null : Buffer.from(request.data, 'utf8');
    const readReply = data !== null || request.assertions.some((a) => a.source === 'RESPONSE_DATA');
    const probeStart = performance.now();
    const probe = await probeTcp({
      address: resolved.address,
      port: request.port,
      data,
      readReply,
      deadline: deadlineOf(job, t0),
      signal: context.signal,
      maxKeptBytes: this.#maxKept,
      replyIdleMs: this.#idleMs,
    });
    if (probe.aborted) throw abortedError(context.signal);

    const offset = probeStart - t0;
    part.connected = probe.connected;
    part.errorCode = probe.errorCode;
    part.timings.connect = roundMs(probe.connectMs);
    part.timings.firstByte = probe.firstByteMs === null ? null : roundMs(probe.firstByteMs - probe.connectMs);
    part.timings.total = roundMs(offset + probe.endMs);
    part.bytesSent = probe.bytesSent;
    part.bytesReceived = probe.bytesReceived;
    part.responseData = probe.reply.toString('utf8');
    part.responseTruncated = probe.truncated;
    if (probe.connected) {
      logs.add('INFO', `connected to ${resolved.address}:${request.port} in ${part.timings.connect} ms`);
    }
    if (readReply && probe.connected) {
      logs.add('INFO', `sent ${probe.bytesSent} bytes, received ${probe.bytesReceived} bytes`);
    }
    return this.#judge(job, request, part, { startedAt, logs, unreachable: probe.errorMessage });
  }

  /** Nothing shared to release. */
  async close(): Promise<void> {}

  #judge(
    job: Job,
    request: TcpRequest,
    part: TcpCheckResult,
    run: { startedAt: Date; logs: RunLogRecorder; unreachable: string | null },
  ): RunOutcome {
    const assertions = evaluateAssertions(request.assertions, {
      RESPONSE_DATA: valueSource(part.responseData),
      RESPONSE_TIME: valueSource(part.timings.total),
    });
    const outcome = judgeRun({
      check: job.check,
      startedAt: run.startedAt,
      logs: run.logs,
      responseTimeMs: part.timings.total,
      unreachable: run.unreachable,
      failures: [],
      assertions,
    });
    outcome.tcpCheckResult = part;
    return outcome;
  }
}

/** Creates the TCP executor (see TcpExecutorOptions). */
export function createTcpExecutor(options: TcpExecutorOptions = {}): TcpExecutor {
  return new TcpExecutor(options);
}
