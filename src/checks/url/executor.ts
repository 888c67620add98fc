import {
  type IpFamily,
  type Job,
  type RunOutcome,
  URL_ASSERTION_SOURCES,
  UrlRequestSchema,
} from '../../protocol/index.js';
import { evaluateAssertions, valueSource } from '../assertions/index.js';
import type { Executor, ExecutorContext } from '../executor.js';
import { HttpClient, type HttpExecutorOptions, parseHttpUrl } from '../http/client.js';
import { displayUrl, httpCheckResultOf, statusFailures } from '../http/result.js';
import { errorRunOutcome, judgeRun, validateRequest } from '../outcome.js';
import { RunLogRecorder } from '../run-log.js';
import { runBudgetMs } from '../time-budget.js';

/**
 * Options of the URL executor: those of every HTTP executor, with URL defaults — `maxBodyBytes`
 * 1 MiB (counted and never stored), user agent `Outpost-Agent/0.1 (uptime monitor)`.
 */
export type UrlExecutorOptions = HttpExecutorOptions;

/**
 * Runs URL monitors (docs/checks.md, "URL") on undici: a GET over a new connection
 * per request (own Client, TLS session reuse off), redirects followed when asked (each hop
 * recorded), the body counted and dropped, curl-compatible timings of the final request, the
 * server certificate, and STATUS_CODE assertions. Without assertions a status of 400 or more
 * fails the check (as Checkly's URL monitors do); with STATUS_CODE assertions they alone judge
 * the status. Response time is the whole run, redirects included.
 */
export class UrlExecutor implements Executor {
  readonly checkType = 'URL' as const;
  readonly #http: HttpClient;

  constructor(options: UrlExecutorOptions = {}) {
    this.#http = new HttpClient(options, {
      maxBodyBytes: 1024 * 1024,
      userAgent: 'Outpost-Agent/0.1 (uptime monitor)',
    });
  }

  /**
   * Runs one URL job. Never throws for a malformed job (→ `hasErrors`) or a failing target
   * (→ FAILED with its code). Throws OUTPOST_ERR_ABORTED when `context.signal` aborts.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const logs = new RunLogRecorder(context.log);
    if (job.check.checkType !== 'URL') {
      return errorRunOutcome(startedAt, logs, `check type ${job.check.checkType} is not URL`);
    }
    const plan = validateRequest('URL', UrlRequestSchema, job.check.request, URL_ASSERTION_SOURCES);
    if ('problem' in plan) return errorRunOutcome(startedAt, logs, plan.problem);
    const { request } = plan;
    const requestedUrl = parseHttpUrl(request.url);
    if (typeof requestedUrl === 'string') {
      return errorRunOutcome(startedAt, logs, `invalid URL request: ${requestedUrl}`);
    }

    const ipFamily: IpFamily = request.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4';
    const exchange = await this.#http.exchange(
      requestedUrl,
      {
        method: 'GET',
        headers: { ...this.#http.baseHeaders },
        followRedirects: request.followRedirects,
        skipSSL: request.skipSSL,
        ipFamily,
        deadline: t0 + runBudgetMs(job.timeoutMs),
        signal: context.signal,
      },
      logs,
    );
    const part = httpCheckResultOf(
      exchange,
      { method: 'GET', url: displayUrl(requestedUrl) },
      this.#http.resolverKind,
    );
    const status = part.response?.statusCode ?? null;
    const assertions = evaluateAssertions(request.assertions, { STATUS_CODE: valueSource(status) });
    const outcome = judgeRun({
      check: job.check,
      startedAt,
      logs,
      responseTimeMs: exchange.endAt - exchange.startAt,
      unreachable: exchange.unreachable,
      failures: statusFailures(exchange, request.assertions.length),
      assertions,
    });
    outcome.httpCheckResult = part;
    return outcome;
  }

  /** Nothing shared to release: every request closes its own connection. */
  async close(): Promise<void> {}
}

/** Creates the URL executor (see UrlExecutorOptions). */
export function createUrlExecutor(options: UrlExecutorOptions = {}): UrlExecutor {
  return new UrlExecutor(options);
}
