import type { Role } from '../http/permissions.js';
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../store/database.js';

/** The `api_keys` row (with its account's name) a sign-in key hash names. */
export type SignInKeyRow = {
  apiKeyId: string;
  accountId: string;
  accountName: string;
  key_prefix: string;
  label: string | null;
  role: Role;
  /** When the key stops working, epoch ms; null: never. */
  expires_at: number | null;
  /** 1 when the account's people sign in by single sign-on only (`sso_settings.sso_only`); else 0 or null. */
  sso_only: number | null;
};

/**
 * The statements of web-app sessions (`web_sessions`, docs/web-app.md) and of the API keys they are opened
 * with (`api_keys`): portable kysely only. The rules (which keys may sign in, expiry, idleness, CSRF) are
 * `WebSessions`' (sessions.ts). Times in epoch ms.
 */
export class WebSessionQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * The API key whose SHA-256 is `keyHash` (`api_keys.key_hash`), with its account's name; undefined when
   * there is none. Reads `api_keys` ⨝ `accounts` ⟕ `sso_settings`.
   */
  signInKey(keyHash: string): Promise<SignInKeyRow | undefined> {
    return this.#db
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .leftJoin('sso_settings as o', 'o.account_id', 'k.account_id')
      .select([
        'o.sso_only',
        'k.id as apiKeyId',
        'k.account_id as accountId',
        'a.name as accountName',
        'k.key_prefix',
        'k.label',
        'k.role',
        'k.expires_at',
      ])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
  }

  /** Inserts a session row (`created_at`, `last_seen_at`, `expires_at`: epoch ms). */
  async insert(row: Insertable<Database['web_sessions']>): Promise<void> {
    await this.#db.insertInto('web_sessions').values(row).execute();
  }

  /**
   * The session whose id hashes to `idHash`, with its account's name and whom it acts for: the API key it
   * was opened with (its prefix, name, role and end) or the person signed in (name, email, role); undefined
   * when there is none, or when that key or person is gone (the row must still exist, for the same account).
   * Reads `web_sessions` ⟕ `api_keys` ⟕ `users` ⨝ `accounts`; times in epoch ms.
   */
  live(idHash: string) {
    return (
      this.#db
        .selectFrom('web_sessions as s')
        // The key or person must still exist, for the same account: deleting either ends the session.
        .leftJoin('api_keys as k', (join) =>
          join.onRef('k.id', '=', 's.api_key_id').onRef('k.account_id', '=', 's.account_id'),
        )
        .leftJoin('users as u', (join) =>
          join.onRef('u.id', '=', 's.user_id').onRef('u.account_id', '=', 's.account_id'),
        )
        // A person's key acts with at most its person's current role, and ends with the person.
        .leftJoin('users as ku', (join) =>
          join.onRef('ku.id', '=', 'k.user_id').onRef('ku.account_id', '=', 'k.account_id'),
        )
        .innerJoin('accounts as a', 'a.id', 's.account_id')
        .select([
          's.account_id',
          'a.name as account_name',
          's.api_key_id',
          'k.key_prefix',
          'k.label as key_name',
          'k.role as key_role',
          'k.expires_at as key_expires_at',
          'k.user_id as key_user_id',
          'ku.role as key_user_role',
          's.user_id',
          'u.name as user_name',
          'u.email as user_email',
          'u.role as user_role',
          's.created_at',
          's.last_seen_at',
          's.expires_at',
        ])
        .where('s.id_hash', '=', idHash)
        .where((eb) => eb.or([eb('k.id', 'is not', null), eb('u.id', 'is not', null)]))
        .executeTakeFirst()
    );
  }

  /** Records a use of the session `idHash`: sets its `last_seen_at` to `lastSeenAtMs` (epoch ms). */
  async touch(idHash: string, lastSeenAtMs: number): Promise<void> {
    await this.#db
      .updateTable('web_sessions')
      .set({ last_seen_at: lastSeenAtMs })
      .where('id_hash', '=', idHash)
      .execute();
  }

  /** Deletes the session row `idHash`; nothing happens when there is none. */
  async delete(idHash: string): Promise<void> {
    await this.#db.deleteFrom('web_sessions').where('id_hash', '=', idHash).execute();
  }
}
