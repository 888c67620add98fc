import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0011_web_app`: what the web app needs (docs/web-app.md).
 *
 * - `web_sessions`: a signed-in browser. The cookie carries a random session id; only its SHA-256 is
 *   stored. A session belongs to the API key it was opened with and ends with it.
 * - `check_last_results`: the latest FINAL result of each check, written in the result's transaction, so
 *   the checks page reads one row per check instead of searching the results.
 * - `check_stats_hourly`: FINAL results rolled up per check, hour and run location (runs, failures,
 *   degraded runs, response-time sum, count and maximum), written in the result's transaction; 24-hour
 *   availability and sparklines of a thousand checks read a few thousand rows, not a million results.
 *   Filled from the results already stored.
 */
export const webApp: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('web_sessions')
      // SHA-256 (hex) of the session id the cookie carries.
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      // The api_keys row the session was opened with: deleting the key ends the session.
      .addColumn('api_key_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      // Absolute end (epoch ms); idle sessions end earlier (see src/service/platform/web/sessions.ts).
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('user_agent', 'text')
      .execute();
    await db.schema.createIndex('web_sessions_key').on('web_sessions').column('api_key_id').execute();
    await db.schema.createIndex('web_sessions_expiry').on('web_sessions').column('expires_at').execute();

    await db.schema
      .createTable('check_last_results')
      .addColumn('check_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('result_id', 'text', (c) => c.notNull())
      .addColumn('check_session_id', 'text')
      .addColumn('run_location', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('has_failures', 'integer', (c) => c.notNull())
      .addColumn('has_errors', 'integer', (c) => c.notNull())
      .addColumn('is_degraded', 'integer', (c) => c.notNull())
      .addColumn('response_time', 'double precision', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('stopped_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('check_last_results_account')
      .on('check_last_results')
      .column('account_id')
      .execute();

    await db.schema
      .createTable('check_stats_hourly')
      .addColumn('check_id', 'text', (c) => c.notNull())
      // Start of the hour, epoch ms (UTC).
      .addColumn('hour_start', 'bigint', (c) => c.notNull())
      .addColumn('run_location', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('runs', 'integer', (c) => c.notNull())
      // Runs with hasFailures or hasErrors.
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('degraded', 'integer', (c) => c.notNull())
      .addColumn('response_time_sum', 'double precision', (c) => c.notNull())
      .addColumn('response_time_max', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('check_stats_hourly_pk', ['check_id', 'hour_start', 'run_location'])
      .execute();
    await db.schema
      .createIndex('check_stats_hourly_account')
      .on('check_stats_hourly')
      .columns(['account_id', 'hour_start'])
      .execute();

    await backfillCheckStatuses(db);
  },
};

/** The columns the backfill reads and writes, as of this migration (frozen here with it). */
type BackfillTables = {
  checks: { id: string };
  check_results: {
    id: string;
    account_id: string;
    check_id: string;
    check_session_id: string | null;
    run_location: string;
    status: string;
    result_type: string;
    has_failures: number;
    has_errors: number;
    is_degraded: number;
    response_time: number;
    started_at: number;
    stopped_at: number;
  };
  check_last_results: Omit<BackfillTables['check_results'], 'id' | 'result_type'> & { result_id: string };
  check_stats_hourly: {
    check_id: string;
    hour_start: number;
    run_location: string;
    account_id: string;
    runs: number;
    failures: number;
    degraded: number;
    response_time_sum: number;
    response_time_max: number;
  };
};

/**
 * Fills `check_last_results` and `check_stats_hourly` from the FINAL results already stored, of the
 * checks that still exist, as the result recorder (resources/check-statuses/recorder.ts) would
 * have: two `INSERT … SELECT` statements in SQL that SQLite and PostgreSQL both run (the hour is
 * `started_at - started_at % 3600000`; the latest result of a check is found by a correlated
 * subquery over the index on (check_id, started_at)). Expects both tables empty.
 */
export async function backfillCheckStatuses(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped.withTables<BackfillTables>();
  const hour = sql<number>`started_at - started_at % 3600000`;
  await db
    .insertInto('check_stats_hourly')
    .columns([
      'check_id',
      'hour_start',
      'run_location',
      'account_id',
      'runs',
      'failures',
      'degraded',
      'response_time_sum',
      'response_time_max',
    ])
    .expression(
      db
        .selectFrom('check_results')
        .select((eb) => [
          'check_id',
          hour.as('hour_start'),
          'run_location',
          'account_id',
          eb.fn.countAll<number>().as('runs'),
          eb.fn
            .sum<number>(
              eb
                .case()
                .when(eb.or([eb('has_failures', '=', 1), eb('has_errors', '=', 1)]))
                .then(1)
                .else(0)
                .end(),
            )
            .as('failures'),
          eb.fn.sum<number>('is_degraded').as('degraded'),
          eb.fn.sum<number>('response_time').as('response_time_sum'),
          eb.fn.max('response_time').as('response_time_max'),
        ])
        .where('result_type', '=', 'FINAL')
        .where('check_id', 'in', (eb) => eb.selectFrom('checks').select('id'))
        .groupBy(['check_id', hour, 'run_location', 'account_id']),
    )
    .execute();

  await db
    .insertInto('check_last_results')
    .columns([
      'check_id',
      'account_id',
      'result_id',
      'check_session_id',
      'run_location',
      'status',
      'has_failures',
      'has_errors',
      'is_degraded',
      'response_time',
      'started_at',
      'stopped_at',
    ])
    .expression(
      db
        .selectFrom('checks as c')
        .innerJoin('check_results as r', (join) =>
          join.on((eb) =>
            eb(
              'r.id',
              '=',
              eb
                .selectFrom('check_results as latest')
                .select('latest.id')
                .whereRef('latest.check_id', '=', 'c.id')
                .where('latest.result_type', '=', 'FINAL')
                .orderBy('latest.started_at', 'desc')
                .orderBy('latest.id', 'desc')
                .limit(1),
            ),
          ),
        )
        .select([
          'r.check_id',
          'r.account_id',
          'r.id',
          'r.check_session_id',
          'r.run_location',
          'r.status',
          'r.has_failures',
          'r.has_errors',
          'r.is_degraded',
          'r.response_time',
          'r.started_at',
          'r.stopped_at',
        ]),
    )
    .execute();
}
