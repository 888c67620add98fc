import { Agent, type Dispatcher, request } from 'undici';
import { linkSignal } from '../../../common/linked-signal.js';
import { Scrubber } from '../../../common/scrub.js';
import type { DeliveryResult } from '../types.js';

/** Time allowed to connect (TCP and TLS) to a provider, ms. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Time allowed for one whole request (connect, headers and the bounded body read), ms. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Most bytes of a provider's answer read; the rest is dropped with the connection. */
export const MAX_ANSWER_READ_BYTES = 64 * 1024;
/** Most characters of a provider's answer kept in `DeliveryResult.answer`. */
export const MAX_ANSWER_CHARS = 2_000;
/** Longest wait a `Retry-After` may ask for, ms (one day): a larger value is capped, not trusted. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

let agent: Agent | null = null;

/**
 * The undici dispatcher of every channel request: one per process, so connections to a provider
 * are kept alive between notifications. Redirects are never followed (no redirect interceptor).
 */
function dispatcher(): Dispatcher {
  agent ??= new Agent({
    connect: { timeout: CONNECT_TIMEOUT_MS },
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
    connections: 16,
  });
  return agent;
}

/** Closes the shared dispatcher (open keep-alive connections); the next request opens a new one. */
export async function closeHttp(): Promise<void> {
  const current = agent;
  agent = null;
  if (current) await current.destroy().catch(() => undefined);
}

/** One request to a provider. */
export type ProviderRequest = {
  url: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'HEAD' | 'DELETE';
  headers: Record<string, string>;
  /** The body, or null (GET, HEAD, DELETE and resolves without a payload). */
  body: string | null;
  /** The worker's signal: the request is abandoned when it aborts. */
  signal: AbortSignal;
  /** Secrets of the channel: masked in `answer` and `error` wherever they appear. */
  secrets: Iterable<string>;
  /**
   * False for a request whose repetition does something twice (an SMS, a call): then only errors
   * before the request left (refused connection, DNS, connect timeout) and 429 are RETRY; a 5xx,
   * 408, a reset or a timeout after sending are FAILED ("may have been sent; not repeated").
   */
  idempotent: boolean;
  /** Who answers, in words, for errors: `the webhook`, `PagerDuty`. */
  provider: string;
};

/** Error codes of a connection that failed before any byte of the request was sent. */
const BEFORE_SEND_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The `code` of an error or of one of its causes, or null. */
function errorCode(err: unknown): string | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * `Retry-After` (delay-seconds or an HTTP-date) as ms from `nowMs`, capped at MAX_RETRY_AFTER_MS;
 * null when absent or not understood.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d{1,10}$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

/** A result without an answer: the request did not get one. */
export function noAnswer(outcome: DeliveryResult['outcome'], error: string): DeliveryResult {
  return { outcome, statusCode: null, answer: null, error, retryAfterMs: null };
}

/** Reads at most MAX_ANSWER_READ_BYTES of a body and drops the rest (and the connection with it). */
async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    const room = MAX_ANSWER_READ_BYTES - size;
    chunks.push(buf.length > room ? buf.subarray(0, room) : buf);
    size += Math.min(buf.length, room);
    if (size >= MAX_ANSWER_READ_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Sends one request to a provider and classifies the answer: 2xx DELIVERED; 408, 429 and 5xx
 * RETRY (after `Retry-After` when given); other 4xx FAILED; 3xx FAILED (redirects are not
 * followed: a provider's endpoint does not move, and following one would send the payload and its
 * signature somewhere the channel's owner did not name). A connection error or timeout is RETRY.
 * For a request that is not `idempotent` see {@link ProviderRequest.idempotent}. Never throws.
 */
export async function sendRequest(req: ProviderRequest): Promise<DeliveryResult> {
  const scrubber = new Scrubber(req.secrets);
  if (!URL.canParse(req.url) || !/^https?:$/.test(new URL(req.url).protocol)) {
    return noAnswer('FAILED', `the URL of ${req.provider} is not a valid http(s) URL`);
  }
  const link = linkSignal([req.signal], REQUEST_TIMEOUT_MS);
  try {
    const response = await request(req.url, {
      method: req.method,
      headers: req.headers,
      ...(req.body !== null ? { body: req.body } : {}),
      signal: link.signal,
      dispatcher: dispatcher(),
    });
    let text: string;
    try {
      text = await readBounded(response.body);
    } catch {
      // The status is known; an answer cut short by a timeout or reset does not change what it means.
      text = '';
    }
    return classify(req, response.statusCode, response.headers, text, scrubber);
  } catch (err) {
    const code = errorCode(err);
    const aborted = link.signal.aborted;
    const why = aborted
      ? req.signal.aborted
        ? 'the delivery was aborted'
        : `no answer within ${REQUEST_TIMEOUT_MS} ms`
      : `${code ?? 'connection error'}: ${err instanceof Error ? err.message : String(err)}`;
    const error = scrubber.cut(`${req.provider} could not be reached (${why})`, MAX_ANSWER_CHARS);
    const beforeSend = code !== null && BEFORE_SEND_CODES.has(code);
    if (req.idempotent || beforeSend) return noAnswer('RETRY', error);
    return noAnswer('FAILED', `${error}; the request may have been sent, so it is not repeated`);
  } finally {
    link.dispose();
  }
}

function classify(
  req: ProviderRequest,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  scrubber: Scrubber,
): DeliveryResult {
  const answer = text === '' ? null : scrubber.cut(text, MAX_ANSWER_CHARS);
  const result = (outcome: DeliveryResult['outcome'], error: string | null, retryAfterMs: number | null) => ({
    outcome,
    statusCode: status,
    answer,
    error: error === null ? null : scrubber.cut(error, MAX_ANSWER_CHARS),
    retryAfterMs,
  });
  if (status >= 200 && status < 300) return result('DELIVERED', null, null);
  if (status >= 300 && status < 400) {
    const location = headers.location;
    const to = typeof location === 'string' ? ` to ${location.slice(0, 500)}` : '';
    return result('FAILED', `${req.provider} answered ${status}${to}: redirects are not followed`, null);
  }
  const retryAfterMs = parseRetryAfter(headers['retry-after']);
  if (status === 429) {
    return result('RETRY', `${req.provider} answered 429 (rate limited); retried later`, retryAfterMs);
  }
  if (status === 408 || status >= 500) {
    if (!req.idempotent) {
      return result(
        'FAILED',
        `${req.provider} answered ${status}; the request may have been sent, so it is not repeated`,
        null,
      );
    }
    return result('RETRY', `${req.provider} answered ${status} (temporary); retried later`, retryAfterMs);
  }
  return result('FAILED', `${req.provider} answered ${status}: ${reasonOf(status)}`, null);
}

function reasonOf(status: number): string {
  switch (status) {
    case 400:
      return 'the request was refused as invalid';
    case 401:
    case 403:
      return 'the credentials were refused';
    case 404:
      return 'the endpoint does not exist';
    case 410:
      return 'the endpoint is gone';
    default:
      return 'the request was refused';
  }
}
