import type { Kysely } from 'kysely';
import type { Logger } from '../../../common/logger.js';
import { type CheckDoc, runLocationsOf } from '../../checks/index.js';
import { MaintenanceLookup } from '../../maintenance-windows/index.js';
import type { JobQueue } from '../queue/queue.js';
import type { RunRequest } from '../queue/jobs.js';
import { nextRunAfter } from './schedule.js';
import { ScheduleQueries } from './store.js';
import { nextLocation } from './locations.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';

/** Scheduler options. `tickMs`: how often due checks are looked up (default 1000). */
export type SchedulerOptions = { tickMs?: number; log: Logger };

/**
 * Enqueues a run of every activated check when it is due, then moves its
 * `next_run_at` to the next slot (see schedule.ts). `runParallel` fans out to
 * every location; otherwise locations take turns (round-robin). A run missed
 * while the service was down is run once, not once per missed slot; a slot while a maintenance window pauses
 * the check is skipped. Its SQL is in ScheduleQueries
 * (store.ts).
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
   * One pass: enqueue due checks and expire stale jobs. Each check is enqueued in its own
   * transaction: one whose enqueue throws is logged with its id and rolled back alone, the
   * others go on, and its `next_run_at` still moves to the next slot so it does not fail
   * again every tick.
   * @returns how many runs were enqueued.
   */
  async tick(nowMs: number): Promise<number> {
    const due = await new ScheduleQueries(this.#db).dueChecks(nowMs, 1000);
    const accounts = new Set<string>();
    const maintenance = new MaintenanceLookup(this.#db, nowMs);
    let enqueued = 0;
    for (const row of due) {
      let check: CheckDoc | undefined;
      try {
        check = readDoc(row.doc);
        const parsed = check;
        // A maintenance window that pauses the check skips this slot only (docs/api.md, "Maintenance
        // windows"); manual and triggered runs do not come through here and still run.
        if ((await maintenance.pausing(row.account_id, parsed)).length > 0) {
          await this.#advance(this.#db, row.id, parsed, nowMs);
          continue;
        }
        const dueAtMs = row.next_run_at as number;
        enqueued += await this.#db.transaction().execute(async (tx) => {
          // First take the slot: another replica that took it first leaves nothing to do here.
          const next = nextRunAfter(nowMs, parsed.id, parsed.frequency, parsed.frequencyOffset);
          if (!(await new ScheduleQueries(tx).claimSlot(row.id, dueAtMs, next))) return 0;
          const locations = parsed.runParallel
            ? runLocationsOf(parsed)
            : [await nextLocation(tx, row.account_id, parsed)];
          const runs: RunRequest[] = locations.map((location) => ({
            check: parsed,
            location,
            runSource: 'SCHEDULER',
            checkSessionId: null,
          }));
          await this.#queue.enqueue(tx, row.account_id, runs, nowMs);
          return runs.length;
        });
        accounts.add(row.account_id);
      } catch (err) {
        this.#log.error({ err, checkId: row.id }, 'scheduled run of a check could not be enqueued');
        await this.#advance(this.#db, row.id, check, nowMs).catch((advanceErr: unknown) =>
          this.#log.error({ err: advanceErr, checkId: row.id }, 'next run of a check could not be set'),
        );
      }
    }
    for (const account of accounts) this.#queue.notify(account);
    await this.#queue.expireStale(nowMs);
    if (enqueued > 0) this.#log.debug({ enqueued }, 'scheduled runs enqueued');
    return enqueued;
  }

  /**
   * Moves a check's `next_run_at` to its next slot after `nowMs`; for a check whose document
   * could not be read, one minute on.
   */
  async #advance(tx: Kysely<Database>, checkId: string, check: CheckDoc | undefined, nowMs: number) {
    const next = check
      ? nextRunAfter(nowMs, check.id, check.frequency, check.frequencyOffset)
      : nowMs + 60_000;
    await new ScheduleQueries(tx).setNextRun(checkId, next);
  }
}
