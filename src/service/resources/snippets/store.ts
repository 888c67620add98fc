import type { Kysely } from 'kysely';
import type { SnippetDoc } from './snippets.js';
import type { Database } from '../../platform/store/database.js';
import { type StoredJson, writeDoc } from '../../platform/store/schema.js';

/** A snippet row: its document `{ name, script }` as JSON text; times in epoch ms. */
export type SnippetRow = {
  id: number;
  name: string;
  doc: StoredJson<SnippetDoc>;
  created_at: number;
  updated_at: number | null;
};

const COLUMNS = ['id', 'name', 'doc', 'created_at', 'updated_at'] as const;

/** The `snippets` table's queries, every one scoped to one account. */
export class SnippetQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a snippet; returns its row with the generated id. */
  async insert(accountId: string, doc: SnippetDoc, nowMs: number): Promise<SnippetRow> {
    const text = writeDoc(doc);
    const { id } = await this.#db
      .insertInto('snippets')
      .values({ account_id: accountId, name: doc.name, doc: text, created_at: nowMs, updated_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: Number(id), name: doc.name, doc: text, created_at: nowMs, updated_at: null };
  }

  /** The snippet's row; undefined when it is not in the account. */
  get(accountId: string, id: number): Promise<SnippetRow | undefined> {
    return this.#db
      .selectFrom('snippets')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** One page of the account's snippets, by id. */
  list(accountId: string, limit: number, offset: number): Promise<SnippetRow[]> {
    return this.#db
      .selectFrom('snippets')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  /** Replaces the snippet's document (and its `name` column); returns the new JSON text. */
  async update(
    accountId: string,
    id: number,
    doc: SnippetDoc,
    nowMs: number,
  ): Promise<StoredJson<SnippetDoc>> {
    const text = writeDoc(doc);
    await this.#db
      .updateTable('snippets')
      .set({ name: doc.name, doc: text, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
    return text;
  }

  /** Deletes the snippet (a no-op when it is not in the account). */
  async delete(accountId: string, id: number): Promise<void> {
    await this.#db.deleteFrom('snippets').where('account_id', '=', accountId).where('id', '=', id).execute();
  }
}
