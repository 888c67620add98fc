import type { Kysely } from 'kysely';
import { keysetPage } from '../../platform/http/cursor.js';
import type { IncidentDoc, UpdateDoc } from './incident-views.js';
import type { Database } from '../../platform/store/database.js';
import { type StoredJson, writeDoc } from '../../platform/store/schema.js';

/** The columns of an `incidents` row the service reads: its document as JSON text; times in epoch ms. */
export type IncidentRow = {
  id: string;
  doc: StoredJson<IncidentDoc>;
  created_at: number;
  updated_at: number | null;
};

const COLUMNS = ['id', 'doc', 'created_at', 'updated_at'] as const;

/**
 * The `incidents`, `incident_updates` and `incident_services` tables' queries, every one scoped
 * to one account (but those by an incident's id, once the incident is known to be the account's).
 */
export class IncidentQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts an incident with its document; `updated_at` stays null until its first change. */
  async insert(accountId: string, doc: IncidentDoc, nowMs: number): Promise<void> {
    await this.#db
      .insertInto('incidents')
      .values({ id: doc.id, account_id: accountId, doc: writeDoc(doc), created_at: nowMs, updated_at: null })
      .execute();
  }

  /** Writes the incident's document, and `updated_at` when `updatedAtMs` is given. */
  async setDoc(
    accountId: string,
    id: string,
    doc: StoredJson<IncidentDoc>,
    updatedAtMs?: number,
  ): Promise<void> {
    await this.#db
      .updateTable('incidents')
      .set(updatedAtMs === undefined ? { doc } : { doc, updated_at: updatedAtMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** The incident's row; undefined when it is not in the account. */
  get(accountId: string, id: string): Promise<IncidentRow | undefined> {
    return this.#db
      .selectFrom('incidents')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** A page of the account's incidents, newest first. */
  list(accountId: string, limit: number, offset: number): Promise<IncidentRow[]> {
    return this.#db
      .selectFrom('incidents')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  /**
   * A cursor page of the account's incidents, oldest first (`created_at`, `id`), and the next page's cursor.
   * @throws HttpError 400 naming `nextId` when it is not a cursor this service answered.
   */
  page(accountId: string, page: { limit: number; nextId?: string | undefined }) {
    return keysetPage(
      this.#db.selectFrom('incidents').select(COLUMNS).where('account_id', '=', accountId),
      page,
    );
  }

  /** The account's incidents linked to any of `serviceIds`, newest first. */
  forServices(accountId: string, serviceIds: readonly string[]): Promise<IncidentRow[]> {
    return this.#db
      .selectFrom('incidents')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', 'in', (eb) =>
        eb.selectFrom('incident_services').select('incident_id').where('service_id', 'in', serviceIds),
      )
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** Deletes an incident (its updates and links go with it); false when it is not in the account. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('incidents')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /** The services linked to any of `incidentIds`, each with its incident's id, oldest service first. */
  services(accountId: string, incidentIds: readonly string[]) {
    return this.#db
      .selectFrom('incident_services')
      .innerJoin('status_page_services', 'status_page_services.id', 'incident_services.service_id')
      .selectAll('status_page_services')
      .select('incident_services.incident_id')
      .where('incident_services.account_id', '=', accountId)
      .where('incident_services.incident_id', 'in', incidentIds)
      .orderBy('status_page_services.created_at')
      .orderBy('status_page_services.id')
      .execute();
  }

  /** The ids of the services the incident is linked to (any order). */
  async linkedServiceIds(accountId: string, incidentId: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('incident_services')
      .select('service_id')
      .where('account_id', '=', accountId)
      .where('incident_id', '=', incidentId)
      .execute();
    return rows.map((l) => l.service_id);
  }

  /** Links the incident to `serviceIds`. */
  async link(accountId: string, incidentId: string, serviceIds: readonly string[]): Promise<void> {
    if (serviceIds.length === 0) return;
    await this.#db
      .insertInto('incident_services')
      .values(serviceIds.map((id) => ({ incident_id: incidentId, service_id: id, account_id: accountId })))
      .execute();
  }

  /** Removes every service link of the incident. */
  async unlinkAll(incidentId: string): Promise<void> {
    await this.#db.deleteFrom('incident_services').where('incident_id', '=', incidentId).execute();
  }

  /** The updates of any of `incidentIds`, newest first (by `seq`). */
  updates(accountId: string, incidentIds: readonly string[]) {
    return this.#db
      .selectFrom('incident_updates')
      .select(['incident_id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('incident_id', 'in', incidentIds)
      .orderBy('seq', 'desc')
      .execute();
  }

  /** Inserts an update of the incident numbered one past its last (`seq` from 1). */
  async insertUpdate(accountId: string, incidentId: string, update: UpdateDoc, nowMs: number): Promise<void> {
    const last = await this.#db
      .selectFrom('incident_updates')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('incident_id', '=', incidentId)
      .executeTakeFirst();
    await this.#db
      .insertInto('incident_updates')
      .values({
        id: update.id,
        account_id: accountId,
        incident_id: incidentId,
        seq: Number(last?.seq ?? 0) + 1,
        doc: writeDoc(update),
        created_at: nowMs,
        updated_at: null,
      })
      .execute();
  }

  /** One update of the incident, or undefined when it has no such update in the account. */
  update(accountId: string, incidentId: string, updateId: string) {
    return this.#db
      .selectFrom('incident_updates')
      .select(['incident_id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('incident_id', '=', incidentId)
      .where('id', '=', updateId)
      .executeTakeFirst();
  }

  /** Writes an update's document and its `updated_at` (epoch ms). */
  async setUpdateDoc(
    accountId: string,
    updateId: string,
    update: UpdateDoc,
    updatedAtMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable('incident_updates')
      .set({ doc: writeDoc(update), updated_at: updatedAtMs })
      .where('account_id', '=', accountId)
      .where('id', '=', updateId)
      .execute();
  }

  /** Deletes one update of the incident; false when it has no such update in the account. */
  async deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('incident_updates')
      .where('account_id', '=', accountId)
      .where('incident_id', '=', incidentId)
      .where('id', '=', updateId)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
