import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { isPostgres } from '../../platform/store/dialect.js';

/**
 * The statements of the scheduler (scheduler.ts) and of location turns (nextLocation in
 * locations.ts) against the store: the two columns of `checks` that runs keep, `next_run_at`
 * (epoch ms) and `location_cursor`. Portable SQL, but for PostgreSQL's row locks on due checks.
 *
 * Replica-safe: several service processes on one PostgreSQL store may tick at once. A slot is taken with a
 * conditional update ({@link claimSlot}) in the transaction that enqueues its runs: on PostgreSQL the update
 * locks the check's row until that transaction ends, and a second replica's update of the same slot then
 * matches no row, so a slot is enqueued once; if the first replica dies before it commits, its transaction
 * rolls back and the slot is still due for the next tick of any replica.
 */
export class ScheduleQueries {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction that queues the runs. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /**
   * Activated checks whose `next_run_at` is reached by `nowMs` (index `checks_due`), the latest first, at most
   * `limit`. In the transaction of a scheduler batch on PostgreSQL the rows are locked (`FOR UPDATE SKIP
   * LOCKED`) until it ends: replicas ticking at once take different checks instead of queueing behind each
   * other's locks; a replica that dies mid-batch releases them with its connection.
   */
  async dueChecks(nowMs: number, limit: number) {
    return this.#db
      .selectFrom('checks')
      .select(['id', 'account_id', 'doc', 'next_run_at', 'location_cursor'])
      .where('activated', '=', 1)
      .where('next_run_at', '<=', nowMs)
      .orderBy('next_run_at')
      .limit(limit)
      .$if(isPostgres(this.#db), (q) => q.forUpdate().skipLocked())
      .execute();
  }

  /**
   * Takes the slot `dueAtMs` of the check by moving `next_run_at` from it to `nextRunAtMs` (and its location
   * cursor to `locationCursor` when given: the turn the run takes, see nextLocation): true when this call moved
   * it, false when another tick (of this process or another replica) already took the slot.
   */
  async claimSlot(
    checkId: string,
    dueAtMs: number,
    nextRunAtMs: number,
    locationCursor?: number,
  ): Promise<boolean> {
    const result = await this.#db
      .updateTable('checks')
      .set(
        locationCursor === undefined
          ? { next_run_at: nextRunAtMs }
          : { next_run_at: nextRunAtMs, location_cursor: locationCursor },
      )
      .where('id', '=', checkId)
      .where('next_run_at', '=', dueAtMs)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
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
