import type { Kysely, Migration } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0010_heartbeats`: heartbeat monitors (docs/heartbeats.md). One row per HEARTBEAT check
 * with its ping token and the one indexed due time the sweeper reads; the pings it received.
 */
export const heartbeats: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('heartbeats')
      .addColumn('check_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull().unique())
      // NEW (no ping yet), UP, STARTED, LATE, FAILING, PAUSED.
      .addColumn('status', 'text', (c) => c.notNull())
      // Epoch ms when the heartbeat is late unless pinged; null while paused or not yet due.
      .addColumn('due_at', 'bigint')
      .addColumn('last_ping_at', 'bigint')
      .addColumn('started_at', 'bigint')
      // The expectation, mirrored from the check's `heartbeat` so a ping reads one row: a period
      // (ms) or a 5-field cron `schedule` in `timezone`; the grace (ms) after either.
      .addColumn('period_ms', 'bigint')
      .addColumn('schedule', 'text')
      .addColumn('timezone', 'text')
      .addColumn('grace_ms', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint')
      .execute();
    await db.schema.createIndex('heartbeats_due').on('heartbeats').column('due_at').execute();
    await autoIncrementId(db, db.schema.createTable('heartbeat_pings'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('exit_code', 'integer')
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('remote_address', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('body', 'text')
      .addColumn('body_size_bytes', 'integer', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('heartbeat_pings_check')
      .on('heartbeat_pings')
      .columns(['check_id', 'id'])
      .execute();
  },
};
