/**
 * The data directory and the store's files are the service user's only (docs/configuration.md, "The data
 * directory"): the folder 0700, `outpost.db`, `-wal` and `-shm` 0600, whatever the umask (022 here, which
 * would give 0755 and 0644), and a folder or files an older version made wider are narrowed at start.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServiceConfig } from '../../../../src/service/config.js';
import { startService } from '../../../../src/service/main.js';
import { openSqliteDatabase } from '../../../../src/service/platform/store/database.js';
import { SQLite } from '../../../../src/service/platform/store/sqlite.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

let base: string;
let umask: number;
beforeAll(() => {
  // The usual umask, under which files are made 0644 and folders 0755 unless the service says otherwise.
  umask = process.umask(0o022);
  base = mkdtempSync(join(tmpdir(), 'outpost-modes-'));
});
afterAll(() => {
  process.umask(umask);
  rmSync(base, { recursive: true, force: true });
});

/** Writes a row, so the -wal and -shm files exist (WAL mode). */
async function write(db: Awaited<ReturnType<typeof openSqliteDatabase>>): Promise<void> {
  await sql`create table if not exists t (x integer)`.execute(db);
  await sql`insert into t values (1)`.execute(db);
}

describe('modes of the data directory and the store', () => {
  it('a fresh data directory (parents too) is 0700, the store files 0600', async () => {
    const dir = join(base, 'fresh', 'data');
    const file = join(dir, 'outpost.db');
    const db = await openSqliteDatabase(file);
    try {
      await write(db);
      expect(modeOf(join(base, 'fresh')).toString(8)).toBe('700');
      expect(modeOf(dir).toString(8)).toBe('700');
      for (const path of [file, `${file}-wal`, `${file}-shm`])
        expect(modeOf(path).toString(8), path).toBe('600');
    } finally {
      await db.destroy();
    }
  });

  it('narrows a folder and files made earlier with wider modes', async () => {
    const dir = join(base, 'older');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const file = join(dir, 'outpost.db');
    // As an older version left them: the store, its -wal and -shm (a connection still open), all 0644.
    const older = new SQLite(file);
    older.pragma('journal_mode = WAL');
    older.exec('create table old (x integer); insert into old values (1);');
    for (const path of [file, `${file}-wal`, `${file}-shm`]) chmodSync(path, 0o644);
    const other = join(dir, 'unrelated.txt');
    writeFileSync(other, 'x', { mode: 0o644 });
    try {
      const db = await openSqliteDatabase(file);
      try {
        await write(db);
        expect(modeOf(dir).toString(8)).toBe('700');
        for (const path of [file, `${file}-wal`, `${file}-shm`])
          expect(modeOf(path).toString(8), path).toBe('600');
        // Only the store's own files are touched.
        expect(modeOf(other).toString(8)).toBe('644');
      } finally {
        await db.destroy();
      }
    } finally {
      older.close();
    }
  });

  it('a service started on a fresh data directory keeps it and its files to its user', async () => {
    const dataDir = join(base, 'service');
    const running = await startService(
      parseServiceConfig({ PORT: '0', HOST: '127.0.0.1', OUTPOST_DATA_DIR: dataDir }),
      { log: pino({ level: 'silent' }) },
    );
    try {
      const res = await fetch(`${running.url}/v1/checks`, {
        headers: { authorization: `Bearer ${running.createdApiKey}` },
      });
      expect(res.status).toBe(200);
      expect(modeOf(dataDir).toString(8)).toBe('700');
      const file = join(dataDir, 'outpost.db');
      for (const path of [file, `${file}-wal`, `${file}-shm`, join(dataDir, 'encryption.key')]) {
        expect(modeOf(path).toString(8), path).toBe('600');
      }
    } finally {
      await running.stop();
    }
  });
});
