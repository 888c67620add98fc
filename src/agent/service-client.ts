import { createReadStream, type ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Value } from '@sinclair/typebox/value';
import { type Dispatcher, EnvHttpProxyAgent, request } from 'undici';
import {
  type AckResponse,
  AckResponseSchema,
  AGENT_ID_HEADER,
  type AgentEvent,
  type CheckResult,
  type ClaimRequest,
  type Job,
  JobSchema,
  type LeaseResponse,
  LeaseResponseSchema,
  MAX_ARTIFACT_SIZE_BYTES,
  MAX_RESULT_BATCH_ITEMS,
  MAX_RESULT_SIZE_BYTES,
  type ResultBatchItemAnswer,
} from '../protocol/index.js';
import { type ErrorCode, OutpostError } from '../common/errors.js';
import { VERSION } from '../common/paths.js';

/** Time allowed for the service to answer a call other than a claim, milliseconds. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Added to a claim's `waitSeconds` before its answer counts as lost, milliseconds. */
const CLAIM_GRACE_MS = 15_000;
/**
 * Seconds between the heartbeats the agent asks of a waiting claim (ClaimRequest `heartbeatSeconds`). A claim
 * silent for three of them and half a second more is given up (see {@link claimSilenceMs}).
 */
export const CLAIM_HEARTBEAT_SECONDS = 1;

/**
 * How long a claim with heartbeats may be silent before it counts as lost, ms: three missed heartbeats and half a
 * second (3 500 for 1 s heartbeats; undici checks its timeouts every half second or so, so one fires up to that
 * much later). A frozen service (a stopped replica behind a balancer keeps the connection open) is left after
 * this instead of after the whole wait; the loop then claims again at once, through the balancer, from a replica
 * that answers. A service whose event loop stalls that long is taken for a frozen one: that costs one claim.
 */
export function claimSilenceMs(heartbeatSeconds: number): number {
  return heartbeatSeconds * 3000 + 500;
}

/**
 * An error from a call to the service. `code` sorts it: `OUTPOST_ERR_SERVICE_UNAVAILABLE`
 * is transient (network, 408, 429, 5xx, unreadable answer), `OUTPOST_ERR_UNAUTHORIZED`
 * (401/403) and `OUTPOST_ERR_PROTOCOL` (other 4xx) are fatal, `OUTPOST_ERR_LEASE_LOST`
 * (409; 404 on a lease) is final for the job, `OUTPOST_ERR_ABORTED` means the caller's signal fired.
 */
export class ServiceError extends OutpostError {
  /** HTTP status of the answer; null when none arrived. */
  readonly statusCode: number | null;
  /** The service's `Retry-After`, milliseconds; null when absent. */
  readonly retryAfterMs: number | null;
  constructor(
    code: ErrorCode,
    message: string,
    details: { statusCode?: number | null; retryAfterMs?: number | null; cause?: unknown } = {},
  ) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ServiceError';
    this.statusCode = details.statusCode ?? null;
    this.retryAfterMs = details.retryAfterMs ?? null;
  }
}

/** True when `err` is worth retrying with back-off (network error, 408, 429, 5xx). */
export function isTransient(err: unknown): boolean {
  return err instanceof OutpostError && err.code === 'OUTPOST_ERR_SERVICE_UNAVAILABLE';
}

/**
 * A job of a claim answer that did not match `JobSchema`. Its fields are read
 * best-effort from the raw job, null when absent or of the wrong type.
 */
export type RejectedJob = {
  jobId: string | null;
  checkId: string | null;
  checkType: string | null;
  runLocation: string | null;
  attempt: number | null;
  /** Why the job was refused: the first schema violations, `path: message`. */
  reason: string;
};

/** A validated claim answer: the runnable jobs and the malformed ones to fail. */
export type ClaimAnswer = { jobs: Job[]; rejected: RejectedJob[] };

/** Answer of `POST /v1/agent/jobs/{jobId}/result`. */
export type ResultAck = { stored: boolean; duplicate: boolean };

/**
 * Largest result, bytes of JSON, that waits to be posted in a batch (`POST /v1/agent/results`); a larger one is
 * posted alone, so that one batch never nears the service's limit.
 */
