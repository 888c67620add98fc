import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../platform/store/database.js';
import type { Expectation } from './expectation.js';

/** A store handle or a transaction of it. */
export type HeartbeatTx = Kysely<Database> | Transaction<Database>;

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

/** The statements of heartbeats and their pings (portable kysely only). */
export class HeartbeatQueries {
  readonly #db: HeartbeatTx;
  constructor(db: HeartbeatTx) {
    this.#db = db;
  }

  byToken(token: string) {
    return this.#db.selectFrom('heartbeats').selectAll().where('token', '=', token).executeTakeFirst();
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
    await this.#db
      .insertInto('heartbeat_pings')
      .values({
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
      })
      .execute();
    // One statement: the ids below the newest PINGS_KEPT (none while fewer are kept).
    await this.#db
      .deleteFrom('heartbeat_pings')
      .where('check_id', '=', p.checkId)
      .where('id', '<=', (eb) =>
        eb
          .selectFrom('heartbeat_pings')
          .select('id')
          .where('check_id', '=', p.checkId)
          .orderBy('id', 'desc')
          .limit(1)
          .offset(PINGS_KEPT),
      )
      .execute();
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
    return this.#db
      .selectFrom('heartbeats')
      .selectAll()
      .where('due_at', '<=', nowMs)
      .orderBy('due_at')
      .limit(limit)
      .execute();
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
