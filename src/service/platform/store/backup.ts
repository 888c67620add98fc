import { closeSync, existsSync, fchmodSync, lstatSync, openSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { STORE_FILE_MODE } from './database.js';
import { KEY_FILE_NAME } from './secret-box.js';
import { SQLite } from './sqlite.js';

/** Name of the SQLite store file inside a data directory (as `outpost service` names it). */
const STORE_FILE_NAME = 'outpost.db';

/**
 * A backup that was refused or failed, with the one line a person reads. A file this command made is
 * removed before this is thrown; a file that was there before is never touched.
 */
export class BackupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BackupError';
  }
}

/** What {@link backupSqliteStore} wrote. */
export type BackupReport = {
  /** The backup file, absolute. */
  file: string;
  /** Its size in bytes. */
  bytes: number;
  /** The store it was taken from. */
  source: string;
  /** The data directory's key file when there is one (it must be kept with the backup), else null. */
  keyFile: string | null;
};

/**
 * What to say when the store is PostgreSQL (`OUTPOST_DATABASE_URL`): `outpost backup` copies the SQLite
 * store only; PostgreSQL is backed up with its own tools. Lines without a trailing newline.
 */
export function postgresBackupAdvice(): string {
  return [
    'outpost backup: OUTPOST_DATABASE_URL is set, and PostgreSQL is backed up with its own tools, not this command:',
    '  pg_dump --format=custom --file=outpost-$(date +%Y%m%d-%H%M%S).dump --dbname="$OUTPOST_DATABASE_URL"',
    'and restored into an empty database with',
    '  pg_restore --no-owner --dbname="$OUTPOST_DATABASE_URL" outpost-….dump',
    'Keep OUTPOST_ENCRYPTION_KEY with the dump: without it the secrets in it cannot be opened (docs/backup.md).',
  ].join('\n');
}

/** Removes `file` and the journal files SQLite may have left beside it; errors are ignored. */
function removeStoreFile(file: string): void {
  for (const path of [file, `${file}-journal`, `${file}-wal`, `${file}-shm`]) rmSync(path, { force: true });
}

/**
 * Takes a consistent copy of the SQLite store of `dataDir` into the new file `target` with SQLite's online
 * backup (better-sqlite3's `db.backup`): it works while `outpost service` runs and writes (its WAL is read
 * as of one instant; the service's writers are not blocked). The file is made with mode 0600 before
 * anything is written to it (it holds hashed keys, checks, results and sealed secrets), and is a whole
 * store on its own: switched to the rollback journal (no `-wal` or `-shm` files to go with it) and checked
 * with `PRAGMA quick_check`. It is opened by `outpost service` as `outpost.db` of a data directory.
 *
 * The encryption key is not in the backup: the data directory's `encryption.key` (`keyFile` of the report)
 * or `OUTPOST_ENCRYPTION_KEY` must be kept with it, or its secrets are lost.
 *
 * @param dataDir the service's `OUTPOST_DATA_DIR`.
 * @param target the backup file; must not exist, its folder must.
 * @returns the file, its size in bytes, the store and the key file.
 * @throws BackupError when there is no store in `dataDir`, `target` exists (it is never overwritten), its
 *   folder does not exist or is not writable, or the copy fails or does not check out (the partial file is
 *   removed).
 */
export async function backupSqliteStore(dataDir: string, target: string): Promise<BackupReport> {
  const source = join(resolve(dataDir), STORE_FILE_NAME);
  if (!existsSync(source)) {
    throw new BackupError(
      `there is no SQLite store ${source}: set OUTPOST_DATA_DIR to the service's data directory`,
    );
  }
  const file = resolve(target);
  // lstat: a dangling symlink in the way counts as a file too (the exclusive create below would follow it).
  let exists = true;
  try {
    lstatSync(file);
  } catch {
    exists = false;
  }
  if (exists) throw new BackupError(`${file} exists: it is never overwritten; give a new file name`);
  try {
    // Created empty (an empty file is an empty store) with exactly 0600 before SQLite writes to it; SQLite
    // keeps the mode of a file it opens, and gives it to its journal.
    const fd = openSync(file, 'wx', STORE_FILE_MODE);
    try {
      fchmodSync(fd, STORE_FILE_MODE);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new BackupError(`${file} exists: it is never overwritten; give a new file name`);
    throw new BackupError(`${file} cannot be created: ${(err as Error).message}`, { cause: err });
  }
  try {
    const db = new SQLite(source, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      // The first step reports the size; the rest is copied in one step, read as of one instant (a step
      // interrupted by the service's writes would start over, again and again on a busy store).
      await db.backup(file, { progress: () => 0x7fffffff });
    } finally {
      db.close();
    }
    const copy = new SQLite(file, { fileMustExist: true });
    try {
      // One self-contained file: the copy carries the source's WAL mode in its header.
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`the copy in ${file} does not check out: ${String(check)}`);
    } finally {
      copy.close();
    }
  } catch (err) {
    removeStoreFile(file);
    if (err instanceof BackupError) throw err;
    throw new BackupError(`the backup of ${source} failed: ${(err as Error).message.split('\n')[0]}`, {
      cause: err,
    });
  }
  const keyFile = join(resolve(dataDir), KEY_FILE_NAME);
  return {
    file,
    bytes: statSync(file).size,
    source,
    keyFile: existsSync(keyFile) ? keyFile : null,
  };
}
