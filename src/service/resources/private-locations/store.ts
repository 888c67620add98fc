import type { Kysely } from 'kysely';
import type { LocationDoc } from './private-locations.js';
import type { Database } from '../../platform/store/database.js';
import type { StoredJson } from '../../platform/store/schema.js';
import { Statement } from '../../platform/store/statement.js';

/** A private location row: its slug and its document as JSON text; times in epoch ms. */
export type LocationRow = {
  id: string;
  slug: string;
  doc: StoredJson<LocationDoc>;
  created_at: number;
  updated_at: number | null;
};

/** A key of a location as shown: its masked form only (the key's hash never leaves the store). */
export type KeyRow = {
  id: string;
  location_id: string;
  masked_key: string;
  created_at: number;
  updated_at: number | null;
};

const COLUMNS = ['id', 'slug', 'doc', 'created_at', 'updated_at'] as const;

/** The account's locations: read for every claim and every run queued, built once (store/statement.ts). */
const ALL_OF_ACCOUNT = new Statement((db: Kysely<Database>, v: { accountId: string }) =>
  db
    .selectFrom('private_locations')
    .select(COLUMNS)
    .where('account_id', '=', v.accountId)
    .orderBy('created_at')
    .orderBy('id'),
);

/**
 * The `private_locations` and `private_location_keys` tables' queries, every one scoped to one
 * account (a location's keys by its id, once the location is known to be the account's).
 */
export class LocationQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Whether the account has a location with slug `slug`. */
  async hasSlug(accountId: string, slug: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('private_locations')
      .select('id')
      .where('account_id', '=', accountId)
      .where('slug', '=', slug)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Slugs of the account's locations. */
  async slugs(accountId: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('private_locations')
      .select('slug')
      .where('account_id', '=', accountId)
      .execute();
    return rows.map((r) => r.slug);
  }

  /** Inserts a location row into the account. @throws the driver's unique-constraint error when the slug is taken. */
  async insert(accountId: string, row: LocationRow): Promise<void> {
    await this.#db
      .insertInto('private_locations')
      .values({ ...row, account_id: accountId })
      .execute();
  }

  /** The location's row; undefined when it is not in the account. */
  get(accountId: string, id: string): Promise<LocationRow | undefined> {
    return this.#db
      .selectFrom('private_locations')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The account's locations among `ids`. */
  byIds(accountId: string, ids: readonly string[]): Promise<LocationRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.#db
      .selectFrom('private_locations')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
  }

  /** The account's locations, oldest first. */
  list(accountId: string): Promise<LocationRow[]> {
    return ALL_OF_ACCOUNT.rows(this.#db, { accountId });
  }

  /** Replaces the location's document. */
  async update(accountId: string, id: string, doc: StoredJson<LocationDoc>, nowMs: number): Promise<void> {
    await this.#db
      .updateTable('private_locations')
      .set({ doc, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the location and its keys. */
  async delete(accountId: string, id: string): Promise<void> {
    await this.#db
      .deleteFrom('private_location_keys')
      .where('account_id', '=', accountId)
      .where('location_id', '=', id)
      .execute();
    await this.#db
      .deleteFrom('private_locations')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** The location's keys, oldest first. */
  keys(locationId: string): Promise<KeyRow[]> {
    return this.#db
      .selectFrom('private_location_keys')
      .select(['id', 'location_id', 'masked_key', 'created_at', 'updated_at'])
      .where('location_id', '=', locationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** Stores a key: its SHA-256 (`keyHash`, hex) and its masked form. */
  async insertKey(accountId: string, row: KeyRow, keyHash: string): Promise<void> {
    await this.#db
      .insertInto('private_location_keys')
      .values({ ...row, account_id: accountId, key_hash: keyHash })
      .execute();
  }

  /** Deletes one key of the location; false when there is no such key. */
  async deleteKey(accountId: string, locationId: string, keyId: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('private_location_keys')
      .where('account_id', '=', accountId)
      .where('location_id', '=', locationId)
      .where('id', '=', keyId)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
