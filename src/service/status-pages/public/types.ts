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

/** One day of a service's 90-day uptime strip (UTC days, oldest first). */
export type UptimeDay = {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /**
   * Percent of the day's time (maintenance left out) without an open MAJOR incident, a MINOR one
   * counting as partial (see UPTIME_RULE); null for a day before the service existed or with only
   * maintenance.
   */
  uptimePercent: number | null;
  /** Incidents (any impact) open at some time of the day. */
  incidentCount: number;
  /** Worst impact open that day; null without incidents. */
  worstImpact: Impact | null;
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
  /** Uptime over the 90 days, percent; null without data. */
  uptimePercent90d: number | null;
  createdAtMs: number;
  updatedAtMs: number;
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
  /** When the model was built. */
  generatedAtMs: number;
  /**
   * Changes whenever anything shown changes (page, services, incidents, updates, linked checks' alert
   * states): the cache key and the ETag's seed.
   */
  version: string;
};

/** The rule the uptime strip follows, printed in every page's footer. */
export const UPTIME_RULE =
  'Uptime is the share of each day without an open major incident on the service; a minor incident counts as a partial outage (30 % of its time counts as down), and maintenance is left out of the day.';
