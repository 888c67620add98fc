import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The better-sqlite3 constructor for the running Node.
 *
 * better-sqlite3 13 (Node-API 10, prebuilt binaries shipped inside the npm package) needs
 * Node ≥ 22; 12.x, built from source against each Node's own headers, aborts Node ≥ 24.19
 * when the garbage collector finalises a statement (`Assertion failed: (env) != nullptr` in
 * `RemoveEnvironmentCleanupHook`, from `Statement::~Statement`), which kysely's
 * prepare-per-query use triggers within seconds of start-up. So Node ≥ 22 (the images run 24)
 * loads 13, and the end-of-life Node 20 loads 12 under the alias `better-sqlite3-node20`.
 * Every module opening a store goes through this one, the tests included.
 */
export const SQLite: typeof BetterSqlite3 = createRequire(import.meta.url)(
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20',
);

/** A better-sqlite3 connection (the same class in both versions). */
export type SQLiteDatabase = BetterSqlite3.Database;
