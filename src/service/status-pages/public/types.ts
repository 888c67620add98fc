/**
 * Contracts of public status pages (docs/status-pages.md): the page a request resolved to, and the model
 * every rendering of it (HTML, feeds, the Statuspage-compatible JSON, the badge) is made from. Times are
 * epoch milliseconds unless named `…Iso`.
 */
import type { Impact, UpdateStatus } from '../incidents/schema.js';
import type { StatusPageDoc } from '../admin/status-pages.js';

/** A status page found by its `url` (`/status/{url}`) or by its `customDomain` (the request's Host). */
export type PublicPage = {
  id: string;
  accountId: string;
  /** The page's `url` field: the path segment after `/status/`. */
  url: string;
  doc: StatusPageDoc;
  /** Newest `updated_at`/`created_at` of the page row. */
  updatedAtMs: number;
};

/**
 * How a request may see a page: a public page, or a private one opened with one of its keys (the session
 * cookie the key form set, or the key's token in a feed URL). A request that may not see a page gets the
 * very 404 an unknown page gets.
 */
export type PageAccess = {
  page: PublicPage;
  via: 'public' | 'cookie' | 'token';
  /** The page key that opened a private page; null for a public page. */
  keyId: string | null;
  /**
   * The prefix of the page's links as this request sees them: `/status/{url}` or `''` when served at the
   * root of its custom domain.
   */
  basePath: string;
};

/**
 * A service's state, in Statuspage's words (its component statuses), worst last: derived from the
 * incidents open on it (MAINTENANCE → under_maintenance, MINOR → partial_outage, MAJOR → major_outage)
 * and from the alert state of checks whose `triggerIncident` names it (degraded → degraded_performance,
 * failing → the trigger's impact as above).
 */
export type ServiceState =
  | 'operational'
  | 'under_maintenance'
  | 'degraded_performance'
  | 'partial_outage'
  | 'major_outage';

/** Final runs of one UTC day by status (the linked, not-paused checks of a service together). */
export type RunCounts = { passed: number; degraded: number; failed: number };

/** One day of a service's 90-day uptime strip (UTC days, oldest first). */
export type UptimeDay = {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /**
   * The day's uptime percent per UPTIME_RULE: the share of its linked checks' runs not failing, lowered by
   * its incidents (an open MAJOR incident's time down, a MINOR one's partly); a service without linked
   * checks from its incidents only. Null ("no data") for a day before the service existed, a day that is
   * maintenance all through, and, for a service with linked checks, a day without runs.
   */
  uptimePercent: number | null;
  /** Incidents (any impact) open at some time of the day. */
  incidentCount: number;
  /** Worst impact open that day; null without incidents. */
  worstImpact: Impact | null;
  /** The day's final runs of the linked checks; null for a service without linked checks or a day without runs. */
  runs: RunCounts | null;
};

/** A service's uptime over the last `days` days of its strip, counting only the days with data. */
export type UptimeSummary = {
  /** The days the figure covers: 90 (the whole strip) or 30 (what a phone shows). */
  days: number;
  /** How many of them have data (an uptime percent). */
  daysWithData: number;
  /** Total up time over total time of those days, percent with two decimals; null without any. */
  percent: number | null;
};

/** An incident update as a page shows it. */
export type PublicIncidentUpdate = {
  id: string;
  status: UpdateStatus;
  description: string;
  /** When the update is shown as made (`publicIncidentUpdateDate`), epoch ms. */
  atMs: number;
};

/** An incident as a page shows it: newest update first. */
export type PublicIncident = {
  id: string;
  name: string;
  impact: Impact;
  startedAtMs: number;
  /** Null while open. */
  resolvedAtMs: number | null;
  /** The latest update's status; null without updates. */
  status: UpdateStatus | null;
  /** Ids of the page's services it affects. */
  serviceIds: string[];
  updates: PublicIncidentUpdate[];
  updatedAtMs: number;
};

/** A service on a card, with its current state and strip. */
export type PublicService = {
  id: string;
  name: string;
  state: ServiceState;
  /** 90 entries, oldest first; the last is today (UTC). */
  uptime: UptimeDay[];
  /** Uptime over the 90 days, percent; null without data (the same as `uptime90d.percent`). */
  uptimePercent90d: number | null;
  /** Uptime over the 90 days and the number of them with data. */
  uptime90d: UptimeSummary;
  /** Uptime over the last 30 days (what a narrow screen shows) and the number of them with data. */
  uptime30d: UptimeSummary;
  createdAtMs: number;
  updatedAtMs: number;
};

/** An occurrence of a maintenance window as a page shows it: times in epoch ms, the services it covers. */
export type PublicMaintenance = {
  name: string;
  description: string | null;
  startsAtMs: number;
  endsAtMs: number;
  /** Whether it is in progress when the model was built. */
  active: boolean;
  serviceIds: string[];
};

/** The whole page as it is rendered. */
export type StatusPageModel = {
  page: PublicPage;
  cards: { id: string; name: string; services: PublicService[] }[];
  /** The worst service state (operational when every service is). */
  overall: ServiceState;
  /** Incidents not resolved, newest first. */
  activeIncidents: PublicIncident[];
  /** Incidents of the last 90 days (active ones included), newest first. */
  incidents: PublicIncident[];
  /**
   * Incidents resolved before the 90 days, newest first: no longer listed, but their pages stay (feed items
   * and subscriber mail link to them).
   */
  olderIncidents: PublicIncident[];
  /**
   * Maintenance windows in progress, or starting within a week, that cover a linked check of a service on
   * the page (docs/status-pages.md, "Maintenance windows"), by start. Left out: none.
   */
  maintenance?: PublicMaintenance[];
  /** When the model was built. */
  generatedAtMs: number;
  /**
   * Changes whenever anything shown changes (page, services, incidents, updates, linked checks' alert
   * states): the cache key and the ETag's seed.
   */
  version: string;
};

/**
 * The rule the uptime strip follows (uptime.ts, `uptimeStrip`), printed in every page's footer; a service
 * without linked checks counts its incidents only (the rule before issue 15).
 */
export const UPTIME_RULE =
  "Uptime is the share of a day's runs of the service's checks that did not fail; a degraded run counts as up. Incidents can lower it: an open major incident counts its time as down, a minor one 30 % of its time. Maintenance is left out of the day. A service without checks counts its incidents only. Days before a service existed, and days without runs, have no data.";
