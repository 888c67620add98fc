import type { Kysely, Migration } from 'kysely';

/**
 * `0032_sso`: single sign-on with OpenID Connect (docs/teams.md, "Single sign-on").
 *
 * - `sso_settings`: one row per account that signs in through an OpenID provider: the issuer URL, the
 *   client id, the client secret sealed by the store's SecretBox (`v1:…`, never in clear), the role of
 *   people it creates, the optional groups claim and its group → role mapping (JSON object text), whether
 *   only single sign-on may open the account's web sessions (`sso_only` 0/1). Times in epoch ms.
 * - `sso_domains`: the email domains whose people the account's provider signs in (lower case). A domain
 *   belongs to one account in the store, so `POST /auth/sso/start` finds at most one.
 * - `sso_sign_ins`: sign-ins in progress, single-use and short-lived (10 minutes), shared by every replica
 *   of the store: the SHA-256 of their `state`, the SHA-256 of the browser binding the cookie holds, and
 *   the PKCE verifier and nonce sealed by the SecretBox. A callback deletes its row before it goes on.
 */
export const sso: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sso_settings')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_secret', 'text', (c) => c.notNull())
      .addColumn('default_role', 'text', (c) => c.notNull())
      .addColumn('groups_claim', 'text')
      .addColumn('group_roles', 'text', (c) => c.notNull())
      .addColumn('sso_only', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('sso_domains')
      .addColumn('domain', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sso_domains_account').on('sso_domains').column('account_id').execute();
    await db.schema
      .createTable('sso_sign_ins')
      .addColumn('state_hash', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('browser_hash', 'text', (c) => c.notNull())
      .addColumn('code_verifier', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sso_sign_ins_expiry').on('sso_sign_ins').column('expires_at').execute();
  },
};
