import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0017_result_details`: a passing run's bulky parts are kept for `OUTPOST_PASSING_DETAIL_HOURS` only
 * (docs/architecture.md, "Store size").
 *
 * - `check_results.details_settled`: 0 until the runs module's result-details task looked at the result once
 *   it was older than `OUTPOST_PASSING_DETAIL_HOURS`: then 1, a passing run's logs, bodies and most headers
 *   dropped from its `doc`, a failing or degraded run's kept. Results stored before this migration start at 0
 *   and are looked at on the first pass.
 * - `check_results_details_pending`: the results not looked at yet, by `created_at`; partial, so it holds only
 *   the last hours' results and a pass finds its work without reading the older ones.
 */
export const resultDetails: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('check_results')
      .addColumn('details_settled', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('check_results_details_pending')
      .on('check_results')
      .column('created_at')
      .where(sql.ref('details_settled'), '=', 0)
      .execute();
  },
};
