import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/database.js';

/** The `expired_runs` table's reads: runs that ended without running (written by the job queue's expiry). */
export class ExpiredRunQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** One page of a check's expired runs, newest first (index `expired_runs_check_time`). */
  page(accountId: string, checkId: string, limit: number, offset: number) {
    return this.#db
      .selectFrom('expired_runs')
      .select(['id', 'check_session_id', 'round_id', 'location', 'reason', 'expired_at'])
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .orderBy('expired_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  /** Whether the account has check `checkId`. */
  async checkExists(accountId: string, checkId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('checks')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', checkId)
      .executeTakeFirst();
    return row !== undefined;
  }
}
