import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database } from '../../platform/store/database.js';

/** An `api_keys` row as the API keys routes read it (no hash). Times in epoch ms. */
export type ApiKeyRow = Pick<
  Selectable<Database['api_keys']>,
  'id' | 'account_id' | 'key_prefix' | 'label' | 'role' | 'created_at' | 'expires_at' | 'last_used_at'
>;

/** The columns listed: never `key_hash`. */
const LISTED = [
  'id',
  'account_id',
  'key_prefix',
  'label',
  'role',
  'created_at',
  'expires_at',
  'last_used_at',
] as const;

/**
 * The `api_keys` table's queries for `/v1/api-keys`, every one scoped to one account and blind to the keys
 * labelled `hiddenLabel` (the embedded agent's, which `outpost up` rotates itself). Keys are stored as their
 * SHA-256 only; nothing here reads the hash.
 */
export class ApiKeyQueries {
  readonly #db: Kysely<Database>;
  readonly #hiddenLabel: string;
  constructor(db: Kysely<Database>, hiddenLabel: string) {
    this.#db = db;
    this.#hiddenLabel = hiddenLabel;
  }

  /** The account's keys, oldest first. */
  list(accountId: string): Promise<ApiKeyRow[]> {
    return this.#db
      .selectFrom('api_keys')
      .select(LISTED)
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('label', 'is', null), eb('label', '!=', this.#hiddenLabel)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** The key with row id `id` in the account; undefined when it has none (or it is a hidden one). */
  get(accountId: string, id: string): Promise<ApiKeyRow | undefined> {
    return this.#db
      .selectFrom('api_keys')
      .select(LISTED)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where((eb) => eb.or([eb('label', 'is', null), eb('label', '!=', this.#hiddenLabel)]))
      .executeTakeFirst();
  }

  /** Inserts a key row (its hash, never the key). */
  async insert(row: Insertable<Database['api_keys']>): Promise<void> {
    await this.#db.insertInto('api_keys').values(row).execute();
  }

  /** Deletes the key `id` of the account unless it is a hidden one; false when nothing was deleted. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('api_keys')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where((eb) => eb.or([eb('label', 'is', null), eb('label', '!=', this.#hiddenLabel)]))
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
