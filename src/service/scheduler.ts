import type { Kysely } from 'kysely';
import type { Logger } from '../shared/logger.js';
import { type CheckDoc, runLocationsOf } from './checks.js';
import type { JobQueue, RunRequest } from './queue.js';
import { nextRunAfter } from './schedule.js';
import { nextLocation } from './sessions.js';
import type { Database } from './store/database.js';

/** Scheduler options. `tickMs`: how often due checks are looked up (default 1000). */
export type SchedulerOptions = { tickMs?: number; log: Logger };

/**
 * Enqueues a run of every activated check when it is due, then moves its
 * `next_run_at` to the next slot (see schedule.ts). `runParallel` fans out to
 * every location; otherwise locations take turns (round-robin). A run missed
 * while the service was down is run once, not once per missed slot.
 */
export class Scheduler {
  readonly #db: Kysely<Database>;
  readonly #queue: JobQueue;
  readonly #log: Logger;
  readonly #tickMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(db: Kysely<Database>, queue: JobQueue, options: SchedulerOptions) {
    this.#db = db;
    this.#queue = queue;
    this.#log = options.log;
    this.#tickMs = options.tickMs ?? 1000;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.tick(Date.now())
        .then(() => undefined)
        .catch((err: unknown) => this.#log.error({ err }, 'scheduler tick failed'))
        .finally(() => {
          this.#running = undefined;
        });
    }, this.#tickMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /**
   * One pass: enqueue due checks and expire stale jobs.
   * @returns how many runs were enqueued.
   */
  async tick(nowMs: number): Promise<number> {
    const due = await this.#db
      .selectFrom('checks')
      .select(['id', 'account_id', 'doc'])
      .where('activated', '=', 1)
      .where('next_run_at', '<=', nowMs)
      .limit(1000)
      .execute();
    const accounts = new Set<string>();
    let enqueued = 0;
    if (due.length > 0) {
      await this.#db.transaction().execute(async (tx) => {
        for (const row of due) {
          const check = JSON.parse(row.doc) as CheckDoc;
          const locations = check.runParallel
            ? runLocationsOf(check)
            : [await nextLocation(tx, row.account_id, check)];
          const runs: RunRequest[] = locations.map((location) => ({
            check,
            location,
            runSource: 'SCHEDULER',
            checkSessionId: null,
          }));
          await this.#queue.enqueue(tx, row.account_id, runs, nowMs);
          await tx
            .updateTable('checks')
            .set({ next_run_at: nextRunAfter(nowMs, check.id, check.frequency, check.frequencyOffset) })
            .where('id', '=', row.id)
            .execute();
          accounts.add(row.account_id);
          enqueued += runs.length;
        }
      });
    }
    for (const account of accounts) this.#queue.notify(account);
    for (const sessionId of await this.#queue.expireStale(nowMs)) this.#queue.emitSession(sessionId);
    if (enqueued > 0) this.#log.debug({ enqueued }, 'scheduled runs enqueued');
    return enqueued;
  }
}
