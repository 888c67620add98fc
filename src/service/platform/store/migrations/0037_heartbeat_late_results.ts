import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0037_heartbeat_late_results`: `heartbeats.late_result_at`, the time a heartbeat was marked LATE while the FAILED
 * result that says so is still to be stored (epoch ms; null otherwise), and the partial index the sweeper reads
 * them by. Marking a heartbeat late is one row update; its result (with alerting) costs a few hundred µs more, so
 * a burst of missed deadlines is marked at once and its results follow in batches (docs/heartbeats.md, "Deadlines and results").
 */
export const heartbeatLateResults: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('heartbeats').addColumn('late_result_at', 'bigint').execute();
    await db.schema
      .createIndex('heartbeats_late_result')
      .on('heartbeats')
      .column('late_result_at')
      .where(sql.ref('late_result_at'), 'is not', null)
      .execute();
  },
};
