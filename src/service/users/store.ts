import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Role } from '../platform/http/permissions.js';
import type { Database } from '../platform/store/database.js';
import type { UserTable, UserTokenKind } from '../platform/store/schema.js';

/** A `users` row. Times in epoch ms. */
export type UserRow = Selectable<UserTable>;

/** A `users` row with its account's name (what a sign-in needs). */
export type UserWithAccount = UserRow & { account_name: string };

/** A `web_sessions` row of a person, as the session list shows it. Times in epoch ms. */
export type UserSessionRow = {
  id_hash: string;
  user_agent: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
};

/** A `user_tokens` row. Times in epoch ms. */
export type UserTokenRow = {
  token_hash: string;
  kind: UserTokenKind;
  user_id: string;
  account_id: string;
  created_at: number;
  expires_at: number | null;
  used_at: number | null;
  tries: number;
};

/**
 * The statements of people (`users`), their single-use tokens (`user_tokens`), and their sessions and keys
 * (`web_sessions`, `api_keys` by `user_id`): portable kysely only. The rules (who may change whom, expiry,
 * hashing) are the module's (users.ts). Times in epoch ms.
 */
export class UserQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The people of `accountId`, oldest first. */
  list(accountId: string): Promise<UserRow[]> {
    return this.#db
      .selectFrom('users')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** The person `id` of `accountId`; undefined when there is none in that account. */
  get(accountId: string, id: string): Promise<UserRow | undefined> {
    return this.#db
      .selectFrom('users')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The person `id` in any account, with its account's name; undefined when there is none. */
  withAccount(id: string): Promise<UserWithAccount | undefined> {
    return this.#db
      .selectFrom('users as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .selectAll('u')
      .select('a.name as account_name')
      .where('u.id', '=', id)
      .executeTakeFirst();
  }

  /** The person whose (lower-cased) email is `email`, in any account, with its account's name. */
  byEmail(email: string): Promise<UserWithAccount | undefined> {
    return this.#db
      .selectFrom('users as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .selectAll('u')
      .select('a.name as account_name')
      .where('u.email', '=', email)
      .executeTakeFirst();
  }

  /** The number of people of `accountId` with `role` who have signed up (a password or single sign-on). */
  async countActive(accountId: string, role: Role): Promise<number> {
    const row = await this.#db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('account_id', '=', accountId)
      .where('role', '=', role)
      .where((eb) => eb.or([eb('password_hash', 'is not', null), eb('sso_subject', 'is not', null)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Inserts a person. @throws the store's unique violation when the email is taken. */
  async insert(row: Insertable<UserTable>): Promise<void> {
    await this.#db.insertInto('users').values(row).execute();
  }

  /** Sets the fields of `changes` of person `id` of `accountId`, and `updated_at`. */
  async update(
    accountId: string,
    id: string,
    changes: Partial<Pick<UserTable, 'name' | 'role' | 'password_hash' | 'totp_secret' | 'totp_enabled_at'>>,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable('users')
      .set({ ...changes, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Records a sign-in of person `id` at `nowMs`. */
  async signedIn(id: string, nowMs: number): Promise<void> {
    await this.#db.updateTable('users').set({ last_sign_in_at: nowMs }).where('id', '=', id).execute();
  }

  /** Deletes person `id` of `accountId` with their sessions, keys and tokens, in one transaction. */
  async delete(accountId: string, id: string): Promise<void> {
    await this.#db.transaction().execute(async (tx) => {
      await tx.deleteFrom('web_sessions').where('user_id', '=', id).execute();
      await tx.deleteFrom('api_keys').where('user_id', '=', id).execute();
      await tx.deleteFrom('user_tokens').where('user_id', '=', id).execute();
      await tx.deleteFrom('users').where('account_id', '=', accountId).where('id', '=', id).execute();
    });
  }

  /** The sessions of person `userId`, newest first. */
  sessions(userId: string): Promise<UserSessionRow[]> {
    return this.#db
      .selectFrom('web_sessions')
      .select(['id_hash', 'user_agent', 'created_at', 'last_seen_at', 'expires_at'])
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .execute();
  }

  /** Ends the sessions of person `userId`, all of them or all but `exceptIdHash`. */
  async endSessions(userId: string, exceptIdHash: string | null = null): Promise<void> {
    let query = this.#db.deleteFrom('web_sessions').where('user_id', '=', userId);
    if (exceptIdHash !== null) query = query.where('id_hash', '!=', exceptIdHash);
    await query.execute();
  }

  /** Ends the session `idHash` of person `userId`; nothing happens when it is not theirs. */
  async endSession(userId: string, idHash: string): Promise<void> {
    await this.#db
      .deleteFrom('web_sessions')
      .where('user_id', '=', userId)
      .where('id_hash', '=', idHash)
      .execute();
  }

  /** Stores a token (its HMAC only). */
  async insertToken(row: Insertable<Database['user_tokens']>): Promise<void> {
    await this.#db.insertInto('user_tokens').values(row).execute();
  }

  /** The token whose HMAC is `tokenHash`, of `kind`; undefined when there is none. */
  token(tokenHash: string, kind: UserTokenKind): Promise<UserTokenRow | undefined> {
    return this.#db
      .selectFrom('user_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('kind', '=', kind)
      .executeTakeFirst();
  }

  /**
   * Uses the token `tokenHash` up: sets `used_at` unless it is set already (one conditional update, so two
   * requests, or two replicas, cannot both use it).
   * @returns whether this call used it.
   */
  async useToken(tokenHash: string, nowMs: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('user_tokens')
      .set({ used_at: nowMs })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Counts one wrong code given with token `tokenHash`; returns the tries now counted. */
  async addTry(tokenHash: string): Promise<number> {
    await this.#db
      .updateTable('user_tokens')
      .set((eb) => ({ tries: eb('tries', '+', 1) }))
      .where('token_hash', '=', tokenHash)
      .execute();
    const row = await this.#db
      .selectFrom('user_tokens')
      .select('tries')
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row?.tries ?? Number.POSITIVE_INFINITY;
  }

  /** Deletes the tokens of `kind` of person `userId` (an invitation sent again, recovery codes replaced). */
  async deleteTokens(userId: string, kind: UserTokenKind): Promise<void> {
    await this.#db.deleteFrom('user_tokens').where('user_id', '=', userId).where('kind', '=', kind).execute();
  }

  /** Deletes the tokens that expired before `nowMs` or were used before `usedBeforeMs`; returns how many. */
  async deleteOldTokens(nowMs: number, usedBeforeMs: number, limit: number): Promise<number> {
    const rows = await this.#db
      .selectFrom('user_tokens')
      .select('token_hash')
      .where((eb) =>
        eb.or([
          eb.and([eb('expires_at', 'is not', null), eb('expires_at', '<=', nowMs)]),
          eb.and([eb('used_at', 'is not', null), eb('used_at', '<=', usedBeforeMs)]),
        ]),
      )
      .limit(limit)
      .execute();
    if (rows.length === 0) return 0;
    await this.#db
      .deleteFrom('user_tokens')
      .where(
        'token_hash',
        'in',
        rows.map((r) => r.token_hash),
      )
      .execute();
    return rows.length;
  }

  /** The account's name, or undefined when there is no such account. */
  async accountName(accountId: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('accounts')
      .select('name')
      .where('id', '=', accountId)
      .executeTakeFirst();
    return row?.name;
  }
}
