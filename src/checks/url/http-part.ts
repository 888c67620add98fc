import type { HttpCheckResult, HttpRedirect } from '../../protocol/http-result.js';
import type { ResolverKind } from '../../net/resolve.js';
import { connectionOf, type RequestOnceResult, scrubHeaders, timingsOf } from '../../net/http/index.js';
import { REDACTED } from '../../common/redaction.js';

/** A URL as results show it: the password of userinfo replaced by {@link REDACTED}. */
export function displayUrl(url: URL): string {
  if (url.password === '') return url.href;
  const shown = new URL(url.href);
  shown.password = REDACTED;
  return shown.href;
}

/** The `httpCheckResult` of a URL run from its final request and the redirects before it. */
export function httpPartOf(input: {
  requestedUrl: URL;
  finalUrl: URL;
  last: RequestOnceResult;
  redirects: HttpRedirect[];
  resolver: ResolverKind;
  /** Overrides the final request's error code (too many redirects, bad Location). */
  errorCode: string | null;
  failedAt: number;
}): HttpCheckResult {
  const { last } = input;
  const secure = input.finalUrl.protocol === 'https:';
  const { timings, timingPhases } = timingsOf(last.trace, secure, input.failedAt);
  return {
    request: { method: 'GET', url: displayUrl(input.requestedUrl) },
    response:
      last.statusCode === null
        ? null
        : {
            statusCode: last.statusCode,
            statusText: last.statusText,
            url: displayUrl(input.finalUrl),
            headers: scrubHeaders(last.headers),
            bodySizeBytes: last.bodySizeBytes,
            bodyTruncated: last.bodyTruncated,
          },
    timings,
    timingPhases,
    redirects: input.redirects,
    certificate: last.trace.certificate,
    resolvedIp: last.trace.resolved?.address ?? null,
    connection: connectionOf(last.trace),
    resolver: input.resolver,
    errorCode: input.errorCode ?? last.error?.code ?? null,
  };
}
