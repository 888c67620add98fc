import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';
import { storeError } from './database.js';

/**
 * Bytes of the scratch file the start-up probe writes and syncs in the data directory: 4 MiB, what the
 * store's write-ahead log grows to before SQLite folds it into the store (1000 pages of 4 KiB, SQLite's
 * `wal_autocheckpoint`).
 */
export const PROBE_BYTES = 4 * 1024 * 1024;

/** Size of each write of the scratch file, bytes. */
const PROBE_CHUNK_BYTES = 256 * 1024;

/**
 * Checks that the store at `file` can really be written, before the service listens
 * (docs/errors.md, `OUTPOST_ERR_STARTUP`): a write transaction that touches the write-ahead log (`-wal`)
 * and its memory-mapped index (`-shm`), a checkpoint of the log into the store, and a scratch file of
 * {@link PROBE_BYTES} written, fsync'd and removed in the data directory. A store opened on a disk that
 * is full, or nearly, otherwise opens fine (nothing to migrate) and every write after fails; a page of the
 * `-shm` index the disk cannot back can even end the process with SIGBUS. Nothing is left behind: the
 * transaction rewrites a row as it was, the scratch file is removed. A no-op for ":memory:".
 *
 * @throws OutpostError `OUTPOST_ERR_STARTUP` naming the folder, that it is full (or read-only), and the
 *   first real error (`SQLITE_FULL`, `SQLITE_IOERR_*`, `ENOSPC`, `EDQUOT`…).
 */
export async function probeStoreWrites(db: Kysely<Database>, file: string): Promise<void> {
  if (file === ':memory:') return;
  const dir = dirname(file);
  try {
    await db.transaction().execute(async (tx) => {
      // A row rewritten as it is: a real write (SQLite does not skip an update to the same value).
      await sql`update kysely_migration set name = name where name = (select max(name) from kysely_migration)`.execute(
        tx,
      );
    });
    await sql`pragma wal_checkpoint(PASSIVE)`.execute(db);
  } catch (err) {
    throw storeError(dir, file, err, err);
  }
  const scratch = join(dir, `.outpost-space-probe-${process.pid}`);
  try {
    const fd = openSync(scratch, 'w', 0o600);
    try {
      const chunk = Buffer.alloc(PROBE_CHUNK_BYTES, 0x5a);
      for (let written = 0; written < PROBE_BYTES; written += chunk.length) writeSync(fd, chunk);
      // A disk that allocates late (ext4, XFS) reports it is full only here.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw storeError(dir, file, err, err);
  } finally {
    rmSync(scratch, { force: true });
  }
}
