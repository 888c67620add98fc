import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0028_list_versions`: what the `ETag` of `GET /v1/check-statuses` is read from, by index alone:
 * - `check_last_results.revision` (integer, 0 for the rows already stored), counted up by every FINAL result
 *   recorded for the check, also one older than the stored one (it changes the hourly rollups only), and the
 *   index `check_last_results_account_revision` on `(account_id, revision)`, over which an account's count and
 *   sum of revisions are read;
 * - the index `checks_account_updated` on `(account_id, updated_at, created_at)`, over which an account's
 *   count of checks and sums of `updated_at` and `created_at` are read.
 */
export const listVersions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('check_last_results')
      .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(sql`0`))
      .execute();
    await db.schema
      .createIndex('check_last_results_account_revision')
      .on('check_last_results')
      .columns(['account_id', 'revision'])
      .execute();
    await db.schema
      .createIndex('checks_account_updated')
      .on('checks')
      .columns(['account_id', 'updated_at', 'created_at'])
      .execute();
  },
};
