/**
 * The Statuspage-compatible JSON of a status page (docs/status-pages.md, "Feeds and JSON"): the documents
 * of Statuspage's public v2 API (`summary.json`, `status.json`, `components.json`, `incidents.json`,
 * `incidents/unresolved.json`, `scheduled-maintenances.json` and its `upcoming` and `active` lists), with
 * Statuspage's field names and value sets, so status aggregators read an Outpost page unchanged. Cards
 * become component groups with their services inside; MAINTENANCE incidents become scheduled maintenances.
 * Dates are ISO 8601 in UTC with milliseconds (`2026-11-24T08:00:00.000Z`), as Statuspage writes them for
 * a page in `Etc/UTC`.
 */
import type { Impact, UpdateStatus } from '../incidents/schema.js';
import { stateOfImpact, worseState } from './page-model.js';
import type { IncidentFacts } from './page-queries.js';
import type { PublicIncident, PublicService, ServiceState, StatusPageModel } from './types.js';

/** Statuspage's overall indicator (`status.indicator`). */
export type StatusIndicator = 'none' | 'minor' | 'major' | 'critical' | 'maintenance';
/** Statuspage's incident impact. */
export type IncidentImpact = 'none' | 'minor' | 'major' | 'critical' | 'maintenance';
/** Statuspage's incident statuses. */
export type IncidentStatus = 'investigating' | 'identified' | 'monitoring' | 'resolved' | 'postmortem';
/** Statuspage's scheduled-maintenance statuses. */
export type MaintenanceStatus = 'scheduled' | 'in_progress' | 'verifying' | 'completed';

/**
 * A service state as Statuspage's overall indicator and its description (the words Statuspage uses):
 * operational → none; under maintenance → maintenance; degraded performance → minor; partial outage →
 * major; major outage → critical. Statuspage computes an incident's impact from the component statuses
 * by the same table, so an Outpost MINOR incident (its services in partial outage) reads impact `major`
 * and a MAJOR one (major outage) reads `critical`.
 */
export const STATE_INDICATORS: Record<ServiceState, { indicator: StatusIndicator; description: string }> = {
  operational: { indicator: 'none', description: 'All Systems Operational' },
  under_maintenance: { indicator: 'maintenance', description: 'Service Under Maintenance' },
  degraded_performance: { indicator: 'minor', description: 'Partially Degraded Service' },
  partial_outage: { indicator: 'major', description: 'Partial System Outage' },
  major_outage: { indicator: 'critical', description: 'Major System Outage' },
};

/** At most this many incidents (and, separately, maintenances) the full lists hold, newest first, as Statuspage. */
export const MAX_LISTED = 50;

/** `page` of every document. */
export type SpPage = { id: string; name: string; url: string; time_zone: 'Etc/UTC'; updated_at: string };

/** A component (a service) or a component group (a card: `group: true` with `components`). */
export type SpComponent = {
  id: string;
  name: string;
  status: ServiceState;
  created_at: string;
  updated_at: string;
  position: number;
  description: string | null;
  showcase: boolean;
  /** `YYYY-MM-DD` the service was added; null for a group. */
  start_date: string | null;
  group_id: string | null;
  page_id: string;
  group: boolean;
  only_show_if_degraded: false;
  /** A group's component ids. */
  components?: string[];
};

/** One component an update changed (Statuspage's `affected_components`). */
export type SpAffectedComponent = {
  code: string;
  name: string;
  old_status: ServiceState;
  new_status: ServiceState;
};

/** An incident update. */
export type SpIncidentUpdate = {
  id: string;
  status: IncidentStatus | MaintenanceStatus;
  body: string;
  incident_id: string;
  created_at: string;
  updated_at: string;
  display_at: string;
  /** The components the update moved to another status; null when it moved none. */
  affected_components: SpAffectedComponent[] | null;
  deliver_notifications: boolean;
  custom_tweet: null;
  tweet_id: null;
};

/** An incident (scheduled maintenances add `scheduled_for` and `scheduled_until`). */
export type SpIncident = {
  id: string;
  name: string;
  status: IncidentStatus | MaintenanceStatus;
  created_at: string;
  updated_at: string;
  monitoring_at: string | null;
  resolved_at: string | null;
  impact: IncidentImpact;
  shortlink: string;
  started_at: string;
  page_id: string;
  incident_updates: SpIncidentUpdate[];
  components: SpComponent[];
  scheduled_for?: string | null;
  scheduled_until?: string | null;
};

/** How a document's links are made: the absolute page URL (`{origin}{basePath}`, no trailing slash). */
export type ApiLinks = { pageUrl: string };

const iso = (ms: number) => new Date(ms).toISOString();

