import type { Kysely } from 'kysely';
import type { ChannelDoc } from './alert-channels.js';
import type { Database } from '../../platform/store/database.js';
import type { StoredJson } from '../../platform/store/schema.js';

/** An alert channel row: its type, its document as JSON text (secrets sealed); times in epoch ms. */
export type ChannelRow = {
  id: number;
  type: string;
  doc: StoredJson<ChannelDoc>;
  created_at: number;
  updated_at: number | null;
};

const COLUMNS = ['id', 'type', 'doc', 'created_at', 'updated_at'] as const;

/** The `alert_channels` table's queries, every one scoped to one account (but `setDoc`, by generated id). */
export class ChannelQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Inserts a channel with an empty document and returns its generated id. Its secrets are sealed
   * for that id, so the caller writes the document with `setDoc` in the same transaction.
   */
  async insert(accountId: string, type: string, nowMs: number): Promise<number> {
    const { id } = await this.#db
      .insertInto('alert_channels')
      .values({ account_id: accountId, type, doc: '{}', created_at: nowMs, updated_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(id);
  }

  /** Writes the document of the channel `id` (no timestamp change). */
  async setDoc(id: number, doc: StoredJson<ChannelDoc>): Promise<void> {
    await this.#db.updateTable('alert_channels').set({ doc }).where('id', '=', id).execute();
  }

  /** The channel's row; undefined when it is not in the account. */
  get(accountId: string, id: number): Promise<ChannelRow | undefined> {
    return this.#db
      .selectFrom('alert_channels')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** One page of the account's channels, by id; every channel when `limit` is undefined. */
  list(accountId: string, limit?: number, offset = 0): Promise<ChannelRow[]> {
    let query = this.#db
      .selectFrom('alert_channels')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .orderBy('id');
    if (limit !== undefined) query = query.limit(limit).offset(offset);
    return query.execute();
  }

  /** Replaces the channel's document (and its `type` column). */
  async update(
    accountId: string,
    id: number,
    type: string,
    doc: StoredJson<ChannelDoc>,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable('alert_channels')
      .set({ type, doc, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the channel; false when it is not in the account. */
  async delete(accountId: string, id: number): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('alert_channels')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
