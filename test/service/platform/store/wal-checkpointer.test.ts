import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../../../src/service/platform/store/database.js';
import { SQLite } from '../../../../src/service/platform/store/sqlite.js';
import { startWalCheckpointer } from '../../../../src/service/platform/store/wal-checkpointer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-wal-'));
  dirs.push(dir);
  return dir;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return condition();
}

describe('WAL checkpoints of the embedded store', () => {
  it('are taken by a thread of their own: the writer never checkpoints, the -wal file is copied and started over', async () => {
    const file = join(tempDir(), 'outpost.db');
    const db = await openSqliteDatabase(file);
    try {
      // The writer's own auto-checkpoint is off (0 pages)...
      const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db);
      expect(rows[0]?.wal_autocheckpoint).toBe(0);
      const before = statSync(file).size;
      await sql`create table wal_probe (id integer primary key, body text)`.execute(db);
      // ...so 40 transactions of 64 KiB each (about 640 pages of 4 KiB) would all stay in the -wal file without
      // the thread; with it they reach the database file.
      const body = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 40; i++) {
        await db
          .transaction()
          .execute((tx) => sql`insert into wal_probe (body) values (${body})`.execute(tx));
      }
      expect(await until(() => statSync(file).size >= before + 40 * 64 * 1024, 5000)).toBe(true);
      // Once everything was copied, the next commit starts the -wal file over (at its start, keeping its size):
      // 40 more transactions reuse it instead of doubling it, as they would with nobody checkpointing.
      await until(() => false, 500);
      const walBytes = statSync(`${file}-wal`).size;
      for (let i = 0; i < 40; i++) {
        await db
          .transaction()
          .execute((tx) => sql`insert into wal_probe (body) values (${body})`.execute(tx));
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(statSync(`${file}-wal`).size).toBeLessThan(walBytes * 1.5);
    } finally {
      await db.destroy();
    }
  });

  it('has closed its connection when the store is destroyed: the -wal and -shm files are gone by then', async () => {
    // A backup, a test or `outpost migrate-store` reads the files right after the store closed: SQLite removes the
    // -wal and -shm files when its last connection closes, and the thread's is one of them.
    for (let round = 0; round < 20; round++) {
      const file = join(tempDir(), 'outpost.db');
      const db = await openSqliteDatabase(file);
      await sql`create table wal_probe (id integer primary key, body text)`.execute(db);
      await sql`insert into wal_probe (body) values (${'x'.repeat(10_000)})`.execute(db);
      expect(existsSync(`${file}-wal`)).toBe(true);
      await db.destroy();
      expect([existsSync(`${file}-wal`), existsSync(`${file}-shm`)]).toEqual([false, false]);
    }
  });

  it('gives the writer its auto-checkpoint back when the thread fails', async () => {
    const file = join(tempDir(), 'outpost.db');
    const writer = new SQLite(file);
    try {
      writer.pragma('journal_mode = WAL');
      // The thread cannot open a store file that is not there: it fails at once.
      const stop = startWalCheckpointer(writer, join(tempDir(), 'missing.db'));
      expect(stop).not.toBeNull();
      expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      expect(await until(() => writer.pragma('wal_autocheckpoint', { simple: true }) === 1000, 5000)).toBe(
        true,
      );
    } finally {
      writer.close();
    }
  });
});
