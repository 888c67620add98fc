import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { Statement } from '../../platform/store/statement.js';

/** Asked of every result (platform/store/statement.ts: built once). */
const IS_TEST_RUN = new Statement((db: Kysely<Database>, v: { checkId: string }) =>
  db.selectFrom('test_runs').select('id').where('id', '=', v.checkId),
);

/**
 * Every statement of test runs ("Run before saving", test-runs.ts) against the store: the `test_runs` row
 * written with the run's session and job, the lookup that tells a test run's job and result apart from a
 * check's, and the deletion of a test run with everything it left (retention.ts). Portable SQL only.
 */
export class TestRunQueries {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction that queues the run, stores its result or deletes it. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /** Inserts a test run's row. */
  async insert(row: Insertable<Database['test_runs']>): Promise<void> {
    await this.#db.insertInto('test_runs').values(row).execute();
  }

  /** Whether `checkId` is the id of a test run still kept (no `checks` row ever has it). */
  async isTestRun(checkId: string): Promise<boolean> {
    return (await IS_TEST_RUN.first(this.#db, { checkId })) !== undefined;
  }

  /** Which of `checkIds` are ids of test runs still kept: one statement for the results stored together. */
  async testRunsAmong(checkIds: readonly string[]): Promise<Set<string>> {
    if (checkIds.length === 0) return new Set();
    const rows = await this.#db.selectFrom('test_runs').select('id').where('id', 'in', checkIds).execute();
    return new Set(rows.map((row) => row.id));
  }

  /** Test runs made before `cutoffMs` (epoch ms, index `test_runs_created`), at most `limit`. */
  async madeBefore(cutoffMs: number, limit: number) {
    return this.#db
      .selectFrom('test_runs')
      .select(['id', 'account_id', 'check_session_id'])
      .where('created_at', '<', cutoffMs)
      .limit(limit)
      .execute();
  }

  /** Ids of the jobs a test run had or has (its result's, and a job still queued or leased): its artifact folders. */
  async jobIds(testRunId: string): Promise<string[]> {
    const results = await this.#db
      .selectFrom('check_results')
      .select('job_id')
      .where('check_id', '=', testRunId)
      .execute();
    const jobs = await this.#db.selectFrom('jobs').select('id').where('check_id', '=', testRunId).execute();
    return [...new Set([...results.map((r) => r.job_id), ...jobs.map((j) => j.id)])];
  }

  /**
   * Deletes a test run and what it left under its id: results, a job still queued or leased, the record of a
   * run that expired, its check session, and its row.
   */
  async delete(run: { id: string; check_session_id: string }): Promise<void> {
    await this.#db.deleteFrom('check_results').where('check_id', '=', run.id).execute();
    await this.#db.deleteFrom('jobs').where('check_id', '=', run.id).execute();
    await this.#db.deleteFrom('expired_runs').where('check_id', '=', run.id).execute();
    await this.#db.deleteFrom('check_sessions').where('id', '=', run.check_session_id).execute();
    await this.#db.deleteFrom('test_runs').where('id', '=', run.id).execute();
  }
}
