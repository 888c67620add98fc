import type { Kysely, Migration } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0021_triggers`: trigger URLs of checks and check groups (`/v1/triggers/…`, docs/api.md, "Triggers").
 *
 * - `triggers`: at most one per check (`target_kind` `CHECK`, `target_id` the check id) and one per check
 *   group (`GROUP`, the group id as text) of an account. `token_hash` is the SHA-256 of the token (hex,
 *   unique): a call of the URL is looked up by it. `token_sealed` is the token sealed with the store's key
 *   (the API answers it on every read, as the hosted API does). `called_at` is the last call that started
 *   runs. Times in epoch ms.
 */
export const triggers: Migration = {
  async up(db: Kysely<unknown>) {
    await autoIncrementId(db, db.schema.createTable('triggers'))
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('target_kind', 'text', (c) => c.notNull())
      .addColumn('target_id', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('token_sealed', 'text', (c) => c.notNull())
      .addColumn('called_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('triggers_target')
      .unique()
      .on('triggers')
      .columns(['account_id', 'target_kind', 'target_id'])
      .execute();
  },
};
