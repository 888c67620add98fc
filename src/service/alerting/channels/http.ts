import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher, request } from 'undici';
import { linkSignal } from '../../../common/linked-signal.js';
import { Scrubber } from '../../../common/scrub.js';
import {
  OutboundRefusedError,
  type OutboundPolicy,
  pinnedConnector,
} from '../../platform/http/outbound-policy.js';
import type { DeliveryResult } from '../types.js';

/** Time allowed to connect (TCP and TLS) to a provider, ms. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Time allowed for one whole request (connect, headers and the bounded body read), ms. */
export const REQUEST_TIMEOUT_MS = 10_000;
/**
 * Most bytes of a provider's answer drained (and dropped unread) so its connection can be kept alive;
 * a longer answer closes the connection instead.
 */
export const MAX_ANSWER_READ_BYTES = 64 * 1024;
/** Most characters of an error or an SMTP reply kept in a `DeliveryResult`. */
export const MAX_ANSWER_CHARS = 2_000;
/**
 * Most a `Retry-After` is read as, ms (one day): parseRetryAfter caps a larger value (a broken header stays
 * a finite number). Not the wait a notification gets: the delivery worker caps that lower, at
 * MAX_RETRY_AFTER_WAIT_MS (1 h, delivery/worker.ts), and its cap is the one that rules.
 */
export const MAX_PARSED_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** The dispatchers of channel requests: one per outbound policy (and one for the operator's endpoints). */
const agents = new Map<OutboundPolicy | null, Agent>();

/**
 * The undici dispatcher of channel requests under `policy`: one per policy and process, so connections
 * to a provider are kept alive between notifications. With a policy, every new connection is resolved,
 * checked and pinned to the checked address (pinnedConnector); null (the operator's own provider
 * endpoints) connects as is. Redirects are never followed (no redirect interceptor).
 */
function dispatcher(policy: OutboundPolicy | null): Dispatcher {
  let agent = agents.get(policy);
  if (agent === undefined) {
    agent = new Agent({
      connect:
        policy === null
          ? { timeout: CONNECT_TIMEOUT_MS }
          : pinnedConnector(policy, { timeout: CONNECT_TIMEOUT_MS }),
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
      connections: 16,
    });
    agents.set(policy, agent);
  }
  return agent;
}

/** Closes the shared dispatchers (open keep-alive connections); the next request opens new ones. */
export async function closeHttp(): Promise<void> {
  const current = [...agents.values()];
  agents.clear();
  await Promise.all(current.map((a) => a.destroy().catch(() => undefined)));
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
  /**
   * The outbound policy for a URL a user gave (a webhook, a Slack incoming webhook): every connection is
   * checked and pinned (see OutboundPolicy); a refusal is FAILED with its reason. Null for the operator's
   * own provider endpoints (OUTPOST_PAGERDUTY_URL, OUTPOST_OPSGENIE_URL, OUTPOST_TWILIO_URL), which are
   * configured by the same operator as the policy and connected to as they are.
   */
  policy: OutboundPolicy | null;
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
 * `Retry-After` (delay-seconds or an HTTP-date) as ms from `nowMs`, capped at MAX_PARSED_RETRY_AFTER_MS;
 * null when absent or not understood.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d{1,10}$/.test(text)) return Math.min(Number(text) * 1000, MAX_PARSED_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), MAX_PARSED_RETRY_AFTER_MS);
}

/** A result without an answer: the request did not get one. */
export function noAnswer(outcome: DeliveryResult['outcome'], error: string): DeliveryResult {
  return { outcome, statusCode: null, answer: null, error, retryAfterMs: null };
}

/**
 * Drains at most MAX_ANSWER_READ_BYTES of a body without keeping a byte of it (so a kept-alive connection
 * can carry the next request), and drops the connection when the body is longer or fails.
 */
async function discard(body: Dispatcher.ResponseData['body']): Promise<void> {
  try {
    await body.dump({ limit: MAX_ANSWER_READ_BYTES });
  } catch {
    body.destroy();
  }
}

/** The short status text of an HTTP answer, the only part of it that is kept: `HTTP 404 Not Found`. */
export function statusText(status: number): string {
  const phrase = STATUS_CODES[status];
  return phrase === undefined ? `HTTP ${status}` : `HTTP ${status} ${phrase}`;
}

/** The OutboundRefusedError in an error's cause chain, or null. */
function refusalOf(err: unknown): OutboundRefusedError | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof OutboundRefusedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * Sends one request to a provider and classifies the answer: 2xx DELIVERED; 408, 429 and 5xx
 * RETRY (after `Retry-After` when given); other 4xx FAILED; 3xx FAILED (redirects are not
 * followed: a provider's endpoint does not move, and following one would send the payload and its
 * signature somewhere the channel's owner did not name, or to an address the outbound policy refuses).
 * Only the status is kept (`answer` is its short text, `HTTP 404 Not Found`): the body of the answer is
 * never read into the result, so a channel cannot be used to read what an address answers. A connection
 * the outbound policy refuses (`policy`) is FAILED with the reason, never retried. A connection error or
 * timeout is RETRY. For a request that is not `idempotent` see {@link ProviderRequest.idempotent}.
 * Never throws.
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
      dispatcher: dispatcher(req.policy),
    });
    await discard(response.body);
    return classify(req, response.statusCode, response.headers, scrubber);
  } catch (err) {
    const refused = refusalOf(err);
    if (refused !== null) return noAnswer('FAILED', scrubber.cut(refused.message, MAX_ANSWER_CHARS));
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
  scrubber: Scrubber,
): DeliveryResult {
  const result = (outcome: DeliveryResult['outcome'], error: string | null, retryAfterMs: number | null) => ({
    outcome,
    statusCode: status,
    answer: statusText(status),
    error: error === null ? null : scrubber.cut(error, MAX_ANSWER_CHARS),
    retryAfterMs,
  });
  if (status >= 200 && status < 300) return result('DELIVERED', null, null);
  if (status >= 300 && status < 400) {
    // Where it points is not repeated: the answer of a user-given URL is not for reading.
    return result(
      'FAILED',
      `${req.provider} answered ${status} (a redirect): redirects are not followed; use the final URL`,
      null,
    );
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
