/**
 * The model of a public status page (types.ts, StatusPageModel), made from what the store holds of it
 * (page-reader.ts reads it): each service's state and 90-day strip (uptime.ts), the overall state, the
 * active incidents and those of the last 90 days. Pure: no store access, no clock (times are passed in,
 * epoch ms).
 */
import type { AlertState } from '../../alerting/index.js';
import type { CheckDoc } from '../../checks/index.js';
import type { Impact } from '../incidents/schema.js';
import { impactOf } from '../incidents/trigger.js';
import type { GroupFlags, ServiceRowOfPage, StoredIncident, TriggerCheckRow } from './page-queries.js';
import type { CheckDayCounts } from './result-queries.js';
import type {
  PublicIncident,
  PublicMaintenance,
  PublicPage,
  PublicService,
  RunCounts,
  ServiceState,
  StatusPageModel,
} from './types.js';
import { DAY_MS, type Span, STRIP_DAYS, uptimeStrip, utcDayStart } from './uptime.js';

/**
 * How long a model with an open incident stays right (ms): today's uptime and the incidents' durations
 * move with the clock, so a cached rendering of it is redone after this long even if nothing was written.
 */
export const OPEN_INCIDENT_REFRESH_MS = 60_000;

/** Service states, best first (the index is the order "worst of" compares). */
export const STATE_ORDER: readonly ServiceState[] = [
  'operational',
  'under_maintenance',
  'degraded_performance',
  'partial_outage',
  'major_outage',
];

/** The worse of two service states (by {@link STATE_ORDER}). */
export function worseState(a: ServiceState, b: ServiceState): ServiceState {
  return STATE_ORDER.indexOf(a) >= STATE_ORDER.indexOf(b) ? a : b;
}

/** The state an open incident of `impact` puts its services in (Statuspage's component statuses). */
export function stateOfImpact(impact: Impact): ServiceState {
  return impact === 'MAJOR' ? 'major_outage' : impact === 'MINOR' ? 'partial_outage' : 'under_maintenance';
}

/** Every service id on the page's cards, in card order, each once. */
export function pageServiceIds(page: PublicPage): string[] {
  return [...new Set(page.doc.cards.flatMap((c) => c.serviceIds))];
}

// --- Incidents -------------------------------------------------------------------------------------

/**
 * When an incident stopped, as the API decides it: its `stoppedAt` (a RESOLVED update sets it), or, for an
 * incident whose latest update is RESOLVED but whose `stoppedAt` was cleared since, that update's time.
 * A `stoppedAt` still in the future (a maintenance window) is not a stop yet.
 * @returns epoch ms, or null while the incident is open at `nowMs`.
 */
function resolvedAt(incident: StoredIncident, nowMs: number): number | null {
  const stopped = incident.doc.stoppedAt === null ? null : Date.parse(incident.doc.stoppedAt);
  if (stopped !== null && stopped <= nowMs) return stopped;
  const latest = incident.updates[0];
  if (latest?.doc.status === 'RESOLVED') return Date.parse(latest.doc.publicIncidentUpdateDate);
  return null;
}

/** The time span an incident affects its services, clipped to `nowMs`; null when it has not started. */
function spanOf(incident: StoredIncident, nowMs: number): Span | null {
  if (incident.doc.startedAt === null) return null;
  const start = Date.parse(incident.doc.startedAt);
  if (!(start <= nowMs)) return null;
  const stop = resolvedAt(incident, nowMs) ?? nowMs;
  return [start, Math.max(start, Math.min(stop, nowMs))];
}

