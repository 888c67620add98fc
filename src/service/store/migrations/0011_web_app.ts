import type { Kysely, Migration } from 'kysely';

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
      // Absolute end (epoch ms); idle sessions end earlier (see src/service/web/sessions.ts).
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
      .addColumn('response_time', 'real', (c) => c.notNull())
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
      .addColumn('response_time_sum', 'real', (c) => c.notNull())
      .addColumn('response_time_max', 'real', (c) => c.notNull())
      .addPrimaryKeyConstraint('check_stats_hourly_pk', ['check_id', 'hour_start', 'run_location'])
      .execute();
    await db.schema
      .createIndex('check_stats_hourly_account')
      .on('check_stats_hourly')
      .columns(['account_id', 'hour_start'])
      .execute();
  },
};
