import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { badField, notFound } from '../../platform/http/errors.js';
import {
  type IncidentDoc,
  presentIncidents,
  presentUpdate,
  toPageIncident,
  type UpdateDoc,
} from './incident-views.js';
import {
  type CreateIncidentBody,
  type CreatePageIncidentBody,
  type EditPageIncidentBody,
  type IncidentUpdateBody,
  type IncidentUpdateView,
  type IncidentView,
  impactOfSeverity,
  type PageIncidentUpdateBody,
  type Severity,
  type StatusPageIncidentView,
  type UpdateIncidentBody,
} from './schema.js';
import { resolveServices } from '../admin/status-page-services.js';
import { queueUpdateMails } from '../admin/subscribers.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, writeDoc } from '../../platform/store/schema.js';
import { IncidentQueries, type IncidentRow } from './store.js';

/** @throws HttpError 400 naming `stoppedAt` when it is before `startedAt` (both set). */
function checkTimes(doc: IncidentDoc): void {
  if (
    doc.startedAt !== null &&
    doc.stoppedAt !== null &&
    Date.parse(doc.stoppedAt) < Date.parse(doc.startedAt)
  ) {
    throw badField('stoppedAt', 'must not be before startedAt', 'stoppedAtAfterStartedAt');
  }
}

/**
 * Incidents and their updates (docs/api.md, "Incident", "Incident update"), always
 * scoped to one account. Updates are numbered per incident (`seq`) so "latest"
 * is exact even for two updates in the same millisecond; they are answered newest first.
 */
export class Incidents {
  readonly #db: Kysely<Database>;
  readonly #rows: IncidentQueries;
  readonly #mailQueued: () => void;

  /**
   * @param mailQueued called after updates queued subscriber mail (the service wakes its delivery worker);
   *   default nothing (the worker's poll finds the mail).
   */
  constructor(db: Kysely<Database>, mailQueued: () => void = () => {}) {
    this.#db = db;
    this.#rows = new IncidentQueries(db);
    this.#mailQueued = mailQueued;
  }