function toPublicIncident(
  incident: StoredIncident,
  pageServiceIds: Set<string>,
  nowMs: number,
): PublicIncident {
  const updates = incident.updates.map((u) => ({
    id: u.doc.id,
    status: u.doc.status,
    description: u.doc.description,
    atMs: Date.parse(u.doc.publicIncidentUpdateDate),
  }));
  // Newest first by the time shown (the store's order is the order written; a backdated update may differ).
  updates.sort((a, b) => b.atMs - a.atMs);
  let updatedAtMs = incident.updatedAtMs;
  for (const u of incident.updates) updatedAtMs = Math.max(updatedAtMs, u.updatedAtMs);
  return {
    id: incident.id,
    name: incident.doc.name,
    impact: incident.doc.impact,
    startedAtMs: incident.doc.startedAt === null ? incident.createdAtMs : Date.parse(incident.doc.startedAt),
    resolvedAtMs: resolvedAt(incident, nowMs),
    // The latest update as written (seq), as the API's `lastUpdateStatus`.
    status: incident.updates[0]?.doc.status ?? null,
    serviceIds: incident.serviceIds.filter((id) => pageServiceIds.has(id)),
    updates,
    updatedAtMs,
  };
}

// --- Checks with an incident trigger ---------------------------------------------------------------

/** A check whose `triggerIncident` names a status-page service, as the page reads it. */
export type LinkedCheck = {
  checkId: string;
  serviceId: string;
  impact: Impact;
  /** Paused (the check or its group not activated) or muted (the check or its group): it does not count. */
  ignored: boolean;
  /** Paused (the check or its group not activated): its runs do not count for the uptime strip either. */
  paused: boolean;
  /** The check's tags and group, for the maintenance windows that cover it by tag or group. */
  tags?: string[];
  groupId?: number | null;
};

/** A check row with a `triggerIncident` that names a service by id. */
export type TriggerCheck = TriggerCheckRow & {
  doc: CheckDoc & { triggerIncident: { serviceId: string; severity: Parameters<typeof impactOf>[0] } };
};

/** The rows whose document has a `triggerIncident` naming a service (a string `serviceId`). */
export function triggerChecks(rows: readonly TriggerCheckRow[]): TriggerCheck[] {
  return rows.filter((row): row is TriggerCheck => {
    const trigger = row.doc.triggerIncident as { serviceId?: unknown } | null | undefined;
    return !!trigger && typeof trigger.serviceId === 'string';
  });
}

/** The ids of the check groups of `checks`, each once. */
export function groupIdsOf(checks: readonly TriggerCheck[]): number[] {
  return [...new Set(checks.map((c) => c.doc.groupId).filter((g): g is number => g != null))];
}

/**
 * The linked checks by service id: a check counts unless it or its group is paused (not activated) or
 * muted. `groups` holds the flags of the checks' groups by id (a group not found counts as running).
 */
export function linkedChecksByService(
  checks: readonly TriggerCheck[],
  groups: ReadonlyMap<number, GroupFlags>,
): Map<string, LinkedCheck[]> {
  const byService = new Map<string, LinkedCheck[]>();
  for (const { id, activated, doc } of checks) {
    const trigger = doc.triggerIncident;
    const group = doc.groupId == null ? undefined : groups.get(doc.groupId);
    const paused = !activated || group?.activated === false;
    const ignored = paused || doc.muted === true || group?.muted === true;
    const list = byService.get(trigger.serviceId) ?? [];
    list.push({
      checkId: id,
      serviceId: trigger.serviceId,
      impact: impactOf(trigger.severity),
      ignored,
      paused,
      tags: doc.tags ?? [],
      groupId: doc.groupId ?? null,
    });
    byService.set(trigger.serviceId, list);
  }
  return byService;
}

/** The checks of `serviceIds` that count for their state (not paused, not muted), in service order. */
export function countingChecks(
  byService: ReadonlyMap<string, LinkedCheck[]>,
  serviceIds: readonly string[],
): LinkedCheck[] {
  const out: LinkedCheck[] = [];
  for (const id of serviceIds) for (const c of byService.get(id) ?? []) if (!c.ignored) out.push(c);
  return out;
}

/**
 * The checks of `serviceIds` whose runs make their service's uptime strip: the linked checks not paused
 * (muted ones count: muting silences alerts, it does not stop the runs), in service order.
 */
export function stripChecks(
  byService: ReadonlyMap<string, LinkedCheck[]>,
  serviceIds: readonly string[],
): LinkedCheck[] {
  const out: LinkedCheck[] = [];
  for (const id of serviceIds) for (const c of byService.get(id) ?? []) if (!c.paused) out.push(c);
  return out;
}

