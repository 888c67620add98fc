import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Logger } from '../../../common/logger.js';
import type { Database } from './database.js';
import { SESSION_IDLE_MS } from '../web/sessions.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** How long stored data is kept, in days (OUTPOST_*_RETENTION_DAYS, see config.ts). */
export type RetentionPolicy = {
  /** Results and ended check sessions. Default 90. */
  resultDays: number;
  /** Artifact files of results. Default 30. */
  artifactDays: number;
  /** Agents' error reports, and agents not seen for this long. Default 30. */
  agentDays: number;
  /**
   * Hours a passing run's logs, bodies and most headers are kept (OUTPOST_PASSING_DETAIL_HOURS); failing and
   * degraded runs keep theirs for `resultDays`. Default 24.
   */
  passingDetailHours?: number;
  /** Entries of the audit log (OUTPOST_AUDIT_RETENTION_DAYS, docs/teams.md, "Audit log"). Default 365. */
  auditDays?: number;
};

/** Defaults of RetentionPolicy (issue 9, 2.3; OUTPOST_PASSING_DETAIL_HOURS). */
export const DEFAULT_RETENTION: Required<RetentionPolicy> = {
  resultDays: 90,
  artifactDays: 30,
  agentDays: 30,
  passingDetailHours: 24,
  auditDays: 365,
};

/** Options of the RetentionWorker. Times in ms. */
export type RetentionOptions = RetentionPolicy & {
  log: Logger;
  /** Time between passes. Default 600 000 (10 min). */
  intervalMs?: number;
  /** Rows deleted per statement; the event loop is given back between batches. Default 500. */
  batchSize?: number;
};

/**
 * Rows each kind of data lost in one pass, by the name of the task that deleted them (`results`,
 * `artifacts`, `sessions`, `alerts`, `notifications`, `agentEvents`, `agents`). Tasks that count nothing
 * (rollups, web sessions, unconfirmed subscribers) have no entry.
 */
export type RetentionOutcome = Record<string, number>;

/**
 * What a retention task is given for one pass: the store, the pass's clock and cut-offs (epoch ms; rows
 * older are deleted), and the worker's batching, so every task deletes in short statements and gives the
 * event loop back between them.
 */
export type RetentionPass = {
  db: Kysely<Database>;
  nowMs: number;
  /** Results, sessions, alerts and finished notifications older than this go (`resultDays`). */
  resultCutoffMs: number;
  /** Artifact files of results older than this go (the smaller of `artifactDays` and `resultDays`). */
  artifactCutoffMs: number;
  /** Agent error reports and agents not seen since this go (`agentDays`). */
  agentCutoffMs: number;
  /** Passing runs' results older than this lose their bulky parts (`passingDetailHours`). */
  passingDetailCutoffMs: number;
  /** Audit-log entries older than this go (`auditDays`). */
  auditCutoffMs: number;
  /** `passingDetailHours`, for what a compacted result says about itself. */
  passingDetailHours: number;
  /**
   * Repeats `batch` (given the batch size, returning the rows it handled) until it handles fewer than a full
   * batch or the worker stops, yielding to the event loop between batches; returns the total.
   */
  batches(batch: (limit: number) => Promise<number>): Promise<number>;
  /** Deletes the rows of `table` whose `id` is among `rows` (one batch); returns how many. */
  deleteIds(table: IdTable, rows: readonly { id: string | number }[]): Promise<number>;
  /** Whether the worker was stopped: a long task ends at its next statement. */
  stopped(): boolean;
};

/** Tables whose rows retention deletes by `id`. */
export type IdTable =
  | 'check_results'
  | 'check_sessions'
  | 'agent_events'
  | 'check_alerts'
  | 'alert_notifications'
  | 'expired_runs';

/**
 * One kind of old data a module deletes (docs/architecture.md, "Modules"). Tasks run in the order of the
 * modules and, within one, of its list: a task may rely on an earlier one (artifact files go before their
 * results).
 */
export type RetentionTask = {
  /** Its key in the {@link RetentionOutcome}; omit for a task whose rows are not counted. */
  counted?: string;
  /** One pass; returns the rows deleted (ignored when not `counted`). */
  run(pass: RetentionPass): Promise<number>;
};

/**
 * Runs the modules' retention tasks (docs/architecture.md, "Retention") every `intervalMs`: results
 * (`created_at`), ended check sessions (`started_at`), artifact files on disk, alerts and delivered or
 * failed alert notifications with their attempts, the hourly check-status rollups, agent error reports
 * and agents not seen for `agentDays`, ended web-app sessions and unconfirmed status-page subscribers.
 * Each task works in batches of `batchSize` rows by index, each batch its own short statement, yielding
 * to the event loop between batches, so a pass never holds it long.
 */
