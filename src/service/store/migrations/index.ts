import {
  type CreateTableBuilder,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from 'kysely';

/**
 * Migrations in code, applied in name order. Only portable column types
 * (text, integer, real, bigint) so the same migrations run on PostgreSQL.
 */
const migrations: Record<string, Migration> = {
  '0001_core': {
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
      await db.schema
        .createIndex('check_sessions_account')
        .on('check_sessions')
        .column('account_id')
        .execute();
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
        .addColumn('response_time', 'real', (c) => c.notNull())
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
      await db.schema
        .createTable('agent_events')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '0002_resources': {
    async up(db: Kysely<unknown>) {
      // Account-scoped resources of the spec. Each keeps the API document as JSON text
      // (`doc`) plus the columns that queries filter, sort or join on.
      const intPk = (name: string) =>
        db.schema.createTable(name).addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
      const textPk = (name: string) =>
        db.schema.createTable(name).addColumn('id', 'text', (c) => c.primaryKey());
      const scoped = <T extends string, C extends string>(t: CreateTableBuilder<T, C>) =>
        t
          .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint');

      await scoped(
        intPk('check_groups')
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('doc', 'text', (c) => c.notNull()),
      ).execute();
      await scoped(
        intPk('alert_channels')
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('doc', 'text', (c) => c.notNull()),
      ).execute();
      await scoped(
        intPk('snippets')
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('doc', 'text', (c) => c.notNull()),
      ).execute();
      await scoped(textPk('status_pages').addColumn('doc', 'text', (c) => c.notNull())).execute();
      await scoped(textPk('status_page_services').addColumn('name', 'text', (c) => c.notNull())).execute();
      await scoped(textPk('incidents').addColumn('doc', 'text', (c) => c.notNull())).execute();
      await scoped(
        textPk('incident_updates')
          .addColumn('incident_id', 'text', (c) => c.notNull().references('incidents.id').onDelete('cascade'))
          .addColumn('doc', 'text', (c) => c.notNull()),
      ).execute();
      await scoped(
        textPk('variables')
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('locked', 'integer', (c) => c.notNull())
          .addColumn('secret', 'integer', (c) => c.notNull()),
      ).execute();
      await db.schema
        .createIndex('variables_account_key')
        .unique()
        .on('variables')
        .columns(['account_id', 'key'])
        .execute();
      await scoped(
        textPk('client_certificates')
          .addColumn('host', 'text', (c) => c.notNull())
          .addColumn('doc', 'text', (c) => c.notNull()),
      ).execute();
      await scoped(
        textPk('error_groups')
          .addColumn('check_id', 'text', (c) => c.notNull())
          .addColumn('error_hash', 'text', (c) => c.notNull())
          .addColumn('raw_error_message', 'text')
          .addColumn('cleaned_error_message', 'text', (c) => c.notNull())
          .addColumn('first_seen', 'bigint', (c) => c.notNull())
          .addColumn('last_seen', 'bigint', (c) => c.notNull())
          .addColumn('archived_until_next_event', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('archived_forever', 'integer', (c) => c.notNull().defaultTo(0)),
      ).execute();
      await db.schema
        .createIndex('error_groups_check_hash')
        .unique()
        .on('error_groups')
        .columns(['check_id', 'error_hash'])
        .execute();
      await scoped(
        textPk('private_locations')
          .addColumn('slug', 'text', (c) => c.notNull())
          .addColumn('doc', 'text', (c) => c.notNull()),
      ).execute();
      await db.schema
        .createIndex('private_locations_slug')
        .unique()
        .on('private_locations')
        .columns(['account_id', 'slug'])
        .execute();
      await scoped(
        textPk('private_location_keys')
          .addColumn('location_id', 'text', (c) =>
            c.notNull().references('private_locations.id').onDelete('cascade'),
          )
          .addColumn('key_hash', 'text', (c) => c.notNull().unique())
          .addColumn('masked_key', 'text', (c) => c.notNull()),
      ).execute();
    },
  },
  '0004_status_pages': {
    async up(db: Kysely<unknown>) {
      // Status pages: `url` (the subdomain) is unique per account; pages, services and
      // incidents are listed by (created_at, id).
      await db.schema.alterTable('status_pages').addColumn('url', 'text').execute();
      await db.schema
        .createIndex('status_pages_account_url')
        .unique()
        .on('status_pages')
        .columns(['account_id', 'url'])
        .execute();
      for (const table of ['status_pages', 'status_page_services', 'incidents']) {
        await db.schema
          .createIndex(`${table}_account_order`)
          .on(table)
          .columns(['account_id', 'created_at', 'id'])
          .execute();
      }
      // Which status-page services an incident affects; its pages show it.
      await db.schema
        .createTable('incident_services')
        .addColumn('incident_id', 'text', (c) => c.notNull().references('incidents.id').onDelete('cascade'))
        .addColumn('service_id', 'text', (c) =>
          c.notNull().references('status_page_services.id').onDelete('cascade'),
        )
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('incident_services_pk', ['incident_id', 'service_id'])
        .execute();
      await db.schema
        .createIndex('incident_services_service')
        .on('incident_services')
        .column('service_id')
        .execute();
      // Updates are numbered per incident so "latest" is exact within one millisecond.
      await db.schema.alterTable('incident_updates').addColumn('seq', 'integer').execute();
      await db.schema
        .createIndex('incident_updates_incident_seq')
        .unique()
        .on('incident_updates')
        .columns(['incident_id', 'seq'])
        .execute();
    },
  },
  '0005_private_locations': {
    async up(db: Kysely<unknown>) {
      // Which private location an agent last authenticated for (null: an account API key),
      // so a location can report how many agents serve it.
      await db.schema.alterTable('agents').addColumn('location_id', 'text').execute();
      await db.schema
        .createIndex('agents_location_seen')
        .on('agents')
        .columns(['location_id', 'last_seen_at'])
        .execute();
      await db.schema
        .createIndex('private_location_keys_location')
        .on('private_location_keys')
        .column('location_id')
        .execute();
    },
  },
  '0003_analytics': {
    async up(db: Kysely<unknown>) {
      // Numeric copies of a result's HTTP timing phases, status code and attempts, so analytics
      // aggregate columns instead of parsing `doc` (ms; null where a run has no such value).
      // Rows stored before this migration keep nulls and attempts 1.
      for (const column of ['phase_wait', 'phase_dns', 'phase_tcp', 'phase_first_byte', 'phase_download']) {
        await db.schema.alterTable('check_results').addColumn(column, 'real').execute();
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
      // so the narrow one comes second (test/service/analytics.test.ts checks the plans).
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
  },
  '0006_queue_bounds': {
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
      // Hot queries of the expiry pass look only at due rows (test/service/queue-plans.test.ts).
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
      await db.schema
        .createIndex('check_sessions_started')
        .on('check_sessions')
        .column('started_at')
        .execute();
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
      await db.schema
        .createTable('result_outbox')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
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
  },
  '0008_agent_status': {
    async up(db: Kysely<unknown>) {
      // Issue 9 (2.9): what GET /v1/agents shows of each agent besides version and last claim:
      // when it was first seen, and what its last claim reported (free slots per job class,
      // check types, runtimes), as JSON text.
      await db.schema.alterTable('agents').addColumn('first_seen_at', 'bigint').execute();
      await db.schema.alterTable('agents').addColumn('claim_report', 'text').execute();
      // An agent's error reports, newest first, one page at a time.
      await db.schema
        .createIndex('agent_events_agent')
        .on('agent_events')
        .columns(['account_id', 'agent_id', 'id'])
        .execute();
    },
  },
};

class InCodeProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Brings the schema to the latest migration. Throws the migration's error when one fails. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeProvider() });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}
