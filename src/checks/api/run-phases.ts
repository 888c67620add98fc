import type { buildConnector } from 'undici';
import type { Scrubber } from '../../common/scrub.js';
import type { ApiRequest, Job } from '../../protocol/index.js';
import { INLINE_BODY_CHARS } from '../assertions/off-thread.js';
import type { ExecutorContext } from '../executor.js';
import { type HttpExchange, headerText } from '../http/client.js';
import type { RunLogRecorder } from '../run-log.js';
import { isTextual, type ScriptRequest } from './request.js';

/*
 * What the phases of an API run (ApiExecutor in executor.ts: prepare, setup script, request,
 * teardown script, assertions) hand each other.
 */

/** What one run carries through its steps: the job, its clock and budget, its log and its scrubber. */
export type RunState = {
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

/** Basic-auth credentials of a request, `{{VAR}}` filled in. */
export type BasicAuth = { username: string; password: string };

/** A run ready for its request: its state, the check's request as validated, and as interpolated. */
export type Prepared = {
  state: RunState;
  checkRequest: ApiRequest;
  basicAuth: BasicAuth | null;
  /** The request with `{{VAR}}` filled in, as a setup script sees it. */
  request: ScriptRequest;
};

/** The request as sent: URL (query parameters added), lower-case headers, encoded body, mTLS connector. */
export type Outgoing = {
  url: URL;
  headers: Record<string, string>;
  /** The encoded body; undefined when none is sent (bodyType NONE, HEAD, an empty GET). */
  body: string | undefined;
  /** The connector presenting the job's client certificate; undefined without one. */
  connector: buildConnector.connector | undefined;
};

/** The exchange, and the `performance.now()` it had to end by (the run's deadline or `maxResponseTime`). */
export type Sent = { exchange: HttpExchange; requestDeadline: number };

/** The final response as the assertions and the teardown script read it. */
export type ResponseRead = {
  rawBody: Buffer;
  contentType: string | undefined;
  /** The body decoded here (null: decoded in the body worker); a teardown script may replace it. */
  bodyText: string | null;
  /** Whether the body is text (null when not decoded here). */
  textual: boolean | null;
  /** Response headers, lower-case names, repeated ones joined with `, `. */
  headers: Record<string, string>;
};

/**
 * Reads the final response: its headers, and its body decoded here unless it is large (decoding
 * 25 MB here would hold the event loop ~100 ms: the body worker does it) and no teardown script
 * needs it as text first.
 */
export function readResponse(last: HttpExchange['last'], hasTearDown: boolean): ResponseRead {
  const rawBody = last.body ?? Buffer.alloc(0);
  const contentType = headerText(last.headers, 'content-type');
  const decodeHere = rawBody.length <= INLINE_BODY_CHARS || (hasTearDown && last.statusCode !== null);
  const textual = decodeHere ? isTextual(contentType, rawBody) : null;
  const bodyText = decodeHere ? rawBody.toString(textual ? 'utf8' : 'latin1') : null;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(last.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { rawBody, contentType, bodyText, textual, headers };
}
