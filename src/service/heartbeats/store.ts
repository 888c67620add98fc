import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../platform/store/database.js';
import { isPostgres } from '../platform/store/dialect.js';
import { Statement } from '../platform/store/statement.js';
import type { Expectation } from './expectation.js';

/** A store handle or a transaction of it. */
export type HeartbeatTx = Kysely<Database> | Transaction<Database>;

/** A heartbeat's row. */
export type HeartbeatRow = Selectable<Database['heartbeats']>;

/** Pings kept per heartbeat check; older ones are deleted as new ones come. */
export const PINGS_KEPT = 100;

/** One ping as stored in `heartbeat_pings`. */
export type PingRecord = {
  accountId: string;
  checkId: string;
  kind: 'success' | 'start' | 'fail';
  exitCode: number | null;
  method: string;
  remoteAddress: string | null;
  userAgent: string | null;
  body: string | null;
  bodySizeBytes: number;
  receivedAtMs: number;
};

/** The expectation's columns. */
export function expectationColumns(e: Expectation) {
  return { period_ms: e.periodMs, schedule: e.schedule, timezone: e.timezone, grace_ms: e.graceMs };
}

/** The expectation of a heartbeat row. */
export function expectationOf(row: {
  period_ms: number | null;
  schedule: string | null;
  timezone: string | null;
  grace_ms: number;
}): Expectation {
  return {
    periodMs: row.period_ms === null ? null : Number(row.period_ms),
    schedule: row.schedule,
    timezone: row.timezone,
    graceMs: Number(row.grace_ms),
  };
}

// The statements of every ping, built once (platform/store/statement.ts).
const BY_TOKEN = new Statement((db: Kysely<Database>, v: { token: string }) =>
  db.selectFrom('heartbeats').selectAll().where('token', '=', v.token),
);
const INSERT_PING = new Statement((db: Kysely<Database>, p: PingRecord) =>
  db.insertInto('heartbeat_pings').values({
    account_id: p.accountId,
    check_id: p.checkId,
    kind: p.kind,
    exit_code: p.exitCode,
    method: p.method,
    remote_address: p.remoteAddress,
    user_agent: p.userAgent,
    body: p.body,
    body_size_bytes: p.bodySizeBytes,
    received_at: p.receivedAtMs,
  }),
);
// One statement: the ids below the newest PINGS_KEPT (none while fewer are kept).
const DELETE_OLD_PINGS = new Statement((db: Kysely<Database>, v: { checkId: string }) =>
  db
    .deleteFrom('heartbeat_pings')
    .where('check_id', '=', v.checkId)
    .where('id', '<=', (eb) =>
      eb
        .selectFrom('heartbeat_pings')
        .select('id')
        .where('check_id', '=', v.checkId)
        .orderBy('id', 'desc')
        .limit(1)
        .offset(PINGS_KEPT),
    ),
);
const SET_LAST_PING = new Statement((db: Kysely<Database>, v: { checkId: string; nowMs: number }) =>
  db.updateTable('heartbeats').set({ last_ping_at: v.nowMs }).where('check_id', '=', v.checkId),
);
const RECORD_START = new Statement(
  (db: Kysely<Database>, v: { checkId: string; status: string; dueAtMs: number; nowMs: number }) =>
    db
      .updateTable('heartbeats')
      .set({ status: v.status, started_at: v.nowMs, due_at: v.dueAtMs, updated_at: v.nowMs })
      .where('check_id', '=', v.checkId),
);
const RECORD_PING = new Statement(
  (db: Kysely<Database>, v: { checkId: string; status: string; dueAtMs: number | null; nowMs: number }) =>
    db
      .updateTable('heartbeats')
      .set({
        status: v.status,
        started_at: null,
        last_ping_at: v.nowMs,
        due_at: v.dueAtMs,
        updated_at: v.nowMs,
      })
      .where('check_id', '=', v.checkId),
);

/** The statements of heartbeats and their pings (portable kysely only). */
export class HeartbeatQueries {
  readonly #db: HeartbeatTx;
  constructor(db: HeartbeatTx) {
    this.#db = db;
  }

