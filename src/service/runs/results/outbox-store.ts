import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';

/** A row of `result_outbox`: one result hook to run for one stored result. */
export type OutboxRow = Selectable<Database['result_outbox']>;

/**
 * Every statement of the result outbox (outbox.ts) against the store: rows are written in the
 * result's transaction, then read, retried and deleted by the ResultOutbox worker. Portable SQL
 * only; the `result_outbox` id is the one autoincrement column (store/migrations/dialect.ts).
 */
export class OutboxQueries {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction that stores the result. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /** Inserts one row per hook name for a result, due at `nowMs` (epoch ms). */
  async insert(hookNames: readonly string[], row: { accountId: string; resultId: string; nowMs: number }) {
    await this.#db
      .insertInto('result_outbox')
      .values(
        hookNames.map((hook) => ({
          account_id: row.accountId,
          result_id: row.resultId,
          hook,
          next_attempt_at: row.nowMs,
          created_at: row.nowMs,
        })),
      )
      .execute();
  }

  /** Rows due by `nowMs`, oldest due first (index `result_outbox_due`), at most `limit`. */
  async due(nowMs: number, limit: number): Promise<OutboxRow[]> {
    return this.#db
      .selectFrom('result_outbox')
      .selectAll()
      .where('next_attempt_at', '<=', nowMs)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** What a hook gets of a stored result, or undefined when the result is gone. */
  async result(resultId: string) {
    return this.#db
      .selectFrom('check_results')
      .select(['job_id', 'check_id', 'doc'])
      .where('id', '=', resultId)
      .executeTakeFirst();
  }

  /** Deletes a row (its hook ran, or will never run). */
  async delete(id: number): Promise<void> {
    await this.#db.deleteFrom('result_outbox').where('id', '=', id).execute();
  }

  /** Deletes rows by id, in one statement (a pass's finished rows). */
  async deleteMany(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#db
      .deleteFrom('result_outbox')
      .where('id', 'in', [...ids])
      .execute();
  }

  /** Records a failed attempt: the attempts so far, when to try again (epoch ms) and the error. */
  async retryLater(id: number, attempts: number, nextAttemptAtMs: number, lastError: string): Promise<void> {
    await this.#db
      .updateTable('result_outbox')
      .set({ attempts, next_attempt_at: nextAttemptAtMs, last_error: lastError })
      .where('id', '=', id)
      .execute();
  }
}
