import type { Kysely } from 'kysely';
import type { GroupDoc } from './check-groups.js';
import type { Database } from '../../platform/store/database.js';
import type { StoredJson } from '../../platform/store/schema.js';

/** A check group row: its document as JSON text (secrets sealed); times in epoch ms. */
export type GroupRow = {
  id: number;
  doc: StoredJson<GroupDoc>;
  created_at: number;
  updated_at: number | null;
};

const COLUMNS = ['id', 'doc', 'created_at', 'updated_at'] as const;

/** The `check_groups` table's queries, every one scoped to one account (but `setDoc`, by generated id). */
export class GroupQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Inserts a group with an empty document and returns its generated id. Its secrets are sealed
   * for that id, so the caller writes the document with `setDoc` in the same transaction.
   */
  async insert(accountId: string, name: string, nowMs: number): Promise<number> {
    const { id } = await this.#db
      .insertInto('check_groups')
      .values({ account_id: accountId, name, doc: '{}', created_at: nowMs, updated_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(id);
  }

  /** Writes the document of the group `id` (no timestamp change). */
  async setDoc(id: number, doc: StoredJson<GroupDoc>): Promise<void> {
    await this.#db.updateTable('check_groups').set({ doc }).where('id', '=', id).execute();
  }

  /** The group's row; undefined when it is not in the account. */
  get(accountId: string, id: number): Promise<GroupRow | undefined> {
    return this.#db
      .selectFrom('check_groups')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** One page of the account's groups, by id; every group when `limit` is undefined. */
  list(accountId: string, limit?: number, offset = 0): Promise<GroupRow[]> {
    let query = this.#db
      .selectFrom('check_groups')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .orderBy('id');
    if (limit !== undefined) query = query.limit(limit).offset(offset);
    return query.execute();
  }

  /** Replaces the group's document (and its `name` column). */
  async update(
    accountId: string,
    id: number,
    name: string,
    doc: StoredJson<GroupDoc>,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable('check_groups')
      .set({ name, doc, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the group (a no-op when it is not in the account). */
  async delete(accountId: string, id: number): Promise<void> {
    await this.#db
      .deleteFrom('check_groups')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }
}
