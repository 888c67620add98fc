/** What the checks page and the check page share: type names, the "new check" choices, frequencies. */
import { formatFrequency } from '../ui/format.js';
import type { Check, CheckType } from '../api/schemas.js';
import type { CheckDisplayStatus } from '../ui/status.js';

/** How each check type is named in the app. */
export const CHECK_TYPE_LABELS: Record<CheckType, string> = {
  API: 'API',
  URL: 'URL',
  TCP: 'TCP',
  DNS: 'DNS',
  GRPC: 'gRPC',
  ICMP: 'ICMP',
  SSL: 'SSL',
  TRACEROUTE: 'Traceroute',
  BROWSER: 'Browser',
  MULTI_STEP: 'Multi-step',
  PLAYWRIGHT: 'Playwright',
  HEARTBEAT: 'Heartbeat',
  AGENTIC: 'Agentic',
};

/** The types a check can be created as from the app (`/checks/new?type=…`), with what each one does. */
export const NEW_CHECK_CHOICES: readonly { type: CheckType; label: string; hint: string }[] = [
  { type: 'API', label: 'API check', hint: 'an HTTP request with assertions on the answer' },
  { type: 'URL', label: 'URL monitor', hint: 'a GET that must answer in time' },
  { type: 'TCP', label: 'TCP monitor', hint: 'a port that must accept connections' },
  { type: 'DNS', label: 'DNS monitor', hint: 'a record that must resolve' },
  { type: 'GRPC', label: 'gRPC monitor', hint: 'a gRPC method or health check that must answer' },
  { type: 'ICMP', label: 'ICMP monitor', hint: 'a host that must answer pings' },
  { type: 'SSL', label: 'SSL monitor', hint: 'a certificate that must be valid and not expire soon' },
  { type: 'TRACEROUTE', label: 'Traceroute monitor', hint: 'a route that must reach its host' },
  { type: 'BROWSER', label: 'Browser check', hint: 'a Playwright script in a browser' },
  { type: 'MULTI_STEP', label: 'Multi-step check', hint: 'several API calls in one script' },
  { type: 'PLAYWRIGHT', label: 'Playwright check suite', hint: 'a whole Playwright project' },
  { type: 'AGENTIC', label: 'Agentic check', hint: 'a goal in words, turned into a script and repaired' },
  { type: 'HEARTBEAT', label: 'Heartbeat monitor', hint: 'a job that must ping in time' },
];

/** Status order of the checks page: the ones that need attention first. */
export const STATUS_ORDER: readonly CheckDisplayStatus[] = [
  'failing',
  'degraded',
  'passing',
  'pending',
  'muted',
  'paused',
];

/** Status names as the filters and the summary say them (lower case, as in "3 failing"). */
export const STATUS_WORDS: Record<CheckDisplayStatus, string> = {
  failing: 'failing',
  degraded: 'degraded',
  passing: 'passing',
  pending: 'no runs yet',
  muted: 'muted',
  paused: 'paused',
};

/**
 * How often a check runs, as text: `every 5 min`, `every 10 s`; a heartbeat monitor's expected ping
 * (`ping every 1 h`, `cron 0 3 * * * (UTC)`), since it is not run on a frequency.
 */
export function frequencyText(check: Check): string {
  if (check.checkType === 'HEARTBEAT') {
    const hb = check.heartbeat as
      | { period?: number; periodUnit?: string; schedule?: string; timezone?: string }
      | undefined;
    if (hb?.schedule) return `cron ${hb.schedule}${hb.timezone ? ` (${hb.timezone})` : ''}`;
    if (hb?.period && hb.periodUnit) {
      const unit = hb.period === 1 ? hb.periodUnit.replace(/s$/, '') : hb.periodUnit;
      return `ping every ${hb.period} ${unit}`;
    }
    return 'ping expected';
  }
  return formatFrequency(check.frequency, check.frequencyOffset);
}

const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/**
 * `3 minutes ago`: like format.ts's formatRelative, with one formatter for every call (a thousand rows
 * would otherwise build a thousand formatters per refresh).
 * @param ms the time, epoch milliseconds.
 * @param nowMs now, epoch milliseconds.
 */
export function relativeTime(ms: number, nowMs: number): string {
  const seconds = Math.round((ms - nowMs) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relativeFormat.format(seconds, 'second');
  if (abs < 3600) return relativeFormat.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return relativeFormat.format(Math.round(seconds / 3600), 'hour');
  return relativeFormat.format(Math.round(seconds / 86_400), 'day');
}
