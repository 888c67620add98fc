import type { Kysely, Migration } from 'kysely';

/**
 * `0018_test_runs`: runs of a check's content before it is saved ("Run before saving", docs/api.md,
 * "Check sessions").
 *
 * - `test_runs`: one row per test run, `id` the check id its job, session and result carry (no `checks` row has
 *   it), with the account, the check session and when it was made (epoch ms). While the row is kept the queue
 *   hands its job out and the result is stored for the session only; the runs module's retention deletes it,
 *   its session, result, job and artifact files an hour after `created_at` (index `test_runs_created`).
 */
export const testRuns: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('test_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('check_session_id', 'text', (c) => c.notNull())
      .addColumn('check_type', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('test_runs_created').on('test_runs').column('created_at').execute();
  },
};
