import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { OutpostError } from '../../../common/errors.js';
import { migrateToLatest } from './migrations/index.js';
import type { Database } from './schema.js';

/** PostgreSQL type ids (pg_type.oid) whose text the service reads as JavaScript numbers. */
const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * The parsers of this pool: `bigint` (int8) and `numeric` as numbers, not strings. The store's bigint
 * columns hold epoch milliseconds and counters, all far below 2^53; SQLite hands them over as numbers
 * too, so both stores answer the same shapes. Every other type keeps pg's own parser.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (text: string) => Number(text);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** The pool under each store {@link openPostgresDatabase} opened, for clients that take a pg pool. */
const pools = new WeakMap<object, pg.Pool>();

/** The pg pool of a store opened by {@link openPostgresDatabase}; undefined for any other store (SQLite). */
export function postgresPoolOf(db: object): pg.Pool | undefined {
  return pools.get(db);
}

/** Options of {@link openPostgresDatabase}. */
export type PostgresStoreOptions = {
  /** Connections of the query pool (each replica its own pool). Default 10. */
  poolSize?: number;
  /** How long a query may wait for a free connection of the pool, ms. Default 10000. */
  connectTimeoutMs?: number;
  /** Migrate at open (under Kysely's advisory lock, so replicas starting together migrate once). Default true. */
  migrate?: boolean;
};

/**
 * `postgres://user:password@host/db` with the password replaced by `***`, for logs and errors: the one in
 * the URL's user part and libpq's `password` parameter in its query string (`?password=…`), both spellings.
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const name of [...parsed.searchParams.keys()]) {
      if (name.toLowerCase() === 'password') parsed.searchParams.set(name, '***');
    }
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

/**
 * Opens the PostgreSQL store at `url` (`postgres://user:password@host:port/database`, libpq's
 * parameters such as `sslmode` in the query string) through Kysely's PostgresDialect on a pg pool,
 * and migrates it to the latest migration. Kysely's migrator holds an advisory lock
 * (`pg_advisory_lock`) while it applies the migrations in one transaction, so replicas starting
 * together migrate once and none reads a half-migrated schema.
 *
 * @throws OutpostError `OUTPOST_ERR_STARTUP` naming the database (password redacted) when it cannot
 *   be reached or migrated, with the driver's error as the cause.
 */
export async function openPostgresDatabase(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<Kysely<Database>> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    types,
  });
  // A connection that dies (a restart of the server, pg_terminate_backend) must not crash the process:
  // pg emits 'error' on the pool for an idle client and on the client itself for one in use, and an
  // 'error' nobody listens to throws. The query in flight fails on its own; the pool drops the client
  // and the next query opens a new connection.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  try {
    if (options.migrate ?? true) await migrateToLatest(db as Kysely<unknown>);
    else await pool.query('select 1');
  } catch (err) {
    await db.destroy().catch(() => {});
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new OutpostError(
      'OUTPOST_ERR_STARTUP',
      `the PostgreSQL store ${redactDatabaseUrl(url)} cannot be opened: ${reason}`,
      { cause: err },
    );
  }
  return db;
}