/** Whether an incident is a scheduled maintenance (impact MAINTENANCE). */
export const isMaintenance = (incident: PublicIncident) => incident.impact === 'MAINTENANCE';

/** The Statuspage impact of an incident: the indicator of the state it puts its services in. */
export function impactOf(impact: Impact): IncidentImpact {
  return STATE_INDICATORS[stateOfImpact(impact)].indicator;
}

const INCIDENT_STATUSES: Record<UpdateStatus, IncidentStatus> = {
  INVESTIGATING: 'investigating',
  IDENTIFIED: 'identified',
  MONITORING: 'monitoring',
  RESOLVED: 'resolved',
  // A maintenance-status update on an incident that is no maintenance: the cause is known and worked on.
  MAINTENANCE: 'identified',
};

/** An incident's Statuspage status: resolved once stopped, else its latest update's (investigating without one). */
export function incidentStatus(incident: PublicIncident): IncidentStatus {
  if (incident.resolvedAtMs !== null) return 'resolved';
  return incident.status === null ? 'investigating' : INCIDENT_STATUSES[incident.status];
}

/**
 * A maintenance's Statuspage status at `nowMs`: completed once stopped; verifying while its latest update
 * is MONITORING; in progress once started; scheduled before.
 */
export function maintenanceStatus(
  incident: PublicIncident,
  startedAtMs: number | null,
  nowMs: number,
): MaintenanceStatus {
  if (incident.resolvedAtMs !== null) return 'completed';
  if (startedAtMs === null || startedAtMs > nowMs) return 'scheduled';
  return incident.status === 'MONITORING' ? 'verifying' : 'in_progress';
}

/** The Statuspage status an update of a maintenance gives it (its time against the window's start). */
function maintenanceUpdateStatus(
  status: UpdateStatus,
  atMs: number,
  startedAtMs: number | null,
): MaintenanceStatus {
  if (status === 'RESOLVED') return 'completed';
  if (status === 'MONITORING') return 'verifying';
  return startedAtMs !== null && atMs >= startedAtMs ? 'in_progress' : 'scheduled';
}

/**
 * The Statuspage status of one update of `incident` (a maintenance's statuses for a MAINTENANCE incident);
 * `startedAtMs` is when the incident started (null: not yet).
 */
export function updateStatusOf(
  incident: PublicIncident,
  update: PublicIncident['updates'][number],
  startedAtMs: number | null,
): IncidentStatus | MaintenanceStatus {
  return isMaintenance(incident)
    ? maintenanceUpdateStatus(update.status, update.atMs, startedAtMs)
    : INCIDENT_STATUSES[update.status];
}

/** Words of Statuspage's incident and maintenance statuses, as feeds show them. */
export const SP_STATUS_WORDS: Record<IncidentStatus | MaintenanceStatus, string> = {
  investigating: 'Investigating',
  identified: 'Identified',
  monitoring: 'Monitoring',
  resolved: 'Resolved',
  postmortem: 'Postmortem',
  scheduled: 'Scheduled',
  in_progress: 'In progress',
  verifying: 'Verifying',
  completed: 'Completed',
};

/** The page and its components as every document shows them. */
type Base = {
  page: SpPage;
  /** Groups then their components, in card order. */
  components: SpComponent[];
  byId: Map<string, SpComponent>;
};

/** `page`: its id, name, absolute URL and when anything it shows last changed. */
function pageOf(model: StatusPageModel, links: ApiLinks): SpPage {
  let updated = model.page.updatedAtMs;
  for (const card of model.cards) for (const s of card.services) updated = Math.max(updated, s.updatedAtMs);
  for (const i of model.incidents) updated = Math.max(updated, i.updatedAtMs, i.updates[0]?.atMs ?? 0);
  return {
    id: model.page.id,
    name: model.page.doc.name,
    url: links.pageUrl,
    time_zone: 'Etc/UTC',
    updated_at: iso(updated),
  };
}

/**
 * The page's components: each card a group (`group: true`, status the worst of its services, `components`
 * its service ids), each service a component inside the first card that holds it (`group_id`); a service on
 * several cards is listed once, in every group's `components`. Positions count from 1 within each level. A
 * component's `updated_at` is the latest of its own change and of the changes of incidents on it.
 */
