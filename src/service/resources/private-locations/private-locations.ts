import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { LOCATIONS } from '../../../protocol/index.js';
import { hashApiKey } from '../../platform/http/auth.js';
import { badField, HttpError, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import type {
  CreatePrivateLocation,
  PrivateLocation,
  PrivateLocationKey,
  UpdatePrivateLocation,
} from './schema.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, writeDoc } from '../../platform/store/schema.js';
import { AgentQueries } from '../agents/store.js';
import { type KeyRow, type LocationRow, LocationQueries } from './store.js';

/** Keys a location may hold at once: two, so a key can be rotated without downtime (docs/architecture.md). */
export const MAX_LOCATION_KEYS = 2;

/** An agent counts towards `agentCount` when it called the service within this window, ms. */
export const AGENT_ONLINE_WINDOW_MS = 120_000;

/** A new private-location key: `pl_` + 32 hex characters (128 random bits). */
export function generateLocationKey(): string {
  return `pl_${randomBytes(16).toString('hex')}`;
}

/** The shown form of a key: `pl_…` and its last four characters. */
export function maskLocationKey(key: string): string {
  return `pl_…${key.slice(-4)}`;
}

/** The stored document of a private location. */
export type LocationDoc = { name: string; slugName: string; icon: string };

function presentKey(k: KeyRow, rawKey?: string): PrivateLocationKey {
  return {
    id: k.id,
    ...(rawKey === undefined ? {} : { rawKey }),
    maskedKey: k.masked_key,
    created_at: iso(k.created_at)!,
    updated_at: iso(k.updated_at),
  };
}

/** Whether `err` is a unique-constraint violation (SQLite or PostgreSQL). */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

const slugTaken = (slug: string) =>
  new HttpError(
    'OUTPOST_ERR_SLUG_TAKEN',
    `a private location with slugName ${slug} already exists in this account`,
    {
      field: 'slugName',
      in: 'body',
      rule: 'unique',
    },
  );

/** Data access for private locations and their keys, always scoped to one account. */
export class PrivateLocations {
  readonly #db: Kysely<Database>;
  readonly #rows: LocationQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new LocationQueries(db);
  }

  /**
   * Creates a location with its first key.
   * @returns the location, its key in clear (`rawKey`) the only time it is seen.
   * @throws HttpError 400 `slugName` is a public location name; 409 `slugName` taken in the account.
   */
  async create(accountId: string, body: CreatePrivateLocation, nowMs: number): Promise<PrivateLocation> {
    if ((LOCATIONS as readonly string[]).includes(body.slugName)) {
      throw badField('slugName', `must not be a public location name (${body.slugName})`, 'reserved');
    }
    const doc: LocationDoc = { name: body.name, slugName: body.slugName, icon: body.icon ?? 'location' };
    const row: LocationRow = {
      id: randomUUID(),
      slug: doc.slugName,
      doc: writeDoc(doc),
      created_at: nowMs,
      updated_at: null,
    };
    try {
      return await this.#db.transaction().execute(async (tx) => {
        const rows = new LocationQueries(tx);
        if (await rows.hasSlug(accountId, doc.slugName)) throw slugTaken(doc.slugName);
        await rows.insert(accountId, row);
        const key = await insertKey(rows, accountId, row.id, nowMs);
        return present(row, [presentKey(key.row, key.rawKey)], { agentCount: 0, lastSeen: null });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw slugTaken(doc.slugName);
      throw err;
    }
  }

  /** @throws HttpError 404 when the location is not in the account. */
  async #row(accountId: string, id: string, rows: LocationQueries = this.#rows): Promise<LocationRow> {
    const row = await rows.get(accountId, id);
    if (!row) throw notFound('private location', id);
    return row;
  }

  /** The account's locations as the API shows them, oldest first, keys masked. */
  async list(accountId: string, nowMs: number): Promise<PrivateLocation[]> {
    const rows = await this.#rows.list(accountId);
    return Promise.all(rows.map((row) => this.#present(row, nowMs)));
  }

  /** @throws HttpError 404 when the location is not in the account. */
  async get(accountId: string, id: string, nowMs: number): Promise<PrivateLocation> {
    return this.#present(await this.#row(accountId, id), nowMs);
  }

  /**
   * Changes `name` and/or `icon`.
   * @throws HttpError 404 unknown location; 400 naming `slugName` when the body tries to change it.
   */
  async update(
    accountId: string,
    id: string,
    body: UpdatePrivateLocation,
    nowMs: number,
  ): Promise<PrivateLocation> {
    const before = await this.#row(accountId, id);
    const old = readDoc(before.doc);
    if (body.slugName !== undefined && body.slugName !== old.slugName) {
      throw badField(
        'slugName',
        `cannot be changed (it is ${old.slugName}); create a new location instead`,
        'immutable',
      );
    }
    const doc: LocationDoc = { ...old, name: body.name ?? old.name, icon: body.icon ?? old.icon };
    const text = writeDoc(doc);
    await this.#rows.update(accountId, id, text, nowMs);
    return this.#present({ ...before, doc: text, updated_at: nowMs }, nowMs);
  }

  /** Deletes a location and its keys (agents using them get 401 from the next request). @throws HttpError 404. */
  async delete(accountId: string, id: string): Promise<void> {
    await this.#db.transaction().execute(async (tx) => {
      const rows = new LocationQueries(tx);
      await this.#row(accountId, id, rows);
      await rows.delete(accountId, id);
      await new AgentQueries(tx).detachLocation(id);
    });
  }

  /**
   * Adds a key to a location.
   * @returns the key with `rawKey`, the only time it is seen.
   * @throws HttpError 404 unknown location; 409 when it already holds two keys.
   */
  async addKey(accountId: string, id: string, nowMs: number): Promise<PrivateLocationKey> {
    return this.#db.transaction().execute(async (tx) => {
      const rows = new LocationQueries(tx);
      await this.#row(accountId, id, rows);
      const keys = await rows.keys(id);
      if (keys.length >= MAX_LOCATION_KEYS) {
        throw new HttpError(
          'OUTPOST_ERR_TOO_MANY_KEYS',
          `private location ${id} already has ${MAX_LOCATION_KEYS} keys; delete one first`,
          { id },
        );
      }
      const key = await insertKey(rows, accountId, id, nowMs);
      return presentKey(key.row, key.rawKey);
    });
  }

  /** Deletes one key; it stops working at once. @throws HttpError 404 unknown location or key. */
  async deleteKey(accountId: string, id: string, keyId: string): Promise<void> {
    await this.#row(accountId, id);
    if (!(await this.#rows.deleteKey(accountId, id, keyId))) throw notFound('private location key', keyId);
  }

  /** The location as answered: masked keys, agents seen within `AGENT_ONLINE_WINDOW_MS` of `nowMs`. */
  async #present(row: LocationRow, nowMs: number): Promise<PrivateLocation> {
    const keys = await this.#rows.keys(row.id);
    const seen = await new AgentQueries(this.#db).lastSeenAtLocation(row.id);
    return present(
      row,
      keys.map((k) => presentKey(k)),
      {
        agentCount: seen.filter((t) => t >= nowMs - AGENT_ONLINE_WINDOW_MS).length,
        lastSeen: seen.length > 0 ? iso(Math.max(...seen)) : null,
      },
    );
  }
}

function present(
  row: LocationRow,
  keys: PrivateLocationKey[],
  agents: { agentCount: number; lastSeen: string | null },
): PrivateLocation {
  const doc = readDoc(row.doc);
  return {
    id: row.id,
    name: doc.name,
    slugName: doc.slugName,
    icon: doc.icon,
    keys,
    ...agents,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/** Stores a new key (hashed, plus its masked form); returns the row and the key in clear. */
async function insertKey(
  rows: LocationQueries,
  accountId: string,
  locationId: string,
  nowMs: number,
): Promise<{ row: KeyRow; rawKey: string }> {
  const rawKey = generateLocationKey();
  const row: KeyRow = {
    id: randomUUID(),
    location_id: locationId,
    masked_key: maskLocationKey(rawKey),
    created_at: nowMs,
    updated_at: null,
  };
  await rows.insertKey(accountId, row, hashApiKey(rawKey));
  return { row, rawKey };
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    private_locations: LocationDoc;
  }
}
