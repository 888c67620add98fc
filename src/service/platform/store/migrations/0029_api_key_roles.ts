import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0029_api_key_roles`: every account API key acts with a role and may expire (docs/teams.md, "API keys").
 *
 * - `api_keys.role`: READ_ONLY, READ_WRITE, ADMIN or OWNER (src/service/platform/http/permissions.ts). Keys
 *   made before roles existed could do everything, so they become OWNER keys and keep doing it.
 * - `api_keys.expires_at`: when the key stops working (epoch ms); null for a key that never expires.
 */
export const apiKeyRoles: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('api_keys')
      .addColumn('role', 'text', (col) => col.notNull().defaultTo(sql`'OWNER'`))
      .execute();
    await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
  },
};
