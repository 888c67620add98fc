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
import { AGENT_CONNECTED_WINDOW_MS } from '../agents/agents.js';
import { type KeyRow, type LocationRow, LocationQueries } from './store.js';

/** Keys a location may hold at once: two, so a key can be rotated without downtime (docs/architecture.md). */
export const MAX_LOCATION_KEYS = 2;

/** A new private-location key: `pl_` + 32 hex characters (128 random bits). */
export function generateLocationKey(): string {
  return `pl_${randomBytes(16).toString('hex')}`;
}

/** The shown form of a key: `pl_…` and its last four characters. */
export function maskLocationKey(key: string): string {
  return `pl_…${key.slice(-4)}`;
}

/**
 * The stored document of a private location. `embedded`: the location of the agent `outpost up` starts with
 * the service (slug {@link EMBEDDED_LOCATION_SLUG}); its key is replaced at every start.
 */
export type LocationDoc = { name: string; slugName: string; icon: string; embedded?: boolean };

/** The slug of the location `outpost up`'s own agent serves: the machine the service runs on. */
export const EMBEDDED_LOCATION_SLUG = 'local';

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

/**
 * Where a new check runs when its body names neither `locations` nor `privateLocations`: the embedded
 * location (`local`, the machine `outpost up` runs on) when the account has it, else nothing (the check
 * then gets the hosted API's default data-center location, DEFAULT_LOCATION in checks/checks.ts).
 */
export async function defaultRunLocation(
  db: Kysely<Database>,
  accountId: string,
): Promise<{ privateLocations?: string[] }> {
  const embedded = (await new LocationQueries(db).list(accountId)).some(
    (row) => row.slug === EMBEDDED_LOCATION_SLUG && readDoc(row.doc).embedded === true,
  );
  return embedded ? { privateLocations: [EMBEDDED_LOCATION_SLUG] } : {};
}

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

  /**
   * Makes sure the account has the location of `outpost up`'s own agent ({@link EMBEDDED_LOCATION_SLUG}, named
   * `name`: the host name) and gives it a fresh key, its earlier keys revoked, so no agent key outlives the
   * process that holds it in memory. An existing location with that slug becomes the embedded one (its name
   * is kept).
   * @returns the new key in clear (`pl_…`), for the embedded agent only.
   */
  async ensureEmbedded(accountId: string, name: string, nowMs: number): Promise<string> {
    return this.#db.transaction().execute(async (tx) => {
      const rows = new LocationQueries(tx);
      let row = (await rows.list(accountId)).find((r) => r.slug === EMBEDDED_LOCATION_SLUG);
      if (!row) {
        const doc: LocationDoc = { name, slugName: EMBEDDED_LOCATION_SLUG, icon: 'desktop', embedded: true };
        row = {
          id: randomUUID(),
          slug: doc.slugName,
          doc: writeDoc(doc),
          created_at: nowMs,
          updated_at: null,
        };
        await rows.insert(accountId, row);
      } else if (readDoc(row.doc).embedded !== true) {
        await rows.update(accountId, row.id, writeDoc({ ...readDoc(row.doc), embedded: true }), nowMs);
      }
      for (const key of await rows.keys(row.id)) await rows.deleteKey(accountId, row.id, key.id);
      return (await insertKey(rows, accountId, row.id, nowMs)).rawKey;
    });
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

  /**
   * The location as answered: masked keys; `agentCount` the agents connected at `nowMs` (seen within
   * AGENT_CONNECTED_WINDOW_MS, agents.ts, and not stopped since).
   */
  async #present(row: LocationRow, nowMs: number): Promise<PrivateLocation> {
    const keys = await this.#rows.keys(row.id);
    const seen = await new AgentQueries(this.#db).lastSeenAtLocation(row.id);
    return present(
      row,
      keys.map((k) => presentKey(k)),
      {
        agentCount: seen.filter((a) => !a.stopped && a.lastSeenAt >= nowMs - AGENT_CONNECTED_WINDOW_MS)
          .length,
        lastSeen: seen.length > 0 ? iso(Math.max(...seen.map((a) => a.lastSeenAt))) : null,
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
    embedded: doc.embedded === true,
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
