import { type Kysely, type Migration, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * `0030_users`: people sign in as themselves (docs/teams.md).
 *
 * - `users`: a person of an account, with a role (platform/http/permissions.ts `ROLES`). `email` is kept
 *   lower-cased and is unique in the store, so a sign-in by email finds one person. `password_hash` is an
 *   Argon2id PHC string (null for a person invited and not yet signed up, or one who signs in by single
 *   sign-on only). `totp_secret` is sealed by the store's SecretBox like every other secret at rest;
 *   `totp_enabled_at` says two-factor is on (epoch ms). `sso_subject` is `<issuer> <sub>` of the person's
 *   single sign-on identity, unique when set. Times in epoch ms.
 * - `web_sessions.user_id`: the person a session is signed in as; `api_key_id` becomes optional (a person's
 *   session has no key). A session has one or the other.
 * - `api_keys.user_id`: the person a key belongs to (null for an account key): it acts with the weaker of its
 *   own role and the person's, and ends with the person.
 */
export const users: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text')
      .addColumn('totp_secret', 'text')
      .addColumn('totp_enabled_at', 'bigint')
      .addColumn('sso_subject', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('last_sign_in_at', 'bigint')
      .execute();
    await db.schema.createIndex('users_email').on('users').column('email').unique().execute();
    await db.schema.createIndex('users_account').on('users').columns(['account_id', 'created_at']).execute();
    await db.schema
      .createIndex('users_sso_subject')
      .on('users')
      .column('sso_subject')
      .unique()
      .where(sql.ref('sso_subject'), 'is not', null)
      .execute();

    await db.schema.alterTable('api_keys').addColumn('user_id', 'text').execute();
    await db.schema.createIndex('api_keys_user').on('api_keys').column('user_id').execute();

    if (isPostgres(db)) {
      await db.schema
        .alterTable('web_sessions')
        .alterColumn('api_key_id', (c) => c.dropNotNull())
        .execute();
      await db.schema.alterTable('web_sessions').addColumn('user_id', 'text').execute();
    } else {
      // SQLite cannot drop a NOT NULL: the table is made again with the same rows.
      await db.schema
        .createTable('web_sessions_next')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('api_key_id', 'text')
        .addColumn('user_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('user_agent', 'text')
        .execute();
      await sql`insert into web_sessions_next (id_hash, account_id, api_key_id, created_at, last_seen_at, expires_at, user_agent)
        select id_hash, account_id, api_key_id, created_at, last_seen_at, expires_at, user_agent from web_sessions`.execute(
        db,
      );
      await db.schema.dropTable('web_sessions').execute();
      await db.schema.alterTable('web_sessions_next').renameTo('web_sessions').execute();
      await db.schema.createIndex('web_sessions_key').on('web_sessions').column('api_key_id').execute();
      await db.schema.createIndex('web_sessions_expiry').on('web_sessions').column('expires_at').execute();
    }
    await db.schema.createIndex('web_sessions_user').on('web_sessions').column('user_id').execute();
  },
};
