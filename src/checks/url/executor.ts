import type { Resolver } from 'node:dns/promises';
import type { buildConnector } from 'undici';
import {
  type IpFamily,
  type Job,
  type RunOutcome,
  URL_ASSERTION_SOURCES,
  UrlRequestSchema,
} from '../../protocol/index.js';
import type { HttpRedirect } from '../../protocol/http-result.js';
import {
  createCheckConnector,
  REDIRECT_STATUSES,
  type RequestOnceResult,
  requestOnce,
} from '../../net/http/index.js';
import { createDnsResolver, resolveHost } from '../../net/resolve.js';
import { abortedError } from '../../common/abort.js';
import { evaluateAssertions, valueSource } from '../assertions/index.js';
import type { Executor, ExecutorContext } from '../executor.js';
import { errorRunOutcome, judgeRun, RunLogRecorder, validateRequest } from '../outcome.js';
import { displayUrl, httpPartOf } from './http-part.js';
import { runBudgetMs } from '../time-budget.js';

/** Options of the URL executor. */
export type UrlExecutorOptions = {
  /**
   * Resolve with the OS resolver (getaddrinfo: /etc/hosts, search domains) instead of querying
   * the name server of /etc/resolv.conf directly. The agent sets it from `USE_OS_DNS_RESOLVER=true`.
   * Default false.
   */
  useOsDnsResolver?: boolean;
  /** Name servers to query instead of /etc/resolv.conf's (`"127.0.0.1:5353"`); ignored with useOsDnsResolver. */
  dnsServers?: readonly string[];
  /**
   * Extra CA certificates (PEM) trusted besides Node's bundled roots. Default: none, and then
   * Node's default store applies, which includes NODE_EXTRA_CA_CERTS.
   */
  ca?: string | readonly string[];
  /** Redirects followed before the run fails, when the check follows them. Default 10. */
  maxRedirects?: number;
  /** Body bytes read per response before reading stops, counted and never stored. Default 1 MiB. */
  maxBodyBytes?: number;
  /** The `user-agent` request header. Default `Outpost-Agent/0.1 (uptime monitor)`. */
  userAgent?: string;
};

function checkOptions(options: UrlExecutorOptions): void {
  for (const name of ['maxRedirects', 'maxBodyBytes'] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isInteger(value) && value >= 0)) {
      throw new RangeError(`${name} must be an integer ≥ 0; got ${String(value)}`);
    }
  }
}

function parseTarget(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `invalid URL request: url ${JSON.stringify(text)} is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `invalid URL request: url must be http or https (got ${url.protocol.slice(0, -1)})`;
  }
  return url;
}

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
  readonly #useOs: boolean;
  readonly #resolver: Resolver | undefined;
  readonly #connector: buildConnector.connector;
  readonly #maxRedirects: number;
  readonly #maxBodyBytes: number;
  readonly #headers: Record<string, string>;

  constructor(options: UrlExecutorOptions = {}) {
    checkOptions(options);
    this.#useOs = options.useOsDnsResolver ?? false;
    this.#resolver = options.dnsServers ? createDnsResolver({ servers: options.dnsServers }) : undefined;
    this.#maxRedirects = options.maxRedirects ?? 10;
    this.#maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.#headers = {
      'user-agent': options.userAgent ?? 'Outpost-Agent/0.1 (uptime monitor)',
      accept: '*/*',
    };
    const extraCa =
      options.ca === undefined ? [] : typeof options.ca === 'string' ? [options.ca] : [...options.ca];
    // One connector (one TLS context) for every connection; sessions are never resumed.
    this.#connector = createCheckConnector(extraCa);
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
    const requestedUrl = parseTarget(request.url);
    if (typeof requestedUrl === 'string') return errorRunOutcome(startedAt, logs, requestedUrl);

    const ipFamily: IpFamily = request.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4';
    const resolve = (hostname: string) =>
      resolveHost(hostname, {
        ipFamily,
        useOsDnsResolver: this.#useOs,
        signal: context.signal,
        resolver: this.#resolver,
      });
    const deadline = t0 + runBudgetMs(job.timeoutMs);
    const redirects: HttpRedirect[] = [];
    let url = requestedUrl;
    let last: RequestOnceResult;
    let problem: { code: string; message: string } | null = null;
    for (;;) {
      last = await requestOnce(url, {
        base: this.#connector,
        resolve,
        skipSSL: request.skipSSL,
        method: 'GET',
        headers: this.#headers,
        deadline,
        signal: context.signal,
        maxBodyBytes: this.#maxBodyBytes,
      });
      if (last.aborted) throw abortedError(context.signal);
      if (last.error !== null || last.statusCode === null) break;
      logs.add('INFO', `GET ${displayUrl(url)} → ${last.statusCode} ${last.statusText}`.trimEnd());
      const location = last.headers.location;
      if (!request.followRedirects || !REDIRECT_STATUSES.has(last.statusCode) || typeof location !== 'string')
        break;
      if (redirects.length >= this.#maxRedirects) {
        problem = { code: 'UND_ERR_MAX_REDIRECTS', message: `more than ${this.#maxRedirects} redirects` };
        break;
      }
      const next = URL.canParse(location, url.href) ? parseTarget(new URL(location, url).href) : 'bad';
      if (typeof next === 'string') {
        problem = { code: 'ERR_INVALID_REDIRECT', message: `redirect to an unsupported URL: ${location}` };
        break;
      }
      redirects.push({ url: displayUrl(url), statusCode: last.statusCode });
      url = next;
    }
    const failedAt = performance.now();
    const part = httpPartOf({
      requestedUrl,
      finalUrl: url,
      last,
      redirects,
      resolver: this.#useOs ? 'os' : 'dns',
      errorCode: problem?.code ?? null,
      failedAt,
    });
    if (last.trace.tlsSessionReused)
      logs.add('WARN', 'the TLS session was resumed: the tls phase is too short');

    const failure = problem ?? last.error;
    const unreachable =
      failure === null ? null : `GET ${displayUrl(url)} failed: ${failure.message} (${failure.code})`;
    const failures: string[] = [];
    const status = part.response?.statusCode ?? null;
    if (unreachable === null && request.assertions.length === 0 && status !== null && status >= 400) {
      failures.push(`HTTP ${status} ${part.response?.statusText ?? ''}`.trimEnd());
    }
    const assertions = evaluateAssertions(request.assertions, { STATUS_CODE: valueSource(status) });
    const outcome = judgeRun({
      check: job.check,
      startedAt,
      logs,
      responseTimeMs: (last.trace.endAt ?? failedAt) - t0,
      unreachable,
      failures,
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
