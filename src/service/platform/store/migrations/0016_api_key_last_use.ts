import type { Kysely, Migration } from 'kysely';

/**
 * `0016_api_key_last_use`: API keys managed over the API (`/v1/api-keys`, docs/api.md, "API keys").
 *
 * - `api_keys.last_used_at`: the last request authenticated by the key, or by a web session opened with it
 *   (epoch ms); written at most once a minute per key (src/service/platform/http/auth.ts), so reads do not
 *   all write. Null for a key never used since this migration.
 */
export const apiKeyLastUse: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
  },
};
