import type { Kysely, Migration } from 'kysely';

/**
 * `0031_user_tokens`: the single-use secrets of people (docs/teams.md, "Invitations", "Password resets",
 * "Two-factor"), one table for every kind:
 *
 * - `kind`: `invitation` (7 days), `reset` (1 hour), `challenge` (the second step of a sign-in with
 *   two-factor, 5 minutes, 5 tries) or `recovery` (a two-factor recovery code: no expiry).
 * - `token_hash`: HMAC-SHA256 of the token (hex) under a key derived from the store's SecretBox
 *   (`user-tokens`): the token itself is only in the mail, the answer or the person's hands, and a copy of the
 *   table alone cannot be tried offline.
 * - `used_at`: set once, by a conditional update, so a token is used at most once even by two replicas.
 * - `tries`: wrong codes given with a challenge.
 *
 * Times in epoch ms.
 */
export const userTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('user_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('used_at', 'bigint')
      .addColumn('tries', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('user_tokens_user').on('user_tokens').columns(['user_id', 'kind']).execute();
    await db.schema.createIndex('user_tokens_expiry').on('user_tokens').column('expires_at').execute();
  },
};
