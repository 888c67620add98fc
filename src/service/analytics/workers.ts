import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PACKAGE_ROOT } from '../../common/paths.js';

type Pending = { resolve: (rows: unknown[]) => void; reject: (err: Error) => void };

/**
 * A small pool of reader threads over the store file, so one analytics query
 * can evaluate disjoint parts of its time window on several cores at once
 * (better-sqlite3 is synchronous: one thread evaluates one statement).
 * Threads start on first use, never keep the process alive, and end with `close()`.
 */
export class AnalyticsWorkers {
  readonly size: number;
  readonly #file: string;
  readonly #script: string;
  #workers: { worker: Worker; pending: Map<number, Pending> }[] = [];
  #next = 0;
  #id = 0;

  /**
   * @param file - the SQLite store file (not ":memory:": threads need their own connection).
   * @param size - reader threads; default the number of cores, at most 4.
   */
  constructor(file: string, size = Math.min(4, availableParallelism())) {
    this.#file = file;
    this.size = Math.max(1, size);
    this.#script = join(PACKAGE_ROOT, 'dist/src/service/analytics/worker.js');
  }

  /**
   * A pool for `file`, or null when parallel reads cannot work: an in-memory store,
   * one core, or no built worker script (running from TypeScript sources).
   */
  static for(file: string | undefined): AnalyticsWorkers | null {
    if (!file || file === ':memory:') return null;
    const pool = new AnalyticsWorkers(file);
    return pool.size > 1 && existsSync(pool.#script) ? pool : null;
  }

  /** Runs one compiled statement on the next thread; resolves its rows. */
  all(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    if (this.#workers.length === 0) this.#start();
    const slot = this.#workers[this.#next++ % this.#workers.length]!;
    const id = ++this.#id;
    return new Promise((resolve, reject) => {
      // A thread keeps the process alive only while it owes an answer.
      if (slot.pending.size === 0) slot.worker.ref();
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, sql, parameters });
    });
  }

  #start(): void {
    for (let i = 0; i < this.size; i++) {
      const worker = new Worker(this.#script, { workerData: { file: this.#file } });
      const pending = new Map<number, Pending>();
      worker.on('message', (m: { id: number; rows?: unknown[]; error?: string }) => {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (pending.size === 0) worker.unref();
        if (m.error !== undefined) p?.reject(new Error(m.error));
        else p?.resolve(m.rows ?? []);
      });
      worker.on('error', (err) => {
        for (const p of pending.values()) p.reject(err);
        pending.clear();
        worker.unref();
      });
      worker.unref();
      this.#workers.push({ worker, pending });
    }
  }

  /** Ends the threads. Idempotent. */
  async close(): Promise<void> {
    const workers = this.#workers;
    this.#workers = [];
    await Promise.all(workers.map(({ worker }) => worker.terminate()));
  }
}
