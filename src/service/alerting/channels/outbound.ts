import { defaultOutboundPolicy } from '../../platform/http/outbound-policy.js';
import type { DeliveryResult, ProviderConfig } from '../types.js';
import { noAnswer, sendRequest } from './http.js';

/** What every request to an address a user gave carries. */
const USER_AGENT = 'Outpost-Alerts/1';

/**
 * `text` parsed as an http(s) URL, or a FAILED result saying `{what} is not a valid http(s) URL`. The API
 * checks the pattern on save; this catches what a pattern cannot (a host that does not parse).
 */
export function userUrl(text: string, what: string): URL | DeliveryResult {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return noAnswer('FAILED', `${what} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return noAnswer('FAILED', `${what} must be http or https`);
  }
  return url;
}

/** `url` without its trailing slashes, so `${base}/message` has one. */
export function baseOf(url: URL): string {
  return url.toString().replace(/\/+$/, '');
}

/** One request to an address a user gave (a chat server, a push service, an Apprise API). */
export type UserRequest = {
  url: string;
  method?: 'POST' | 'PUT';
  /** Content type and credentials; `user-agent` is added. */
  headers: Record<string, string>;
  body: string;
  /** The channel's secrets: masked in the result's answer and error. */
  secrets: readonly string[];
  /** Who answers, in words: `Discord`, `the ntfy server`. */
  provider: string;
  providers: ProviderConfig;
  signal: AbortSignal;
};

/**
 * Sends `req` through sendRequest under the outbound policy of user-given addresses (`providers.outbound`,
 * by default defaultOutboundPolicy: docs/alerting.md, "Where alerts may go"). Chat and push messages are
 * sent again on 5xx, 408 and 429 like webhooks (idempotent): a duplicate message is better than none.
 * Never throws.
 */
export function sendToUserUrl(req: UserRequest): Promise<DeliveryResult> {
  return sendRequest({
    url: req.url,
    method: req.method ?? 'POST',
    headers: { ...req.headers, 'user-agent': USER_AGENT },
    body: req.body,
    signal: req.signal,
    secrets: req.secrets.filter((s) => s.length > 1),
    idempotent: true,
    provider: req.provider,
    policy: req.providers.outbound ?? defaultOutboundPolicy(),
  });
}

/** True when `value` is a DeliveryResult (a parse that failed), false for a URL. */
export function isResult(value: URL | DeliveryResult): value is DeliveryResult {
  return !(value instanceof URL);
}

/** The JSON Schema pattern of an http(s) URL in a channel config (as WEBHOOK's `url`). */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/]+[^\\s]*$';
