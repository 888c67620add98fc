import { Kysely, SqliteDialect } from 'kysely';
import { migrateToLatest } from '../../src/service/platform/store/migrations/index.js';
import type { Database } from '../../src/service/platform/store/schema.js';
import { SQLite, type SQLiteDatabase } from '../../src/service/platform/store/sqlite.js';

/** A statement a store ran: its SQL and bound parameters. */
export type CapturedQuery = { sql: string; parameters: readonly unknown[] };

/**
 * A migrated in-memory SQLite store whose Kysely records every statement it runs (`captured`, in order), for
 * tests that read SQLite's own `EXPLAIN QUERY PLAN` of the SQL the service really runs (`planOf`: one line
 * per step). Kysely's own SqliteDialect, as tests that build SQL by hand use.
 */
export async function planningStore(): Promise<{
  sqlite: SQLiteDatabase;
  db: Kysely<Database>;
  captured: CapturedQuery[];
  planOf(query: CapturedQuery): string[];
}> {
  const sqlite = new SQLite(':memory:');
  const captured: CapturedQuery[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: sqlite }),
    log(event) {
      if (event.level === 'query')
        captured.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  await migrateToLatest(db as Kysely<unknown>);
  const planOf = (query: CapturedQuery) =>
    (
      sqlite.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(...(query.parameters as unknown[])) as {
        detail: string;
      }[]
    ).map((row) => row.detail);
  return { sqlite, db, captured, planOf };
}