/** The first day (epoch ms, UTC midnight) of the strip that ends with the day of `nowMs`. */
export function stripStart(nowMs: number): number {
  return utcDayStart(nowMs) - (STRIP_DAYS - 1) * DAY_MS;
}

/**
 * The strip's runs by service id: per strip day (oldest first, {@link STRIP_DAYS} entries) the final runs
 * of the service's `checks` added up. Every service of `checks` gets an entry (all days empty when none
 * ran), so it follows the check rule; a service without checks gets none (the incident-only rule).
 * `counts` outside the strip are ignored.
 */
export function runsByService(
  checks: readonly LinkedCheck[],
  counts: readonly CheckDayCounts[],
  nowMs: number,
): Map<string, (RunCounts | undefined)[]> {
  const first = stripStart(nowMs);
  const serviceOf = new Map(checks.map((c) => [c.checkId, c.serviceId]));
  const out = new Map<string, (RunCounts | undefined)[]>();
  for (const c of checks)
    if (!out.has(c.serviceId)) out.set(c.serviceId, new Array(STRIP_DAYS).fill(undefined));
  for (const { checkId, dayStartMs, counts: n } of counts) {
    const serviceId = serviceOf.get(checkId);
    const day = Math.round((dayStartMs - first) / DAY_MS);
    if (serviceId === undefined || day < 0 || day >= STRIP_DAYS) continue;
    const days = out.get(serviceId)!;
    const sum = days[day] ?? { passed: 0, degraded: 0, failed: 0 };
    sum.passed += n.passed;
    sum.degraded += n.degraded;
    sum.failed += n.failed;
    days[day] = sum;
  }
  return out;
}

/** The state a linked check's alert state gives its service; null when it is passing (or never judged). */
function stateOfAlert(check: LinkedCheck, state: AlertState | null): ServiceState | null {
  const told = state?.version === 1 ? state.episode?.told : undefined;
  if (told === 'FAILING') return stateOfImpact(check.impact);
  if (told === 'DEGRADED') return 'degraded_performance';
  return null;
}

// --- The model -------------------------------------------------------------------------------------

/** What the store holds of a page, as {@link pageModel} needs it (page-reader.ts reads it). */
export type PageData = {
  /** The page's version (page-reader.ts, `version`). */
  version: string;
  /** The rows of the page's services that exist. */
  services: ServiceRowOfPage[];
  /** The incidents linked to the page's services. */
  incidents: StoredIncident[];
  /** The checks that count for the page's services ({@link countingChecks}). */
  checks: LinkedCheck[];
  /** The alert states of `checks`, by check id. */
  alertStates: ReadonlyMap<string, AlertState>;
  /**
   * The final runs of each service's linked, not-paused checks per strip day ({@link runsByService}); a
   * service absent from it has no such check and its strip follows its incidents only.
   */
  runs: ReadonlyMap<string, readonly (RunCounts | undefined)[]>;
  /** Maintenance covering the services' checks (page-reader.ts); left out: none. */
  maintenance?: PublicMaintenance[];
};

/** What the incidents give a page: each service's incident spans and open state, and the incidents shown. */
type IncidentsOfPage = {
  perService: Map<string, { impact: Impact; span: Span | null }[]>;
  states: Map<string, ServiceState>;
  /** Open or in the strip's 90 days. */
  shown: PublicIncident[];
  older: PublicIncident[];
};

function incidentsOfPage(stored: readonly StoredIncident[], pageIds: Set<string>, nowMs: number) {
  const windowStart = stripStart(nowMs);
  const out: IncidentsOfPage = { perService: new Map(), states: new Map(), shown: [], older: [] };
  for (const incident of stored) {
    const span = spanOf(incident, nowMs);
    const view = toPublicIncident(incident, pageIds, nowMs);
    const open = view.resolvedAtMs === null;
    for (const id of view.serviceIds) {
      const list = out.perService.get(id) ?? [];
      list.push({ impact: incident.doc.impact, span });
      out.perService.set(id, list);
      if (open && span)
        out.states.set(id, worseState(out.states.get(id) ?? 'operational', stateOfImpact(view.impact)));
    }
    const recent = open || (view.resolvedAtMs ?? 0) >= windowStart || view.startedAtMs >= windowStart;
    if (view.serviceIds.length > 0) (recent ? out.shown : out.older).push(view);
  }
  return out;
}

