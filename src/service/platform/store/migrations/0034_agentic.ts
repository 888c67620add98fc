import type { Kysely, Migration } from 'kysely';

/**
 * `0034_agentic`: what AGENTIC checks keep beside their documents (docs/checks.md, "Agentic"; docs/api.md,
 * "Agentic checks"). The check's current script and its version are fields of its document (`script`,
 * `scriptVersion`); these tables hold the rest.
 *
 * - `agentic_repairs`: every verified script change an agent reported, kept for ever: `kind` GENERATED or
 *   REPAIRED, the version it was made over (`base_version`) and the one it became (`new_version`, null until
 *   applied), `status` APPLIED, PENDING (a REVIEW check's repair waiting for a person), REJECTED or STALE (made
 *   over a version that had moved), the model's `reason`, the unified `diff` and the whole `script`; the
 *   result that carried it (`result_id`) and the agent that ran it (`agent_id`); `created_at` and
 *   `decided_at` epoch ms; `decided_by` the person or key that applied or rejected it (null: the service, by
 *   the check's repair mode). Index `(account_id, check_id, created_at)` for a check's list, newest first.
 * - `agentic_runs`: the model usage of each stored AGENTIC result, written in the result's transaction
 *   (`result_id` its key): `mode`, `model_calls`, `duration_ms`, `prompt_tokens` and `completion_tokens`
 *   (0 when the endpoint reported none), `created_at` epoch ms. Index `(account_id, created_at)` for the
 *   account's monthly figure, which outlives the results' own retention.
 */
export const agentic: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('agentic_repairs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('result_id', 'text')
      .addColumn('agent_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('base_version', 'integer', (c) => c.notNull())
      .addColumn('new_version', 'integer')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('diff', 'text', (c) => c.notNull())
      .addColumn('script', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('decided_by', 'text')
      .execute();
    await db.schema
      .createIndex('agentic_repairs_check')
      .on('agentic_repairs')
      .columns(['account_id', 'check_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('agentic_runs')
      .addColumn('result_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('model_calls', 'integer', (c) => c.notNull())
      .addColumn('duration_ms', 'double precision', (c) => c.notNull())
      .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
      .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('agentic_runs_account_time')
      .on('agentic_runs')
      .columns(['account_id', 'created_at'])
      .execute();
  },
};
