import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Role } from '../platform/http/permissions.js';
import type { Database } from '../platform/store/database.js';

/** An account's `sso_settings` row. */
export type SsoSettingsRow = Selectable<Database['sso_settings']>;
/** A `sso_sign_ins` row. */
export type SsoSignInRow = Selectable<Database['sso_sign_ins']>;
/** The person a single sign-on finds, with their account's name. */
export type SsoUserRow = {
  id: string;
  account_id: string;
  account_name: string;
  email: string;
  name: string;
  role: Role;
  sso_subject: string | null;
};

/**
 * The statements of single sign-on (docs/teams.md, "Single sign-on"): `sso_settings`, `sso_domains`,
 * `sso_sign_ins`, and the `users` rows a sign-in finds, links or creates. Portable kysely only; the rules
 * are `SingleSignOn`'s (sso.ts). Times in epoch ms.
 */
export class SsoQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The account's settings, or undefined without single sign-on. */
  settings(accountId: string): Promise<SsoSettingsRow | undefined> {
    return this.#db
      .selectFrom('sso_settings')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /** Whether the account's people sign in by single sign-on only (`sso_settings.sso_only`). */
  async ssoOnly(accountId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('sso_settings')
      .select('sso_only')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row?.sso_only === 1;
  }

  /** The account's email domains, sorted. */
  async domains(accountId: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('sso_domains')
      .select('domain')
      .where('account_id', '=', accountId)
      .orderBy('domain')
      .execute();
    return rows.map((r) => r.domain);
  }

  /** The first of `domains` another account than `accountId` holds, or undefined. */
  async domainTaken(accountId: string, domains: readonly string[]): Promise<string | undefined> {
    if (domains.length === 0) return undefined;
    const row = await this.#db
      .selectFrom('sso_domains')
      .select('domain')
      .where('domain', 'in', domains)
      .where('account_id', '!=', accountId)
      .orderBy('domain')
      .executeTakeFirst();
    return row?.domain;
  }

  /**
   * Writes the account's settings and its domains in one transaction (the domains replace the old ones).
   * @throws the store's unique violation when another account took one of the domains meanwhile.
   */
  async put(row: Insertable<Database['sso_settings']>, domains: readonly string[]): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const { account_id, created_at, ...changes } = row;
      const updated = await trx
        .updateTable('sso_settings')
        .set(changes)
        .where('account_id', '=', account_id)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) await trx.insertInto('sso_settings').values(row).execute();
      await trx.deleteFrom('sso_domains').where('account_id', '=', account_id).execute();
      if (domains.length > 0) {
        await trx
          .insertInto('sso_domains')
          .values(domains.map((domain) => ({ domain, account_id })))
          .execute();
      }
    });
  }

  /** Deletes the account's settings, domains and sign-ins in progress. @returns whether settings existed. */
  async delete(accountId: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('sso_domains').where('account_id', '=', accountId).execute();
      await trx.deleteFrom('sso_sign_ins').where('account_id', '=', accountId).execute();
      const deleted = await trx
        .deleteFrom('sso_settings')
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      return deleted.numDeletedRows > 0n;
    });
  }

  /** The account whose single sign-on holds email domain `domain` (lower case), or undefined. */
  async accountOfDomain(domain: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('sso_domains')
      .select('account_id')
      .where('domain', '=', domain)
      .executeTakeFirst();
    return row?.account_id;
  }

  /** The account of the person with `email` (lower case) when that account has single sign-on. */
  async ssoAccountOfEmail(email: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('users as u')
      .innerJoin('sso_settings as s', 's.account_id', 'u.account_id')
      .select('u.account_id')
      .where('u.email', '=', email)
      .executeTakeFirst();
    return row?.account_id;
  }

  /** Records a sign-in in progress; deletes the ones past their end first (`now`, epoch ms). */
  async insertSignIn(row: Insertable<Database['sso_sign_ins']>, now: number): Promise<void> {
    await this.#db.deleteFrom('sso_sign_ins').where('expires_at', '<=', now).execute();
    await this.#db.insertInto('sso_sign_ins').values(row).execute();
  }

  /**
   * Takes the sign-in whose state hashes to `stateHash`: reads and deletes it; of several replicas
   * taking the same one, only the one whose delete removed the row gets it (single use).
   */
  async takeSignIn(stateHash: string): Promise<SsoSignInRow | undefined> {
    const row = await this.#db
      .selectFrom('sso_sign_ins')
      .selectAll()
      .where('state_hash', '=', stateHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const deleted = await this.#db
      .deleteFrom('sso_sign_ins')
      .where('state_hash', '=', stateHash)
      .executeTakeFirst();
    return deleted.numDeletedRows === 1n ? row : undefined;
  }

  #users() {
    return this.#db
      .selectFrom('users as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select([
        'u.id',
        'u.account_id',
        'a.name as account_name',
        'u.email',
        'u.name',
        'u.role',
        'u.sso_subject',
      ]);
  }

  /** The person whose single sign-on identity is `subject` (`<issuer> <sub>`), in any account. */
  userBySubject(subject: string): Promise<SsoUserRow | undefined> {
    return this.#users().where('u.sso_subject', '=', subject).executeTakeFirst();
  }

  /** The person with `email` (lower case), in any account. */
  userByEmail(email: string): Promise<SsoUserRow | undefined> {
    return this.#users().where('u.email', '=', email).executeTakeFirst();
  }

  /** The name of account `accountId`, or undefined. */
  async accountName(accountId: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('accounts')
      .select('name')
      .where('id', '=', accountId)
      .executeTakeFirst();
    return row?.name;
  }

  /** Creates a person who signed in through the provider: no password, active at once. */
  async insertUser(row: Insertable<Database['users']>): Promise<void> {
    await this.#db.insertInto('users').values(row).execute();
  }

  /** Records a sign-in of person `id`: the identity linked, the role read from the provider, the time. */
  async signedIn(id: string, changes: { sso_subject: string; role: Role; now: number }): Promise<void> {
    await this.#db
      .updateTable('users')
      .set({
        sso_subject: changes.sso_subject,
        role: changes.role,
        last_sign_in_at: changes.now,
        updated_at: changes.now,
      })
      .where('id', '=', id)
      .execute();
  }
}