/**
 * Builds everything a status page shows (types.ts, StatusPageModel) from `data`: its cards with each
 * service's state and 90-day strip, the overall state, the active incidents and those of the last 90 days
 * (newest first). A service's state is the worst of the incidents open on it and of the alert states of the
 * checks whose `triggerIncident` names it (paused and muted checks left out). Services that no longer exist
 * are left off their cards. Times in epoch ms; never throws.
 */
export function pageModel(page: PublicPage, data: PageData, nowMs: number): StatusPageModel {
  const { perService, states, shown, older } = incidentsOfPage(
    data.incidents,
    new Set(pageServiceIds(page)),
    nowMs,
  );
  for (const check of data.checks) {
    const state = stateOfAlert(check, data.alertStates.get(check.checkId) ?? null);
    if (state) states.set(check.serviceId, worseState(states.get(check.serviceId) ?? 'operational', state));
  }

  // A service with a check in a maintenance window in progress is under maintenance (or worse).
  for (const window of data.maintenance ?? []) {
    if (!window.active) continue;
    for (const id of window.serviceIds) {
      states.set(id, worseState(states.get(id) ?? 'operational', 'under_maintenance'));
    }
  }
  const services = new Map<string, PublicService>();
  for (const row of data.services) {
    const createdAtMs = Number(row.created_at);
    const strip = uptimeStrip(
      perService.get(row.id) ?? [],
      createdAtMs,
      nowMs,
      data.runs.get(row.id) ?? null,
    );
    services.set(row.id, {
      id: row.id,
      name: row.name,
      state: states.get(row.id) ?? 'operational',
      uptime: strip.days,
      uptimePercent90d: strip.last90.percent,
      uptime90d: strip.last90,
      uptime30d: strip.last30,
      createdAtMs,
      updatedAtMs: Number(row.updated_at ?? row.created_at),
    });
  }
  const cards = page.doc.cards.map((card) => ({
    id: card.id,
    name: card.name,
    services: card.serviceIds.map((id) => services.get(id)).filter((s): s is PublicService => !!s),
  }));
  let overall: ServiceState = 'operational';
  for (const s of services.values()) overall = worseState(overall, s.state);

  const newestFirst = (a: PublicIncident, b: PublicIncident) =>
    b.startedAtMs - a.startedAtMs || (a.id < b.id ? 1 : -1);
  shown.sort(newestFirst);
  older.sort(newestFirst);
  return {
    page,
    cards,
    overall,
    activeIncidents: shown.filter((i) => i.resolvedAtMs === null),
    incidents: shown,
    olderIncidents: older,
    ...(data.maintenance && data.maintenance.length > 0 ? { maintenance: data.maintenance } : {}),
    generatedAtMs: nowMs,
    version: data.version,
  };
}

/**
 * Until when (epoch ms) a model stays right by the clock alone: the next UTC midnight, the next start or
 * stop of an incident or a maintenance window still ahead, and, while an incident is open, {@link OPEN_INCIDENT_REFRESH_MS} on
 * (today's uptime and the durations shown move with time).
 */
export function modelFreshUntil(model: StatusPageModel): number {
  const now = model.generatedAtMs;
  let until = utcDayStart(now) + DAY_MS;
  for (const incident of model.activeIncidents) {
    if (incident.startedAtMs > now) until = Math.min(until, incident.startedAtMs);
    else until = Math.min(until, now + OPEN_INCIDENT_REFRESH_MS);
  }
  for (const window of model.maintenance ?? []) {
    until = Math.min(until, window.startsAtMs > now ? window.startsAtMs : window.endsAtMs);
  }
  return until;
}
