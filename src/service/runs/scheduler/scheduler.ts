import type { Kysely } from 'kysely';
import type { Logger } from '../../../common/logger.js';
import { type CheckDoc, runLocationsOf } from '../../checks/index.js';
import { MaintenanceLookup } from '../../maintenance-windows/index.js';
import { EXPIRY_BATCH, type JobQueue } from '../queue/queue.js';
import type { RunRequest } from '../queue/jobs.js';
import { nextRunAfter } from './schedule.js';
import { ScheduleQueries } from './store.js';
import { nextLocation, turnOf } from './locations.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';

/**
 * Scheduler options. `tickMs`: how often due checks are looked up when none were due at the last look
 * (default 250: a run starts at most that late, plus the time to queue it). `batchSize`: due checks taken and
 * queued per transaction (default 250; a full batch is followed by the next at once).
 */
export type SchedulerOptions = { tickMs?: number; batchSize?: number; log: Logger };

/** Due checks taken per transaction by default. */
const DEFAULT_BATCH_SIZE = 250;
/** Batches one tick takes at most; due checks left over go to the next tick (the expiry pass runs between). */
const MAX_BATCHES_PER_TICK = 40;
/** Expiry passes (EXPIRY_BATCH jobs of each kind) one tick runs at most. */
const MAX_EXPIRY_PASSES_PER_TICK = 10;
/** Stale jobs are expired at most this often, ms: the scheduler ticks more often than that is worth. */
const EXPIRY_EVERY_MS = 1000;

/** A due check as the batch read it. */
type DueRow = Awaited<ReturnType<ScheduleQueries['dueChecks']>>[number];

/**
 * Enqueues a run of every activated check when it is due, then moves its
 * `next_run_at` to the next slot (see schedule.ts). `runParallel` fans out to
 * every location; otherwise locations take turns (round-robin). A run missed
 * while the service was down is run once, not once per missed slot; a slot while a maintenance window pauses
 * the check is skipped. Its SQL is in ScheduleQueries (store.ts).
 *
 * Due checks are taken in batches, each in one transaction: the checks (locked on PostgreSQL, so replicas
 * ticking at once take different ones), their slots moved on, their jobs inserted, one commit for the batch.
 * A batch that fails is rolled back and its checks are queued one per transaction, so one check that cannot be
 * queued holds back no other (it is logged with its id and its slot is moved on).
 */
export class Scheduler {
  readonly #db: Kysely<Database>;
  readonly #queue: JobQueue;
  readonly #log: Logger;
  readonly #tickMs: number;
  readonly #batchSize: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #expiredAtMs = Number.NEGATIVE_INFINITY;

