import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';

/**
 * Every statement of check sessions (sessions.ts) against the store: a session's row, written in
 * the transaction that queues its runs, and what reading one needs. Sessions end in the queue's
 * transactions (QueueStore in queue-store.ts). Portable SQL only.
 */
export class SessionStore {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction that queues the session's runs. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /** Inserts a session row. */
  async insert(row: Insertable<Database['check_sessions']>): Promise<void> {
    await this.#db.insertInto('check_sessions').values(row).execute();
  }

  /** The session's row in the account, or undefined. */
  async row(accountId: string, id: string) {
    return this.#db
      .selectFrom('check_sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The session's stored results, oldest `started_at` first (index `check_results_session`). */
  async results(sessionId: string) {
    return this.#db
      .selectFrom('check_results')
      .select([
        'id',
        'run_location',
        'status',
        'has_failures',
        'has_errors',
        'is_degraded',
        'response_time',
        'result_type',
        'started_at',
        'stopped_at',
        'doc',
        'has_artifacts',
      ])
      .where('check_session_id', '=', sessionId)
      .orderBy('started_at')
      .execute();
  }
}