export class RetentionWorker {
  readonly #db: Kysely<Database>;
  readonly #tasks: readonly RetentionTask[];
  readonly #options: Required<RetentionOptions>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  /**
   * @param tasks the modules' tasks (`retentionTasks` in modules.ts), run in this order.
   * @throws RangeError when a number of days or `passingDetailHours` is not an integer of at least 1.
   */
  constructor(db: Kysely<Database>, tasks: readonly RetentionTask[], options: RetentionOptions) {
    const passingDetailHours = options.passingDetailHours ?? DEFAULT_RETENTION.passingDetailHours;
    const auditDays = options.auditDays ?? DEFAULT_RETENTION.auditDays;
    const numbers = { ...options, passingDetailHours, auditDays };
    for (const key of [
      'resultDays',
      'artifactDays',
      'agentDays',
      'passingDetailHours',
      'auditDays',
    ] as const) {
      if (!Number.isInteger(numbers[key]) || numbers[key] < 1) {
        throw new RangeError(`${key} must be an integer of at least 1, got ${numbers[key]}`);
      }
    }
    this.#db = db;
    this.#tasks = [...tasks, ...PLATFORM_TASKS];
    this.#options = { intervalMs: 600_000, batchSize: 500, ...options, passingDetailHours, auditDays };
  }

  /** Runs a pass now and then every `intervalMs` (timer unref'ed). */
  start(): void {
    if (this.#timer || this.#stopped) return;
    const pass = () => {
      if (this.#running) return;
      this.#running = this.runOnce(Date.now())
        .then((outcome) => {
          if (Object.values(outcome).some((n) => n > 0)) this.#options.log.info(outcome, 'retention pass');
        })
        .catch((err: unknown) => this.#options.log.error({ err }, 'retention pass failed'))
        .finally(() => {
          this.#running = undefined;
        });
    };
    this.#timer = setInterval(pass, this.#options.intervalMs);
    this.#timer.unref();
    pass();
  }

  /** Stops the timer and waits for a pass in progress (it ends after its current batch). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One full pass at `nowMs` (epoch ms): every task once, in order. */
  async runOnce(nowMs: number): Promise<RetentionOutcome> {
    const { resultDays, artifactDays, agentDays, passingDetailHours, auditDays } = this.#options;
    const pass: RetentionPass = {
      db: this.#db,
      nowMs,
      resultCutoffMs: nowMs - resultDays * DAY_MS,
      artifactCutoffMs: nowMs - Math.min(artifactDays, resultDays) * DAY_MS,
      agentCutoffMs: nowMs - agentDays * DAY_MS,
      passingDetailCutoffMs: nowMs - passingDetailHours * HOUR_MS,
      auditCutoffMs: nowMs - auditDays * DAY_MS,
      passingDetailHours,
      batches: (batch) => this.#batches(batch),
      deleteIds: (table, rows) => this.#deleteIds(table, rows),
      stopped: () => this.#stopped,
    };
    const outcome: RetentionOutcome = {};
    for (const task of this.#tasks) {
      const deleted = await task.run(pass);
      if (task.counted !== undefined) outcome[task.counted] = (outcome[task.counted] ?? 0) + deleted;
    }
    return outcome;
  }

  async #deleteIds(table: IdTable, rows: readonly { id: string | number }[]): Promise<number> {
    if (rows.length === 0) return 0;
    // Ids are text in check_results and check_sessions, integers in agent_events: the store
    // compares them as they are; the cast only unites the tables' id types for kysely.
    const ids = rows.map((r) => r.id) as string[];
    await this.#db.deleteFrom(table).where('id', 'in', ids).execute();
    return rows.length;
  }

  async #batches(batch: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await batch(this.#options.batchSize);
      total += n;
      if (n < this.#options.batchSize || this.#stopped) return total;
      await yieldToLoop();
    }
  }
}

/**
 * The platform's own old rows: `web_sessions` that ended (past `expires_at`, unused for SESSION_IDLE_MS,
 * or whose API key or person was deleted). Web-app sessions end on their own at their next use; these are the ones
 * never used again. Not counted in the outcome.
 */
const PLATFORM_TASKS: readonly RetentionTask[] = [
  {
    // Counters of the shared rate limiters (PostgreSQL) whose window ended over an hour ago.
    run: (pass) =>
      pass.batches(async (limit) => {
        const rows = await pass.db
          .selectFrom('rate_limits')
          .select('key')
          .where('expire', '<', pass.nowMs - 3_600_000)
          .limit(limit)
          .execute();
        if (rows.length === 0) return 0;
        await pass.db
          .deleteFrom('rate_limits')
          .where(
            'key',
            'in',
            rows.map((r) => r.key),
          )
          .execute();
        return rows.length;
      }),
  },
  {
    run: (pass) => {
      const idleCutoff = pass.nowMs - SESSION_IDLE_MS;
      return pass.batches(async (limit) => {
        const rows = await pass.db
          .selectFrom('web_sessions')
          .select('id_hash')
          .where((eb) =>
            eb.or([
              eb('expires_at', '<=', pass.nowMs),
              eb('last_seen_at', '<=', idleCutoff),
              // A person's session is judged by its person, a key's by its key (a null id "not in" an empty
              // table would be true).
              eb.and([
                eb('api_key_id', 'is not', null),
                eb('api_key_id', 'not in', eb.selectFrom('api_keys').select('id')),
              ]),
              eb.and([
                eb('user_id', 'is not', null),
                eb('user_id', 'not in', eb.selectFrom('users').select('id')),
              ]),
            ]),
          )
          .limit(limit)
          .execute();
        if (rows.length === 0) return 0;
        await pass.db
          .deleteFrom('web_sessions')
          .where(
            'id_hash',
            'in',
            rows.map((r) => r.id_hash),
          )
          .execute();
        return rows.length;
      });
    },
  },
];
