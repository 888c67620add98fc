import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';

/**
 * The statements of the scheduler (scheduler.ts) and of location turns (nextLocation in
 * locations.ts) against the store: the two columns of `checks` that runs keep, `next_run_at`
 * (epoch ms) and `location_cursor`. Portable SQL only.
 */
export class ScheduleQueries {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction that queues the runs. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /** Activated checks whose `next_run_at` is reached by `nowMs` (index `checks_due`), at most `limit`. */
  async dueChecks(nowMs: number, limit: number) {
    return this.#db
      .selectFrom('checks')
      .select(['id', 'account_id', 'doc'])
      .where('activated', '=', 1)
      .where('next_run_at', '<=', nowMs)
      .limit(limit)
      .execute();
  }

  /** Sets when the check runs next, epoch ms. */
  async setNextRun(checkId: string, nextRunAtMs: number): Promise<void> {
    await this.#db
      .updateTable('checks')
      .set({ next_run_at: nextRunAtMs })
      .where('id', '=', checkId)
      .execute();
  }

  /**
   * The check's location cursor (0 for a check that is gone), moved one on: whose turn it is
   * among the check's locations.
   */
  async takeLocationTurn(accountId: string, checkId: string): Promise<number> {
    const row = await this.#db
      .selectFrom('checks')
      .select('location_cursor')
      .where('account_id', '=', accountId)
      .where('id', '=', checkId)
      .executeTakeFirst();
    const cursor = row?.location_cursor ?? 0;
    await this.#db
      .updateTable('checks')
      .set({ location_cursor: cursor + 1 })
      .where('id', '=', checkId)
      .execute();
    return cursor;
  }
}
