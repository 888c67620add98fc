import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { badField, notFound } from '../../http/errors.js';
import {
  type IncidentDoc,
  type IncidentRow,
  presentIncidents,
  presentUpdate,
  type UpdateDoc,
} from './incident-views.js';
import type {
  CreateIncidentBody,
  IncidentUpdateBody,
  IncidentUpdateView,
  IncidentView,
  ServiceView,
  UpdateIncidentBody,
} from './schema.js';
import { resolveServices } from '../status-pages/status-page-services.js';
import type { Database } from '../../store/database.js';

type Db = Kysely<Database> | Transaction<Database>;

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
export class IncidentStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Creates an incident with its first updates (oldest first in the body).
   * A RESOLVED first update stops it as {@link addUpdate} does.
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
    await this.#db.transaction().execute(async (trx) => {
      const services = await resolveServices(trx, accountId, body.services ?? [], 'services');
      await trx
        .insertInto('incidents')
        .values({
          id: doc.id,
          account_id: accountId,
          doc: JSON.stringify(doc),
          created_at: nowMs,
          updated_at: null,
        })
        .execute();
      await this.#link(trx, accountId, doc.id, services);
      for (const update of body.incidentUpdates ?? [])
        await this.#insertUpdate(trx, accountId, doc, update, nowMs);
      // A RESOLVED first update may have set stoppedAt.
      await trx
        .updateTable('incidents')
        .set({ doc: JSON.stringify(doc) })
        .where('id', '=', doc.id)
        .execute();
    });
    return this.get(accountId, doc.id, true);
  }

  /**
   * One incident; `allUpdates` false keeps only the latest update.
   * @throws HttpError 404 when it is not in the account.
   */
  async get(accountId: string, id: string, allUpdates: boolean): Promise<IncidentView> {
    const row = await this.#row(this.#db, accountId, id);
    const [view] = await presentIncidents(this.#db, accountId, [row], allUpdates);
    return view!;
  }

  /** A page of incidents, newest first, each with its latest update only. */
  async list(accountId: string, limit: number, offset: number): Promise<IncidentView[]> {
    const rows = await this.#db
      .selectFrom('incidents')
      .select(['id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
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
    const apply = async (db: Db) => {
      const row = await this.#row(db, accountId, id);
      const stored = JSON.parse(row.doc) as IncidentDoc;
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
      const updated = { ...row, doc: JSON.stringify(doc), updated_at: now.getTime() };
      if (probe) return { updated, services };
      await db
        .updateTable('incidents')
        .set({ doc: updated.doc, updated_at: updated.updated_at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .execute();
      if (services) {
        await db.deleteFrom('incident_services').where('incident_id', '=', id).execute();
        await this.#link(db, accountId, id, services);
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
    const res = await this.#db
      .deleteFrom('incidents')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /**
   * Adds an update. A RESOLVED update sets `stoppedAt` (to now, or to
   * startedAt when that is later) when it is null; the incident's updated_at moves.
   * @throws HttpError 404 when the incident is not in the account.
   */
  async addUpdate(
    accountId: string,
    incidentId: string,
    body: IncidentUpdateBody,
    now: Date,
  ): Promise<IncidentUpdateView> {
    return this.#db.transaction().execute(async (trx) => {
      const row = await this.#row(trx, accountId, incidentId);
      const doc = JSON.parse(row.doc) as IncidentDoc;
      const view = await this.#insertUpdate(trx, accountId, doc, body, now.getTime());
      await trx
        .updateTable('incidents')
        .set({ doc: JSON.stringify(doc), updated_at: now.getTime() })
        .where('id', '=', incidentId)
        .execute();
      return view;
    });
  }

  async #row(db: Db, accountId: string, id: string): Promise<IncidentRow> {
    const row = await db
      .selectFrom('incidents')
      .select(['id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('incident', id);
    return row;
  }

  async #link(
    trx: Db,
    accountId: string,
    incidentId: string,
    services: readonly ServiceView[],
  ): Promise<void> {
    if (services.length === 0) return;
    await trx
      .insertInto('incident_services')
      .values(services.map((s) => ({ incident_id: incidentId, service_id: s.id, account_id: accountId })))
      .execute();
  }

  /** Inserts one update with the next `seq`; applies RESOLVED to `doc`, which the caller stores. */
  async #insertUpdate(
    trx: Db,
    accountId: string,
    doc: IncidentDoc,
    body: IncidentUpdateBody,
    nowMs: number,
  ): Promise<IncidentUpdateView> {
    const last = await trx
      .selectFrom('incident_updates')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('incident_id', '=', doc.id)
      .executeTakeFirst();
    const update: UpdateDoc = {
      id: randomUUID(),
      status: body.status,
      description: body.description,
      notifySubscribers: body.notifySubscribers ?? false,
      publicIncidentUpdateDate: body.publicIncidentUpdateDate ?? new Date(nowMs).toISOString(),
    };
    await trx
      .insertInto('incident_updates')
      .values({
        id: update.id,
        account_id: accountId,
        incident_id: doc.id,
        seq: Number(last?.seq ?? 0) + 1,
        doc: JSON.stringify(update),
        created_at: nowMs,
        updated_at: null,
      })
      .execute();
    if (update.status === 'RESOLVED' && doc.stoppedAt === null) {
      const startedMs = doc.startedAt === null ? nowMs : Date.parse(doc.startedAt);
      doc.stoppedAt = new Date(Math.max(nowMs, startedMs)).toISOString();
    }
    return presentUpdate(update, doc.id, nowMs, null);
  }
}
