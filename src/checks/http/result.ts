import type { HttpCheckResult, HttpResponse } from '../../protocol/index.js';
import { connectionOf, scrubHeaders } from '../../net/http/index.js';
import { REDACTED } from '../../common/redaction.js';
import type { HttpExchange } from './client.js';

/** A URL as results show it: the password of userinfo replaced by {@link REDACTED}. */
export function displayUrl(url: URL): string {
  if (url.password === '') return url.href;
  const shown = new URL(url.href);
  shown.password = REDACTED;
  return shown.href;
}

/**
 * The `httpCheckResult` of a URL or API run (docs/checks.md, "Results"): `request` as the
 * executor shows it, the final response (headers with credentials masked, scrubHeaders) with
 * `responseExtras` added (an API check's stored body), the final request's timings,
 * certificate and connection, and the redirects before it.
 */
export function httpCheckResultOf(
  exchange: HttpExchange,
  request: HttpCheckResult['request'],
  resolverKind: HttpCheckResult['resolver'],
  responseExtras: Pick<HttpResponse, 'body' | 'bodyStoredTruncated'> = {},
): HttpCheckResult {
  const { last } = exchange;
  return {
    request,
    response:
      last.statusCode === null
        ? null
        : {
            statusCode: last.statusCode,
            statusText: last.statusText,
            url: displayUrl(exchange.finalUrl),
            headers: scrubHeaders(last.headers),
            bodySizeBytes: last.bodySizeBytes,
            bodyTruncated: last.bodyTruncated,
            ...responseExtras,
          },
    timings: exchange.timings,
    timingPhases: exchange.timingPhases,
    redirects: exchange.redirects,
    certificate: last.trace.certificate,
    resolvedIp: last.trace.resolved?.address ?? null,
    connection: connectionOf(last.trace),
    resolver: resolverKind,
    errorCode: exchange.failure?.code ?? null,
  };
}

/**
 * The failure of a run that got a response but has no assertions: a status of 400 or more
 * fails the check, as Checkly's URL monitors and API checks do (`HTTP 404 Not Found`); with
 * assertions they alone judge the status. Empty when it got no response (`unreachable` says why).
 */
export function statusFailures(exchange: HttpExchange, assertionCount: number): string[] {
  const { statusCode, statusText } = exchange.last;
  if (exchange.unreachable !== null || assertionCount > 0 || statusCode === null || statusCode < 400)
    return [];
  return [`HTTP ${statusCode} ${statusText}`.trimEnd()];
}
