import { type Kysely, PostgresAdapter, type QueryExecutorProvider, sql } from 'kysely';

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

/** Resolves when the store answers a trivial query (`select 1`); rejects with the driver's error otherwise. */
export async function pingStore(db: Kysely<unknown>): Promise<void> {
  await sql`select 1`.execute(db);
}
