import type { Kysely, Migration } from 'kysely';

/**
 * `0008_agent_status`: when an agent was first seen and what its last claim reported, and
 * the index that pages an agent's error reports newest first.
 */
export const agentStatus: Migration = {
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
};
