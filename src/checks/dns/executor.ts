import { Value } from '@sinclair/typebox/value';
import { pino } from 'pino';
import {
  DNS_ASSERTION_SOURCES,
  type DnsRequest,
  DnsRequestSchema,
  type Job,
  type RunOutcome,
} from '../../protocol/index.js';
import type { DnsCheckResult } from '../../protocol/dns-result.js';
import {
  DEFAULT_DNS_TIMEOUT_MS,
  DnsQueryError,
  type DnsQueryResponse,
  queryDns,
  queryNameProblem,
  reverseName,
  systemNameServer,
} from '../../net/dns/index.js';
import type { Logger } from '../../common/logger.js';
import { valueSource } from '../assertions/index.js';
import { evaluateAssertionsWithJsonPath } from '../assertions/off-thread.js';
import { roundMs } from '../../common/clock.js';
import type { Executor, ExecutorContext } from '../executor.js';
import { decideStatus } from '../status.js';
import type { RunLogRecorder } from '../run-log.js';
import { assertionFailures, errorRunOutcome, explainStatus, runScrubbed } from '../outcome.js';
import { runBudgetMs } from '../time-budget.js';

/** Options of the DNS executor. */
export type DnsExecutorOptions = {
  /** Agent-level logger. Default: silent. */
  log?: Logger;
  /** Name server for checks that give none. Default: the first `nameserver` of `resolvConfPath`. */
  defaultNameServer?: string;
  /** resolv.conf read for the default name server. Default /etc/resolv.conf. */
  resolvConfPath?: string;
  /** Limit of one query, TCP retry included, ms. Default 5000 (the DNS limit); shrunk to fit the job's timeout. */
  queryTimeoutMs?: number;
  /** EDNS0 UDP payload size advertised, bytes. Default 1232. */
  udpPayloadSizeBytes?: number;
};

type Plan = { request: DnsRequest } | { problem: string };

/** Validates the job's request against DnsRequestSchema and the DNS assertion rules. */
function planOf(job: Job): Plan {
  if (job.check.checkType !== 'DNS') return { problem: `check type ${job.check.checkType} is not DNS` };
  const request: unknown = job.check.request;
  if (!Value.Check(DnsRequestSchema, request)) {
    const problems = [...Value.Errors(DnsRequestSchema, request)]
      .slice(0, 3)
      .map((e) => `${e.path || '/'} ${e.message} (got ${JSON.stringify(e.value) ?? 'nothing'})`);
    return { problem: `invalid DNS request: ${problems.join('; ')}` };
  }
  for (const [index, assertion] of request.assertions.entries()) {
    if (!(DNS_ASSERTION_SOURCES as readonly string[]).includes(assertion.source)) {
      return {
        problem: `assertion ${index + 1}: source ${assertion.source} is not one of ${DNS_ASSERTION_SOURCES.join(', ')}`,
      };
    }
  }
  const name = (request.recordType === 'PTR' ? reverseName(request.query) : null) ?? request.query;
  const nameProblem = queryNameProblem(name);
  if (nameProblem !== null) return { problem: `invalid DNS request: /query ${nameProblem}` };
  return { request };
}

type Run = { startedAt: Date; logs: RunLogRecorder };

/**
 * Runs DNS checks (docs/checks.md, "DNS"): asks the check's name server (or the
 * system resolver's first) for `recordType` records of `query`, then judges the answer with
 * the RESPONSE_TIME, RESPONSE_CODE, TEXT_ANSWER and JSON_ANSWER assertions. Without a
 * RESPONSE_CODE assertion any return code but NOERROR fails the check.
 */
export class DnsExecutor implements Executor {
  readonly checkType = 'DNS' as const;
  readonly #log: Logger;
  readonly #options: DnsExecutorOptions;
  readonly #queryTimeoutMs: number;
  #announcedDefault: string | null = null;

