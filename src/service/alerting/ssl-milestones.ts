import type { Certificate } from '../../protocol/http-result.js';
import type { CheckResult } from '../../protocol/index.js';
import type { CheckDoc } from '../checks/index.js';

/**
 * SSL certificate expiry (docs/alerting.md, "SSL certificate expiry"): which certificates a result
 * carries, and the milestone of days remaining a certificate has reached for a channel. The recorder
 * (recorder.ts, recordCertificates) alerts once per certificate, channel and milestone.
 */

/** Days-remaining milestones after a channel's own threshold (docs/alerting.md, "SSL certificate expiry"). */
export const SSL_MILESTONES = [7, 3, 1, 0] as const;

/**
 * The milestone a certificate with `daysRemaining` has reached for a channel alerting from
 * `thresholdDays`: the smallest of (threshold, 7, 3, 1, 0) that is ≥ the days remaining (so a
 * certificate first seen 2 days before expiry is alerted once, at milestone 3, not for every
 * milestone it skipped); null while above the threshold. Expired certificates are milestone 0.
 */
export function sslMilestone(daysRemaining: number, thresholdDays: number): number | null {
  if (daysRemaining > thresholdDays) return null;
  const candidates = [thresholdDays, ...SSL_MILESTONES].filter(
    (m) => m <= thresholdDays && m >= Math.max(0, daysRemaining),
  );
  return candidates.length === 0 ? 0 : Math.min(...candidates);
}

/**
 * The certificates a result carries, by domain (lower case): an https URL/API target's (its host), for a
 * browser check with `sslCheckDomain` the one the browser saw, and an SSL monitor's (its `serverName`, else
 * its `hostname`); an http target carries none.
 */
export function certificatesOf(
  result: CheckResult,
  check: CheckDoc,
): { domain: string; certificate: Certificate }[] {
  const found: { domain: string; certificate: Certificate }[] = [];
  const http = result.httpCheckResult;
  if (http?.certificate) {
    const host = hostOf(http.request.url);
    if (host) found.push({ domain: host, certificate: http.certificate });
  }
  const browser = result.browserCheckResult as { sslCertificate?: Certificate | null } | undefined;
  const domain = typeof check.sslCheckDomain === 'string' ? check.sslCheckDomain : null;
  if (browser?.sslCertificate && domain)
    found.push({ domain: domain.toLowerCase(), certificate: browser.sslCertificate });
  // An SSL monitor's certificate, by the name it checks (its serverName, else its hostname).
  const ssl = result.sslCheckResult;
  if (ssl?.sslCertificate) {
    found.push({
      domain: (ssl.request.serverName ?? ssl.request.hostname).toLowerCase(),
      certificate: ssl.sslCertificate,
    });
  }
  return found;
}

/** The host of an https URL, lower case; null for another scheme or a URL that does not parse. */
function hostOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' ? parsed.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}
