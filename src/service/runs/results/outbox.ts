import type { Kysely, Transaction } from 'kysely';
import { CoalescedPasses } from '../../../common/coalesced-passes.js';
import type { Logger } from '../../../common/logger.js';
import type { CheckResult } from '../../../protocol/index.js';
import type { ResultHook } from '../../context.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { type HookedResult, type OutboxRow, OutboxQueries } from './outbox-store.js';

/**
 * A result hook under the name its outbox rows carry (the name must stay the same across restarts), and which
 * results it takes: an outbox row is written for a result only when `takes(result)` is true (default: every
 * result). A hook that needs only failures says so here, and a passing result then costs no row, no read of the
 * result back and no delete.
 */
export type NamedResultHook = { name: string; run: ResultHook; takes?: (result: CheckResult) => boolean };

/** What a result's transaction needs of a result hook: its name and which results it takes. */
export type ResultHookFilter = Pick<NamedResultHook, 'name' | 'takes'>;

/** Options of the ResultOutbox worker. Times in ms. */
export type ResultOutboxOptions = {
  log: Logger;
  /** Back-off after the first failure; doubles per attempt up to `maxDelayMs`. Default 1 000. */
  baseDelayMs?: number;
  /** Longest back-off. Default 300 000 (5 min). */
  maxDelayMs?: number;
  /** Attempts per row; after the last failure the row is dropped and logged. Default 10. */
  maxAttempts?: number;
  /** How often due rows are looked for without a wake-up. Default 1 000. */
  pollMs?: number;
  /** Rows taken per pass. Default 50. */
  batchSize?: number;
  /** Clock, epoch ms; tests inject one. Default Date.now. */
  now?: () => number;
};

/**
 * Writes one outbox row for a stored result per hook that takes it, inside the result's transaction: a
 * crash after the commit still runs every such hook, a rollback runs none (issue 9, 2.13).
 */
export async function enqueueResultHooks(
  tx: Kysely<Database> | Transaction<Database>,
  hooks: readonly ResultHookFilter[],
  result: CheckResult,
  row: { accountId: string; resultId: string; nowMs: number },
): Promise<void> {
  const names: string[] = [];
  for (const hook of hooks) if (!hook.takes || hook.takes(result)) names.push(hook.name);
  if (names.length === 0) return;
  await new OutboxQueries(tx).insert(names, row);
}

/**
 * The worker that runs result hooks (error groups, printing in `outpost up`, alerting later)
 * from `result_outbox` rows, outside the agent's result post. Each row is one hook for one
 * result: done → deleted; failed → retried with exponential back-off (`baseDelayMs` · 2^(n−1),
 * at most `maxDelayMs`), attempts counted and the failure logged with the hook and result id;
 * dropped after `maxAttempts`. A failing row never blocks the others: rows are taken by
 * `next_attempt_at`, and a failed one moves behind them. Rows whose result is gone (retention)
 * or whose hook is no longer registered are dropped. Its SQL is in OutboxQueries (outbox-store.ts).
 */
export class ResultOutbox {
  readonly #store: OutboxQueries;
  readonly #hooks: Map<string, ResultHook>;
  readonly #filters: readonly ResultHookFilter[];
  readonly #log: Logger;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxAttempts: number;
  readonly #pollMs: number;
  readonly #batchSize: number;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  readonly #passes: CoalescedPasses;
  #started = false;
  #stopped = false;

  constructor(db: Kysely<Database>, hooks: readonly NamedResultHook[], options: ResultOutboxOptions) {
    this.#store = new OutboxQueries(db);
    this.#hooks = new Map(hooks.map((h) => [h.name, h.run]));
    this.#filters = [...hooks];
    this.#log = options.log;
    this.#baseDelayMs = options.baseDelayMs ?? 1000;
    this.#maxDelayMs = options.maxDelayMs ?? 300_000;
    this.#maxAttempts = options.maxAttempts ?? 10;
    this.#pollMs = options.pollMs ?? 1000;
    this.#batchSize = options.batchSize ?? 50;
    this.#now = options.now ?? Date.now;
    this.#passes = new CoalescedPasses(
      () => this.runDue(),
      (err) => this.#log.error({ err }, 'result outbox pass failed'),
    );
  }

  /** The hooks' names and filters, in order: what the queue writes a row per. */
  get hookFilters(): readonly ResultHookFilter[] {
    return this.#filters;
  }

  /** Starts polling for due rows (timer unref'ed). */
  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#started = true;
    this.#timer = setInterval(() => this.kick(), this.#pollMs);
    this.#timer.unref();
    this.kick();
  }

  /**
   * Runs due rows soon (not awaited by the caller); a pass in progress runs again after.
   * Nothing before `start` or after `stop`.
   */
  kick(): void {
    if (this.#started) this.#passes.kick();
  }

  /** Stops the worker and waits for a pass in progress. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#passes.stop();
  }

  /**
   * One pass over due rows (up to `batchSize`, oldest due first).
   * @returns how many hooks ran successfully.
   */
  async runDue(): Promise<number> {
    const nowMs = this.#now();
    const rows = await this.#store.due(nowMs, this.#batchSize);
    let done = 0;
    // Rows whose hook ran (or never will) are deleted together at the end of the pass: one
    // statement instead of one commit each. A crash before it runs those hooks once more, which
    // every hook tolerates (an error group records the run's time: a second run changes nothing).
    const finished: number[] = [];
    try {
      // The pass's results in one statement, not one per row (the long ones are read on their own in #run).
      const results = await this.#store.results([
        ...new Set(rows.filter((row) => this.#hooks.has(row.hook)).map((row) => row.result_id)),
      ]);
      for (const row of rows) {
        if (this.#stopped) break;
        done += await this.#run(row, results, finished);
      }
    } finally {
      await this.#store.deleteMany(finished);
    }
    return done;
  }

  /**
   * Runs one row's hook on its result from `results` (the pass's, read together; a long document is read here);
   * the row's id joins `finished` when done or dropped. @returns 1 when the hook ran.
   */
  async #run(
    row: OutboxRow,
    results: ReadonlyMap<string, HookedResult>,
    finished: number[],
  ): Promise<number> {
    const hook = this.#hooks.get(row.hook);
    let result = hook ? results.get(row.result_id) : undefined;
    if (result?.doc === null) result = await this.#store.result(row.result_id);
    if (!hook || !result?.doc) {
      finished.push(row.id);
      return 0;
    }
    try {
      await hook({
        accountId: row.account_id,
        jobId: result.job_id,
        checkId: result.check_id,
        result: readDoc(result.doc),
      });
      finished.push(row.id);
      return 1;
    } catch (err) {
      const attempts = row.attempts + 1;
      const context = { err, hook: row.hook, resultId: row.result_id, attempts };
      if (attempts >= this.#maxAttempts) {
        this.#log.error(context, 'result hook failed for the last time; dropped');
        finished.push(row.id);
        return 0;
      }
      const delayMs = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempts - 1));
      this.#log.warn({ ...context, retryInMs: delayMs }, 'result hook failed; retrying');
      await this.#store.retryLater(
        row.id,
        attempts,
        this.#now() + delayMs,
        err instanceof Error ? err.message.slice(0, 1000) : String(err).slice(0, 1000),
      );
      return 0;
    }
  }
}
