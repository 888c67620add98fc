import { createHash } from 'node:crypto';
import type { buildConnector } from 'undici';
import {
  API_ASSERTION_SOURCES,
  ApiRequestSchema,
  type HttpCheckResult,
  type IpFamily,
  type Job,
  type JobClientCertificate,
  type JobScript,
  type RunOutcome,
} from '../../protocol/index.js';
import { createCheckConnector, scrubHeaders } from '../../net/http/index.js';
import { SECRET_HEADERS } from '../../common/credential-headers.js';
import { credentialTokens, Scrubber } from '../../common/scrub.js';
import { userCodeIsolation } from '../../common/run-users.js';
import type { ScriptRunner } from '../../sandbox/types.js';
import { abortedError } from '../../common/abort.js';
import { interpolate } from '../../common/interpolate.js';
import { evaluateHttpBody, INLINE_BODY_CHARS } from '../assertions/off-thread.js';
import { roundMs } from '../../common/clock.js';
import type { Executor, ExecutorContext } from '../executor.js';
import {
  checkCountOptions,
  HttpClient,
  type HttpExecutorOptions,
  headerText,
  parseHttpUrl,
} from '../http/client.js';
import { displayUrl, httpCheckResultOf, statusFailures } from '../http/result.js';
import { errorRunOutcome, judgeRun, releaseOutcome, validateRequest } from '../outcome.js';
import { RunLogRecorder } from '../run-log.js';
import { DEFAULT_RUNTIME_ID, runtimeVariables } from '../runtime-variables.js';
import { runBudgetMs } from '../time-budget.js';
import { encodeBody, isTextual, readScriptRequest, type ScriptRequest, toScriptRequest } from './request.js';

/** Body bytes an API check reads at most: 25 MB (docs/checks.md, "API"). */
export const API_MAX_BODY_BYTES = 25 * 1024 * 1024;

/** Time limit of one setup or teardown script, ms (docs/checks.md, "API"). */
export const SCRIPT_TIMEOUT_MS = 10_000;

/**
 * Options of the API executor: those of every HTTP executor (resolver, extra CAs, redirects, user
 * agent) with API defaults — `maxBodyBytes` 25 MB ({@link API_MAX_BODY_BYTES}), user agent
 * `Outpost-Agent/0.1 (API check)` — plus the script runner.
 */
export type ApiExecutorOptions = HttpExecutorOptions & {
  /** Text body bytes kept in the result, bytes. Default 1 MiB; binary bodies are never kept. */
  maxStoredBodyBytes?: number;
  /**
   * Runs setup and teardown scripts (src/sandbox); the executor's `close()` closes it. Without
   * one, a job with scripts fails with hasErrors.
   */
  scripts?: ScriptRunner;
  /** Limit per script, ms. Default 10 000. */
  scriptTimeoutMs?: number;
};

/**
 * `text` percent-decoded where it can be: valid `%XX` UTF-8 sequences decoded, a lone or
 * malformed `%` (`%`, `%zz`, `%E0%A4%A`) kept as written. Never throws.
 */
export function lenientDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/** What one run carries through its steps: the job, its clock and budget, its log and its scrubber. */
type RunState = {
  job: Job;
  context: ExecutorContext;
  startedAt: Date;
  /** performance.now() at the start of the run. */
  t0: number;
  /** performance.now() by which the run must end. */
  deadline: number;
  logs: RunLogRecorder;
  scrubber: Scrubber;
  /** The scripts' environment: the check's variables and the runtime variables. */
  env: Record<string, string>;
};

/**
 * Runs API checks (docs/checks.md, "API"): `{{VAR}}` interpolation from the job's
 * merged variables, an optional setup script that may rewrite the request, one request over a
 * new connection with the URL monitor's timing phases (redirects per `followRedirects`; 303 and
 * a POST's 301/302 continue as GET; credentials are not sent to another origin), up to 25 MB of
 * body read, the client certificate of the job presented for mTLS, an optional teardown script
 * that sees (and may change) the response, then the assertions STATUS_CODE, JSON_BODY, HEADERS,
 * TEXT_BODY and RESPONSE_TIME. Without assertions a status ≥ 400 fails the check, as for URL
 * monitors. Response time is the request's, redirects included and scripts excluded; the request
 * is given up at `maxResponseTime` (it would fail the check from then on anyway).
 *
 * Scrubbing: values of secret variables, `SERVICE_SECRET_*` values a script sets, basic-auth
 * credentials and the values of Authorization, Cookie, Set-Cookie and x-api-key headers (sent
 * or received) are replaced by `*****` everywhere in the outcome and in log lines; a run with
 * more secrets than the scrubber holds has its output withheld (releaseOutcome).
 */
