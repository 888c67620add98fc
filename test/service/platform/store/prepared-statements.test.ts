import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAccount } from '../../../../src/service/platform/http/auth.js';
import type { Database } from '../../../../src/service/platform/store/database.js';
import { openPostgresDatabase } from '../../../../src/service/platform/store/postgres.js';
import { createDatabase, dropDatabase } from '../../../helpers/postgres.js';
import { TEMPLATE_DATABASE } from '../../../helpers/postgres-setup.js';
import { TEST_DATABASE, testStore } from '../../../helpers/service.js';

// On PostgreSQL each connection prepares the statements it runs once (named prepared statements) and reuses
// their plans: planning was most of the server's work per statement, ten times the execution on the
// partitioned results table. OUTPOST_DATABASE_PREPARED_STATEMENTS=off keeps every statement unnamed, for a
// proxy that cannot carry them. Every other test of the postgres project runs on prepared statements too.

/** The prepared statements of the connection `db` runs on (PostgreSQL's view is per connection). */
async function preparedOf(db: Kysely<Database>): Promise<{ name: string; statement: string }[]> {
  const { rows } = await sql<{ name: string; statement: string }>`
    SELECT name, statement FROM pg_prepared_statements WHERE NOT from_sql`.execute(db);
  return rows;
}

describe.runIf(TEST_DATABASE === 'postgres')('prepared statements on PostgreSQL', () => {
  let store: Awaited<ReturnType<typeof testStore>>;
  beforeAll(async () => {
    store = await testStore();
  });
  afterAll(async () => {
    await store?.drop();
  });

  it('prepares a statement with parameters once per connection and runs it again from its plan', async () => {
    const { db } = store;
    const accountId = await createAccount(db, 'prepared');
    const lookup = (on: Kysely<Database>) =>
      on.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirstOrThrow();
    await db.connection().execute(async (conn) => {
      for (let i = 0; i < 8; i++) expect(await lookup(conn)).toEqual({ name: 'prepared' });
      const [mine] = (await preparedOf(conn)).filter((p) => p.statement.includes('from "accounts"'));
      expect(mine?.name).toMatch(/^outpost_\d+$/);
      const { rows } = await sql<{ plans: number }>`
        SELECT generic_plans + custom_plans AS plans FROM pg_prepared_statements WHERE name = ${mine!.name}`.execute(
        conn,
      );
      // Eight runs of one statement: parsed once, every run planned or taken from the plan cache.
      expect(Number(rows[0]!.plans)).toBe(8);
    });
  });

  it('a prepared select * whose table changed answers with the new columns, and its connection is replaced', async () => {
    const { db } = store;
    await sql`CREATE TABLE prepared_probe (a integer)`.execute(db);
    await sql`INSERT INTO prepared_probe VALUES (1), (2)`.execute(db);
    const probe = (on: Kysely<Database>) =>
      sql<Record<string, number>>`SELECT * FROM prepared_probe WHERE a > ${0} ORDER BY a`.execute(on);
    let pid = 0;
    await db.connection().execute(async (conn) => {
      pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(conn)).rows[0]!.pid;
      expect((await probe(conn)).rows).toEqual([{ a: 1 }, { a: 2 }]);
      // Another replica migrates: the prepared statement's result type is no longer the table's.
      await sql`ALTER TABLE prepared_probe ADD COLUMN b integer DEFAULT 7`.execute(db);
      expect((await probe(conn)).rows).toEqual([
        { a: 1, b: 7 },
        { a: 2, b: 7 },
      ]);
    });
    // Released closed, not back to the pool: its other prepared statements may be stale too.
    const deadline = Date.now() + 5000;
    let alive = true;
    while (alive && Date.now() < deadline) {
      const { rows } = await sql`SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}`.execute(db);
      alive = rows.length > 0;
      if (alive) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(alive).toBe(false);

    // Inside a transaction the failed statement stands (the transaction is aborted, as by any error)…
    await db.connection().execute(async (conn) => {
      expect((await probe(conn)).rows[0]).toEqual({ a: 1, b: 7 });
      await sql`ALTER TABLE prepared_probe DROP COLUMN b`.execute(db);
      await expect(
        conn.transaction().execute(async (tx) => {
          await probe(tx);
        }),
      ).rejects.toMatchObject({ code: '0A000' });
    });
    // …and the next transaction, on a fresh connection, succeeds.
    const rows = await db.transaction().execute(async (tx) => (await probe(tx)).rows);
    expect(rows).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('OUTPOST_DATABASE_PREPARED_STATEMENTS=off runs every statement unnamed', async () => {
    const admin = inject('postgresAdminUrl')!;
    const url = await createDatabase(admin, TEMPLATE_DATABASE);
    const db = await openPostgresDatabase(url, { poolSize: 1, preparedStatements: false });
    try {
      const accountId = await createAccount(db, 'unnamed');
      for (let i = 0; i < 3; i++) {
        await db.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirstOrThrow();
      }
      expect(await preparedOf(db)).toEqual([]);
    } finally {
      await db.destroy();
      await dropDatabase(admin, url);
    }
  });
});
