import type { Insertable, Kysely } from 'kysely';
import type { Role } from '../http/permissions.js';
import type { ApiKeyTable, Database } from './schema.js';
import { Statement } from './statement.js';

/** What {@link AccountQueries.keyOfHash} reads of a key: epoch ms; the person and their role null for an account key. */
export type KeyOfHashRow = {
  id: string;
  account_id: string;
  label: string | null;
  role: Role;
  expires_at: number | null;
  user_id: string | null;
  user_role: Role | null;
};

/** {@link AccountQueries.keyOfHash}: read for every request an API key signs, built once (statement.ts). */
const KEY_OF_HASH = new Statement((db: Kysely<Database>, v: { keyHash: string }) =>
  db
    .selectFrom('api_keys as k')
    .leftJoin('users as u', (join) =>
      join.onRef('u.id', '=', 'k.user_id').onRef('u.account_id', '=', 'k.account_id'),
    )
    .select(['k.id', 'k.account_id', 'k.label', 'k.role', 'k.expires_at', 'k.user_id', 'u.role as user_role'])
    .where('k.key_hash', '=', v.keyHash),
);

/**
 * The `accounts` and `api_keys` tables' queries: creating the first account and its keys, and
 * finding the account a key authenticates (an account key, or a private location's `pl_` key). Keys are found by their SHA-256 (`keyHash`, hex); the
 * key itself is never stored.
 */
export class AccountQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Creates an account named `name` at `nowMs` (epoch ms). */
  async insert(id: string, name: string, nowMs: number): Promise<void> {
    await this.#db.insertInto('accounts').values({ id, name, created_at: nowMs }).execute();
  }

  /** The id of the oldest account; undefined on an empty store. */
  async oldestId(): Promise<string | undefined> {
    const row = await this.#db.selectFrom('accounts').select('id').orderBy('created_at').executeTakeFirst();
    return row?.id;
  }

  /** The account `id` (its name, created at epoch ms); undefined when there is none. */
  find(id: string): Promise<{ id: string; name: string; created_at: number } | undefined> {
    return this.#db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The label and prefix of the account's API key with row id `id`; undefined when there is none. */
  keyById(accountId: string, id: string): Promise<{ label: string | null; key_prefix: string } | undefined> {
    return this.#db
      .selectFrom('api_keys')
      .select(['label', 'key_prefix'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** Stores an API key row. */
  async insertKey(row: Insertable<ApiKeyTable>): Promise<void> {
    await this.#db.insertInto('api_keys').values(row).execute();
  }

  /** The account of the API key whose hash is `keyHash`; undefined when no key has it. */
  async accountOfKey(keyHash: string): Promise<string | undefined> {
    return (await this.keyOfHash(keyHash))?.account_id;
  }

  /**
   * The `api_keys` row of the key whose hash is `keyHash` (its id, account, name, role and end, epoch ms or
   * null), with the person it belongs to and that person's current role (both null for an account key, and
   * `user_role` null when the person is gone); undefined when no key has it. Reads `api_keys` ⟕ `users`.
   */
  keyOfHash(keyHash: string): Promise<KeyOfHashRow | undefined> {
    return KEY_OF_HASH.first(this.#db, { keyHash });
  }

  /** Records a use of the key with row id `id`: sets its `last_used_at` to `nowMs` (epoch ms). */
  async recordKeyUse(id: string, nowMs: number): Promise<void> {
    await this.#db.updateTable('api_keys').set({ last_used_at: nowMs }).where('id', '=', id).execute();
  }

  /**
   * The private location a `pl_` key (its SHA-256, hex) belongs to, with its account; undefined when no
   * location holds the key. Keys are credentials, checked here with the account keys (docs/security.md).
   */
  privateLocationOfKey(
    keyHash: string,
  ): Promise<{ account_id: string; id: string; slug: string } | undefined> {
    return this.#db
      .selectFrom('private_location_keys as k')
      .innerJoin('private_locations as l', 'l.id', 'k.location_id')
      .select(['l.account_id', 'l.id', 'l.slug'])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
  }

  /** Deletes the account's API keys labelled `label` (the embedded agent's, rotated at each start). */
  async deleteKeysLabelled(accountId: string, label: string): Promise<void> {
    await this.#db
      .deleteFrom('api_keys')
      .where('account_id', '=', accountId)
      .where('label', '=', label)
      .execute();
  }
}
