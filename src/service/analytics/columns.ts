import type { CheckResult } from '../../protocol/index.js';

/**
 * The numeric columns of `check_results` that analytics aggregate (migration `0003_analytics`),
 * derived from a result when it is stored. Times in milliseconds; null where the run has no
 * such value (a phase the request never reached, no HTTP response, a check type without phases).
 */
export type AnalyticsColumns = {
  phase_wait: number | null;
  phase_dns: number | null;
  phase_tcp: number | null;
  phase_first_byte: number | null;
  phase_download: number | null;
  /** HTTP status code of the final response; null without a response. */
  status_code: number | null;
  /** Attempts the run took (1 without retries). */
  attempts: number;
};

const finite = (value: number | null | undefined): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/**
 * Analytics columns of a result, to spread into the `check_results` insert:
 * `.values({ …, ...analyticsColumnsOf(result) })`.
 *
 * HTTP results (URL and API checks) give `httpCheckResult.timingPhases` `wait`, `dns`, `tcp`,
 * `firstByte`, `download` and `httpCheckResult.response.statusCode` (docs/checks.md,
 * "HTTP timing"). TCP results give `tcpCheckResult.timings` `dns`, `connect` (as `phase_tcp`)
 * and `firstByte`, for TCP analytics later. Other types store nulls.
 */
export function analyticsColumnsOf(result: CheckResult): AnalyticsColumns {
  const http = result.httpCheckResult;
  const tcp = result.tcpCheckResult;
  const attempts = Number.isInteger(result.attempts) && result.attempts >= 1 ? result.attempts : 1;
  if (http) {
    const p = http.timingPhases;
    return {
      phase_wait: finite(p.wait),
      phase_dns: finite(p.dns),
      phase_tcp: finite(p.tcp),
      phase_first_byte: finite(p.firstByte),
      phase_download: finite(p.download),
      status_code: finite(http.response?.statusCode),
      attempts,
    };
  }
  return {
    phase_wait: null,
    phase_dns: finite(tcp?.timings.dns),
    phase_tcp: finite(tcp?.timings.connect),
    phase_first_byte: finite(tcp?.timings.firstByte),
    phase_download: null,
    status_code: null,
    attempts,
  };
}