  byToken(token: string) {
    return BY_TOKEN.first(this.#db, { token });
  }

  byCheck(accountId: string, checkId: string) {
    return this.#db
      .selectFrom('heartbeats')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .executeTakeFirst();
  }

  /** The account's heartbeat rows (their live state, for check answers). */
  ofAccount(accountId: string) {
    return this.#db.selectFrom('heartbeats').selectAll().where('account_id', '=', accountId).execute();
  }

  /** Stores a ping and deletes the check's pings older than the newest PINGS_KEPT. */
  async insertPing(p: PingRecord): Promise<void> {
    await INSERT_PING.run(this.#db, p);
    await DELETE_OLD_PINGS.run(this.#db, { checkId: p.checkId });
  }

  /** The check's kept pings, newest first. */
  pings(accountId: string, checkId: string) {
    return this.#db
      .selectFrom('heartbeat_pings')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .orderBy('id', 'desc')
      .limit(PINGS_KEPT)
      .execute();
  }

  /** Heartbeats due by `nowMs`, earliest first (index `heartbeats_due`). */
  due(nowMs: number, limit: number) {
    return (
      this.#db
        .selectFrom('heartbeats')
        .selectAll()
        .where('due_at', '<=', nowMs)
        .orderBy('due_at')
        .limit(limit)
        // PostgreSQL, several replicas sweeping: the rows stay locked until the sweep's transaction commits
        // (with due_at cleared and late_result_at set), and rows another sweep or a ping holds are skipped, so a
        // heartbeat is marked late once.
        .$if(isPostgres(this.#db), (q) => q.forUpdate().skipLocked())
        .execute()
    );
  }

  /** The earliest deadline, epoch ms; null when no heartbeat has one. */
  async earliestDue(): Promise<number | null> {
    const row = await this.#db
      .selectFrom('heartbeats')
      .select('due_at')
      .where('due_at', 'is not', null)
      .orderBy('due_at')
      .limit(1)
      .executeTakeFirst();
    return row?.due_at == null ? null : Number(row.due_at);
  }

  /**
   * Start-up: moves every deadline that passed (`due_at` before `nowMs`, epoch ms) to `nowMs` + the
   * heartbeat's `grace_ms`, in one statement.
   * @returns how many heartbeats moved.
   */
  async movePassedDeadlines(nowMs: number): Promise<bigint> {
    const moved = await this.#db
      .updateTable('heartbeats')
      .set((eb) => ({ due_at: eb(eb.val(nowMs), '+', eb.ref('grace_ms')) }))
      .where('due_at', '<', nowMs)
      .executeTakeFirst();
    return moved.numUpdatedRows;
  }

  /** Inserts a heartbeat row (`due_at`, `created_at`, `updated_at`: epoch ms; durations in ms). */
  async insert(row: Insertable<Database['heartbeats']>): Promise<void> {
    await this.#db.insertInto('heartbeats').values(row).execute();
  }

  /**
   * Writes an edit of check `checkId`'s heartbeat: its status, deadline (`dueAtMs`, epoch ms, null for
   * none), expectation and `updated_at` (`nowMs`, epoch ms).
   */
  async reconfigure(
    checkId: string,
    change: { status: string; dueAtMs: number | null; expectation: Expectation; nowMs: number },
  ): Promise<void> {
    await this.#db
      .updateTable('heartbeats')
      .set({
        status: change.status,
        due_at: change.dueAtMs,
        ...expectationColumns(change.expectation),
        updated_at: change.nowMs,
      })
      .where('check_id', '=', checkId)
      .execute();
  }

  /** A ping of a paused heartbeat: sets only its `last_ping_at` to `nowMs` (epoch ms). */
  async setLastPing(checkId: string, nowMs: number): Promise<void> {
    await SET_LAST_PING.run(this.#db, { checkId, nowMs });
  }

  /**
   * A `/start` ping: sets the heartbeat's `status`, `started_at` and `updated_at` to `nowMs` and `due_at` to
   * `dueAtMs` (epoch ms); `last_ping_at` is left as it is.
   */
  async recordStart(checkId: string, status: string, dueAtMs: number, nowMs: number): Promise<void> {
    await RECORD_START.run(this.#db, { checkId, status, dueAtMs, nowMs });
  }

  /**
   * A success or failure ping: sets the heartbeat's `status`, clears `started_at`, sets `last_ping_at` and
   * `updated_at` to `nowMs` and `due_at` to `dueAtMs` (epoch ms; null: no deadline).
   */
  async recordPing(checkId: string, status: string, dueAtMs: number | null, nowMs: number): Promise<void> {
    await RECORD_PING.run(this.#db, { checkId, status, dueAtMs, nowMs });
  }

  /**
   * Marks the heartbeats of `checkIds` LATE in one statement: no deadline, `updated_at` `nowMs` (epoch ms), and
   * `late_result_at` `nowMs`: their FAILED results are owed (`lateResultsOwed`, `settleLateResults`). A run
   * started (`started_at`) stays recorded until then: the result names it.
   */
  async markLate(checkIds: readonly string[], nowMs: number): Promise<void> {
    await this.#db
      .updateTable('heartbeats')
      .set({ status: 'LATE', due_at: null, late_result_at: nowMs, updated_at: nowMs })
      .where('check_id', 'in', checkIds)
      .execute();
  }

  /** Heartbeats marked late whose FAILED result is still owed, earliest first (index `heartbeats_late_result`). */
  lateResultsOwed(limit: number) {
    return (
      this.#db
        .selectFrom('heartbeats')
        .selectAll()
        .where('late_result_at', 'is not', null)
        .orderBy('late_result_at')
        .limit(limit)
        // PostgreSQL, several replicas: a row another sweep or a ping is settling is skipped (see `due`).
        .$if(isPostgres(this.#db), (q) => q.forUpdate().skipLocked())
        .execute()
    );
  }

  /**
   * Takes the owed late results of `checkIds` on: clears their `late_result_at` and `started_at` where it is
   * still set. The caller stores a FAILED result for each check id answered, and only for those, in the same
   * transaction: a ping or another replica that settled one first leaves nothing for this caller to store.
   * @returns the check ids settled here.
   */
  async settleLateResults(checkIds: readonly string[]): Promise<string[]> {
    if (checkIds.length === 0) return [];
    const rows = await this.#db
      .updateTable('heartbeats')
      .set({ late_result_at: null, started_at: null })
      .where('check_id', 'in', checkIds)
      .where('late_result_at', 'is not', null)
      .returning('check_id')
      .execute();
    return rows.map((row) => row.check_id);
  }

  /** Deletes a check's heartbeat and pings. */
  async deleteCheck(accountId: string, checkId: string): Promise<void> {
    await this.#db
      .deleteFrom('heartbeat_pings')
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .execute();
    await this.#db
      .deleteFrom('heartbeats')
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .execute();
  }
}
