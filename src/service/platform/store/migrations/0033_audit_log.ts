import type { Kysely, Migration } from 'kysely';

/**
 * `0033_audit_log`: who changed what in an account, when and from where (docs/teams.md, "Audit log").
 *
 * - `audit_log`: one row per successful change made through `/v1` (and per sign-in or sign-out of the web
 *   app). `id` sorts in the order the service wrote the rows; `occurred_at` is epoch ms. The actor is the
 *   request's principal (kind, id, name, role; never a secret). `before` and `after` are JSON documents with
 *   every secret masked or dropped, at most 64 KiB each (audit-log/masking.ts); null when there is none.
 *   `ip` and `user_agent` say where the request came from.
 * - Indexes: `(account_id, occurred_at, id)` for the newest-first list, `(account_id, resource_type,
 *   resource_id, occurred_at)` for one resource's history (and the previous `after` of a change), and
 *   `(account_id, actor_id, occurred_at)` for one actor's changes, `(occurred_at)` for retention.
 */
export const auditLog: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('occurred_at', 'bigint', (c) => c.notNull())
      .addColumn('actor_kind', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text', (c) => c.notNull())
      .addColumn('actor_name', 'text')
      .addColumn('actor_role', 'text')
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('resource_type', 'text', (c) => c.notNull())
      .addColumn('resource_id', 'text')
      .addColumn('before', 'text')
      .addColumn('after', 'text')
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .execute();
    await db.schema
      .createIndex('audit_log_account_time')
      .on('audit_log')
      .columns(['account_id', 'occurred_at', 'id'])
      .execute();
    await db.schema
      .createIndex('audit_log_account_resource')
      .on('audit_log')
      .columns(['account_id', 'resource_type', 'resource_id', 'occurred_at'])
      .execute();
    await db.schema
      .createIndex('audit_log_account_actor')
      .on('audit_log')
      .columns(['account_id', 'actor_id', 'occurred_at'])
      .execute();
    await db.schema.createIndex('audit_log_time').on('audit_log').column('occurred_at').execute();
  },
};