const BATCH_ITEM_MAX_BYTES = 1024 * 1024;

/**
 * Most posts of results on their way at once. A result that ends while as many are on their way waits for
 * one of them to return and then goes with the others that waited; a post that hangs (a slow link, a frozen
 * replica) holds up no result while the others still move.
 */
const RESULT_POSTS_IN_FLIGHT = 4;

/** A JSON body already serialised (the batch of results, built from each result's JSON once). */
class JsonText {
  constructor(readonly text: string) {}
}

/** A result waiting for the batch post in flight to end (see ServiceClient.postResult). */
type PendingResult = {
  jobId: string;
  json: string;
  sizeBytes: number;
  signal: AbortSignal;
  settle: { resolve(ack: ResultAck): void; reject(err: unknown): void };
  onAbort: () => void;
};

/** Options of {@link ServiceClient}. */
export type ServiceClientOptions = {
  /** Base URL of the service without a trailing slash. */
  serviceUrl: string;
  apiKey: string;
  /** UUID chosen at agent start, sent as `x-agent-id`. */
  agentId: string;
  /** Proxies for service traffic (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`); null means none. */
  proxy?: { httpsProxy: string | null; httpProxy: string | null; noProxy: string | null };
};

type Operation = 'claim' | 'ack' | 'lease' | 'result' | 'event' | 'artifact' | 'stopped';

/** A streamed upload body with its length (sent as content-length; the service needs it). */
type ArtifactPayload = { stream: ReadStream; sizeBytes: number };

/** Time an artifact upload may take until the service answers, ms: 150 MB at ≥ 1 MB/s. */
const ARTIFACT_TIMEOUT_MS = 150_000;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const stringOrNull = (value: unknown) => (typeof value === 'string' ? value : null);

function rejectJob(raw: unknown): RejectedJob {
  const reasons = [...Value.Errors(JobSchema, raw)].slice(0, 3).map((e) => `${e.path || '/'}: ${e.message}`);
  const job = isRecord(raw) ? raw : {};
  const check = isRecord(job.check) ? job.check : {};
  const attempt = job.attempt;
  return {
    jobId: stringOrNull(job.jobId),
    checkId: stringOrNull(check.id),
    checkType: stringOrNull(check.checkType),
    runLocation: stringOrNull(job.runLocation),
    attempt: Number.isInteger(attempt) && (attempt as number) >= 1 ? (attempt as number) : null,
    reason: `malformed job: ${reasons.join('; ')}`,
  };
}