  constructor(options: DnsExecutorOptions = {}) {
    for (const name of ['queryTimeoutMs', 'udpPayloadSizeBytes'] as const) {
      const value = options[name];
      if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
        throw new RangeError(`${name} must be a number > 0; got ${String(value)}`);
      }
    }
    this.#options = options;
    this.#log = options.log ?? pino({ level: 'silent' });
    this.#queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
  }

  /**
   * Runs one DNS job. Never throws for a bad job or a silent name server: a malformed job is
   * an outcome with `hasErrors`, a timeout or refused query a FAILED one. Throws
   * OUTPOST_ERR_ABORTED when `context.signal` aborts; the dispatcher reports that.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    // Secret variables are scrubbed from everything the run reports; agent-log lines are written scrubbed at the end.
    return runScrubbed(job, context, (logs) => this.#run(job, context, logs));
  }

  async #run(job: Job, context: ExecutorContext, logs: RunLogRecorder): Promise<RunOutcome> {
    const run: Run = { startedAt: new Date(), logs };
    const plan = planOf(job);
    if ('problem' in plan) {
      return errorRunOutcome(run.startedAt, run.logs, plan.problem);
    }
    const { request } = plan;
    // The schema's literal unions widen to string; it already checked the value.
    const protocol = request.protocol === 'TCP' ? 'TCP' : 'UDP';
    const host = request.nameServer ?? (await this.#defaultNameServer());
    const dns: DnsCheckResult = {
      returnCode: null,
      answer: '',
      json: null,
      responseTime: null,
      nameServerInfo: { host, port: request.port, protocol },
      truncatedRetriedOverTcp: false,
    };
    const timeoutMs = Math.max(1, Math.min(this.#queryTimeoutMs, Math.floor(runBudgetMs(job.timeoutMs))));
    run.logs.add(
      'INFO',
      `asking ${host} port ${request.port} over ${request.protocol} for ${request.recordType} ${request.query}`,
    );

    let response: DnsQueryResponse;
    try {
      response = await queryDns({
        query: request.query,
        recordType: request.recordType,
        nameServer: host,
        port: request.port,
        protocol,
        timeoutMs,
        signal: context.signal,
        ...(this.#options.udpPayloadSizeBytes === undefined
          ? {}
          : { udpPayloadSizeBytes: this.#options.udpPayloadSizeBytes }),
      });
    } catch (err) {
      if (!(err instanceof DnsQueryError)) throw err;
      run.logs.add('ERROR', err.message, { code: err.code });
      return await this.#judge(job, request, dns, run, err.message);
    }

    dns.returnCode = response.returnCode;
    dns.answer = response.answer;
    dns.json = response.json;
    dns.responseTime = roundMs(response.responseTimeMs);
    dns.nameServerInfo.protocol = response.protocol;
    dns.truncatedRetriedOverTcp = response.truncatedRetriedOverTcp;
    if (response.truncatedRetriedOverTcp) run.logs.add('WARN', 'UDP answer truncated (TC); retried over TCP');
    run.logs.add(
      'INFO',
      `${response.returnCode} from ${response.address} in ${dns.responseTime} ms: ${response.json.Answer.length} answer record(s), ${response.sizeBytes} bytes`,
    );
    return await this.#judge(job, request, dns, run, null);
  }

  /** The name server of checks that give none; logged to the agent log whenever it changes. */
  async #defaultNameServer(): Promise<string> {
    const host = this.#options.defaultNameServer ?? (await systemNameServer(this.#options.resolvConfPath));
    if (host !== this.#announcedDefault) {
      this.#announcedDefault = host;
      const source =
        this.#options.defaultNameServer === undefined
          ? (this.#options.resolvConfPath ?? '/etc/resolv.conf')
          : 'options';
      this.#log.info({ nameServer: host, source }, 'DNS checks without a name server use this one');
    }
    return host;
  }

  /** Nothing to release: every query has its own socket. */
  async close(): Promise<void> {}

  async #judge(
    job: Job,
    request: DnsRequest,
    dns: DnsCheckResult,
    run: Run,
    unreachable: string | null,
  ): Promise<RunOutcome> {
    const { check } = job;
    // JSONPath over the answer runs in an assertion worker with a deadline (off-thread.ts).
    const assertions = await evaluateAssertionsWithJsonPath(
      request.assertions,
      {
        RESPONSE_TIME: valueSource(dns.responseTime),
        RESPONSE_CODE: valueSource(dns.returnCode),
        TEXT_ANSWER: valueSource(dns.answer),
      },
      'JSON_ANSWER',
      dns.json,
    );
    const failures: string[] = [];
    if (unreachable !== null) failures.push(unreachable);
    // docs/checks.md, "DNS": without a RESPONSE_CODE assertion anything but NOERROR fails.
    const expectsCode = request.assertions.some((a) => a.source === 'RESPONSE_CODE');
    if (dns.returnCode !== null && dns.returnCode !== 'NOERROR' && !expectsCode) {
      failures.push(`return code ${dns.returnCode} is not NOERROR (a RESPONSE_CODE assertion can expect it)`);
    }
    failures.push(...assertionFailures(assertions.results));
    const decision = decideStatus({
      failed: failures.length > 0,
      responseTimeMs: dns.responseTime,
      degradedResponseTimeMs: check.degradedResponseTime,
      maxResponseTimeMs: check.maxResponseTime,
      shouldFail: check.shouldFail,
    });
    const rt = dns.responseTime;
    if (rt !== null && decision.overMaxResponseTime) {
      failures.push(`response time ${rt} ms is at or above maxResponseTime ${check.maxResponseTime} ms`);
    }
    const errorMessage = explainStatus(decision.status, check.shouldFail, failures, run.logs, [
      `response time ${rt} ms is at or above degradedResponseTime ${check.degradedResponseTime} ms`,
    ]);
    return {
      ...decision,
      hasErrors: false,
      responseTime: rt ?? 0,
      startedAt: run.startedAt.toISOString(),
      stoppedAt: new Date().toISOString(),
      errorMessage,
      assertions: assertions.results,
      logs: run.logs.lines,
      dnsCheckResult: dns,
    };
  }
}

/** Creates the DNS executor (see DnsExecutorOptions). */
export function createDnsExecutor(options: DnsExecutorOptions = {}): DnsExecutor {
  return new DnsExecutor(options);
}
