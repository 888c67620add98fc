import {
  type Expression,
  type Kysely,
  PostgresAdapter,
  type QueryExecutorProvider,
  type RawBuilder,
  sql,
} from 'kysely';

/**
 * True when `db` (a store handle or a transaction on one) runs on PostgreSQL (Kysely's
 * PostgresDialect), false on the embedded SQLite store. The store files ask it where the two
 * dialects differ: row locks (`FOR UPDATE SKIP LOCKED`, which SQLite's single writer needs not),
 * string and JSON functions, case-insensitive matching.
 */
export function isPostgres(db: QueryExecutorProvider): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Runs `work` so that no other process runs work under the same `lockId` at the same time: on PostgreSQL
 * in a transaction holding the advisory lock `lockId` (`pg_advisory_xact_lock`, released at its end), so
 * replicas sharing the store take turns; on SQLite as it is (one process owns the store). For start-up
 * chores such as making the first account.
 * @returns what `work` resolves with; its rejection rolls the PostgreSQL transaction back.
 */
export async function underStoreLock<DB, T>(
  db: Kysely<DB>,
  lockId: number,
  work: (db: Kysely<DB>) => Promise<T>,
): Promise<T> {
  if (!isPostgres(db)) return work(db);
  return db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(lockId)})`.execute(tx);
    return work(tx);
  });
}

/**
 * The key spaces of {@link lockKeyForTransaction}: one number per kind of thing locked, so a round and
 * something else of the same id never share a lock. (PostgreSQL's two-key advisory locks never meet the
 * one-key locks of {@link underStoreLock}.)
 */
export const KEYED_LOCKS = {
  /** A check's alerting (by check id): its FINAL results are judged one at a time (alerting/recorder.ts). */
  alertedCheck: 1,
} as const;

/**
 * Locks `key` of the key space `space` until the transaction `tx` ends: on PostgreSQL a transaction-scoped
 * advisory lock on (`space`, `hashtext(key)`), so the transactions locking one key take turns and each
 * statement after the lock sees what the one before committed (READ COMMITTED takes a snapshot per statement).
 * Two keys of one hash share a lock, which only makes them take turns too. A no-op on SQLite, whose single
 * writer already runs one transaction at a time. Call it inside a transaction only.
 */
export async function lockKeyForTransaction(
  tx: QueryExecutorProvider,
  space: (typeof KEYED_LOCKS)[keyof typeof KEYED_LOCKS],
  key: string,
): Promise<void> {
  if (!isPostgres(tx)) return;
  await sql`select pg_advisory_xact_lock(${sql.lit(space)}, hashtext(${key}))`.execute(tx);
}

/** Resolves when the store answers a trivial query (`select 1`); rejects with the driver's error otherwise. */
export async function pingStore(db: Kysely<unknown>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Per store (its adapter, shared by its transactions): whether PostgreSQL has ICU's root collation. */
const icuRoot = new WeakMap<object, Promise<boolean>>();

/**
 * `text` lowered as JavaScript's `toLowerCase` lowers it, every letter whatever the store's locale, for
 * case-insensitive matches that are the same on both stores: on SQLite `outpost_lower(text)` (a function the
 * service registers on its connections: database.ts; SQLite's `lower()` lowers ASCII only); on PostgreSQL
 * `lower(text COLLATE "und-x-icu")` when the server has ICU's root collation (asked once per store), else
 * `lower(text)`, which lowers by the database's LC_CTYPE (every letter in a UTF-8 locale, ASCII only in C).
 */
export async function lowered(db: Kysely<unknown>, text: Expression<string>): Promise<RawBuilder<string>> {
  if (!isPostgres(db)) return sql<string>`outpost_lower(${text})`;
  const adapter = db.getExecutor().adapter;
  let probe = icuRoot.get(adapter);
  if (!probe) {
    probe = sql<{
      found: boolean;
    }>`select exists (select 1 from pg_collation where collname = 'und-x-icu') as found`
      .execute(db)
      .then((r) => r.rows[0]?.found === true);
    icuRoot.set(adapter, probe);
  }
  return (await probe) ? sql<string>`lower(${text} collate "und-x-icu")` : sql<string>`lower(${text})`;
}