function retryAfterMs(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/**
 * Client of the agent⇄service protocol (docs/protocol.md) over undici. Every call
 * takes an AbortSignal and throws {@link ServiceError} (see its `code` for the class).
 */
export class ServiceClient {
  readonly #baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #newDispatcher: () => Dispatcher;
  #dispatcher: Dispatcher;
  /** Pools left after a silent call: closed with the client (their calls end by their own timeouts). */
  readonly #retired = new Set<Promise<void>>();
  /** Results waiting to be posted in the next batch, in order. */
  #pendingResults: PendingResult[] = [];
  /** Posts of results on their way. */
  #postsInFlight = 0;
  /** A post of the waiting results is planned for the next turn of the event loop. */
  #postPlanned = false;
  /** False once the service answered 404 to a batch (an older service): every result is posted alone. */
  #batchRoute = true;

  constructor(options: ServiceClientOptions) {
    this.#baseUrl = options.serviceUrl.replace(/\/+$/, '');
    this.#headers = {
      authorization: `Bearer ${options.apiKey}`,
      [AGENT_ID_HEADER]: options.agentId,
      'user-agent': `outpost-agent/${VERSION}`,
      accept: 'application/json',
    };
    // Empty strings, not undefined: undici would otherwise read process.env behind the config's back.
    this.#newDispatcher = () =>
      new EnvHttpProxyAgent({
        httpsProxy: options.proxy?.httpsProxy ?? '',
        httpProxy: options.proxy?.httpProxy ?? '',
        noProxy: options.proxy?.noProxy ?? '',
      });
    this.#dispatcher = this.#newDispatcher();
  }

  /**
   * After a call that timed out on a silent service: the next calls go out on new connections. The pool's idle
   * keep-alive connections lead to the same silent peer (behind a TCP balancer, the frozen replica), so the
   * claim that follows would hang on one of them; new connections go through the balancer again, to a replica
   * that answers. The old pool closes once its calls in flight end (each by its own timeout).
   */
  #leaveSilentPeer(used: Dispatcher): void {
    if (this.#dispatcher !== used) return;
    this.#dispatcher = this.#newDispatcher();
    const closing = used.close().catch(() => {});
    this.#retired.add(closing);
    void closing.finally(() => this.#retired.delete(closing));
  }

  /**
   * `POST /v1/agent/jobs/claim`: long-polls up to `request.waitSeconds` for jobs.
   * Jobs that do not match `JobSchema` come back in `rejected`, never as a throw.
   * @throws ServiceError; a 400 or other 4xx is `OUTPOST_ERR_PROTOCOL` (fatal), 401/403 `OUTPOST_ERR_UNAUTHORIZED`.
   */
  async claim(claimRequest: ClaimRequest, signal: AbortSignal): Promise<ClaimAnswer> {
    const heartbeats = claimRequest.heartbeatSeconds !== undefined && claimRequest.waitSeconds > 0;
    // With heartbeats the status comes at once and a byte at least every heartbeat: silence means a dead service.
    const timeouts = heartbeats
      ? {
          headersMs: claimSilenceMs(claimRequest.heartbeatSeconds!),
          bodyMs: claimSilenceMs(claimRequest.heartbeatSeconds!),
        }
      : { headersMs: claimRequest.waitSeconds * 1000 + CLAIM_GRACE_MS, bodyMs: REQUEST_TIMEOUT_MS };
    const body = await this.#call('claim', '/v1/agent/jobs/claim', claimRequest, signal, timeouts);
    if (!isRecord(body) || !Array.isArray(body.jobs)) {
      // A proxy's HTML page or a half-deployed service: retry rather than exit.
      throw new ServiceError('OUTPOST_ERR_SERVICE_UNAVAILABLE', 'claim answer has no jobs array', {
        statusCode: 200,
      });
    }
    const answer: ClaimAnswer = { jobs: [], rejected: [] };
    for (const raw of body.jobs) {
      if (Value.Check(JobSchema, raw)) answer.jobs.push(raw);
      else answer.rejected.push(rejectJob(raw));
    }
    return answer;
  }

  /**
   * `POST /v1/agent/jobs/ack`: says the agent received the jobs of a claim's answer; their leases start now.
   * Jobs the answer calls `lost` are no longer the agent's (the acknowledgement came after the hold lapsed).
   * @throws ServiceError (a transient one may be retried: acknowledging twice is harmless).
   */
  async acknowledge(jobIds: readonly string[], signal: AbortSignal): Promise<AckResponse> {
    const body = await this.#call('ack', '/v1/agent/jobs/ack', { jobIds: [...jobIds] }, signal);
    if (!Value.Check(AckResponseSchema, body)) {
      throw new ServiceError('OUTPOST_ERR_SERVICE_UNAVAILABLE', 'ack answer is not an AckResponse', {
        statusCode: 200,
      });
    }
    return body;
  }

  /**
   * `POST /v1/agent/stopped`: says the agent stopped, so it shows as disconnected at once (best effort: the
   * caller ignores a failure; the agent then shows as disconnected 35 s after its last claim).
   * @throws ServiceError
   */
  async sayStopped(signal: AbortSignal): Promise<void> {
    await this.#call('stopped', '/v1/agent/stopped', undefined, signal);
  }

  /**
   * `POST /v1/agent/jobs/{jobId}/lease`: extends the lease of a running job.
   * @throws ServiceError `OUTPOST_ERR_LEASE_LOST` on 409 or 404: stop the job and drop its result.
   */
  async renewLease(jobId: string, signal: AbortSignal): Promise<LeaseResponse> {
    const body = await this.#call(
      'lease',
      `/v1/agent/jobs/${encodeURIComponent(jobId)}/lease`,
      undefined,
      signal,
    );
    if (!Value.Check(LeaseResponseSchema, body)) {
      throw new ServiceError('OUTPOST_ERR_SERVICE_UNAVAILABLE', 'lease answer is not a LeaseResponse', {
        statusCode: 200,
      });
    }
    return body;
  }

  /**
   * Posts the final result of a job; a repeat is accepted (`duplicate: true`). The results that end in one turn
   * of the event loop, or while RESULT_POSTS_IN_FLIGHT posts are on their way, are posted together
   * (`POST /v1/agent/results`, one transaction in the service for all of them; docs/protocol.md, "Results in
   * batches"): a result never waits for a timer, only for a post before it, and each gets its own answer. A result over 1 MiB of JSON, or every result
   * once the service answered 404 to a batch (an older service), is posted alone
   * (`POST /v1/agent/jobs/{jobId}/result`). A batch the service refused whole (400, 413: one of its results is
   * malformed or too large) is posted again one result at a time, so that only the bad one is refused.
   * @throws ServiceError `OUTPOST_ERR_LEASE_LOST` on 409 (drop the result), `OUTPOST_ERR_PROTOCOL` on 400/404,
   *   `OUTPOST_ERR_ABORTED` when `signal` fires before the result was sent.
   */
  async postResult(jobId: string, result: CheckResult, signal: AbortSignal): Promise<ResultAck> {
    const json = JSON.stringify(result);
    const sizeBytes = Buffer.byteLength(json);
    if (!this.#batchRoute || sizeBytes > BATCH_ITEM_MAX_BYTES) return this.#postOne(jobId, json, signal);
    if (signal.aborted) throw new ServiceError('OUTPOST_ERR_ABORTED', 'result aborted');
    return new Promise<ResultAck>((resolve, reject) => {
      const pending: PendingResult = {
        jobId,
        json,
        sizeBytes,
        signal,
        settle: { resolve, reject },
        onAbort: () => {
          // Not sent yet: it leaves the queue. (Once sent, the batch's answer settles it.)
          const at = this.#pendingResults.indexOf(pending);
          if (at === -1) return;
          this.#pendingResults.splice(at, 1);
          reject(new ServiceError('OUTPOST_ERR_ABORTED', 'result aborted'));
        },
      };
      signal.addEventListener('abort', pending.onAbort, { once: true });
      this.#pendingResults.push(pending);
      if (!this.#postPlanned && this.#postsInFlight < RESULT_POSTS_IN_FLIGHT) {
        this.#postPlanned = true;
        // The results that end in this turn of the event loop go with this one.
        setImmediate(() => {
          this.#postPlanned = false;
          this.#postWaiting();
        });
      }
    });
  }

  /** `POST /v1/agent/jobs/{jobId}/result` with the result's JSON. @throws ServiceError */
  async #postOne(jobId: string, json: string, signal: AbortSignal): Promise<ResultAck> {
    const body = await this.#call(
      'result',
      `/v1/agent/jobs/${encodeURIComponent(jobId)}/result`,
      new JsonText(json),
      signal,
    );
    const ack = isRecord(body) ? body : {};
    return { stored: ack.stored !== false, duplicate: ack.duplicate === true };
  }

  /**
   * Posts the waiting results, in batches, while fewer than RESULT_POSTS_IN_FLIGHT posts are on their way; each
   * post that returns posts what waits meanwhile. Never throws.
   */
  #postWaiting(): void {
    while (this.#pendingResults.length > 0 && this.#postsInFlight < RESULT_POSTS_IN_FLIGHT) {
      let sizeBytes = 0;
      let count = 0;
      for (const pending of this.#pendingResults) {
        if (count === MAX_RESULT_BATCH_ITEMS || sizeBytes + pending.sizeBytes > MAX_RESULT_SIZE_BYTES / 2)
          break;
        sizeBytes += pending.sizeBytes;
        count++;
      }
      const batch = this.#pendingResults.splice(0, Math.max(1, count));
      for (const pending of batch) pending.signal.removeEventListener('abort', pending.onAbort);
      this.#postsInFlight++;
      void this.#postBatch(batch).finally(() => {
        this.#postsInFlight--;
        this.#postWaiting();
      });
    }
  }

  /** Posts one batch and settles each of its results with its own answer. Never throws. */
  async #postBatch(batch: PendingResult[]): Promise<void> {
    const alone = async (pending: PendingResult) => {
      try {
        pending.settle.resolve(await this.#postOne(pending.jobId, pending.json, pending.signal));
      } catch (err) {
        pending.settle.reject(err);
      }
    };
    if (batch.length === 1 || !this.#batchRoute) {
      await Promise.all(batch.map(alone));
      return;
    }
    // The batch is given up only when every one of its results' signals fired (shutdown).
    const stop = new AbortController();
    let live = batch.length;
    const onAbort = () => {
      if (--live === 0) stop.abort();
    };
    for (const pending of batch) {
      if (pending.signal.aborted) onAbort();
      else pending.signal.addEventListener('abort', onAbort, { once: true });
    }
    const text = `{"results":[${batch.map((p) => `{"jobId":${JSON.stringify(p.jobId)},"result":${p.json}}`).join(',')}]}`;
    let answer: unknown;
    try {
      answer = await this.#call('result', '/v1/agent/results', new JsonText(text), stop.signal);
    } catch (err) {
      const statusCode = (err as { statusCode?: number | null }).statusCode;
      if (statusCode === 404) this.#batchRoute = false;
      if (statusCode === 404 || statusCode === 400 || statusCode === 413) {
        await Promise.all(batch.map(alone));
      } else {
        for (const pending of batch) pending.settle.reject(err);
      }
      return;
    } finally {
      for (const pending of batch) pending.signal.removeEventListener('abort', onAbort);
    }
    const answers = new Map<string, ResultBatchItemAnswer>();
    if (isRecord(answer) && Array.isArray(answer.results)) {
      for (const item of answer.results as ResultBatchItemAnswer[]) {
        if (isRecord(item) && typeof item.jobId === 'string') answers.set(item.jobId, item);
      }
    }
    for (const pending of batch) {
      const item = answers.get(pending.jobId);
      if (!item) {
        pending.settle.reject(
          new ServiceError(
            'OUTPOST_ERR_SERVICE_UNAVAILABLE',
            'result batch answer has no entry for the job',
            {
              statusCode: 200,
            },
          ),
        );
      } else if (isRecord(item.error)) {
        const statusCode = typeof item.error.statusCode === 'number' ? item.error.statusCode : 500;
        const message = typeof item.error.message === 'string' ? item.error.message.slice(0, 300) : '';
        pending.settle.reject(
          new ServiceError(classify('result', statusCode), `result answered HTTP ${statusCode}: ${message}`, {
            statusCode,
          }),
        );
      } else {
        pending.settle.resolve({ stored: item.stored !== false, duplicate: item.duplicate === true });
      }
    }
  }

  /**
   * `PUT /v1/agent/jobs/{jobId}/artifacts/{name}`: streams the file at `path` (docs/protocol.md);
   * refused by the service with 413 above MAX_ARTIFACT_SIZE_BYTES, which is checked here first.
   * @returns the stored size in bytes.
   * @throws ServiceError; OUTPOST_ERR_PROTOCOL for a file over the limit or a 4xx answer.
   */
  async uploadArtifact(jobId: string, name: string, path: string, signal: AbortSignal): Promise<number> {
    const { size } = await stat(path);
    if (size > MAX_ARTIFACT_SIZE_BYTES) {
      throw new ServiceError(
        'OUTPOST_ERR_PROTOCOL',
        `artifact ${name} is ${size} bytes; the limit is ${MAX_ARTIFACT_SIZE_BYTES}`,
        { statusCode: 413 },
      );
    }
    await this.#call(
      'artifact',
      `/v1/agent/jobs/${encodeURIComponent(jobId)}/artifacts/${encodeURIComponent(name)}`,
      { stream: createReadStream(path), sizeBytes: size },
      signal,
      { headersMs: ARTIFACT_TIMEOUT_MS, bodyMs: REQUEST_TIMEOUT_MS },
    );
    return size;
  }

  /** `POST /v1/agent/events`: one error report (docs/api.md, "Events" 7). @throws ServiceError */
  async postEvent(event: AgentEvent, signal: AbortSignal): Promise<void> {
    await this.#call('event', '/v1/agent/events', event, signal);
  }

  /** Closes the connection pool; calls after close fail. */
  async close(): Promise<void> {
    await Promise.all([this.#dispatcher.close(), ...this.#retired]);
  }

  async #call(
    operation: Operation,
    path: string,
    payload: unknown,
    signal: AbortSignal,
    timeouts: { headersMs: number; bodyMs: number } = {
      headersMs: REQUEST_TIMEOUT_MS,
      bodyMs: REQUEST_TIMEOUT_MS,
    },
  ): Promise<unknown> {
    let response: Dispatcher.ResponseData;
    const dispatcher = this.#dispatcher;
    const upload = payload instanceof Object && 'stream' in payload ? (payload as ArtifactPayload) : null;
    try {
      response = await request(`${this.#baseUrl}${path}`, {
        method: upload ? 'PUT' : 'POST',
        dispatcher,
        headers: upload
          ? {
              ...this.#headers,
              'content-type': 'application/octet-stream',
              'content-length': String(upload.sizeBytes),
            }
          : payload === undefined
            ? this.#headers
            : { ...this.#headers, 'content-type': 'application/json' },
        body: upload
          ? upload.stream
          : payload === undefined
            ? null
            : payload instanceof JsonText
              ? payload.text
              : JSON.stringify(payload),
        signal,
        headersTimeout: timeouts.headersMs,
        // undici's body timeout is the longest silence between two chunks of the body, not its whole time.
        bodyTimeout: timeouts.bodyMs,
      });
    } catch (err) {
      if (signal.aborted)
        throw new ServiceError('OUTPOST_ERR_ABORTED', `${operation} aborted`, { cause: err });
      if (isSilence(err)) this.#leaveSilentPeer(dispatcher);
      const reason = (err as { code?: string }).code ?? (err as Error).message;
      throw new ServiceError('OUTPOST_ERR_SERVICE_UNAVAILABLE', `${operation} failed: ${reason}`, {
        cause: err,
      });
    }

    const { statusCode } = response;
    let text: string;
    try {
      text = await response.body.text();
    } catch (err) {
      if (signal.aborted)
        throw new ServiceError('OUTPOST_ERR_ABORTED', `${operation} aborted`, { cause: err });
      if (isSilence(err)) this.#leaveSilentPeer(dispatcher);
      throw new ServiceError('OUTPOST_ERR_SERVICE_UNAVAILABLE', `${operation} answer was cut off`, {
        statusCode,
        cause: err,
      });
    }
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch (err) {
      if (statusCode < 300) {
        throw new ServiceError('OUTPOST_ERR_SERVICE_UNAVAILABLE', `${operation} answer is not JSON`, {
          statusCode,
          cause: err,
        });
      }
    }
    if (statusCode >= 200 && statusCode < 300) return body;

    const serviceMessage =
      isRecord(body) && typeof body.message === 'string' ? body.message.slice(0, 300) : '';
    const message = `${operation} answered HTTP ${statusCode}${serviceMessage ? `: ${serviceMessage}` : ''}`;
    const details = { statusCode, retryAfterMs: retryAfterMs(response.headers['retry-after']) };
    throw new ServiceError(classify(operation, statusCode), message, details);
  }
}

/** True for undici's timeouts: no headers, or no body bytes, within the call's time (the peer went silent). */
function isSilence(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/** Sorts an HTTP error status of one operation into an error code (docs/protocol.md, "Retry rules"). */
function classify(operation: Operation, statusCode: number): ErrorCode {
  if (statusCode === 401 || statusCode === 403) return 'OUTPOST_ERR_UNAUTHORIZED';
  if (statusCode === 408 || statusCode === 429 || statusCode >= 500) return 'OUTPOST_ERR_SERVICE_UNAVAILABLE';
  if (statusCode === 409) return 'OUTPOST_ERR_LEASE_LOST';
  // An unknown job cannot be renewed: it was finished or forgotten, so the lease is gone.
  if (statusCode === 404 && operation === 'lease') return 'OUTPOST_ERR_LEASE_LOST';
  return 'OUTPOST_ERR_PROTOCOL';
}
