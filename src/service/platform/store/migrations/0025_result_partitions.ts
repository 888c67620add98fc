import { type Kysely, type Migration, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/** One UTC day, ms: the span of a result partition. */
const DAY_MS = 86_400_000;

/** Days ahead of today that get a partition now (the retention pass keeps a week ahead from then on). */
const DAYS_AHEAD = 7;

/** Days back from today past which stored results stay in the default partition rather than one of their day's. */
const DAYS_BACK = 400;

/**
 * `0025_result_partitions`: on PostgreSQL, `check_results` becomes a table partitioned by range of
 * `created_at` (when the service stored the result, epoch ms, by the service's own clock), one partition per
 * UTC day named `check_results_pYYYYMMDD`, and a default partition `check_results_default` for rows of days
 * without one. The retention pass then drops whole partitions of days past `OUTPOST_RESULT_RETENTION_DAYS`
 * instead of deleting their rows in batches (platform/store/result-partitions.ts), and creates the partitions of
 * the days ahead. SQLite keeps one table (a partitioned table is not an SQLite feature; its retention deletes
 * in batches).
 *
 * The conversion: the table is renamed, the partitioned table made with the same columns, partitions made for
 * the days of the stored rows (at most {@link DAYS_BACK} days back) and the week ahead, every row copied, the
 * old table dropped, and its indexes made again on the new table from their own definitions
 * (`pg_indexes.indexdef`), so every index of the earlier migrations carries over unchanged but two: the
 * primary key becomes (id, created_at), and the unique index of one FINAL result per job, which a partitioned
 * table can hold only with the partition key in it, is left out; one result per job is kept by the result
 * ingest, which stores a result only in the transaction that deletes its job row (runs/results/ingest.ts).
 */
export const resultPartitions: Migration = {
  async up(db: Kysely<unknown>) {
    if (!isPostgres(db)) return;
    const { rows: indexes } = await sql<{ indexname: string; indexdef: string }>`
      SELECT indexname, indexdef FROM pg_indexes
      WHERE schemaname = current_schema() AND tablename = 'check_results'`.execute(db);
    await sql`ALTER TABLE check_results RENAME TO check_results_unpartitioned`.execute(db);
    await sql`CREATE TABLE check_results (LIKE check_results_unpartitioned INCLUDING DEFAULTS)
      PARTITION BY RANGE (created_at)`.execute(db);
    await sql`CREATE TABLE check_results_default PARTITION OF check_results DEFAULT`.execute(db);
    const { rows } = await sql<{ oldest: string | null }>`
      SELECT min(created_at) AS oldest FROM check_results_unpartitioned`.execute(db);
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const oldest = rows[0]?.oldest == null ? today : Math.floor(Number(rows[0].oldest) / DAY_MS) * DAY_MS;
    for (
      let day = Math.max(oldest, today - DAYS_BACK * DAY_MS);
      day <= today + DAYS_AHEAD * DAY_MS;
      day += DAY_MS
    ) {
      await sql`CREATE TABLE ${sql.table(resultPartitionName(day))} PARTITION OF check_results
        FOR VALUES FROM (${sql.lit(day)}) TO (${sql.lit(day + DAY_MS)})`.execute(db);
    }
    await sql`INSERT INTO check_results SELECT * FROM check_results_unpartitioned`.execute(db);
    await sql`DROP TABLE check_results_unpartitioned`.execute(db);
    await sql`ALTER TABLE check_results ADD CONSTRAINT check_results_pkey PRIMARY KEY (id, created_at)`.execute(
      db,
    );
    for (const { indexname, indexdef } of indexes) {
      if (indexname === 'check_results_pkey' || indexname === 'check_results_final_job') continue;
      // `CREATE INDEX name ON public.check_results USING btree (…)`, read before the rename: the same index on the
      // new table (whose old namesake went with the old table).
      if (!/ ON (\S+\.)?check_results USING /.test(indexdef))
        throw new Error(`unexpected index definition: ${indexdef}`);
      const definition = indexdef;
      await sql.raw(definition).execute(db);
    }
  },
};

/** The name of the partition of `check_results` holding the UTC day that starts at `dayStartMs`: `check_results_pYYYYMMDD`. */
export function resultPartitionName(dayStartMs: number): string {
  return `check_results_p${new Date(dayStartMs).toISOString().slice(0, 10).replaceAll('-', '')}`;
}
