import type { Kysely } from 'kysely';
import type { SnippetDoc } from './snippets.js';
import type { Database } from '../../platform/store/database.js';
import { DocTableQueries, type DocTableRow } from '../../platform/store/doc-table.js';
import { type StoredJson, writeDoc } from '../../platform/store/schema.js';

/** A snippet row: its document `{ name, script }` as JSON text; times in epoch ms. */
export type SnippetRow = DocTableRow<'snippets', 'name'>;

/** The `snippets` table's queries, every one scoped to one account; `name` is the extra column, the document's. */
export class SnippetQueries {
  readonly #rows: DocTableQueries<'snippets', 'name'>;
  constructor(db: Kysely<Database>) {
    this.#rows = new DocTableQueries(db, 'snippets', 'name', ['name']);
  }

  /** Inserts a snippet; returns its row with the generated id. */
  async insert(accountId: string, doc: SnippetDoc, nowMs: number): Promise<SnippetRow> {
    const text = writeDoc(doc);
    const id = await this.#rows.insert(accountId, doc.name, nowMs, text);
    return { id, name: doc.name, doc: text, created_at: nowMs, updated_at: null };
  }

  /** The snippet's row; undefined when it is not in the account. */
  get(accountId: string, id: number): Promise<SnippetRow | undefined> {
    return this.#rows.get(accountId, id);
  }

  /** One page of the account's snippets, by id. */
  list(accountId: string, limit: number, offset: number): Promise<SnippetRow[]> {
    return this.#rows.list(accountId, limit, offset);
  }

  /** Replaces the snippet's document (and its `name` column); returns the new JSON text. */
  async update(
    accountId: string,
    id: number,
    doc: SnippetDoc,
    nowMs: number,
  ): Promise<StoredJson<SnippetDoc>> {
    const text = writeDoc(doc);
    await this.#rows.update(accountId, id, doc.name, text, nowMs);
    return text;
  }

  /** Deletes the snippet (a no-op when it is not in the account). */
  async delete(accountId: string, id: number): Promise<void> {
    await this.#rows.delete(accountId, id);
  }
}