  constructor(db: Kysely<Database>, queue: JobQueue, options: SchedulerOptions) {
    this.#db = db;
    this.#queue = queue;
    this.#log = options.log;
    this.#tickMs = options.tickMs ?? 250;
    this.#batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
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
   * One pass: enqueue due checks, batch after batch until a batch comes back short, and expire stale jobs
   * (at most once a second).
   * @returns how many runs were enqueued.
   */
  async tick(nowMs: number): Promise<number> {
    const accounts = new Set<string>();
    let enqueued = 0;
    // Each batch queues its runs at its own time (`enqueued_at`): `nowMs` plus the time the tick has taken.
    const startedAt = Date.now();
    for (let batches = 0; batches < MAX_BATCHES_PER_TICK; batches++) {
      const batch = await this.#batch(nowMs + (Date.now() - startedAt), accounts);
      enqueued += batch.enqueued;
      if (batch.taken < this.#batchSize) break;
      // Requests waiting on the event loop go first (on SQLite a batch runs as one chain of microtasks).
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const account of accounts) this.#queue.notify(account);
    if (nowMs - this.#expiredAtMs >= EXPIRY_EVERY_MS || nowMs < this.#expiredAtMs) {
      this.#expiredAtMs = nowMs;
      // Pass after pass while they come back full: with no agent serving a location, its runs expire as fast as
      // they are queued (100,000 one-minute checks: 1,667 a second), more than one pass takes.
      for (let pass = 0; pass < MAX_EXPIRY_PASSES_PER_TICK; pass++) {
        const outcome = await this.#queue.expireStale(nowMs);
        if (Math.max(outcome.expired.length, outcome.requeued.length + outcome.failed.length) < EXPIRY_BATCH)
          break;
      }
    }
    if (enqueued > 0) this.#log.debug({ enqueued }, 'scheduled runs enqueued');
    return enqueued;
  }

  /**
   * Takes up to `batchSize` due checks and queues their runs in one transaction; after a failure, queues
   * the checks it took one by one (#enqueueOne).
   * @returns how many checks were taken and how many runs were enqueued.
   * @throws what reading the due checks throws (the tick is then logged as failed).
   */
  async #batch(nowMs: number, accounts: Set<string>): Promise<{ taken: number; enqueued: number }> {
    let taken: DueRow[] | undefined;
    try {
      return await this.#db.transaction().execute(async (tx) => {
        const store = new ScheduleQueries(tx);
        const rows = await store.dueChecks(nowMs, this.#batchSize);
        taken = rows;
        const maintenance = new MaintenanceLookup(tx, nowMs);
        const runsOf = new Map<string, RunRequest[]>();
        for (const row of rows) {
          const check = readDoc(row.doc);
          const next = nextRunAfter(nowMs, check.id, check.frequency, check.frequencyOffset);
          // A maintenance window that pauses the check skips this slot only (docs/api.md, "Maintenance
          // windows"); manual and triggered runs do not come through here and still run.
          if ((await maintenance.pausing(row.account_id, check)).length > 0) {
            await store.claimSlot(row.id, row.next_run_at as number, next);
            continue;
          }
          const locations = check.runParallel ? runLocationsOf(check) : [turnOf(check, row.location_cursor)];
          const cursor = check.runParallel ? undefined : row.location_cursor + 1;
          if (!(await store.claimSlot(row.id, row.next_run_at as number, next, cursor))) continue;
          const runs = runsOf.get(row.account_id) ?? [];
          for (const location of locations) {
            runs.push({ check, location, runSource: 'SCHEDULER', checkSessionId: null });
          }
          runsOf.set(row.account_id, runs);
        }
        let enqueued = 0;
        for (const [accountId, runs] of runsOf) {
          await this.#queue.enqueue(tx, accountId, runs, nowMs);
          enqueued += runs.length;
        }
        for (const accountId of runsOf.keys()) accounts.add(accountId);
        return { taken: rows.length, enqueued };
      });
    } catch (err) {
      if (taken === undefined) throw err;
      this.#log.warn(
        { err, checks: taken.length },
        'a batch of scheduled runs could not be enqueued; enqueuing its checks one by one',
      );
      let enqueued = 0;
      for (const row of taken) enqueued += await this.#enqueueOne(row, nowMs, accounts);
      return { taken: taken.length, enqueued };
    }
  }

  /**
   * Queues the runs of one due check in a transaction of its own (after its batch failed): one whose enqueue
   * throws is logged with its id and rolled back alone, and its `next_run_at` still moves to the next slot so
   * it does not fail again every tick.
   * @returns how many runs were enqueued.
   */
  async #enqueueOne(row: DueRow, nowMs: number, accounts: Set<string>): Promise<number> {
    let check: CheckDoc | undefined;
    try {
      check = readDoc(row.doc);
      const parsed = check;
      const dueAtMs = row.next_run_at as number;
      const enqueued = await this.#db.transaction().execute(async (tx) => {
        // First take the slot: another replica that took it first leaves nothing to do here.
        const next = nextRunAfter(nowMs, parsed.id, parsed.frequency, parsed.frequencyOffset);
        if ((await new MaintenanceLookup(tx, nowMs).pausing(row.account_id, parsed)).length > 0) {
          await new ScheduleQueries(tx).claimSlot(row.id, dueAtMs, next);
          return 0;
        }
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
      if (enqueued > 0) accounts.add(row.account_id);
      return enqueued;
    } catch (err) {
      this.#log.error({ err, checkId: row.id }, 'scheduled run of a check could not be enqueued');
      await this.#advance(this.#db, row.id, check, nowMs).catch((advanceErr: unknown) =>
        this.#log.error({ err: advanceErr, checkId: row.id }, 'next run of a check could not be set'),
      );
      return 0;
    }
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
