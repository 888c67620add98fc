import type { Kysely, Migration } from 'kysely';

/**
 * `0014_run_locations`: runs go only where their check says, and a run that never ran says why
 * (docs/protocol.md, "Run locations").
 *
 * - `jobs.acknowledged_at`: when the agent confirmed it received the claimed job (epoch ms); null while
 *   the claim's answer may never have reached it. A lease that lapses unacknowledged returns the job to the
 *   queue, or ends the run as expired, never as a failure of the target.
 * - `agents.host_name`: the host name the agent reports with its claims, shown with its results.
 * - `agents.stopped_at`: when the agent said it stopped (epoch ms); it shows as disconnected at once.
 * - `expired_runs`: runs that ended without running, with the reason (no agent serves the location, no
 *   agent took it in time, a claim never acknowledged). Kept as long as results.
 */
export const runLocations: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('acknowledged_at', 'bigint').execute();
    await db.schema.alterTable('agents').addColumn('host_name', 'text').execute();
    await db.schema.alterTable('agents').addColumn('stopped_at', 'bigint').execute();
    await db.schema
      .createTable('expired_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('check_session_id', 'text')
      .addColumn('round_id', 'text')
      .addColumn('location', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('expired_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('expired_runs_check_time')
      .on('expired_runs')
      .columns(['check_id', 'expired_at'])
      .execute();
    await db.schema.createIndex('expired_runs_time').on('expired_runs').column('expired_at').execute();
  },
};
