import { randomBytes } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { storeRateLimiter } from '../platform/store/rate-limits.js';
import type { Logger } from '../../common/logger.js';
import type { CheckResult } from '../../protocol/index.js';
import type { ServiceContext } from '../context.js';
import { cronOf, deadlineAfterMs, type Expectation } from './expectation.js';
import {
  expectationColumns,
  expectationOf,
  HeartbeatQueries,
  type HeartbeatRow,
  type HeartbeatTx,
  type PingRecord,
} from './store.js';

/** Options of HeartbeatMonitor. Times in ms. */
export type HeartbeatMonitorOptions = {
  /** The clock (epoch ms); default Date.now. Tests move it to make deadlines pass. */
  now?: () => number;
  /** The sweeper's safety poll; default 1 000. */
  pollMs?: number;
  /** Whether `start` starts the sweeper (default true). */
  sweep?: boolean;
  /** Pings per token per minute before 429; default 60. */
  pingsPerMinute?: number;
};

/** The live states of a heartbeat (docs/heartbeats.md, "States"). */
export type HeartbeatStatus = 'NEW' | 'UP' | 'STARTED' | 'LATE' | 'FAILING' | 'PAUSED';

/** A ping as the ping routes hand it over; `body` already cut to PING_BODY_LIMIT_BYTES. */
export type PingInput = Omit<PingRecord, 'accountId' | 'checkId' | 'receivedAtMs'> & { token: string };

/** What a ping came to: stored; no such token; or over the rate limit (retry after `retryAfterMs`). */
export type PingAnswer =
  | { outcome: 'OK' }
  | { outcome: 'UNKNOWN' }
  | { outcome: 'RATE_LIMITED'; retryAfterMs: number };

/** Most bytes of a ping body kept (`Ping-Body-Limit`). */
export const PING_BODY_LIMIT_BYTES = 10_000;
/** Where results of heartbeats say they ran. */
export const HEARTBEAT_RUN_LOCATION = 'heartbeat';

/**
 * Pings stored per transaction, and late results per sweep transaction. A transaction on the
 * synchronous SQLite driver holds the event loop from BEGIN to COMMIT, and one ping or late
 * result costs about 0.5 ms with its result and alerting: batches stay well under 50 ms.
 */
const PING_BATCH = 48;
const LATE_RESULT_BATCH = 48;
/**
 * Heartbeats marked late per transaction: a row read and one update of it each, far less than a result, so a
 * burst of missed deadlines is marked at once, before the results of the first ones are stored (10,000
 * deadlines passing within 3 s were all marked within 50 ms of theirs: `npm run bench -- heartbeats`).
 */
const MARK_BATCH = 500;

/** A new ping token: 128 random bits, base64url (22 characters). */
export function newPingToken(): string {
  return randomBytes(16).toString('base64url');
}

type Pending = { input: PingInput; resolve(answer: PingAnswer): void; reject(err: unknown): void };

/**
 * Heartbeat monitors (docs/heartbeats.md): stores pings (batched, a few dozen per transaction),
 * moves deadlines, and sweeps the ones that passed: a timer set to the earliest `due_at`, re-armed
 * when a ping or an edit moves one earlier, and a safety poll every `pollMs`. A ping's state change
 * commits with the result it causes (`ResultIngest.storeServiceResult` in the same transaction). A
 * missed deadline is marked LATE at once with the time it was found (`late_result_at`), and its
 * FAILED result, dated then, is stored in a later batch of the same sweep; a ping or an edit that
 * comes between stores that owed result first, so results keep their order and none is lost to a
 * stop between the two (the next sweep stores it).
 */
export class HeartbeatMonitor {
  readonly #context: ServiceContext;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #pollMs: number;
  readonly #sweepEnabled: boolean;
  readonly #appUrl: string;
  readonly #limiter: RateLimiterAbstract;
  #pending: Pending[] = [];
  #flushing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #armedAt = Number.POSITIVE_INFINITY;
  #sweeping: Promise<void> | null = null;
  #stopped = true;

