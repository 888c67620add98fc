import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PACKAGE_ROOT } from '../../../common/paths.js';
import type { SQLiteDatabase } from './sqlite.js';

/** How often the checkpointer thread copies the `-wal` file's committed pages into the store file, ms. */
export const WAL_CHECKPOINT_INTERVAL_MS = 200;

/** SQLite's own default: the writer checkpoints in the commit that takes the WAL past 1,000 pages. */
const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/**
 * Moves the WAL checkpoints of an embedded store off the service's event loop.
 *
 * better-sqlite3 is synchronous, and SQLite checkpoints in the commit that takes the `-wal` file past 1,000 pages:
 * that commit copies the pages into the database file and syncs it while the event loop waits. Under a stream of
 * small write transactions (results, pings, late heartbeats) that was half the time of every commit. Here the
 * writer's auto-checkpoint is turned off and a thread of its own (wal-checkpoint-worker.ts) checkpoints every
 * WAL_CHECKPOINT_INTERVAL_MS with PASSIVE, which never waits for or blocks the writer; SQLite starts the `-wal` file
 * over at the next commit after a checkpoint has copied it all. The `-wal` file then holds at most about what the
 * service writes in one interval, plus what long readers keep. Should the thread fail or end, the writer's
 * auto-checkpoint is turned back on, so the `-wal` file never grows without end.
 *
 * @returns a stop function (called when the store closes), which resolves once the thread has closed its connection
 *   and ended (at most {@link WAL_CHECKPOINTER_STOP_MS} later: then it is terminated), so the store's files are as the
 *   last connection leaves them when a close resolves (SQLite removes the `-wal` and `-shm` files then); or null when
 *   there is no built worker script (running from the TypeScript sources): the writer then keeps SQLite's
 *   auto-checkpoint.
 */
export function startWalCheckpointer(
  writer: SQLiteDatabase,
  file: string,
  intervalMs: number = WAL_CHECKPOINT_INTERVAL_MS,
): (() => Promise<void>) | null {
  const script = join(PACKAGE_ROOT, 'dist/src/service/platform/store/wal-checkpoint-worker.js');
  if (!existsSync(script)) return null;
  let stopped = false;
  const restoreAutoCheckpoint = () => {
    if (stopped || !writer.open) return;
    stopped = true;
    writer.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES}`);
  };
  writer.pragma('wal_autocheckpoint = 0');
  const worker = new Worker(script, { workerData: { file, intervalMs } });
  worker.unref();
  worker.on('error', restoreAutoCheckpoint);
  const exited = new Promise<void>((resolve) => {
    worker.on('exit', () => {
      restoreAutoCheckpoint();
      resolve();
    });
  });
  return () => {
    if (!stopped) {
      stopped = true;
      // Kept alive until it ended: a caller awaiting the stop must not see the process exit under it.
      worker.ref();
      worker.postMessage('stop');
      // A thread that does not end by itself (a checkpoint stuck on the disk) is ended.
      setTimeout(() => void worker.terminate(), WAL_CHECKPOINTER_STOP_MS).unref();
    }
    return exited;
  };
}

/** How long a stop waits for the checkpointer thread to close its connection before it terminates it, ms. */
export const WAL_CHECKPOINTER_STOP_MS = 5_000;