function baseOf(model: StatusPageModel, links: ApiLinks): Base {
  const pageId = model.page.id;
  const touched = new Map<string, number>();
  for (const i of model.incidents) {
    const at = Math.max(i.updatedAtMs, i.updates[0]?.atMs ?? 0);
    for (const id of i.serviceIds) touched.set(id, Math.max(touched.get(id) ?? 0, at));
  }
  const cardDocs = new Map(model.page.doc.cards.map((c) => [c.id, c]));
  const components: SpComponent[] = [];
  const byId = new Map<string, SpComponent>();
  const placed = new Set<string>();
  model.cards.forEach((card, cardIndex) => {
    const doc = cardDocs.get(card.id);
    const cardCreated = doc ? Date.parse(doc.created_at) : model.page.updatedAtMs;
    const cardUpdated = doc?.updated_at ? Date.parse(doc.updated_at) : cardCreated;
    let status: ServiceState = 'operational';
    let updated = cardUpdated;
    const children: SpComponent[] = [];
    for (const service of card.services) {
      status = worseState(status, service.state);
      const serviceUpdated = Math.max(service.updatedAtMs, touched.get(service.id) ?? 0);
      updated = Math.max(updated, serviceUpdated);
      if (placed.has(service.id)) continue;
      placed.add(service.id);
      children.push(componentOf(service, serviceUpdated, children.length + 1, card.id, pageId));
    }
    const group: SpComponent = {
      id: card.id,
      name: card.name,
      status,
      created_at: iso(cardCreated),
      updated_at: iso(updated),
      position: cardIndex + 1,
      description: null,
      showcase: false,
      start_date: null,
      group_id: null,
      page_id: pageId,
      group: true,
      only_show_if_degraded: false,
      components: card.services.map((s) => s.id),
    };
    components.push(group, ...children);
    byId.set(group.id, group);
    for (const c of children) byId.set(c.id, c);
  });
  return { page: pageOf(model, links), components, byId };
}

function componentOf(
  service: PublicService,
  updatedAtMs: number,
  position: number,
  groupId: string,
  pageId: string,
): SpComponent {
  return {
    id: service.id,
    name: service.name,
    status: service.state,
    created_at: iso(service.createdAtMs),
    updated_at: iso(updatedAtMs),
    position,
    description: null,
    // Every service shows its 90-day uptime strip on the page.
    showcase: true,
    start_date: iso(service.createdAtMs).slice(0, 10),
    group_id: groupId,
    page_id: pageId,
    group: false,
    only_show_if_degraded: false,
  };
}

/**
 * An incident (or, for MAINTENANCE, a scheduled maintenance) as Statuspage shows it, updates newest first.
 * An update's `affected_components` lists the incident's services when the update moved them: the first
 * update of an open incident from operational to the state its impact gives (MINOR → partial_outage,
 * MAJOR → major_outage, MAINTENANCE → under_maintenance), a resolving update back to operational; other
 * updates carry null.
 */
function incidentOf(
  incident: PublicIncident,
  base: Base,
  facts: IncidentFacts | undefined,
  links: ApiLinks,
  nowMs: number,
): SpIncident {
  const maintenance = isMaintenance(incident);
  const startedAtMs = facts ? facts.startedAtMs : incident.startedAtMs;
  const components = incident.serviceIds
    .map((id) => base.byId.get(id))
    .filter((c): c is SpComponent => c !== undefined);
  const openState = stateOfImpact(incident.impact);
  // Oldest first to follow the states the updates set.
  const chronological = [...incident.updates].reverse();
  let current: ServiceState = 'operational';
  const updates: SpIncidentUpdate[] = chronological.map((u) => {
    const next: ServiceState = u.status === 'RESOLVED' ? 'operational' : openState;
    const affected =
      next === current || components.length === 0
        ? null
        : components.map((c) => ({ code: c.id, name: c.name, old_status: current, new_status: next }));
    current = next;
    const stored = facts?.updates.get(u.id);
    return {
      id: u.id,
      status: updateStatusOf(incident, u, startedAtMs),
      body: u.description,
      incident_id: incident.id,
      created_at: iso(stored?.createdAtMs ?? u.atMs),
      updated_at: iso(stored?.updatedAtMs ?? u.atMs),
      display_at: iso(u.atMs),
      affected_components: affected,
      deliver_notifications: stored?.notifySubscribers ?? false,
      custom_tweet: null,
      tweet_id: null,
    };
  });
  updates.reverse();
  const monitoring = chronological.find((u) => u.status === 'MONITORING');
  const sp: SpIncident = {
    id: incident.id,
    name: incident.name,
    status: maintenance ? maintenanceStatus(incident, startedAtMs, nowMs) : incidentStatus(incident),
    created_at: iso(facts?.createdAtMs ?? incident.startedAtMs),
    updated_at: iso(Math.max(incident.updatedAtMs, incident.updates[0]?.atMs ?? 0)),
    monitoring_at: monitoring ? iso(monitoring.atMs) : null,
    resolved_at: incident.resolvedAtMs === null ? null : iso(incident.resolvedAtMs),
    impact: impactOf(incident.impact),
    shortlink: `${links.pageUrl}/incidents/${encodeURIComponent(incident.id)}`,
    started_at: iso(incident.startedAtMs),
    page_id: base.page.id,
    incident_updates: updates,
    components,
  };
  if (maintenance) {
    sp.scheduled_for = startedAtMs === null ? null : iso(startedAtMs);
    sp.scheduled_until = facts?.stoppedAtMs == null ? null : iso(facts.stoppedAtMs);
  }
  return sp;
}

