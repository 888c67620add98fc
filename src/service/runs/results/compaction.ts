import { type CheckResult, DETAILS_DROPPED_REASON } from '../../../protocol/index.js';

/** Default of `OUTPOST_PASSING_DETAIL_HOURS`: a passing run keeps its bulky parts for a day. */
export const DEFAULT_PASSING_DETAIL_HOURS = 24;

/**
 * Response and request headers a compacted result keeps (lower-case names): what the result views show
 * beside the status and the timings. Every other header goes with the bodies.
 */
export const KEPT_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'location',
  'server',
]);

/** Start of the `truncated.reason` of a compacted result (the protocol's enums.ts; the result views name it). */
export { DETAILS_DROPPED_REASON };

/** Whether a stored result is a passing run: PASSED, not degraded, no failure, no error. */
export function isPassingRun(
  row: Readonly<{ status: string; has_failures: number; has_errors: number; is_degraded: number }>,
): boolean {
  return row.status === 'PASSED' && row.has_failures === 0 && row.has_errors === 0 && row.is_degraded === 0;
}

/** Keeps the {@link KEPT_HEADERS} of `headers`; returns them and whether any was dropped. */
function keptHeaders(headers: Readonly<Record<string, string>>): {
  kept: Record<string, string>;
  dropped: boolean;
} {
  const kept: Record<string, string> = {};
  let dropped = false;
  for (const [name, value] of Object.entries(headers)) {
    if (KEPT_HEADERS.has(name.toLowerCase())) kept[name] = value;
    else dropped = true;
  }
  return { kept, dropped };
}

/**
 * A passing run's result without its bulky parts (docs/architecture.md, "Store size"): the log lines
 * (`logs` emptied), the HTTP response body and request body (left out, as a URL monitor's are), and the
 * request and response headers other than {@link KEPT_HEADERS}. Everything else stays: status, timings,
 * assertions with their actual values, the certificate, the other types' parts. `truncated` says what went,
 * with the JSON paths in `fields` (after any the agent cut), `reason` starting {@link DETAILS_DROPPED_REASON},
 * and `originalSizeBytes` the size before (or the agent's, when larger).
 *
 * Null when there is nothing to drop, so compacting twice changes nothing: any number of replicas may
 * compact the same result at once.
 *
 * @param detailHours `OUTPOST_PASSING_DETAIL_HOURS`, only for the reason's wording.
 */
export function compactResult(result: CheckResult, detailHours: number): CheckResult | null {
  const fields: string[] = [];
  const compacted: CheckResult = { ...result };
  if (Array.isArray(result.logs) && result.logs.length > 0) {
    compacted.logs = [];
    fields.push('logs');
  }
  const http = result.httpCheckResult;
  if (http) {
    const request = { ...http.request };
    if (request.body !== undefined) {
      delete request.body;
      fields.push('httpCheckResult.request.body');
    }
    if (request.headers) {
      const { kept, dropped } = keptHeaders(request.headers);
      if (dropped) {
        request.headers = kept;
        fields.push('httpCheckResult.request.headers');
      }
    }
    let response = http.response;
    if (response) {
      response = { ...response };
      if (response.body !== undefined && response.body !== null) {
        delete response.body;
        delete response.bodyStoredTruncated;
        fields.push('httpCheckResult.response.body');
      }
      const { kept, dropped } = keptHeaders(response.headers);
      if (dropped) {
        response.headers = kept;
        fields.push('httpCheckResult.response.headers');
      }
    }
    compacted.httpCheckResult = { ...http, request, response };
  }
  if (fields.length === 0) return null;
  const sizeBytes = Buffer.byteLength(JSON.stringify(result));
  const earlier = result.truncated;
  compacted.truncated = {
    reason: `${DETAILS_DROPPED_REASON} (${detailHours} h)${earlier ? `; before that, ${earlier.reason}` : ''}`,
    originalSizeBytes: Math.max(sizeBytes, earlier?.originalSizeBytes ?? 0),
    fields: [...(earlier?.fields ?? []), ...fields.filter((f) => !earlier?.fields.includes(f))],
  };
  return compacted;
}
