import { parentPort, workerData } from 'node:worker_threads';
import { SQLite } from '../platform/store/sqlite.js';

/**
 * An analytics reader thread: its own read-only connection to the store file
 * (WAL lets readers run beside the writer), answering `{ id, sql, parameters }`
 * with `{ id, rows }` or `{ id, error }`.
 */
const db = new SQLite((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');

parentPort!.on('message', (message: { id: number; sql: string; parameters: unknown[] }) => {
  try {
    const rows = db.prepare(message.sql).all(...message.parameters);
    parentPort!.postMessage({ id: message.id, rows });
  } catch (err) {
    parentPort!.postMessage({ id: message.id, error: err instanceof Error ? err.message : String(err) });
  }
});
