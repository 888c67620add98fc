import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
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
  /**
   * Each connection prepares the statements it runs once and reuses their plans (named prepared statements,
   * see {@link preparingPool}). Default true; false behind a proxy that cannot carry them (PgBouncer before
   * 1.21, or without `max_prepared_statements`, in transaction pooling mode).
   */
  preparedStatements?: boolean;
};

/** Most statement texts given a name, service-wide; later new texts run unnamed (parsed and planned each time). */
const MAX_NAMED_STATEMENTS = 1_000;

/** Most statements one connection prepares; its later new texts run unnamed. */
const MAX_PREPARED_PER_CONNECTION = 300;

/** The name of each statement text that has one: `outpost_<n>`, the same on every connection. */
const statementNames = new Map<string, string>();

/** SQLSTATE of "cached plan must not change result type": a prepared `select *` whose table changed. */
const FEATURE_NOT_SUPPORTED = '0A000';

/** A statement that opens a transaction, and one that ends it (not `rollback to savepoint`). */
const BEGINS = /^\s*(begin|start\s+transaction)\b/i;
const ENDS = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i;

/**
 * A pool for Kysely whose connections run each statement that has parameters as a named prepared statement:
 * PostgreSQL parses and plans it on the connection's first use, and later runs reuse the plan (after five
 * runs its plan cache keeps a generic plan, unless custom plans are much cheaper). Planning is most of the
 * server's work for the service's short statements: on the partitioned `check_results` it costs 0.3–0.7 ms
 * a statement, ten times the statement's execution. Statements without parameters (`begin`, DDL, the
 * migrations' scripts of several statements) keep the simple protocol.
 *
 * A prepared statement whose table changed under it (a newer replica added a column that a `select *`
 * returns) fails with SQLSTATE 0A000 "cached plan must not change result type". Outside a transaction it is
 * run again unnamed, so the caller sees nothing; inside one the error stands (the transaction is aborted,
 * as any failed statement aborts it). Either way the connection is closed at release instead of returned,
 * so the next one prepares its statements against the new tables.
 *
 * Bounded: at most {@link MAX_NAMED_STATEMENTS} texts get a name and {@link MAX_PREPARED_PER_CONNECTION}
 * are prepared on one connection; the rest run unnamed.
 */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const prepared = new WeakMap<pg.PoolClient, Set<string>>();
  const nameOf = (client: pg.PoolClient, text: string): string | undefined => {
    let name = statementNames.get(text);
    if (name === undefined) {
      if (statementNames.size >= MAX_NAMED_STATEMENTS) return undefined;
      name = `outpost_${statementNames.size + 1}`;
      statementNames.set(text, name);
    }
    let names = prepared.get(client);
    if (names === undefined) {
      names = new Set();
      prepared.set(client, names);
    }
    if (!names.has(name)) {
      if (names.size >= MAX_PREPARED_PER_CONNECTION) return undefined;
      names.add(name);
    }
    return name;
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let stale = false;
      let inTransaction = false;
      const run = async (text: string, values: unknown[]) => {
        const name = stale || values.length === 0 ? undefined : nameOf(client, text);
        if (name === undefined) {
          if (BEGINS.test(text)) inTransaction = true;
          else if (ENDS.test(text)) inTransaction = false;
          return client.query(text, values);
        }
        try {
          return await client.query({ name, text, values });
        } catch (err) {
          if ((err as { code?: string }).code !== FEATURE_NOT_SUPPORTED) throw err;
          stale = true;
          if (inTransaction) throw err;
          return client.query(text, values);
        }
      };
      return {
        query: ((text: unknown, values?: readonly unknown[]) =>
          typeof text === 'string'
            ? run(text, [...(values ?? [])])
            : client.query(text as pg.Submittable)) as unknown as PostgresPoolClient['query'],
        release: () => client.release(stale),
      };
    },
    end: () => pool.end(),
  };
}

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
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: (options.preparedStatements ?? true) ? preparingPool(pool) : pool }),
  });
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