  /**
   * Creates an incident with its first updates (oldest first in the body).
   * A RESOLVED first update stops it as {@link addUpdate} does. Updates with `notifySubscribers` queue
   * a mail to each confirmed subscriber of the status pages showing the incident's services, in the same
   * transaction (docs/status-pages.md, "Subscriptions").
   * `severity` is the one given through `/v1/status-pages/incidents` (its impact is in `body`).
   * @throws HttpError 400 for unknown services or stoppedAt before startedAt.
   */
  async create(
    accountId: string,
    body: CreateIncidentBody,
    now: Date,
    severity?: Severity,
  ): Promise<IncidentView> {
    const nowMs = now.getTime();
    const doc: IncidentDoc = {
      id: randomUUID(),
      name: body.name,
      impact: body.impact ?? 'MINOR',
      ...(severity === undefined ? {} : { severity }),
      startedAt: body.startedAt === undefined ? now.toISOString() : body.startedAt,
      stoppedAt: body.stoppedAt ?? null,
    };
    checkTimes(doc);
    const mails = await this.#db.transaction().execute(async (trx) => {
      const services = await resolveServices(trx, accountId, body.services ?? [], 'services');
      const serviceIds = services.map((s) => s.id);
      const rows = new IncidentQueries(trx);
      await rows.insert(accountId, doc, nowMs);
      await rows.link(accountId, doc.id, serviceIds);
      let queued = 0;
      for (const update of body.incidentUpdates ?? []) {
        const view = await insertUpdate(rows, accountId, doc, update, nowMs);
        queued += await queueUpdateMails(trx, { accountId, incident: doc, serviceIds, update: view, nowMs });
      }
      // A RESOLVED first update may have set stoppedAt.
      await rows.setDoc(accountId, doc.id, writeDoc(doc));
      return queued;
    });
    if (mails > 0) this.#mailQueued();
    return this.get(accountId, doc.id, true);
  }

  /**
   * One incident; `allUpdates` false keeps only the latest update.
   * @throws HttpError 404 when it is not in the account.
   */
  async get(accountId: string, id: string, allUpdates: boolean): Promise<IncidentView> {
    const row = await this.#row(this.#rows, accountId, id);
    const [view] = await presentIncidents(this.#db, accountId, [row], allUpdates);
    return view!;
  }

  /** A page of incidents, newest first, each with its latest update only. */
  async list(accountId: string, limit: number, offset: number): Promise<IncidentView[]> {
    const rows = await this.#rows.list(accountId, limit, offset);
    return presentIncidents(this.#db, accountId, rows, false);
  }

  /**
   * Replaces name and impact; startedAt, stoppedAt and services when given.
   * With `probe` nothing is written: the answer is what would be stored.
   * @returns the incident with `incidentUpdates` as the latest update's description or null.
   * @throws HttpError 404 when it is not in the account; 400 as for create.
   */
  async update(
    accountId: string,
    id: string,
    body: UpdateIncidentBody,
    now: Date,
    probe: boolean,
  ): Promise<Omit<IncidentView, 'incidentUpdates'> & { incidentUpdates: string | null }> {
    // Read, check and write in one transaction so a concurrent update is not lost.
    const apply = async (db: Kysely<Database>) => {
      const rows = new IncidentQueries(db);
      const row = await this.#row(rows, accountId, id);
      const { severity, ...stored } = readDoc(row.doc);
      const doc: IncidentDoc = {
        ...stored,
        // A severity given through /v1/status-pages/incidents stays while the impact it counts as does.
        ...(severity !== undefined && impactOfSeverity(severity) === body.impact ? { severity } : {}),
        name: body.name,
        impact: body.impact,
        startedAt: body.startedAt === undefined ? stored.startedAt : body.startedAt,
        stoppedAt: body.stoppedAt === undefined ? stored.stoppedAt : body.stoppedAt,
      };
      checkTimes(doc);
      const services =
        body.services === undefined
          ? undefined
          : await resolveServices(db, accountId, body.services, 'services');
      const updated: IncidentRow = { ...row, doc: writeDoc(doc), updated_at: now.getTime() };
      if (probe) return { updated, services };
      await rows.setDoc(accountId, id, updated.doc, now.getTime());
      if (services) {
        await rows.unlinkAll(id);
        await rows.link(
          accountId,
          id,
          services.map((s) => s.id),
        );
      }
      return { updated, services };
    };
    const { updated, services } = probe ? await apply(this.#db) : await this.#db.transaction().execute(apply);
    const [view] = await presentIncidents(this.#db, accountId, [updated], false);
    return {
      ...view!,
      ...(services ? { services } : {}),
      incidentUpdates: view!.incidentUpdates[0]?.description ?? null,
    };
  }

  /** Deletes an incident with its updates. @returns false when it is not in the account. */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#rows.delete(accountId, id);
  }

  /**
   * Adds an update. A RESOLVED update sets `stoppedAt` (to now, or to
   * startedAt when that is later) when it is null; the incident's updated_at moves. With
   * `notifySubscribers` it queues the subscribers' mails in the same transaction (see {@link create}).
   * @throws HttpError 404 when the incident is not in the account.
   */
  async addUpdate(
    accountId: string,
    incidentId: string,
    body: IncidentUpdateBody,
    now: Date,
  ): Promise<IncidentUpdateView> {
    const nowMs = now.getTime();
    const { view, mails } = await this.#db.transaction().execute(async (trx) => {
      const rows = new IncidentQueries(trx);
      const row = await this.#row(rows, accountId, incidentId);
      const doc = readDoc(row.doc);
      const view = await insertUpdate(rows, accountId, doc, body, nowMs);
      await rows.setDoc(accountId, incidentId, writeDoc(doc), nowMs);
      let mails = 0;
      if (view.notifySubscribers) {
        const serviceIds = await rows.linkedServiceIds(accountId, incidentId);
        mails = await queueUpdateMails(trx, { accountId, incident: doc, serviceIds, update: view, nowMs });
      }
      return { view, mails };
    });
    if (mails > 0) this.#mailQueued();
    return view;
  }

  /**
   * Creates an incident from a body of `POST /v1/status-pages/incidents`: started now, its impact the one
   * its severity counts as, its first updates INVESTIGATING unless they say otherwise.
   * @throws HttpError 400 naming `services` for a service not in the account.
   */
  async createForPage(
    accountId: string,
    body: CreatePageIncidentBody,
    now: Date,
  ): Promise<StatusPageIncidentView> {
    const created = await this.create(
      accountId,
      {
        name: body.name,
        impact: impactOfSeverity(body.severity),
        services: body.services.map((s) => ({ id: s.id })),
        incidentUpdates: (body.incidentUpdates ?? []).map(updateBodyOf),
      },
      now,
      body.severity,
    );
    return this.getForPage(accountId, created.id, now.getTime());
  }

  /**
   * One incident as `/v1/status-pages/incidents` shows it, with all its updates, newest first.
   * @throws HttpError 404 when it is not in the account.
   */
  async getForPage(accountId: string, id: string, nowMs: number): Promise<StatusPageIncidentView> {
    const row = await this.#row(this.#rows, accountId, id);
    const [view] = await presentIncidents(this.#db, accountId, [row], true);
    return toPageIncident(view!, row, nowMs);
  }

  /**
   * A cursor page of the account's incidents as `/v1/status-pages/incidents` shows them, oldest first.
   * @throws HttpError 400 naming `nextId` when it is not a cursor this service answered.
   */
  async pageForPage(
    accountId: string,
    page: { limit: number; nextId?: string | undefined },
    nowMs: number,
  ): Promise<{ length: number; entries: StatusPageIncidentView[]; nextId: string | null }> {
    const { rows, nextId } = await this.#rows.page(accountId, page);
    const views = await presentIncidents(this.#db, accountId, rows, true);
    const entries = rows.map((row, i) => toPageIncident(views[i]!, row, nowMs));
    return { length: entries.length, entries, nextId };
  }

  /**
   * `PUT` or `PATCH /v1/status-pages/incidents/{incidentId}`: the fields given replace the stored ones (a
   * severity moves the impact with it; services are replaced whole); the others stay.
   * @throws HttpError 404 when it is not in the account; 400 naming `services` for an unknown service.
   */
  async editForPage(
    accountId: string,
    id: string,
    body: EditPageIncidentBody,
    now: Date,
  ): Promise<StatusPageIncidentView> {
    const nowMs = now.getTime();
    await this.#db.transaction().execute(async (trx) => {
      const rows = new IncidentQueries(trx);
      const doc = readDoc((await this.#row(rows, accountId, id)).doc);
      if (body.name !== undefined) doc.name = body.name;
      if (body.severity !== undefined) {
        doc.severity = body.severity;
        doc.impact = impactOfSeverity(body.severity);
      }
      if (body.services !== undefined) {
        const services = await resolveServices(
          trx,
          accountId,
          body.services.map((s) => ({ id: s.id })),
          'services',
        );
        await rows.unlinkAll(id);
        await rows.link(
          accountId,
          id,
          services.map((s) => s.id),
        );
      }
      await rows.setDoc(accountId, id, writeDoc(doc), nowMs);
    });
    return this.getForPage(accountId, id, nowMs);
  }

  /**
   * Every update of the incident, newest first.
   * @throws HttpError 404 when the incident is not in the account.
   */
  async updatesOf(accountId: string, incidentId: string): Promise<IncidentUpdateView[]> {
    await this.#row(this.#rows, accountId, incidentId);
    const rows = await this.#rows.updates(accountId, [incidentId]);
    return rows.map((u) => presentUpdate(readDoc(u.doc), incidentId, Number(u.created_at), u.updated_at));
  }

  /**
   * One update of the incident.
   * @throws HttpError 404 when the incident or the update is not in the account.
   */
  async getUpdate(accountId: string, incidentId: string, updateId: string): Promise<IncidentUpdateView> {
    await this.#row(this.#rows, accountId, incidentId);
    const u = await this.#rows.update(accountId, incidentId, updateId);
    if (!u) throw notFound('incident update', updateId);
    return presentUpdate(readDoc(u.doc), incidentId, Number(u.created_at), u.updated_at);
  }

  /** Adds an update from a status-page incident update body (status INVESTIGATING when left out); see addUpdate. */
  async addPageUpdate(
    accountId: string,
    incidentId: string,
    body: PageIncidentUpdateBody,
    now: Date,
  ): Promise<IncidentUpdateView> {
    return this.addUpdate(accountId, incidentId, updateBodyOf(body), now);
  }

  /**
   * Replaces an update's description, and its status, `notifySubscribers` and `publicIncidentUpdateDate` when
   * given. A change to RESOLVED stops the incident as addUpdate does; no mail is sent for an edit.
   * @throws HttpError 404 when the incident or the update is not in the account.
   */
  async editUpdate(
    accountId: string,
    incidentId: string,
    updateId: string,
    body: PageIncidentUpdateBody,
    now: Date,
  ): Promise<IncidentUpdateView> {
    const nowMs = now.getTime();
    return this.#db.transaction().execute(async (trx) => {
      const rows = new IncidentQueries(trx);
      const doc = readDoc((await this.#row(rows, accountId, incidentId)).doc);
      const row = await rows.update(accountId, incidentId, updateId);
      if (!row) throw notFound('incident update', updateId);
      const stored = readDoc(row.doc);
      const update: UpdateDoc = {
        ...stored,
        description: body.description,
        status: body.status ?? stored.status,
        notifySubscribers: body.notifySubscribers ?? stored.notifySubscribers,
        publicIncidentUpdateDate: body.publicIncidentUpdateDate ?? stored.publicIncidentUpdateDate,
      };
      await rows.setUpdateDoc(accountId, updateId, update, nowMs);
      stopWhenResolved(doc, update.status, nowMs);
      await rows.setDoc(accountId, incidentId, writeDoc(doc), nowMs);
      return presentUpdate(update, incidentId, Number(row.created_at), nowMs);
    });
  }

  /**
   * Deletes one update of the incident.
   * @returns false when the incident or the update is not in the account.
   */
  async deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<boolean> {
    if (!(await this.#rows.get(accountId, incidentId))) return false;
    return this.#rows.deleteUpdate(accountId, incidentId, updateId);
  }

  /** @throws HttpError 404 when the incident is not in the account. */
  async #row(rows: IncidentQueries, accountId: string, id: string): Promise<IncidentRow> {
    const row = await rows.get(accountId, id);
    if (!row) throw notFound('incident', id);
    return row;
  }
}

/** Inserts one update with the next `seq`; applies RESOLVED to `doc`, which the caller stores. */
async function insertUpdate(
  rows: IncidentQueries,
  accountId: string,
  doc: IncidentDoc,
  body: IncidentUpdateBody,
  nowMs: number,
): Promise<IncidentUpdateView> {
  const update: UpdateDoc = {
    id: randomUUID(),
    status: body.status,
    description: body.description,
    notifySubscribers: body.notifySubscribers ?? false,
    publicIncidentUpdateDate: body.publicIncidentUpdateDate ?? new Date(nowMs).toISOString(),
  };
  await rows.insertUpdate(accountId, doc.id, update, nowMs);
  stopWhenResolved(doc, update.status, nowMs);
  return presentUpdate(update, doc.id, nowMs, null);
}

/** A RESOLVED update stops an incident not stopped yet: at `nowMs`, or at its start when that is later. */
function stopWhenResolved(doc: IncidentDoc, status: UpdateDoc['status'], nowMs: number): void {
  if (status === 'RESOLVED' && doc.stoppedAt === null) {
    const startedMs = doc.startedAt === null ? nowMs : Date.parse(doc.startedAt);
    doc.stoppedAt = new Date(Math.max(nowMs, startedMs)).toISOString();
  }
}

/** A status-page incident update body as an incident update body: INVESTIGATING when it names no status. */
function updateBodyOf(body: PageIncidentUpdateBody): IncidentUpdateBody {
  return {
    status: body.status ?? 'INVESTIGATING',
    description: body.description,
    ...(body.notifySubscribers === undefined ? {} : { notifySubscribers: body.notifySubscribers }),
    ...(body.publicIncidentUpdateDate === undefined
      ? {}
      : { publicIncidentUpdateDate: body.publicIncidentUpdateDate }),
  };
}
