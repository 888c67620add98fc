import type { ExpressionBuilder, Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { isPostgres } from '../../platform/store/dialect.js';
import type { SessionStatus } from '../../platform/store/schema.js';
import { Statement } from '../../platform/store/statement.js';

// The statements of every result of a session, built once (platform/store/statement.ts).
const SESSION_HAS_JOBS = new Statement((db: Kysely<Database>, v: { sessionId: string }) =>
  db.selectFrom('jobs').select('id').where('check_session_id', '=', v.sessionId).limit(1),
);
// On PostgreSQL the row stays locked until the transaction ends (see lockSessionState).
const LOCK_SESSION_STATE = new Statement((db: Kysely<Database>, v: { sessionId: string }) => {
  const query = db
    .selectFrom('check_sessions')
    .select(['timed_out_runs', 'status'])
    .where('id', '=', v.sessionId);
  return isPostgres(db) ? query.forUpdate() : query;
});
// A session ends in one statement once it has no job left: TIMED_OUT when a run ended without a result, else the
// worst status of its FINAL results.
const finalWith = (
  eb: ExpressionBuilder<Database, 'check_sessions'>,
  sessionId: string,
  status: Selectable<Database['check_results']>['status'],
) =>
  eb
    .selectFrom('check_results')
    .select('check_results.id')
    .where('check_results.check_session_id', '=', sessionId)
    .where('check_results.result_type', '=', 'FINAL')
    .where('check_results.status', '=', status);
const END_IF_SETTLED = new Statement((db: Kysely<Database>, v: { sessionId: string; nowMs: number }) =>
  db
    .updateTable('check_sessions')
    .set((eb) => ({
      status: eb
        .case()
        .when('check_sessions.timed_out_runs', '>', 0)
        .then('TIMED_OUT')
        .when(eb.exists(finalWith(eb, v.sessionId, 'FAILED')))
        .then('FAILED')
        .when(eb.exists(finalWith(eb, v.sessionId, 'DEGRADED')))
        .then('DEGRADED')
        .else('PASSED')
        .end() as unknown as SessionStatus,
      stopped_at: v.nowMs,
    }))
    .where('check_sessions.id', '=', v.sessionId)
    .where('check_sessions.status', '=', 'PROGRESS')
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('jobs').select('jobs.id').where('jobs.check_session_id', '=', v.sessionId)),
      ),
    ),
);
const END_SESSION = new Statement(
  (db: Kysely<Database>, v: { sessionId: string; status: SessionStatus; nowMs: number }) =>
    db
      .updateTable('check_sessions')
      .set({ status: v.status, stopped_at: v.nowMs })
      .where('id', '=', v.sessionId)
      .where('status', '=', 'PROGRESS'),
);

const SESSION_ROW = new Statement((db: Kysely<Database>, v: { accountId: string; id: string }) =>
  db.selectFrom('check_sessions').selectAll().where('account_id', '=', v.accountId).where('id', '=', v.id),
);
const SESSION_RESULTS = new Statement((db: Kysely<Database>, v: { sessionId: string }) =>
  db
    .selectFrom('check_results')
    .select([
      'id',
      'run_location',
      'status',
      'has_failures',
      'has_errors',
      'is_degraded',
      'response_time',
      'result_type',
      'started_at',
      'stopped_at',
      'doc',
      'has_artifacts',
    ])
    .where('check_session_id', '=', v.sessionId)
    .orderBy('started_at'),
);

/**
 * Every statement of check sessions (sessions.ts) against the store: a session's row, written in
 * the transaction that queues its runs, what reading one needs, and what settling one needs (in the
 * transaction that ends its last run: a result, a queue expiry; see settleSession). Portable SQL, but for the
 * row lock PostgreSQL takes while settling (SQLite runs one writer at a time).
 */
export class SessionQueries {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction that queues the session's runs. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /** Inserts a session row. */
  async insert(row: Insertable<Database['check_sessions']>): Promise<void> {
    await this.#db.insertInto('check_sessions').values(row).execute();
  }

  /** The session's row in the account, or undefined. */
  async row(accountId: string, id: string) {
    return SESSION_ROW.first(this.#db, { accountId, id });
  }

  /** The session's stored results, oldest `started_at` first (index `check_results_session`). */
  async results(sessionId: string) {
    return SESSION_RESULTS.rows(this.#db, { sessionId });
  }

  /** Counts one run of the session that ended without a result. */
  async countTimedOutRun(sessionId: string): Promise<void> {
    await this.#db
      .updateTable('check_sessions')
      .set((eb) => ({ timed_out_runs: eb('timed_out_runs', '+', 1) }))
      .where('id', '=', sessionId)
      .execute();
  }

  /** Whether the session still has a job (queued or leased). */
  async sessionHasJobs(sessionId: string): Promise<boolean> {
    return (await SESSION_HAS_JOBS.first(this.#db, { sessionId })) !== undefined;
  }

  /**
   * Deletes the session's jobs still queued (not those an agent holds); only those of the runs
   * `roundIds` names when given.
   */
  async dropQueuedJobs(sessionId: string, roundIds: readonly string[] | undefined): Promise<void> {
    if (roundIds !== undefined && roundIds.length === 0) return;
    let query = this.#db
      .deleteFrom('jobs')
      .where('check_session_id', '=', sessionId)
      .where('state', '=', 'queued');
    if (roundIds !== undefined) query = query.where('round_id', 'in', roundIds);
    await query.execute();
  }

  /**
   * The session's status and runs ended without a result, or undefined when it is gone. On PostgreSQL the
   * session's row is locked until the transaction ends (`FOR UPDATE`), so the transactions settling one
   * session take turns and each later statement of the caller sees what the one before committed.
   */
  async lockSessionState(sessionId: string) {
    return LOCK_SESSION_STATE.first(this.#db, { sessionId });
  }

  /**
   * Ends the session at `nowMs` when it is in PROGRESS and has no job left (queued, leased, or a retry's next
   * attempt): TIMED_OUT when a run ended without a result (`timed_out_runs`), else the worst status of its FINAL
   * results (FAILED > DEGRADED > PASSED). One statement (see settleSession for the lock PostgreSQL takes first).
   * @returns whether this call ended it.
   */
  async endIfSettled(sessionId: string, nowMs: number): Promise<boolean> {
    const res = await END_IF_SETTLED.run(this.#db, { sessionId, nowMs });
    return (res.numAffectedRows ?? 0n) > 0n;
  }

  /**
   * Ends a session still in PROGRESS with `status` at `nowMs`.
   * @returns whether this call ended it.
   */
  async endSession(sessionId: string, status: SessionStatus, nowMs: number): Promise<boolean> {
    const res = await END_SESSION.run(this.#db, { sessionId, status, nowMs });
    return (res.numAffectedRows ?? 0n) > 0n;
  }
}
