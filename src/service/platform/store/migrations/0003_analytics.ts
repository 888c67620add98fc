import type { Kysely, Migration } from 'kysely';

/**
 * `0003_analytics`: numeric columns of a result's timing phases (ms), status code and
 * attempts, and the covering indexes analytics read instead of the result rows.
 */
export const analytics: Migration = {
  async up(db: Kysely<unknown>) {
    // Numeric copies of a result's HTTP timing phases, status code and attempts, so analytics
    // aggregate columns instead of parsing `doc` (ms; null where a run has no such value).
    // Rows stored before this migration keep nulls and attempts 1.
    for (const column of ['phase_wait', 'phase_dns', 'phase_tcp', 'phase_first_byte', 'phase_download']) {
      await db.schema.alterTable('check_results').addColumn(column, 'double precision').execute();
    }
    await db.schema.alterTable('check_results').addColumn('status_code', 'integer').execute();
    await db.schema
      .alterTable('check_results')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
    // Key (check_id, result_type, started_at): a check's final results in a window are one
    // index range. The other columns make the indexes covering, so analytics never read the
    // table rows (which hold the JSON doc). The narrow index serves response time and
    // availability (the usual dashboard) with half the pages to scan; the wide one every
    // metric and grouping. SQLite breaks a cost tie in favour of the index created last,
    // so the narrow one comes second (test/service/analytics/analytics.test.ts checks the plans).
    const key = ['check_id', 'result_type', 'started_at', 'status', 'response_time'];
    await db.schema
      .createIndex('check_results_analytics_all')
      .on('check_results')
      .columns([
        ...key,
        'attempts',
        'run_location',
        'status_code',
        'phase_wait',
        'phase_dns',
        'phase_tcp',
        'phase_first_byte',
        'phase_download',
      ])
      .execute();
    await db.schema.createIndex('check_results_analytics').on('check_results').columns(key).execute();
  },
};
