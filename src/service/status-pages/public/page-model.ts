import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { CheckDoc } from '../../checks/checks.js';
import { impactOf } from '../incidents/trigger.js';
import type { AlertState } from '../../alerting/engine.js';
import type { IncidentDoc, UpdateDoc } from '../incidents/incident-views.js';
import type { Impact } from '../incidents/schema.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import type {
  PublicIncident,
  PublicPage,
  PublicService,
  ServiceState,
  StatusPageModel,
  UptimeDay,
} from './types.js';

/** One UTC day in milliseconds. */
export const DAY_MS = 86_400_000;
/** Days in a service's uptime strip (today last). */
export const STRIP_DAYS = 90;
/** The share of a MINOR incident's time that counts as down (UPTIME_RULE). */
export const MINOR_DOWN_SHARE = 0.3;
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

/** The worse of two service states. */
export function worseState(a: ServiceState, b: ServiceState): ServiceState {
  return STATE_ORDER.indexOf(a) >= STATE_ORDER.indexOf(b) ? a : b;
}

/** The state an open incident of `impact` puts its services in (Statuspage's component statuses). */
export function stateOfImpact(impact: Impact): ServiceState {
  return impact === 'MAJOR' ? 'major_outage' : impact === 'MINOR' ? 'partial_outage' : 'under_maintenance';
}

const IMPACT_RANK: Record<Impact, number> = { MAINTENANCE: 1, MINOR: 2, MAJOR: 3 };
const IMPACTS_BY_RANK: (Impact | null)[] = [null, 'MAINTENANCE', 'MINOR', 'MAJOR'];

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Start (epoch ms) of the UTC day holding `ms`. */
export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

// --- Incidents -------------------------------------------------------------------------------------