  constructor(context: ServiceContext, options: HeartbeatMonitorOptions & { appUrl: string; log: Logger }) {
    this.#context = context;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#pollMs = options.pollMs ?? 1000;
    this.#sweepEnabled = options.sweep ?? true;
    this.#appUrl = options.appUrl.replace(/\/+$/, '');
    this.#limiter = storeRateLimiter(context.db, {
      keyPrefix: 'heartbeat-ping',
      points: options.pingsPerMinute ?? 60,
      duration: 60,
    });
  }

  /** The monitor's clock, epoch ms. */
  now(): number {
    return this.#now();
  }

  /** The public URL a heartbeat is pinged at: `{appUrl}/ping/{token}`. */
  pingUrl(token: string): string {
    return `${this.#appUrl}/ping/${token}`;
  }

  /**
   * Start-up: deadlines that passed while the service was down (every `due_at` before now) move
   * to now + the heartbeat's grace, so pings lost to the downtime raise no alert; then the
   * sweeper starts.
   */
  async start(): Promise<void> {
    const now = this.#now();
    const moved = await new HeartbeatQueries(this.#context.db).movePassedDeadlines(now);
    if (moved > 0n) {
      this.#log.info({ heartbeats: Number(moved) }, 'deadlines passed while stopped moved to now + grace');
    }
    // croner's first search of a schedule that never occurs costs tens of ms cold; pay it here,
    // not in the request that validates one.
    cronOf('0 0 31 2 *', 'Europe/Amsterdam').nextRun(new Date(now));
    this.#stopped = false;
    if (this.#sweepEnabled) this.#arm(now);
  }

  /** Stops the sweeper; waits for the sweep and ping batch under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#sweeping;
    await this.#flushing;
  }

  /**
   * Creates the heartbeat of a new HEARTBEAT check in `tx` (the check's insert): NEW, due at the
   * first expected ping + grace (PAUSED and never due when not activated). Call `deadlineMoved`
   * after the commit.
   * @returns the first deadline, epoch ms, or null.
   */
  async create(
    tx: HeartbeatTx,
    input: {
      accountId: string;
      checkId: string;
      token: string;
      expectation: Expectation;
      activated: boolean;
    },
    nowMs: number,
  ): Promise<number | null> {
    const due = input.activated ? deadlineAfterMs(input.expectation, nowMs) : null;
    await new HeartbeatQueries(tx).insert({
      check_id: input.checkId,
      account_id: input.accountId,
      token: input.token,
      status: input.activated ? 'NEW' : 'PAUSED',
      due_at: due,
      last_ping_at: null,
      started_at: null,
      ...expectationColumns(input.expectation),
      created_at: nowMs,
      updated_at: null,
    });
    return due;
  }

  /**
   * Applies an edit of a HEARTBEAT check in `tx`: a deactivated one is PAUSED (never late); a
   * resumed one or a changed expectation restarts from now (due = next expected + grace); a LATE
   * one stays late until a ping. Call `deadlineMoved` after the commit.
   * @returns the new deadline, epoch ms, or null.
   */
  async reconfigure(
    tx: HeartbeatTx,
    input: { accountId: string; checkId: string; expectation: Expectation; activated: boolean },
    nowMs: number,
  ): Promise<number | null> {
    const store = new HeartbeatQueries(tx);
    const row = await store.byCheck(input.accountId, input.checkId);
    if (!row) return null;
    // A result owed for a deadline missed before this edit is stored before the edit (a pause) takes effect.
    await this.#storeLateResults(tx, [row], nowMs);
    const before = expectationOf(row);
    const changed = JSON.stringify(before) !== JSON.stringify(input.expectation);
    let status = row.status as HeartbeatStatus;
    let due = row.due_at === null ? null : Number(row.due_at);
    if (!input.activated) {
      status = 'PAUSED';
      due = null;
    } else if (status === 'PAUSED') {
      status = row.last_ping_at === null ? 'NEW' : 'UP';
      due = deadlineAfterMs(input.expectation, nowMs);
    } else if (changed && due !== null) {
      due = deadlineAfterMs(input.expectation, nowMs);
    }
    await store.reconfigure(input.checkId, {
      status,
      dueAtMs: due,
      expectation: input.expectation,
      nowMs,
    });
    return due;
  }

  /** Tells the sweeper a deadline moved (to `dueAtMs`), so it wakes in time for it. */
  deadlineMoved(dueAtMs: number | null): void {
    if (dueAtMs !== null && this.#sweepEnabled && !this.#stopped) this.#arm(dueAtMs);
  }

  /**
   * Stores a ping: batched with the pings that arrive meanwhile into one transaction.
   * @throws the store's error when the ping could not be stored.
   */
  ping(input: PingInput): Promise<PingAnswer> {
    return new Promise<PingAnswer>((resolve, reject) => {
      this.#pending.push({ input, resolve, reject });
      if (!this.#flushing) this.#flushing = this.#flush();
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        // Let the pings of this turn of the loop join the batch.
        await yieldToLoop();
        const batch = this.#pending.splice(0, PING_BATCH);
        let earliest = Number.POSITIVE_INFINITY;
        try {
          const answers = await this.#context.db.transaction().execute(async (tx) => {
            const out: PingAnswer[] = [];
            for (const p of batch) {
              const { answer, due } = await this.#applyPing(tx, p.input);
              if (due !== null) earliest = Math.min(earliest, due);
              out.push(answer);
            }
            return out;
          });
          for (const [i, p] of batch.entries()) p.resolve(answers[i]!);
        } catch {
          // One bad ping must not fail the others: each alone, in its own transaction.
          for (const p of batch) {
            try {
              const { answer, due } = await this.#context.db
                .transaction()
                .execute((tx) => this.#applyPing(tx, p.input));
              if (due !== null) earliest = Math.min(earliest, due);
              p.resolve(answer);
            } catch (err) {
              p.reject(err);
            }
          }
        }
        if (Number.isFinite(earliest)) this.deadlineMoved(earliest);
      }
    } finally {
      this.#flushing = null;
    }
  }

  /** One ping in `tx`: its row, the heartbeat's new state and deadline, and its result. */
  async #applyPing(tx: HeartbeatTx, input: PingInput): Promise<{ answer: PingAnswer; due: number | null }> {
    const store = new HeartbeatQueries(tx);
    const row = await store.byToken(input.token);
    if (!row) return { answer: { outcome: 'UNKNOWN' }, due: null };
    try {
      await this.#limiter.consume(row.check_id);
    } catch (res) {
      if (res instanceof RateLimiterRes) {
        return { answer: { outcome: 'RATE_LIMITED', retryAfterMs: res.msBeforeNext }, due: null };
      }
      throw res;
    }
    const now = this.#now();
    // A deadline missed before this ping: its FAILED result first, then this ping's (the run it names ended).
    const settled = (await this.#storeLateResults(tx, [row], now)) > 0;
    const { token: _token, ...ping } = input;
    await store.insertPing({ ...ping, accountId: row.account_id, checkId: row.check_id, receivedAtMs: now });
    const status = row.status as HeartbeatStatus;
    const expectation = expectationOf(row);
    const currentDue = row.due_at === null ? null : Number(row.due_at);
    // Paused: the ping is kept, nothing else changes (never late, no result).
    if (status === 'PAUSED') {
      await store.setLastPing(row.check_id, now);
      return { answer: { outcome: 'OK' }, due: null };
    }
    if (input.kind === 'start') {
      // A run that started must finish within the grace, but an early start never makes the
      // heartbeat late sooner than its schedule would.
      const due = Math.max(now + expectation.graceMs, currentDue ?? 0);
      await store.recordStart(
        row.check_id,
        status === 'LATE' || status === 'FAILING' ? status : 'STARTED',
        due,
        now,
      );
      return { answer: { outcome: 'OK' }, due };
    }
    const startedAt = row.started_at === null || settled ? null : Number(row.started_at);
    const due = deadlineAfterMs(expectation, now);
    const failed = input.kind === 'fail';
    await store.recordPing(row.check_id, failed ? 'FAILING' : 'UP', due, now);
    const result = pingResult(input, startedAt, now);
    await this.#context.queue.results.storeServiceResult(
      { accountId: row.account_id, checkId: row.check_id, result, nowMs: now },
      tx,
    );
    return { answer: { outcome: 'OK' }, due };
  }

  /** Sets the sweeper's timer for `atMs` unless it is set for earlier already; never beyond a poll. */
  #arm(atMs: number): void {
    if (this.#stopped) return;
    const now = this.#now();
    const at = Math.min(atMs, now + this.#pollMs);
    if (this.#timer && this.#armedAt <= at) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedAt = at;
    this.#timer = setTimeout(() => this.#wake(), Math.max(0, at - now));
    this.#timer.unref();
  }

  #wake(): void {
    this.#timer = null;
    this.#armedAt = Number.POSITIVE_INFINITY;
    if (this.#stopped) return;
    if (this.#sweeping) {
      // A sweep is running: look again right after it.
      void this.#sweeping.then(() => this.#arm(this.#now()));
      return;
    }
    this.#sweeping = this.#sweep()
      .catch((err: unknown) => this.#log.error({ err }, 'heartbeat sweep failed'))
      .then(async () => {
        const next = await new HeartbeatQueries(this.#context.db).earliestDue().catch(() => null);
        this.#sweeping = null;
        this.#arm(next ?? this.#now() + this.#pollMs);
      });
  }

  /**
   * Marks every heartbeat whose deadline passed LATE (MARK_BATCH per transaction) and stores the
   * FAILED results owed (LATE_RESULT_BATCH per transaction), marking again between batches of
   * results, with a turn of the event loop between transactions.
   * @returns how many heartbeats became late.
   */
  async sweepNow(): Promise<number> {
    let total = 0;
    for (;;) {
      let marked = 0;
      for (;;) {
        const now = this.#now();
        const count = await this.#context.db.transaction().execute(async (tx) => {
          const store = new HeartbeatQueries(tx);
          const rows = await store.due(now, MARK_BATCH);
          if (rows.length > 0) {
            await store.markLate(
              rows.map((r) => r.check_id),
              now,
            );
          }
          return rows.length;
        });
        marked += count;
        if (count < MARK_BATCH || this.#stopped) break;
        await yieldToLoop();
      }
      total += marked;
      if (this.#stopped) return total;
      const stored = await this.#context.db.transaction().execute(async (tx) => {
        const rows = await new HeartbeatQueries(tx).lateResultsOwed(LATE_RESULT_BATCH);
        await this.#storeLateResults(tx, rows, this.#now());
        return rows.length;
      });
      if (stored < LATE_RESULT_BATCH || this.#stopped) return total;
      await yieldToLoop();
    }
  }

  /**
   * Stores in `tx` the FAILED result owed by each of `rows` that was marked late (`late_result_at`), dated
   * when it was marked, and settles it (`settleLateResults`: once, whoever comes first). `nowMs`: when it
   * is stored.
   * @returns how many results were stored.
   */
  async #storeLateResults(tx: HeartbeatTx, rows: readonly HeartbeatRow[], nowMs: number): Promise<number> {
    const owed = rows.filter((row) => row.late_result_at !== null);
    if (owed.length === 0) return 0;
    const settled = new Set(
      await new HeartbeatQueries(tx).settleLateResults(owed.map((row) => row.check_id)),
    );
    let stored = 0;
    for (const row of owed) {
      if (!settled.has(row.check_id)) continue;
      const lateAt = Number(row.late_result_at);
      const lastPing = row.last_ping_at === null ? 'never' : new Date(Number(row.last_ping_at)).toISOString();
      const started =
        row.started_at === null
          ? ''
          : `; a run started at ${new Date(Number(row.started_at)).toISOString()} did not finish within the grace`;
      const result = serviceResult('FAILED', lateAt, lateAt, 0, {
        errorMessage: `No ping received within period + grace (last ping ${lastPing})${started}`,
        logs: [],
      });
      await this.#context.queue.results.storeServiceResult(
        { accountId: row.account_id, checkId: row.check_id, result, nowMs },
        tx,
      );
      stored++;
    }
    return stored;
  }

  async #sweep(): Promise<void> {
    const late = await this.sweepNow();
    if (late > 0) this.#log.info({ late }, 'heartbeats late');
  }
}

/** A FINAL result the service observed for a heartbeat, valid for CheckResultSchema. */
function serviceResult(
  status: 'PASSED' | 'FAILED',
  startedAtMs: number,
  stoppedAtMs: number,
  responseTimeMs: number,
  extra: { errorMessage: string | null; logs: CheckResult['logs'] },
): CheckResult {
  return {
    status,
    hasFailures: status === 'FAILED',
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: responseTimeMs,
    startedAt: new Date(startedAtMs).toISOString(),
    stoppedAt: new Date(stoppedAtMs).toISOString(),
    errorMessage: extra.errorMessage,
    assertions: [],
    logs: extra.logs,
    runLocation: HEARTBEAT_RUN_LOCATION,
    attempts: 1,
    resultType: 'FINAL',
    artifacts: [],
  };
}

/** The result of a success or failure ping: responseTime since its /start when one came. */
function pingResult(input: PingInput, startedAtMs: number | null, nowMs: number): CheckResult {
  const failed = input.kind === 'fail';
  const time = new Date(nowMs).toISOString();
  const logs: CheckResult['logs'] =
    input.body !== null && input.body !== ''
      ? [{ time, level: failed ? 'ERROR' : 'INFO', msg: input.body }]
      : [];
  const exit = input.exitCode === null ? '' : ` (exit code ${input.exitCode})`;
  return serviceResult(
    failed ? 'FAILED' : 'PASSED',
    startedAtMs ?? nowMs,
    nowMs,
    startedAtMs === null ? 0 : nowMs - startedAtMs,
    {
      errorMessage: failed ? `Ping reported failure${exit}` : null,
      logs,
    },
  );
}
