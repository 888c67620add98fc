import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0024_daily_rollups`: `check_stats_daily`, the FINAL results of each check counted per UTC day and run
 * status (PASSED, DEGRADED, FAILED, as `check_results.status` holds them), written in the result's
 * transaction by the check-status recorder beside `check_stats_hourly`. A status page's 90-day uptime strip
 * reads one row per check and day from it (4,500 rows for 50 checks) instead of every result of 90 days
 * (6,480,000 for 50 one-minute checks). Filled from the results already stored.
 */
export const dailyRollups: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('check_stats_daily')
      .addColumn('check_id', 'text', (c) => c.notNull())
      // Start of the UTC day, epoch ms.
      .addColumn('day_start', 'bigint', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('passed', 'integer', (c) => c.notNull())
      .addColumn('degraded', 'integer', (c) => c.notNull())
      .addColumn('failed', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('check_stats_daily_pk', ['check_id', 'day_start'])
      .execute();
    await db.schema
      .createIndex('check_stats_daily_account')
      .on('check_stats_daily')
      .columns(['account_id', 'day_start'])
      .execute();
    await backfillDailyStats(db);
  },
};

/** The columns the backfill reads and writes, as of this migration (frozen here with it). */
type BackfillTables = {
  checks: { id: string };
  check_results: {
    check_id: string;
    account_id: string;
    status: string;
    result_type: string;
    started_at: number;
  };
  check_stats_daily: {
    check_id: string;
    day_start: number;
    account_id: string;
    passed: number;
    degraded: number;
    failed: number;
  };
};

/**
 * Fills `check_stats_daily` from the FINAL results already stored, of the checks that still exist, as the
 * recorder (resources/check-statuses/store.ts, `recordFinalResult`) would have: one `INSERT … SELECT` that
 * SQLite and PostgreSQL both run (the day is `started_at - started_at % 86400000`). Expects the table empty.
 */
export async function backfillDailyStats(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped.withTables<BackfillTables>();
  const day = sql<number>`started_at - started_at % 86400000`;
  const count = (status: string) => sql<number>`sum(CASE WHEN status = ${sql.lit(status)} THEN 1 ELSE 0 END)`;
  await db
    .insertInto('check_stats_daily')
    .columns(['check_id', 'day_start', 'account_id', 'passed', 'degraded', 'failed'])
    .expression(
      db
        .selectFrom('check_results')
        .select([
          'check_id',
          day.as('day_start'),
          'account_id',
          count('PASSED').as('passed'),
          count('DEGRADED').as('degraded'),
          count('FAILED').as('failed'),
        ])
        .where('result_type', '=', 'FINAL')
        .where('check_id', 'in', (eb) => eb.selectFrom('checks').select('id'))
        .groupBy(['check_id', day, 'account_id']),
    )
    .execute();
}