/** The JSON documents this module makes, by the path after `/api/v2/`. */
export const API_DOCUMENTS = [
  'summary.json',
  'status.json',
  'components.json',
  'incidents.json',
  'incidents/unresolved.json',
  'scheduled-maintenances.json',
  'scheduled-maintenances/upcoming.json',
  'scheduled-maintenances/active.json',
] as const;
/** One of the Statuspage v2 documents served (the path after `/api/v2/`). */
export type ApiDocument = (typeof API_DOCUMENTS)[number];

/**
 * The incidents a document shows (so only their facts are read): unresolved ones and the
 * {@link MAX_LISTED} newest of each kind.
 */
export function incidentsShownBy(model: StatusPageModel, document: ApiDocument): PublicIncident[] {
  switch (document) {
    case 'status.json':
    case 'components.json':
      return [];
    case 'summary.json':
      return model.activeIncidents;
    case 'incidents.json':
      return model.incidents.filter((i) => !isMaintenance(i)).slice(0, MAX_LISTED);
    case 'incidents/unresolved.json':
      return model.activeIncidents.filter((i) => !isMaintenance(i));
    case 'scheduled-maintenances.json':
      return model.incidents.filter(isMaintenance).slice(0, MAX_LISTED);
    case 'scheduled-maintenances/upcoming.json':
    case 'scheduled-maintenances/active.json':
      return model.activeIncidents.filter(isMaintenance);
  }
}

/** `status`: the overall indicator and its words, from the worst service state. */
export function statusOf(model: StatusPageModel): { indicator: StatusIndicator; description: string } {
  const { indicator, description } = STATE_INDICATORS[model.overall];
  return { indicator, description };
}

/**
 * One document of the Statuspage v2 API for `model`:
 * - `summary.json`: `{ page, components, incidents (unresolved), scheduled_maintenances (scheduled, in
 *   progress or verifying), status }`;
 * - `status.json`: `{ page, status }`; `components.json`: `{ page, components }`;
 * - `incidents.json`: the {@link MAX_LISTED} newest incidents of the last 90 days; `incidents/unresolved.json`;
 * - `scheduled-maintenances.json` (the newest {@link MAX_LISTED}), `…/upcoming.json` (scheduled),
 *   `…/active.json` (in progress or verifying).
 * `facts` should hold the store's facts of {@link incidentsShownBy} (missing ones fall back to the model's
 * times and `deliver_notifications: false`). Times are the model's (`generatedAtMs` is "now").
 */
export function statuspageDocument(
  model: StatusPageModel,
  document: ApiDocument,
  links: ApiLinks,
  facts: Map<string, IncidentFacts>,
): Record<string, unknown> {
  const base = baseOf(model, links);
  const now = model.generatedAtMs;
  const shown = (list: PublicIncident[]) => list.map((i) => incidentOf(i, base, facts.get(i.id), links, now));
  const maintenances = (list: PublicIncident[], statuses: MaintenanceStatus[]) =>
    shown(list.filter(isMaintenance)).filter((m) => statuses.includes(m.status as MaintenanceStatus));
  const { page } = base;
  switch (document) {
    case 'summary.json':
      return {
        page,
        components: base.components,
        incidents: shown(model.activeIncidents.filter((i) => !isMaintenance(i))),
        scheduled_maintenances: maintenances(model.activeIncidents, [
          'scheduled',
          'in_progress',
          'verifying',
        ]),
        status: statusOf(model),
      };
    case 'status.json':
      return { page, status: statusOf(model) };
    case 'components.json':
      return { page, components: base.components };
    case 'incidents.json':
      return { page, incidents: shown(incidentsShownBy(model, document)) };
    case 'incidents/unresolved.json':
      return { page, incidents: shown(incidentsShownBy(model, document)) };
    case 'scheduled-maintenances.json':
      return { page, scheduled_maintenances: shown(incidentsShownBy(model, document)) };
    case 'scheduled-maintenances/upcoming.json':
      return { page, scheduled_maintenances: maintenances(model.activeIncidents, ['scheduled']) };
    case 'scheduled-maintenances/active.json':
      return {
        page,
        scheduled_maintenances: maintenances(model.activeIncidents, ['in_progress', 'verifying']),
      };
  }
}
