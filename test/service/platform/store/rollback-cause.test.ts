/**
 * A statement that fails inside a transaction with SQLITE_FULL makes SQLite end the transaction itself;
 * Kysely's ROLLBACK that follows then fails with `cannot rollback - no transaction is active`. The error the
 * caller sees (and the service logs and answers) must be the first one, SQLITE_FULL, not the rollback's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openSqliteDatabase } from '../../../../src/service/platform/store/database.js';

let base: string;
let db: Kysely<Database>;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'outpost-rollback-'));
  db = await openSqliteDatabase(join(base, 'outpost.db'));
  await sql`create table filler (x text)`.execute(db);
});
afterAll(async () => {
  await db.destroy();
  rmSync(base, { recursive: true, force: true });
});

/** Caps the store at its current size plus `extraPages` pages: the next big write fails with SQLITE_FULL. */
async function capStore(extraPages: number): Promise<void> {
  const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(db);
  const pages = rows[0]?.page_count ?? 0;
  await sql.raw(`pragma max_page_count = ${pages + extraPages}`).execute(db);
}

async function failure(run: () => Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await run();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('the write did not fail');
}

describe('the first error of a failed transaction is the one reported', () => {
  it('SQLITE_FULL inside a transaction, not "cannot rollback - no transaction is active"', async () => {
    await capStore(4);
    const err = await failure(() =>
      db.transaction().execute(async (tx) => {
        await sql`insert into filler values (${'a'.repeat(1000)})`.execute(tx);
        // Far more than four pages: SQLite answers SQLITE_FULL and may end the transaction by itself.
        await sql`insert into filler values (${'b'.repeat(200_000)})`.execute(tx);
      }),
    );
    expect(err.code).toBe('SQLITE_FULL');
    expect(err.message).toMatch(/database or disk is full/);
    expect(err.message).not.toMatch(/cannot rollback/);
    // Nothing of the transaction was kept, and the store works on: the transaction did end.
    const { rows } = await sql<{ n: number }>`select count(*) as n from filler`.execute(db);
    expect(rows[0]?.n).toBe(0);
  });

  it('the same in a nested transaction (savepoint), and an ordinary error still rolls back', async () => {
    await capStore(4);
    const err = await failure(() =>
      db.transaction().execute(async (tx) => {
        await sql`insert into filler values ('kept?')`.execute(tx);
        await sql`savepoint inner_sp`.execute(tx);
        await sql`insert into filler values (${'c'.repeat(200_000)})`.execute(tx);
      }),
    );
    expect(err.code).toBe('SQLITE_FULL');
    await sql.raw('pragma max_page_count = 4294967294').execute(db);
    // A failure SQLite does not end the transaction for (a thrown error) is still rolled back.
    const thrown = await failure(() =>
      db.transaction().execute(async (tx) => {
        await sql`insert into filler values ('rolled back')`.execute(tx);
        throw new Error('a rule said no');
      }),
    );
    expect(thrown.message).toBe('a rule said no');
    const { rows } = await sql<{ n: number }>`select count(*) as n from filler`.execute(db);
    expect(rows[0]?.n).toBe(0);
  });
});