/** An incident of the page as read from the store, before it is shown. */
type StoredIncident = {
  id: string;
  doc: IncidentDoc;
  createdAtMs: number;
  updatedAtMs: number;
  serviceIds: string[];
  updates: { doc: UpdateDoc; createdAtMs: number; updatedAtMs: number }[];
};

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
function spanOf(incident: StoredIncident, nowMs: number): [number, number] | null {
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

/** The page's services' incidents with their links and updates (newest update first by `seq`). */
async function readIncidents(db: Kysely<Database>, accountId: string, serviceIds: string[]) {
  if (serviceIds.length === 0) return [];
  const links = await db
    .selectFrom('incident_services')
    .select(['incident_id', 'service_id'])
    .where('account_id', '=', accountId)
    .where('service_id', 'in', serviceIds)
    .execute();
  const ids = [...new Set(links.map((l) => l.incident_id))];
  if (ids.length === 0) return [];
  const [rows, updates] = await Promise.all([
    db
      .selectFrom('incidents')
      .select(['id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute(),
    db
      .selectFrom('incident_updates')
      .select(['incident_id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('incident_id', 'in', ids)
      .orderBy('seq', 'desc')
      .execute(),
  ]);
  const byId = new Map<string, StoredIncident>();
  for (const row of rows) {
    byId.set(row.id, {
      id: row.id,
      doc: readDoc(row.doc),
      createdAtMs: Number(row.created_at),
      updatedAtMs: Number(row.updated_at ?? row.created_at),
      serviceIds: [],
      updates: [],
    });
  }
  for (const link of links) byId.get(link.incident_id)?.serviceIds.push(link.service_id);
  for (const u of updates) {
    byId.get(u.incident_id)?.updates.push({
      doc: readDoc(u.doc),
      createdAtMs: Number(u.created_at),
      updatedAtMs: Number(u.updated_at ?? u.created_at),
    });
  }
  return [...byId.values()];
}

// --- Checks with an incident trigger ---------------------------------------------------------------

/** A check whose `triggerIncident` names a status-page service, as the page reads it. */
type LinkedCheck = {
  checkId: string;
  serviceId: string;
  impact: Impact;
  /** Paused (the check or its group not activated) or muted (the check or its group): it does not count. */
  ignored: boolean;
};

type TriggerIndex = { signature: string; byService: Map<string, LinkedCheck[]> };

/** Per account: the checks with an incident trigger, kept while the account's checks and groups are unchanged. */
const triggerIndexes = new Map<string, TriggerIndex>();
const MAX_TRIGGER_INDEXES = 500;

/** A signature of every check and check group of the account: it changes when any is created, changed or deleted. */
async function checksSignature(db: Kysely<Database>, accountId: string): Promise<string> {
  const [checks, groups] = await Promise.all([
    db
      .selectFrom('checks')
      .select((eb) => [
        eb.fn.countAll().as('n'),
        eb.fn.max('created_at').as('c'),
        eb.fn.max('updated_at').as('u'),
      ])
      .where('account_id', '=', accountId)
      .executeTakeFirst(),
    db
      .selectFrom('check_groups')
      .select((eb) => [
        eb.fn.countAll().as('n'),
        eb.fn.max('created_at').as('c'),
        eb.fn.max('updated_at').as('u'),
      ])
      .where('account_id', '=', accountId)
      .executeTakeFirst(),
  ]);
  return `${checks?.n}/${checks?.c}/${checks?.u}|${groups?.n}/${groups?.c}/${groups?.u}`;
}

/**
 * The account's checks whose `triggerIncident` names a service, by service id. Read once per change of the
 * account's checks or groups (a narrowing LIKE on the documents, then parsed: portable, no JSON SQL).
 */
async function triggerIndex(db: Kysely<Database>, accountId: string): Promise<TriggerIndex> {
  const signature = await checksSignature(db, accountId);
  const known = triggerIndexes.get(accountId);
  if (known?.signature === signature) return known;
  const rows = await db
    .selectFrom('checks')
    .select(['id', 'activated', 'doc'])
    .where('account_id', '=', accountId)
    .where(sql<boolean>`doc like ${'%"serviceId"%'}`)
    .execute();
  const groups = new Map<number, { activated: boolean; muted: boolean }>();
  const byService = new Map<string, LinkedCheck[]>();
  const linked: { row: (typeof rows)[number]; doc: CheckDoc }[] = [];
  for (const row of rows) {
    const doc = readDoc(row.doc);
    const trigger = doc.triggerIncident as { serviceId?: unknown; severity?: unknown } | null | undefined;
    if (!trigger || typeof trigger.serviceId !== 'string') continue;
    linked.push({ row, doc });
  }
  const groupIds = [...new Set(linked.map((l) => l.doc.groupId).filter((g): g is number => g != null))];
  if (groupIds.length > 0) {
    const groupRows = await db
      .selectFrom('check_groups')
      .select(['id', 'doc'])
      .where('account_id', '=', accountId)
      .where('id', 'in', groupIds)
      .execute();
    for (const g of groupRows) {
      const doc = readDoc(g.doc) as { activated?: boolean; muted?: boolean };
      groups.set(Number(g.id), { activated: doc.activated !== false, muted: doc.muted === true });
    }
  }
  for (const { row, doc } of linked) {
    const trigger = doc.triggerIncident as { serviceId: string; severity: Parameters<typeof impactOf>[0] };
    const group = doc.groupId == null ? undefined : groups.get(doc.groupId);
    const ignored =
      !row.activated || doc.muted === true || group?.activated === false || group?.muted === true;
    const list = byService.get(trigger.serviceId) ?? [];
    list.push({ checkId: row.id, serviceId: trigger.serviceId, impact: impactOf(trigger.severity), ignored });
    byService.set(trigger.serviceId, list);
  }
  const index = { signature, byService };
  if (triggerIndexes.size >= MAX_TRIGGER_INDEXES) triggerIndexes.delete(triggerIndexes.keys().next().value!);
  triggerIndexes.set(accountId, index);
  return index;
}

/** The checks of `serviceIds` that count for their state (not paused, not muted). */
function countingChecks(index: TriggerIndex, serviceIds: readonly string[]): LinkedCheck[] {
  const out: LinkedCheck[] = [];
  for (const id of serviceIds) for (const c of index.byService.get(id) ?? []) if (!c.ignored) out.push(c);
  return out;
}

/** The state a linked check's alert state gives its service; null when it is passing (or never judged). */
function stateOfAlert(check: LinkedCheck, state: AlertState | null): ServiceState | null {
  const told = state?.version === 1 ? state.episode?.told : undefined;
  if (told === 'FAILING') return stateOfImpact(check.impact);
  if (told === 'DEGRADED') return 'degraded_performance';
  return null;
}

// --- Version ---------------------------------------------------------------------------------------

/** Every service id on the page's cards, in card order, each once. */
export function pageServiceIds(page: PublicPage): string[] {
  return [...new Set(page.doc.cards.flatMap((c) => c.serviceIds))];
}

/**
 * A version of everything a page shows, without building it: the page row, its services, their incidents
 * and updates (counts and newest `created_at`/`updated_at`), the account's checks and check groups (a
 * changed `triggerIncident`), the alert states of the checks linked to its services, and the current UTC
 * day (the strip moves at midnight). One set of aggregate queries; the cache compares it to decide
 * whether a rendering is still good. Time alone also changes a page with an open incident (see
 * {@link modelFreshUntil}).
 * @returns a short hex hash.
 */
export async function pageVersion(db: Kysely<Database>, page: PublicPage, nowMs: number): Promise<string> {
  const ids = pageServiceIds(page);
  const accountId = page.accountId;
  const parts: unknown[] = [page.id, page.updatedAtMs, utcDate(nowMs), ids.length];
  if (ids.length > 0) {
    const linkedIncidents = db
      .selectFrom('incident_services')
      .select('incident_id')
      .where('account_id', '=', accountId)
      .where('service_id', 'in', ids);
    const [services, links, incidents, updates, index] = await Promise.all([
      db
        .selectFrom('status_page_services')
        .select((eb) => [
          eb.fn.countAll().as('n'),
          eb.fn.max('created_at').as('c'),
          eb.fn.max('updated_at').as('u'),
        ])
        .where('account_id', '=', accountId)
        .where('id', 'in', ids)
        .executeTakeFirst(),
      db
        .selectFrom('incident_services')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .where('service_id', 'in', ids)
        .executeTakeFirst(),
      db
        .selectFrom('incidents')
        .select((eb) => [
          eb.fn.countAll().as('n'),
          eb.fn.max('created_at').as('c'),
          eb.fn.max('updated_at').as('u'),
        ])
        .where('account_id', '=', accountId)
        .where('id', 'in', linkedIncidents)
        .executeTakeFirst(),
      db
        .selectFrom('incident_updates')
        .select((eb) => [
          eb.fn.countAll().as('n'),
          eb.fn.max('created_at').as('c'),
          eb.fn.max('updated_at').as('u'),
        ])
        .where('account_id', '=', accountId)
        .where('incident_id', 'in', linkedIncidents)
        .executeTakeFirst(),
      triggerIndex(db, accountId),
    ]);
    parts.push(services, links, incidents, updates, index.signature);
    const checkIds = countingChecks(index, ids).map((c) => c.checkId);
    if (checkIds.length > 0) {
      const states = await db
        .selectFrom('alert_states')
        .select((eb) => [eb.fn.countAll().as('n'), eb.fn.max('updated_at').as('u')])
        .where('check_id', 'in', checkIds)
        .executeTakeFirst();
      parts.push(states);
    }
  }
  return createHash('sha256')
    .update(JSON.stringify(parts, (_k, v) => (typeof v === 'bigint' ? String(v) : v)))
    .digest('hex')
    .slice(0, 24);
}

/**
 * Until when (epoch ms) a model stays right by the clock alone: the next UTC midnight, the next start or
 * stop of an incident still ahead, and, while an incident is open, {@link OPEN_INCIDENT_REFRESH_MS} on
 * (today's uptime and the durations shown move with time).
 */
export function modelFreshUntil(model: StatusPageModel): number {
  const now = model.generatedAtMs;
  let until = utcDayStart(now) + DAY_MS;
  for (const incident of model.activeIncidents) {
    if (incident.startedAtMs > now) until = Math.min(until, incident.startedAtMs);
    else until = Math.min(until, now + OPEN_INCIDENT_REFRESH_MS);
  }
  return until;
}

// --- Uptime strip ----------------------------------------------------------------------------------

type Span = [number, number];

/** The union of spans, sorted, merged (touching spans merge). */
function union(spans: Span[]): Span[] {
  const sorted = spans.filter((s) => s[1] > s[0]).sort((a, b) => a[0] - b[0]);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else out.push([s[0], s[1]]);
  }
  return out;
}

/** `a` minus `b`, both sorted disjoint unions; linear. */
function subtract(a: Span[], b: Span[]): Span[] {
  const out: Span[] = [];
  let j = 0;
  for (const [start, end] of a) {
    let from = start;
    while (j < b.length && b[j]![1] <= from) j++;
    let k = j;
    while (k < b.length && b[k]![0] < end) {
      if (b[k]![0] > from) out.push([from, b[k]![0]]);
      from = Math.max(from, b[k]![1]);
      k++;
    }
    if (from < end) out.push([from, end]);
  }
  return out;
}

/** Adds each span's time to the days it covers (`perDay[i]` is the day starting `first + i × DAY_MS`). */
function spread(spans: Span[], first: number, perDay: Float64Array): void {
  const days = perDay.length;
  for (const [start, end] of spans) {
    const from = Math.max(start, first);
    const to = Math.min(end, first + days * DAY_MS);
    let day = Math.floor((from - first) / DAY_MS);
    let t = from;
    while (t < to && day < days) {
      const dayEnd = first + (day + 1) * DAY_MS;
      perDay[day]! += Math.min(to, dayEnd) - t;
      t = dayEnd;
      day++;
    }
  }
}

/** Rounds a percent to 2 decimals (what the page shows). */
function round2(percent: number): number {
  return Math.round(percent * 100) / 100;
}

/**
 * A service's 90-day strip and its 90-day uptime per UPTIME_RULE. `incidents` are the service's, each with
 * its span (null: not started). Linear in incidents (after sorting their spans) plus days.
 */
export function uptimeStrip(
  incidents: { impact: Impact; span: Span | null }[],
  serviceCreatedAtMs: number,
  nowMs: number,
): { days: UptimeDay[]; percent90d: number | null } {
  const first = utcDayStart(nowMs) - (STRIP_DAYS - 1) * DAY_MS;
  const byImpact: Record<Impact, Span[]> = { MAJOR: [], MINOR: [], MAINTENANCE: [] };
  // Difference arrays of incidents open per day and per impact.
  const counts = new Int32Array(STRIP_DAYS + 1);
  const perImpact: Record<Impact, Int32Array> = {
    MAJOR: new Int32Array(STRIP_DAYS + 1),
    MINOR: new Int32Array(STRIP_DAYS + 1),
    MAINTENANCE: new Int32Array(STRIP_DAYS + 1),
  };
  const last = first + STRIP_DAYS * DAY_MS;
  for (const { impact, span } of incidents) {
    if (!span) continue;
    byImpact[impact].push(span);
    const [start, end] = span;
    // The last instant the span covers: one ending exactly at midnight does not touch the next day; a
    // zero-length one counts on its day.
    const lastInstant = end > start ? end - 1 : end;
    if (lastInstant < first || start >= last) continue;
    const fromDay = Math.max(0, Math.floor((start - first) / DAY_MS));
    const endDay = Math.min(STRIP_DAYS - 1, Math.floor((lastInstant - first) / DAY_MS));
    if (endDay < fromDay) continue;
    counts[fromDay]! += 1;
    counts[endDay + 1]! -= 1;
    perImpact[impact][fromDay]! += 1;
    perImpact[impact][endDay + 1]! -= 1;
  }
  const maintenance = union(byImpact.MAINTENANCE);
  const major = subtract(union(byImpact.MAJOR), maintenance);
  const minorOnly = subtract(subtract(union(byImpact.MINOR), union(byImpact.MAJOR)), maintenance);
  const majorDown = new Float64Array(STRIP_DAYS);
  const minorDown = new Float64Array(STRIP_DAYS);
  const maintained = new Float64Array(STRIP_DAYS);
  spread(major, first, majorDown);
  spread(minorOnly, first, minorDown);
  // Maintenance counts only within the part of the day the service existed and that has passed.
  const window = (day: number): Span => {
    const dayStart = first + day * DAY_MS;
    return [Math.max(dayStart, serviceCreatedAtMs), Math.min(dayStart + DAY_MS, nowMs)];
  };
  const clippedMaintenance = subtract(maintenance, [
    [Number.NEGATIVE_INFINITY, Math.max(first, serviceCreatedAtMs)],
    [nowMs, Number.POSITIVE_INFINITY],
  ]);
  spread(clippedMaintenance, first, maintained);

  const days: UptimeDay[] = [];
  let running = 0;
  const running3 = { MAJOR: 0, MINOR: 0, MAINTENANCE: 0 };
  let totalUp = 0;
  let totalTime = 0;
  for (let day = 0; day < STRIP_DAYS; day++) {
    running += counts[day]!;
    running3.MAJOR += perImpact.MAJOR[day]!;
    running3.MINOR += perImpact.MINOR[day]!;
    running3.MAINTENANCE += perImpact.MAINTENANCE[day]!;
    let rank = 0;
    if (running3.MAINTENANCE > 0) rank = 1;
    if (running3.MINOR > 0) rank = 2;
    if (running3.MAJOR > 0) rank = 3;
    const [from, to] = window(day);
    const denominator = to - from - maintained[day]!;
    let uptimePercent: number | null = null;
    if (to > from && denominator > 0) {
      const down = Math.min(denominator, majorDown[day]! + MINOR_DOWN_SHARE * minorDown[day]!);
      uptimePercent = round2(100 * (1 - down / denominator));
      totalUp += denominator - down;
      totalTime += denominator;
    }
    days.push({
      date: utcDate(first + day * DAY_MS),
      uptimePercent,
      incidentCount: running,
      worstImpact: IMPACTS_BY_RANK[rank]!,
    });
  }
  return { days, percent90d: totalTime > 0 ? round2((100 * totalUp) / totalTime) : null };
}

// --- The model -------------------------------------------------------------------------------------

/**
 * Builds everything a status page shows (types.ts, StatusPageModel): its cards with each service's state
 * and 90-day strip, the overall state, the active incidents and those of the last 90 days. A service's
 * state is the worst of the incidents open on it and of the alert states of the checks whose
 * `triggerIncident` names it (paused and muted checks left out). Services that no longer exist are left
 * off their cards. Times in epoch ms.
 * @throws only when the store does.
 */
export async function buildPageModel(
  db: Kysely<Database>,
  page: PublicPage,
  nowMs: number,
): Promise<StatusPageModel> {
  const ids = pageServiceIds(page);
  const accountId = page.accountId;
  const [version, serviceRows, stored, index] = await Promise.all([
    pageVersion(db, page, nowMs),
    ids.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom('status_page_services')
          .select(['id', 'name', 'created_at', 'updated_at'])
          .where('account_id', '=', accountId)
          .where('id', 'in', ids)
          .execute(),
    readIncidents(db, accountId, ids),
    triggerIndex(db, accountId),
  ]);
  const checks = countingChecks(index, ids);
  const alertStates = new Map<string, AlertState | null>();
  if (checks.length > 0) {
    const rows = await db
      .selectFrom('alert_states')
      .select(['check_id', 'doc'])
      .where(
        'check_id',
        'in',
        checks.map((c) => c.checkId),
      )
      .execute();
    for (const row of rows) alertStates.set(row.check_id, JSON.parse(row.doc) as AlertState);
  }

  const pageIds = new Set(ids);
  const windowStart = utcDayStart(nowMs) - (STRIP_DAYS - 1) * DAY_MS;
  const perService = new Map<string, { impact: Impact; span: Span | null }[]>();
  const states = new Map<string, ServiceState>();
  const shown: PublicIncident[] = [];
  const older: PublicIncident[] = [];
  for (const incident of stored) {
    const span = spanOf(incident, nowMs);
    const view = toPublicIncident(incident, pageIds, nowMs);
    const open = view.resolvedAtMs === null;
    for (const id of view.serviceIds) {
      const list = perService.get(id) ?? [];
      list.push({ impact: incident.doc.impact, span });
      perService.set(id, list);
      if (open && span)
        states.set(id, worseState(states.get(id) ?? 'operational', stateOfImpact(view.impact)));
    }
    const recent = open || (view.resolvedAtMs ?? 0) >= windowStart || view.startedAtMs >= windowStart;
    if (view.serviceIds.length > 0) (recent ? shown : older).push(view);
  }
  for (const check of checks) {
    const state = stateOfAlert(check, alertStates.get(check.checkId) ?? null);
    if (state) states.set(check.serviceId, worseState(states.get(check.serviceId) ?? 'operational', state));
  }

  const services = new Map<string, PublicService>();
  for (const row of serviceRows) {
    const createdAtMs = Number(row.created_at);
    const strip = uptimeStrip(perService.get(row.id) ?? [], createdAtMs, nowMs);
    services.set(row.id, {
      id: row.id,
      name: row.name,
      state: states.get(row.id) ?? 'operational',
      uptime: strip.days,
      uptimePercent90d: strip.percent90d,
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
    generatedAtMs: nowMs,
    version,
  };
}

/** The rank of an impact (MAINTENANCE 1 < MINOR 2 < MAJOR 3), for "worst of". */
export function impactRank(impact: Impact): number {
  return IMPACT_RANK[impact];
}
