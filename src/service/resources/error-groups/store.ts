import { randomUUID } from 'node:crypto';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { Statement } from '../../platform/store/statement.js';

/** An error group row (see the `error_groups` table): times in epoch ms, flags 0 or 1. */
export type ErrorGroupRow = Selectable<Database['error_groups']>;

/** One failure to add to its group: the message as cut, its cleaned form and hash, when it ran (epoch ms). */
export type ErrorGroupEvent = {
  accountId: string;
  checkId: string;
  rawMessage: string;
  cleanedMessage: string;
  errorHash: string;
  seenAtMs: number;
};

/** {@link ErrorGroupQueries.record}'s upsert, built once (platform/store/statement.ts). */
const RECORD = new Statement(
  (db: Kysely<Database>, v: ErrorGroupEvent & { id: string; createdAtMs: number }) =>
    db
      .insertInto('error_groups')
      .values({
        id: v.id,
        account_id: v.accountId,
        check_id: v.checkId,
        error_hash: v.errorHash,
        raw_error_message: v.rawMessage,
        cleaned_error_message: v.cleanedMessage,
        first_seen: v.seenAtMs,
        last_seen: v.seenAtMs,
        archived_until_next_event: 0,
        archived_forever: 0,
        created_at: v.createdAtMs,
        updated_at: null,
      })
      .onConflict((oc) =>
        oc.columns(['check_id', 'error_hash']).doUpdateSet({
          first_seen: sql<number>`CASE WHEN excluded.first_seen < error_groups.first_seen THEN excluded.first_seen ELSE error_groups.first_seen END`,
          last_seen: sql<number>`CASE WHEN excluded.last_seen > error_groups.last_seen THEN excluded.last_seen ELSE error_groups.last_seen END`,
          raw_error_message: sql<string>`CASE WHEN excluded.last_seen >= error_groups.last_seen THEN excluded.raw_error_message ELSE error_groups.raw_error_message END`,
          archived_until_next_event: 0,
        }),
      ),
);

/** The `error_groups` table's queries, every one scoped to one account. */
export class ErrorGroupQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Creates the group of (check id, error hash) on first sight, else widens its first/last seen
   * times, takes the message of the latest run and reopens it when archived until the next
   * event. One upsert statement, so concurrent results for one group cannot collide.
   */
  async record(event: ErrorGroupEvent): Promise<void> {
    await RECORD.run(this.#db, { ...event, id: randomUUID(), createdAtMs: Date.now() });
  }

  /** The group's row; undefined when it is not in the account. */
  get(accountId: string, id: string): Promise<ErrorGroupRow | undefined> {
    return this.#db
      .selectFrom('error_groups')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** One page of a check's groups, most recently seen first. */
  listForCheck(
    accountId: string,
    checkId: string,
    page: { limit: number; offset: number },
  ): Promise<ErrorGroupRow[]> {
    return this.#db
      .selectFrom('error_groups')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .orderBy('last_seen', 'desc')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  }

  /**
   * One page of the account's groups of checks it still has, most recently seen first (groups a deleted
   * check left are not listed).
   */
  list(accountId: string, page: { limit: number; offset: number }): Promise<ErrorGroupRow[]> {
    return this.#db
      .selectFrom('error_groups')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('check_id', 'in', (eb) =>
        eb.selectFrom('checks').select('checks.id').where('checks.account_id', '=', accountId),
      )
      .orderBy('last_seen', 'desc')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  }

  /** Writes the group's archive flags (0 or 1). */
  async setArchived(
    accountId: string,
    id: string,
    flags: Pick<ErrorGroupRow, 'archived_forever' | 'archived_until_next_event'>,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable('error_groups')
      .set({ ...flags, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }
}