export class ApiExecutor implements Executor {
  readonly checkType = 'API' as const;
  readonly #http: HttpClient;
  readonly #mtlsConnectors = new Map<string, buildConnector.connector>();
  readonly #maxStoredBodyBytes: number;
  readonly #scripts: ScriptRunner | undefined;
  readonly #scriptTimeoutMs: number;

  constructor(options: ApiExecutorOptions = {}) {
    checkCountOptions(options, ['maxRedirects', 'maxBodyBytes', 'maxStoredBodyBytes', 'scriptTimeoutMs']);
    this.#http = new HttpClient(options, {
      maxBodyBytes: API_MAX_BODY_BYTES,
      userAgent: 'Outpost-Agent/0.1 (API check)',
    });
    this.#maxStoredBodyBytes = options.maxStoredBodyBytes ?? 1024 * 1024;
    this.#scripts = options.scripts;
    this.#scriptTimeoutMs = options.scriptTimeoutMs ?? SCRIPT_TIMEOUT_MS;
  }

  /**
   * The connector presenting `certificate` (built once per certificate and kept: building a
   * context costs more than a handshake).
   * @throws Error when the PEM, key or passphrase cannot be loaded (message from OpenSSL).
   */
  #mtlsConnector(certificate: JobClientCertificate): buildConnector.connector {
    const id = createHash('sha256')
      .update(
        `${certificate.cert}\0${certificate.key}\0${certificate.ca ?? ''}\0${certificate.passphrase ?? ''}`,
      )
      .digest('hex');
    let connector = this.#mtlsConnectors.get(id);
    if (!connector) {
      connector = createCheckConnector([...this.#http.extraCa, ...(certificate.ca ? [certificate.ca] : [])], {
        cert: certificate.cert,
        key: certificate.key,
        ...(certificate.passphrase ? { passphrase: certificate.passphrase } : {}),
      });
      if (this.#mtlsConnectors.size >= 100) this.#mtlsConnectors.clear();
      this.#mtlsConnectors.set(id, connector);
    }
    return connector;
  }

  /**
   * Runs one API job. Never throws for a malformed job (→ `hasErrors`), a failing target or a
   * failing script (→ FAILED with the reason). Throws OUTPOST_ERR_ABORTED when `context.signal` aborts.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    // The agent log gets the run's lines at its end, when the scrubber knows every secret.
    const logs = new RunLogRecorder(context.log, { holdAgentLog: true });
    try {
      return await this.#run(job, context, logs);
    } finally {
      logs.flushAgentLog();
    }
  }

  async #run(job: Job, context: ExecutorContext, logs: RunLogRecorder): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const deadline = t0 + runBudgetMs(job.timeoutMs);
    const scrubber = new Scrubber(job.environmentVariables.filter((v) => v.secret).map((v) => v.value));
    if (job.clientCertificate?.passphrase) scrubber.add(job.clientCertificate.passphrase);
    logs.scrubWith(scrubber);
    const fail = (message: string) => releaseOutcome(errorRunOutcome(startedAt, logs, message), scrubber);

    if (job.check.checkType !== 'API') return fail(`check type ${job.check.checkType} is not API`);
    const plan = validateRequest('API', ApiRequestSchema, job.check.request, API_ASSERTION_SOURCES);
    if ('problem' in plan) return fail(plan.problem);
    const checkRequest = plan.request;
    const scripts = [job.setupScript ?? null, job.tearDownScript ?? null];
    if (scripts.some((s) => s !== null) && this.#scripts === undefined) {
      return fail('this agent has no script sandbox: setup and teardown scripts cannot run');
    }
    // The agent's problem, not the target's: an error (hasErrors), never a failure of the API it checks.
    const isolation = userCodeIsolation();
    if (scripts.some((s) => s !== null) && !isolation.available) return fail(isolation.reason);

    // Variables: the check's (merged by the service), then the runtime's, which cannot be overridden.
    const env: Record<string, string> = {};
    for (const v of job.environmentVariables) env[v.key] = v.value;
    Object.assign(env, runtimeVariables(job));
    const state: RunState = { job, context, startedAt, t0, deadline, logs, scrubber, env };
    const missing = new Set<string>();
    const fill = (text: string) => interpolate(text, env, (name) => missing.add(name));
    const auth = checkRequest.basicAuth;
    const basicAuth = auth ? { username: fill(auth.username), password: fill(auth.password) } : null;
    if (basicAuth) {
      scrubber.add(basicAuth.password);
      scrubber.add(`${basicAuth.username}:${basicAuth.password}`);
    }
    let request: ScriptRequest = toScriptRequest({
      method: checkRequest.method,
      url: fill(checkRequest.url),
      body: fill(checkRequest.body),
      headers: checkRequest.headers.map((h) => ({ key: fill(h.key), value: fill(h.value) })),
      queryParameters: checkRequest.queryParameters.map((q) => ({ key: fill(q.key), value: fill(q.value) })),
    });
    for (const name of missing) logs.add('WARN', `variable {{${name}}} is not defined; left as written`);

    const setup = job.setupScript ?? null;
    if (setup !== null) {
      const ran = await this.#runScript(state, setup, 'setup', { request });
      if (typeof ran === 'string') return this.#scriptFailed(state, ran);
      const changed = readScriptRequest(ran.request, setup.name);
      if (typeof changed === 'string') return this.#scriptFailed(state, changed);
      request = changed;
    }

    // The URL, query parameters and headers as sent.
    const url = parseHttpUrl(request.url);
    if (typeof url === 'string') return this.#scriptFailed(state, url);
    for (const [key, value] of Object.entries(request.queryParameters)) url.searchParams.append(key, value);
    // As written and decoded: a malformed escape (a lone `%`) is a failure of the target, not of the agent.
    for (const part of [url.password, url.username]) {
      if (part === '') continue;
      scrubber.add(part);
      scrubber.add(lenientDecode(part));
    }
    if (url.password !== '') scrubber.add(`${url.username}:${url.password}`);
    const headers: Record<string, string> = { ...this.#http.baseHeaders };
    for (const [key, value] of Object.entries(request.headers)) {
      const name = key.toLowerCase();
      if (
        name === 'host' ||
        name === 'content-length' ||
        name === 'connection' ||
        name === 'transfer-encoding'
      )
        continue;
      headers[name] = value;
    }
    if (basicAuth && headers.authorization === undefined) {
      headers.authorization = `Basic ${Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString('base64')}`;
    }
    for (const [name, value] of Object.entries(headers)) {
      if (SECRET_HEADERS.has(name)) for (const form of credentialTokens(value)) scrubber.add(form);
    }
    // A body a setup script wrote is sent even when the check itself has none (bodyType NONE).
    const bodyType =
      checkRequest.bodyType === 'NONE' && setup !== null && request.body !== ''
        ? 'RAW'
        : checkRequest.bodyType;
    const encoded = encodeBody(request.method, bodyType, request.body);
    if (encoded.contentType !== null && headers['content-type'] === undefined) {
      headers['content-type'] = encoded.contentType;
    }

    let connector: buildConnector.connector | undefined;
    const certificate = job.clientCertificate ?? null;
    if (certificate !== null) {
      try {
        connector = this.#mtlsConnector(certificate);
        logs.add('INFO', `presenting the client certificate stored for ${certificate.host}`);
      } catch (err) {
        return this.#scriptFailed(
          state,
          `client certificate for ${certificate.host} could not be loaded: ${(err as Error).message}`,
        );
      }
    }

    // The request, following redirects when asked.
    const ipFamily: IpFamily = checkRequest.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4';
    const requestStart = performance.now();
    // A response after maxResponseTime fails the check anyway: stop waiting for it there.
    const maxResponseTime = job.check.maxResponseTime;
    const requestDeadline =
      maxResponseTime === null ? deadline : Math.min(deadline, requestStart + maxResponseTime + 1);
    const exchange = await this.#http.exchange(
      url,
      {
        method: request.method,
        headers,
        ...(encoded.body === undefined ? {} : { body: encoded.body }),
        followRedirects: checkRequest.followRedirects,
        skipSSL: checkRequest.skipSSL,
        ipFamily,
        deadline: requestDeadline,
        signal: context.signal,
        collectBody: true,
        ...(connector === undefined ? {} : { connector }),
      },
      logs,
    );
    const { last, failure, timings, timingPhases } = exchange;
    const responseTimeMs = exchange.endAt - exchange.startAt;
    for (const name of SECRET_HEADERS) {
      const value = headerText(last.headers, name);
      if (value !== undefined) for (const form of credentialTokens(value)) scrubber.add(form);
    }

    const rawBody = last.body ?? Buffer.alloc(0);
    const contentType = headerText(last.headers, 'content-type');
    const tearDown = job.tearDownScript ?? null;
    // A large body is decoded in the body worker (decoding 25 MB here would hold the event
    // loop ~100 ms), unless a teardown script needs it as text first.
    const decodeHere = rawBody.length <= INLINE_BODY_CHARS || (tearDown !== null && last.statusCode !== null);
    const textualHere = decodeHere ? isTextual(contentType, rawBody) : null;
    let bodyText = decodeHere ? rawBody.toString(textualHere ? 'utf8' : 'latin1') : null;
    const responseHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(last.headers)) {
      if (value !== undefined)
        responseHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }

    if (tearDown !== null) {
      if (last.statusCode === null) {
        logs.add('INFO', `${tearDown.name} skipped: no response to tear down`);
      } else {
        const response = {
          statusCode: last.statusCode,
          statusText: last.statusText,
          body: bodyText ?? '',
          headers: responseHeaders,
          timings,
          timingPhases,
        };
        const ran = await this.#runScript(state, tearDown, 'teardown', { response });
        if (typeof ran === 'string') return this.#scriptFailed(state, ran);
        const after = ran.response as { body?: unknown } | undefined;
        if (after && typeof after.body === 'string') bodyText = after.body;
        else if (after && after.body !== undefined && after.body !== null)
          bodyText = JSON.stringify(after.body) ?? '';
      }
    }

    const status = last.statusCode;
    // Off the event loop when it reads the body (a worker with a deadline): see evaluateHttpBody.
    const bodyWork = await evaluateHttpBody(
      {
        assertions: checkRequest.assertions,
        status,
        responseTimeMs: roundMs(responseTimeMs),
        headers: responseHeaders,
        body:
          bodyText === null
            ? { bytes: rawBody, contentType }
            : { text: bodyText, textual: textualHere === true },
        storedBodyMaxBytes: status !== null ? this.#maxStoredBodyBytes : null,
      },
      scrubber,
    );
    const assertions = bodyWork.assertions;
    // The chain's own failures (too many redirects, a bad Location) are no timeouts.
    const cutAtMaxResponseTime =
      requestDeadline < deadline && failure !== null && /TIMEOUT$/.test(failure.code);
    const outcome = judgeRun({
      check: job.check,
      startedAt,
      logs,
      responseTimeMs,
      unreachable: exchange.unreachable,
      failures: statusFailures(exchange, checkRequest.assertions.length),
      assertions,
    });
    const sent: HttpCheckResult['request'] = {
      method: request.method,
      url: displayUrl(url),
      headers: scrubHeaders(headers),
      ...(encoded.body === undefined ? {} : { body: encoded.body }),
    };
    // The body is set after the scrubbing walk below: the worker scrubbed and cut it.
    const part = httpCheckResultOf(exchange, sent, this.#http.resolverKind, {
      body: null,
      bodyStoredTruncated: bodyWork.storedTruncated,
    });
    if (cutAtMaxResponseTime) outcome.overMaxResponseTime = true;
    outcome.httpCheckResult = part;
    // Header values of credentials are already masked (scrubHeaders); the walk is for secret values.
    return releaseOutcome(outcome, scrubber, (scrubbed) => {
      if (scrubbed.httpCheckResult?.response) scrubbed.httpCheckResult.response.body = bodyWork.storedBody;
    });
  }

  /**
   * Runs a setup or teardown script in the sandbox with the time left (at most the script limit).
   * Returns the script's context objects, or the reason it failed.
   */
  async #runScript(
    state: RunState,
    script: JobScript,
    phase: 'setup' | 'teardown',
    scriptContext: Record<string, unknown>,
  ): Promise<Record<string, unknown> | string> {
    const { job, context, deadline, logs, scrubber, env } = state;
    const runner = this.#scripts as ScriptRunner;
    const timeoutMs = Math.floor(Math.min(this.#scriptTimeoutMs, deadline - performance.now()));
    if (timeoutMs <= 0) return `${script.name} did not run: the run's time limit was reached`;
    const result = await runner.run({
      code: script.code,
      name: script.name,
      runtimeId: job.check.runtimeId ?? DEFAULT_RUNTIME_ID,
      env,
      context: scriptContext,
      timeoutMs,
      signal: context.signal,
    });
    // Secrets the script declared are scrubbed from its own output too.
    for (const secret of result.secrets) scrubber.add(secret);
    for (const line of result.logs) logs.record({ ...line, msg: `[${phase}] ${line.msg}` });
    if (result.ok) {
      logs.add('DEBUG', `${script.name} finished in ${roundMs(result.durationMs)} ms`);
      return result.context;
    }
    if (result.code === 'ABORTED' && context.signal.aborted) {
      throw abortedError(context.signal);
    }
    return result.reason;
  }

  /** A run ended by its scripts or by what they produced: FAILED with the reason; shouldFail does not turn it into a pass. */
  #scriptFailed({ startedAt, t0, logs, scrubber }: RunState, reason: string): RunOutcome {
    const responseTimeMs = performance.now() - t0;
    return releaseOutcome(
      errorRunOutcome(startedAt, logs, reason, { hasErrors: false, responseTimeMs }),
      scrubber,
    );
  }

  /** Releases cached mTLS contexts and closes the script runner; connections close with their requests. */
  async close(): Promise<void> {
    this.#mtlsConnectors.clear();
    await this.#scripts?.close();
  }
}

/** Creates the API executor (see ApiExecutorOptions). */
export function createApiExecutor(options: ApiExecutorOptions = {}): ApiExecutor {
  return new ApiExecutor(options);
}
