import type { Kysely } from 'kysely';
import { iso } from '../../platform/http/pagination.js';
import type {
  Impact,
  IncidentUpdateView,
  IncidentView,
  Severity,
  StatusPageIncidentView,
  UpdateStatus,
} from './schema.js';
import { presentService } from '../admin/status-page-services.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { IncidentQueries, type IncidentRow } from './store.js';

/**
 * `dashboardId` of every incident. The spec shows the field (a number) but no
 * dashboards; each account has exactly one, so the number is the constant 1.
 */
export const DASHBOARD_ID = 1;

/** An incident as stored in `incidents.doc`. Times are ISO date-times. */
export type IncidentDoc = {
  id: string;
  name: string;
  impact: Impact;
  /**
   * The severity given through `/v1/status-pages/incidents` (the hosted API's, finer than `impact`, which
   * follows it); absent when the incident was made or last edited with `/v1/incidents`.
   */
  severity?: Severity;
  startedAt: string | null;
  stoppedAt: string | null;
};

/** An incident update as stored in `incident_updates.doc`. */
export type UpdateDoc = {
  id: string;
  status: UpdateStatus;
  description: string;
  notifySubscribers: boolean;
  publicIncidentUpdateDate: string;
};

/** Milliseconds an incident has lasted: startedAt (or created_at) to stoppedAt (or now); never negative. */
export function durationMs(doc: IncidentDoc, createdAtMs: number, nowMs: number): number {
  const start = doc.startedAt === null ? createdAtMs : Date.parse(doc.startedAt);
  const stop = doc.stoppedAt === null ? nowMs : Date.parse(doc.stoppedAt);
  return Math.max(0, stop - start);
}

/** A stored update as the API shows it (docs/api.md, "Incident update"). */
export function presentUpdate(
  doc: UpdateDoc,
  incidentId: string,
  createdAtMs: number,
  updatedAtMs: number | null,
): IncidentUpdateView {
  return {
    id: doc.id,
    status: doc.status,
    description: doc.description,
    incidentId,
    notifySubscribers: doc.notifySubscribers,
    publicIncidentUpdateDate: doc.publicIncidentUpdateDate,
    created_at: iso(createdAtMs)!,
    updated_at: iso(updatedAtMs),
  };
}

/**
 * Rows → incident views with their services and updates, newest update first
 * (only the latest unless `allUpdates`), in the order of `rows`. Two queries
 * for any number of rows.
 */
export async function presentIncidents(
  db: Kysely<Database>,
  accountId: string,
  rows: readonly IncidentRow[],
  allUpdates: boolean,
): Promise<IncidentView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const incidents = new IncidentQueries(db);
  const links = await incidents.services(accountId, ids);
  const updates = await incidents.updates(accountId, ids);
  return rows.map((row) => {
    const doc = readDoc(row.doc);
    const own = updates.filter((u) => u.incident_id === row.id);
    return {
      id: doc.id,
      name: doc.name,
      impact: doc.impact,
      startedAt: doc.startedAt,
      stoppedAt: doc.stoppedAt,
      dashboardId: DASHBOARD_ID,
      services: links.filter((l) => l.incident_id === row.id).map(presentService),
      created_at: iso(row.created_at)!,
      updated_at: iso(row.updated_at),
      incidentUpdates: (allUpdates ? own : own.slice(0, 1)).map((u) =>
        presentUpdate(readDoc(u.doc), row.id, Number(u.created_at), u.updated_at),
      ),
    };
  });
}

/**
 * Incidents linked to any of `serviceIds`, newest first, as status pages show
 * them (docs/api.md, "Status page": `severity` is the impact, `duration` in ms up to
 * now while open), each with the ids of its services to pick a page's incidents.
 */
export async function incidentsForServices(
  db: Kysely<Database>,
  accountId: string,
  serviceIds: readonly string[],
  nowMs: number,
): Promise<{ serviceIds: Set<string>; incident: StatusPageIncidentView }[]> {
  if (serviceIds.length === 0) return [];
  const rows = await new IncidentQueries(db).forServices(accountId, [...new Set(serviceIds)]);
  const views = await presentIncidents(db, accountId, rows, true);
  return rows.map((row, i) => {
    const view = views[i]!;
    return {
      serviceIds: new Set(view.services.map((s) => s.id)),
      incident: toPageIncident(view, row, nowMs),
    };
  });
}

/**
 * An incident as status pages and `/v1/status-pages/incidents` show it (docs/api.md, "Status-page
 * incidents"): `severity` the one it was given there, else its impact; `duration` in ms, up to now while open.
 * `view` holds the updates to show, newest first.
 */
export function toPageIncident(view: IncidentView, row: IncidentRow, nowMs: number): StatusPageIncidentView {
  const doc = readDoc(row.doc);
  return {
    name: view.name,
    severity: doc.severity ?? view.impact,
    id: view.id,
    services: view.services,
    lastUpdateStatus: view.incidentUpdates[0]?.status ?? null,
    created_at: view.created_at,
    updated_at: view.updated_at,
    duration: durationMs(doc, Number(row.created_at), nowMs),
    incidentUpdates: view.incidentUpdates.map((u) => ({
      description: u.description,
      id: u.id,
      created_at: u.created_at,
      status: u.status,
      publicIncidentUpdateDate: u.publicIncidentUpdateDate,
      notifySubscribers: u.notifySubscribers,
    })),
  };
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    incidents: IncidentDoc;
    incident_updates: UpdateDoc;
  }
}
