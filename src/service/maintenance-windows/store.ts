import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../platform/store/database.js';
import { DocTableQueries, type DocTableRow } from '../platform/store/doc-table.js';
import { type StoredJson, writeDoc } from '../platform/store/schema.js';
import type { MaintenanceWindowDoc } from './maintenance-windows.js';

/** A maintenance-window row: its document as JSON text, its `name`; times in epoch ms. */
export type MaintenanceWindowRow = DocTableRow<'maintenance_windows', 'name'>;

/**
 * The `maintenance_windows` table's queries, every one scoped to one account (index
 * `maintenance_windows_account`); `name` is the extra column, the document's.
 */
export class MaintenanceWindowQueries {
  readonly #rows: DocTableQueries<'maintenance_windows', 'name'>;

  /** `db`: the store, or the transaction of the caller (the scheduler's, a result's). */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#rows = new DocTableQueries(db as Kysely<Database>, 'maintenance_windows', 'name', ['name']);
  }

  /** Inserts a window; returns its row with the generated id. */
  async insert(accountId: string, doc: MaintenanceWindowDoc, nowMs: number): Promise<MaintenanceWindowRow> {
    const text = writeDoc(doc);
    const id = await this.#rows.insert(accountId, doc.name, nowMs, text);
    return { id, name: doc.name, doc: text, created_at: nowMs, updated_at: null };
  }

  /** The window's row; undefined when it is not in the account. */
  get(accountId: string, id: number): Promise<MaintenanceWindowRow | undefined> {
    return this.#rows.get(accountId, id);
  }

  /** One page of the account's windows, by id; every window when `limit` is undefined. */
  list(accountId: string, limit?: number, offset = 0): Promise<MaintenanceWindowRow[]> {
    return this.#rows.list(accountId, limit, offset);
  }

  /** Replaces the window's document (and its `name` column); returns the new JSON text. */
  async update(
    accountId: string,
    id: number,
    doc: MaintenanceWindowDoc,
    nowMs: number,
  ): Promise<StoredJson<MaintenanceWindowDoc>> {
    const text = writeDoc(doc);
    await this.#rows.update(accountId, id, doc.name, text, nowMs);
    return text;
  }

  /** Deletes the window; false when it is not in the account. */
  delete(accountId: string, id: number): Promise<boolean> {
    return this.#rows.delete(accountId, id);
  }
}
