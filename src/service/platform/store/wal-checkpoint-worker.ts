import { parentPort, workerData } from 'node:worker_threads';
import { SQLite } from './sqlite.js';

/**
 * The WAL checkpointer thread of an embedded store (wal-checkpointer.ts): its own connection to the store file
 * runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`, copying committed pages from the `-wal` file into the
 * database file, so the service's writer never does it inside a commit. PASSIVE never waits for a lock and never
 * blocks the writer or a reader: what a reader still uses is copied at a later turn. Ends (closing its connection) on
 * `'stop'`.
 */
const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new SQLite(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
// This connection writes nothing: its own auto-checkpoint never runs. It must not take the WAL out of WAL mode.
db.pragma('wal_autocheckpoint = 0');

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // SQLITE_BUSY (another checkpoint runs: a backup, the writer's close): the next turn tries again.
  }
}, intervalMs);

parentPort!.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
