import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { badField, notFound } from '../../platform/http/errors.js';
import { type IncidentDoc, presentIncidents, presentUpdate, type UpdateDoc } from './incident-views.js';
import type {
  CreateIncidentBody,
  IncidentUpdateBody,
  IncidentUpdateView,
  IncidentView,
  UpdateIncidentBody,
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
   * @throws HttpError 400 for unknown services or stoppedAt before startedAt.
   */
  async create(accountId: string, body: CreateIncidentBody, now: Date): Promise<IncidentView> {
    const nowMs = now.getTime();
    const doc: IncidentDoc = {
      id: randomUUID(),
      name: body.name,
      impact: body.impact ?? 'MINOR',
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
      const stored = readDoc(row.doc);
      const doc: IncidentDoc = {
        ...stored,
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
  if (update.status === 'RESOLVED' && doc.stoppedAt === null) {
    const startedMs = doc.startedAt === null ? nowMs : Date.parse(doc.startedAt);
    doc.stoppedAt = new Date(Math.max(nowMs, startedMs)).toISOString();
  }
  return presentUpdate(update, doc.id, nowMs, null);
}
