import { type Kysely, type Migration, sql } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0001_core`: accounts and their API keys, checks, check sessions, the job queue, check
 * results (one FINAL result per job, enforced by a partial unique index), agents and agent events.
 */
export const core: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('key_prefix', 'text', (c) => c.notNull())
      .addColumn('label', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('checks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('check_type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('activated', 'integer', (c) => c.notNull())
      .addColumn('tags', 'text', (c) => c.notNull())
      .addColumn('frequency', 'integer', (c) => c.notNull())
      .addColumn('frequency_offset', 'integer')
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('next_run_at', 'bigint')
      .addColumn('location_cursor', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint')
      .execute();
    await db.schema.createIndex('checks_account').on('checks').column('account_id').execute();
    await db.schema.createIndex('checks_due').on('checks').columns(['activated', 'next_run_at']).execute();
    await db.schema
      .createTable('check_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('check_type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('trigger_source', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('run_locations', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('stopped_at', 'bigint')
      .execute();
    await db.schema.createIndex('check_sessions_account').on('check_sessions').column('account_id').execute();
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('check_session_id', 'text')
      .addColumn('location', 'text', (c) => c.notNull())
      .addColumn('job_class', 'text', (c) => c.notNull())
      .addColumn('check_type', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('claims', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('enqueued_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('agent_id', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('result_hash', 'text')
      .execute();
    await db.schema
      .createIndex('jobs_claimable')
      .on('jobs')
      .columns(['account_id', 'state', 'job_class', 'enqueued_at'])
      .execute();
    await db.schema.createIndex('jobs_session').on('jobs').column('check_session_id').execute();
    await db.schema
      .createTable('check_results')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('check_session_id', 'text')
      .addColumn('run_location', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('has_failures', 'integer', (c) => c.notNull())
      .addColumn('has_errors', 'integer', (c) => c.notNull())
      .addColumn('is_degraded', 'integer', (c) => c.notNull())
      .addColumn('response_time', 'double precision', (c) => c.notNull())
      .addColumn('result_type', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('stopped_at', 'bigint', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // Exactly one final result per job, enforced by the store itself.
    await sql`CREATE UNIQUE INDEX check_results_final_job ON check_results (job_id) WHERE result_type = 'FINAL'`.execute(
      db,
    );
    await db.schema
      .createIndex('check_results_check_time')
      .on('check_results')
      .columns(['check_id', 'started_at'])
      .execute();
    await db.schema
      .createIndex('check_results_session')
      .on('check_results')
      .column('check_session_id')
      .execute();
    await db.schema
      .createTable('agents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      .execute();
    await autoIncrementId(db, db.schema.createTable('agent_events'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
