import { type Kysely, type Migration, sql } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0006_queue_bounds`: the queue keeps only queued and leased jobs (a job's runtime and the
 * agents that lost its lease); sessions count timed-out runs; results record who posted them,
 * the body's hash and artifacts; agents are keyed by (account, id); the result outbox.
 */
export const queueBounds: Migration = {
  async up(db: Kysely<unknown>) {
    // Issue 9 (2.3, 2.4, 2.5, 2.11, 2.13, 1.5, 1.7): the queue holds only queued and leased
    // jobs. A finished job is deleted with its payload (merged secrets); what sessions and
    // repeated result posts need moves to check_sessions and check_results.
    await sql`DELETE FROM jobs WHERE state NOT IN ('queued', 'leased')`.execute(db);
    // Runtime a job's script needs (null: no script), matched against the claim's runtimes.
    await db.schema.alterTable('jobs').addColumn('runtime_id', 'text').execute();
    // Agents that lost this job's lease, comma-separated: never leased to them again (2.11).
    await db.schema
      .alterTable('jobs')
      .addColumn('lost_agents', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    // Hot queries of the expiry pass look only at due rows (test/service/runs/queue-plans.test.ts).
    await db.schema.createIndex('jobs_queue_expiry').on('jobs').columns(['state', 'expires_at']).execute();
    await db.schema
      .createIndex('jobs_lease_expiry')
      .on('jobs')
      .columns(['state', 'lease_expires_at'])
      .execute();
    await db.schema.createIndex('jobs_check').on('jobs').column('check_id').execute();
    // Runs of a session that ended without a result (queue expiry): the session ends TIMED_OUT.
    await db.schema
      .alterTable('check_sessions')
      .addColumn('timed_out_runs', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('check_sessions_started').on('check_sessions').column('started_at').execute();
    // Who posted a result and its body's SHA-256: a repeated post is recognised after the job is gone.
    await db.schema.alterTable('check_results').addColumn('agent_id', 'text').execute();
    await db.schema.alterTable('check_results').addColumn('result_hash', 'text').execute();
    // 1 while the result's artifact files are on disk (artifact retention clears it).
    await db.schema
      .alterTable('check_results')
      .addColumn('has_artifacts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('check_results_job').on('check_results').column('job_id').execute();
    // A session's results in time order without a sort.
    await db.schema.dropIndex('check_results_session').execute();
    await db.schema
      .createIndex('check_results_session')
      .on('check_results')
      .columns(['check_session_id', 'started_at'])
      .execute();
    await db.schema.createIndex('check_results_created').on('check_results').column('created_at').execute();
    await db.schema
      .createIndex('check_results_artifacts_created')
      .on('check_results')
      .columns(['has_artifacts', 'created_at'])
      .execute();
    // Agents keyed by (account, agent id): one account's agent ids never touch another's rows (1.5).
    await db.schema
      .createTable('agents_v6')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      .addColumn('location_id', 'text')
      .addPrimaryKeyConstraint('agents_pk', ['account_id', 'id'])
      .execute();
    await sql`INSERT INTO agents_v6 (account_id, id, version, last_seen_at, location_id)
      SELECT account_id, id, version, last_seen_at, location_id FROM agents`.execute(db);
    await db.schema.dropTable('agents').execute();
    await db.schema.alterTable('agents_v6').renameTo('agents').execute();
    await db.schema
      .createIndex('agents_location_seen')
      .on('agents')
      .columns(['location_id', 'last_seen_at'])
      .execute();
    await db.schema.createIndex('agents_seen').on('agents').column('last_seen_at').execute();
    await db.schema.createIndex('agent_events_created').on('agent_events').column('created_at').execute();
    // Work that follows a stored result, written in the result's transaction (2.13).
    await autoIncrementId(db, db.schema.createTable('result_outbox'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('result_id', 'text', (c) => c.notNull())
      .addColumn('hook', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('result_outbox_due')
      .on('result_outbox')
      .columns(['next_attempt_at', 'id'])
      .execute();
  },
};
