import { createHash } from 'node:crypto';
import type { buildConnector } from 'undici';
import {
  API_ASSERTION_SOURCES,
  type ApiRequest,
  ApiRequestSchema,
  DEFAULT_RUNTIME_ID,
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
import { urlCredentialForms } from '../../common/uri.js';
import { evaluateHttpBody } from '../assertions/off-thread.js';
import { roundMs } from '../../common/clock.js';
import type { Executor, ExecutorContext } from '../executor.js';
import {
  checkCountOptions,
  HttpClient,
  type HttpExchange,
  type HttpExecutorOptions,
  headerText,
  parseHttpUrl,
} from '../http/client.js';
import { displayUrl, httpCheckResultOf, statusFailures } from '../http/result.js';
import { errorRunOutcome, judgeRun, releaseOutcome, validateRequest } from '../outcome.js';
import { RunLogRecorder } from '../run-log.js';
import { runtimeVariables } from '../runtime-variables.js';
import { runBudgetMs } from '../time-budget.js';
import { encodeBody, readScriptRequest, type ScriptRequest, toScriptRequest } from './request.js';
import {
  type BasicAuth,
  type Outgoing,
  type Prepared,
  type ResponseRead,
  type RunState,
  readResponse,
  type Sent,
} from './run-phases.js';

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

  /** The run's phases in order: prepare, setup script, request, teardown script, assertions. */
  async #run(job: Job, context: ExecutorContext, logs: RunLogRecorder): Promise<RunOutcome> {
    const prepared = this.#prepare(job, context, logs);
    if (!('state' in prepared)) return prepared;
    const { state, checkRequest, basicAuth } = prepared;
    let request = prepared.request;
    const setup = job.setupScript ?? null;
    if (setup !== null) {
      const changed = await this.#runSetup(state, setup, request);
      if (typeof changed === 'string') return this.#scriptFailed(state, changed);
      request = changed;
    }
    const outgoing = this.#outgoing(state, checkRequest, request, basicAuth, setup !== null);
    if (typeof outgoing === 'string') return this.#scriptFailed(state, outgoing);
    const sent = await this.#send(state, checkRequest, request, outgoing);
    const tearDown = job.tearDownScript ?? null;
    const response = readResponse(sent.exchange.last, tearDown !== null);
    if (tearDown !== null) {
      const failed = await this.#runTearDown(state, tearDown, sent.exchange, response);
      if (failed !== null) return this.#scriptFailed(state, failed);
    }
    return this.#judge(state, checkRequest, request, outgoing, sent, response);
  }

  /**
   * Checks the job (type, request, scripts and their sandbox) and builds the run's state and the
   * request with its `{{VAR}}` filled in; a job that cannot run gives its error outcome (`hasErrors`).
   */
  #prepare(job: Job, context: ExecutorContext, logs: RunLogRecorder): Prepared | RunOutcome {
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
    const request: ScriptRequest = toScriptRequest({
      method: checkRequest.method,
      url: fill(checkRequest.url),
      body: fill(checkRequest.body),
      headers: checkRequest.headers.map((h) => ({ key: fill(h.key), value: fill(h.value) })),
      queryParameters: checkRequest.queryParameters.map((q) => ({ key: fill(q.key), value: fill(q.value) })),
    });
    for (const name of missing) logs.add('WARN', `variable {{${name}}} is not defined; left as written`);
    return { state, checkRequest, basicAuth, request };
  }

  /** Runs the setup script on `request`: the request it leaves, or why it failed. */
  async #runSetup(
    state: RunState,
    setup: JobScript,
    request: ScriptRequest,
  ): Promise<ScriptRequest | string> {
    const ran = await this.#runScript(state, setup, 'setup', { request });
    if (typeof ran === 'string') return ran;
    return readScriptRequest(ran.request, setup.name);
  }

  /**
   * The request as sent: its URL with the query parameters, its headers (basic auth added, the
   * hop-by-hop ones dropped), its encoded body and the connector of the job's client certificate;
   * every credential it carries added to the scrubber. Returns the reason when the URL is not
   * HTTP(S) or the client certificate cannot be loaded.
   */
  #outgoing(
    { job, logs, scrubber }: RunState,
    checkRequest: ApiRequest,
    request: ScriptRequest,
    basicAuth: BasicAuth | null,
    hadSetup: boolean,
  ): Outgoing | string {
    const url = parseHttpUrl(request.url);
    if (typeof url === 'string') return url;
    for (const [key, value] of Object.entries(request.queryParameters)) url.searchParams.append(key, value);
    // As written and decoded: a malformed escape (a lone `%`) is a failure of the target, not of the agent.
    for (const form of urlCredentialForms(url)) scrubber.add(form);
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
      checkRequest.bodyType === 'NONE' && hadSetup && request.body !== '' ? 'RAW' : checkRequest.bodyType;
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
        return `client certificate for ${certificate.host} could not be loaded: ${(err as Error).message}`;
      }
    }
    return { url, headers, body: encoded.body, connector };
  }

  /**
   * Sends the request, following redirects when asked, and given up at `maxResponseTime` (it would
   * fail the check from then on anyway); the credentials of the response's headers are scrubbed.
   */
  async #send(
    { job, context, deadline, logs, scrubber }: RunState,
    checkRequest: ApiRequest,
    request: ScriptRequest,
    { url, headers, body, connector }: Outgoing,
  ): Promise<Sent> {
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
        ...(body === undefined ? {} : { body }),
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
    for (const name of SECRET_HEADERS) {
      const value = headerText(exchange.last.headers, name);
      if (value !== undefined) for (const form of credentialTokens(value)) scrubber.add(form);
    }
    return { exchange, requestDeadline };
  }

  /**
   * Runs the teardown script on the response (skipped when there was none); the body it leaves
   * replaces `response.bodyText`. Returns why the script failed, or null.
   */
  async #runTearDown(
    state: RunState,
    tearDown: JobScript,
    { last, timings, timingPhases }: HttpExchange,
    response: ResponseRead,
  ): Promise<string | null> {
    if (last.statusCode === null) {
      state.logs.add('INFO', `${tearDown.name} skipped: no response to tear down`);
      return null;
    }
    const scriptResponse = {
      statusCode: last.statusCode,
      statusText: last.statusText,
      body: response.bodyText ?? '',
      headers: response.headers,
      timings,
      timingPhases,
    };
    const ran = await this.#runScript(state, tearDown, 'teardown', { response: scriptResponse });
    if (typeof ran === 'string') return ran;
    const after = ran.response as { body?: unknown } | undefined;
    if (after && typeof after.body === 'string') response.bodyText = after.body;
    else if (after && after.body !== undefined && after.body !== null)
      response.bodyText = JSON.stringify(after.body) ?? '';
    return null;
  }

  /**
   * The outcome: the assertions judged (off the event loop when they read the body), the status
   * rule applied, the HTTP part of the result built, everything scrubbed.
   */
  async #judge(
    { job, startedAt, deadline, logs, scrubber }: RunState,
    checkRequest: ApiRequest,
    request: ScriptRequest,
    { url, headers, body }: Outgoing,
    { exchange, requestDeadline }: Sent,
    response: ResponseRead,
  ): Promise<RunOutcome> {
    const { failure } = exchange;
    const responseTimeMs = exchange.endAt - exchange.startAt;
    const status = exchange.last.statusCode;
    // Off the event loop when it reads the body (a worker with a deadline): see evaluateHttpBody.
    const bodyWork = await evaluateHttpBody(
      {
        assertions: checkRequest.assertions,
        status,
        responseTimeMs: roundMs(responseTimeMs),
        headers: response.headers,
        body:
          response.bodyText === null
            ? { bytes: response.rawBody, contentType: response.contentType }
            : { text: response.bodyText, textual: response.textual === true },
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
      ...(body === undefined ? {} : { body }),
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
      accountId: job.accountId,
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
