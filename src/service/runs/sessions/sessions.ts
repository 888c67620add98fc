import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { TriggerSource } from '../../../protocol/index.js';
import type { CheckSession } from '../../platform/http/responses.js';
import { type CheckDoc, runLocationsOf } from '../../checks/index.js';
import { CheckQueries } from '../../checks/index.js';
import { RUNNABLE_CHECK_TYPES } from '../../checks/index.js';
import { notFound } from '../../platform/http/errors.js';
import type { JobQueue } from '../queue/queue.js';
import type { RunRequest } from '../queue/jobs.js';
import { JobQueries, type Tx } from '../queue/store.js';
import { nextLocation } from '../scheduler/locations.js';
import { SessionQueries } from './store.js';
import type { Database } from '../../platform/store/database.js';
import { isPostgres } from '../../platform/store/dialect.js';
import { readDoc, writeDoc } from '../../platform/store/schema.js';

/**
 * Target filters of a session start (the shape the market leader's
 * `POST /v1/check-sessions/trigger` uses): `checkId` (any of), `tags` (all of),
 * `matchTags` (groups of tags: a check matches when it has every tag of any
 * group; a tag written `!tag` must be absent), `groupId` (checks of any of these
 * groups), `checkType` (any of these types). Filters combine with AND.
 * No filter: every activated check.
 */
export type SessionTarget = {
  checkId?: string[];
  tags?: string[];
  matchTags?: string[][];
  groupId?: number[];
  checkType?: string[];
};

/** Whether a check's tags satisfy one group of `matchTags`. */
function matchesTagGroup(tags: string[], group: string[]): boolean {
  return group.every((t) => (t.startsWith('!') ? !tags.includes(t.slice(1)) : tags.includes(t)));
}

/** Whether a check is selected by the target filters. */
export function matchesTarget(check: CheckDoc, target: SessionTarget): boolean {
  if (target.checkId && target.checkId.length > 0 && !target.checkId.includes(check.id)) return false;
  if (target.checkType && target.checkType.length > 0 && !target.checkType.includes(check.checkType))
    return false;
  if (
    target.groupId &&
    target.groupId.length > 0 &&
    (check.groupId === null || !target.groupId.includes(check.groupId))
  ) {
    return false;
  }
  if (target.tags && target.tags.length > 0 && !matchesTagGroup(check.tags ?? [], target.tags)) return false;
  if (
    target.matchTags &&
    target.matchTags.length > 0 &&
    !target.matchTags.some((g) => matchesTagGroup(check.tags ?? [], g))
  ) {
    return false;
  }
  return true;
}

/** Check sessions: start, read, await completion. Their SQL is in SessionQueries (store.ts). */
export class CheckSessions {
  readonly #db: Kysely<Database>;
  readonly #store: SessionQueries;
  readonly #queue: JobQueue;
  readonly #checks: CheckQueries;
  readonly #appUrl: string;

  constructor(db: Kysely<Database>, queue: JobQueue, appUrl: string) {
    this.#db = db;
    this.#store = new SessionQueries(db);
    this.#queue = queue;
    this.#checks = new CheckQueries(db);
    this.#appUrl = appUrl.replace(/\/+$/, '');
  }

  /**
   * Starts one session per matching check: one run per location when
   * `runParallel`, else one run in the check's next round-robin location. A scheduled run of the check
   * still waiting in the queue of such a location is dropped: the session's run takes its place.
   * Checks named in `checkId` that do not exist give 404.
   */
  async start(accountId: string, target: SessionTarget, source: TriggerSource): Promise<CheckSession[]> {
    const all = await this.#checks.list(accountId);
    for (const id of target.checkId ?? []) {
      if (!all.some((c) => c.id === id)) throw notFound('check', id);
    }
    const explicit = (target.checkId?.length ?? 0) > 0;
    const selected = all.filter(
      (c) => RUNNABLE_CHECK_TYPES.has(c.checkType) && (explicit || c.activated) && matchesTarget(c, target),
    );
    const now = Date.now();
    const ids = await this.#db.transaction().execute(async (tx) => {
      const created: string[] = [];
      for (const check of selected) {
        const locations = check.runParallel
          ? runLocationsOf(check)
          : [await nextLocation(tx, accountId, check)];
        const id = randomUUID();
        await new SessionQueries(tx).insert({
          id,
          account_id: accountId,
          check_id: check.id,
          check_type: check.checkType,
          name: check.name,
          trigger_source: source,
          status: 'PROGRESS',
          run_locations: writeDoc(locations),
          started_at: now,
          stopped_at: null,
        });
        // A scheduled run still waiting in one of these locations gives way: the check runs once, now, not
        // twice at once (a check created activated is queued at once; "Run now" right after replaced it).
        const jobs = new JobQueries(tx);
        for (const location of locations) await jobs.dropQueuedScheduledRuns(accountId, check.id, location);
        const runs: RunRequest[] = locations.map((location) => ({
          check,
          location,
          runSource: source,
          checkSessionId: id,
        }));
        await this.#queue.enqueue(tx, accountId, runs, now);
        created.push(id);
      }
      return created;
    });
    if (ids.length > 0) this.#queue.notify(accountId);
    return Promise.all(ids.map((id) => this.get(accountId, id)));
  }

  /**
   * The session as the API shows it. While runs are pending `status` is
   * PROGRESS and `stoppedAt` null; `results` holds the stored results so far.
   * @throws HttpError 404 when the session is not in the account.
   */
  async get(accountId: string, id: string): Promise<CheckSession> {
    const s = await this.#store.row(accountId, id);
    if (!s) throw notFound('check session', id);
    const results = await this.#store.results(id);
    const stoppedAt = s.stopped_at;
    return {
      checkSessionId: s.id,
      checkSessionLink: `${this.#appUrl}/accounts/${accountId}/checks/${s.check_id}/check-sessions/${s.id}`,
      checkId: s.check_id,
      checkType: s.check_type,
      name: s.name,
      status: s.status,
      triggerSource: s.trigger_source,
      runSource: s.trigger_source,
      startedAt: new Date(Number(s.started_at)).toISOString(),
      stoppedAt: stoppedAt === null ? null : new Date(Number(stoppedAt)).toISOString(),
      timeElapsed: (stoppedAt === null ? Date.now() : Number(stoppedAt)) - Number(s.started_at),
      runLocations: readDoc(s.run_locations),
      results: results.map((r) => {
        const doc = readDoc(r.doc);
        return {
          id: r.id,
          // The hosted API's fields of a session's result.
          checkResultId: r.id,
          checkResultLink: `${this.#appUrl}/checks/${s.check_id}/results/${r.id}`,
          checkId: s.check_id,
          checkType: s.check_type,
          name: s.name,
          aborted: false,
          isCancelled: false,
          runLocation: r.run_location,
          resultType: r.result_type,
          status: r.status,
          hasFailures: r.has_failures === 1,
          hasErrors: r.has_errors === 1,
          isDegraded: r.is_degraded === 1,
          responseTime: r.response_time,
          startedAt: new Date(Number(r.started_at)).toISOString(),
          stoppedAt: new Date(Number(r.stopped_at)).toISOString(),
          attempts: doc.attempts,
          // A stored result that lacks these fields is answered with null and empty lists.
          errorMessage: doc.errorMessage ?? null,
          // Names and sizes as the agent posted them; download one from /v1/check-results/…. None once
          // retention deleted the files (as the result route answers).
          artifacts: r.has_artifacts !== 0 ? (doc.artifacts ?? []) : [],
          logs: doc.logs ?? [],
          assertions: doc.assertions ?? [],
          ...(doc.truncated && { truncated: doc.truncated }),
          // The check-type part the run holds.
          ...(doc.icmpCheckResult && { icmpCheckResult: doc.icmpCheckResult }),
          ...(doc.dnsCheckResult && { dnsCheckResult: doc.dnsCheckResult }),
          ...(doc.tcpCheckResult && { tcpCheckResult: doc.tcpCheckResult }),
          ...(doc.grpcCheckResult && { grpcCheckResult: doc.grpcCheckResult }),
          ...(doc.httpCheckResult && { httpCheckResult: doc.httpCheckResult }),
          ...(doc.browserCheckResult && { browserCheckResult: doc.browserCheckResult }),
          ...(doc.sslCheckResult && { sslCheckResult: doc.sslCheckResult }),
          ...(doc.tracerouteCheckResult && { tracerouteCheckResult: doc.tracerouteCheckResult }),
          ...(doc.agenticCheckResult && { agenticCheckResult: doc.agenticCheckResult }),
        };
      }),
    };
  }

  /**
   * Cancels a session (`POST /v1/check-sessions/{id}/cancel`): its runs still queued (a retry waiting out its
   * back-off included) are removed, and the session ends CANCELLED at once; a run an agent already holds runs
   * to its end and its result is stored, but does not change the session's status. With `sequenceIds` only
   * the queued runs of those runs (`sequenceId` of their results) are removed, and the session ends CANCELLED
   * only when nothing of it is left queued or running. A session already final is left as it is.
   * @throws HttpError 404 when the session is not in the account.
   */
  async cancel(accountId: string, id: string, sequenceIds: readonly string[] | undefined): Promise<void> {
    if (!(await this.#store.row(accountId, id))) throw notFound('check session', id);
    const ended = await this.#db.transaction().execute(async (tx) => {
      const store = new SessionQueries(tx);
      await store.dropQueuedJobs(id, sequenceIds);
      if (sequenceIds !== undefined && (await store.sessionHasJobs(id))) return false;
      return store.endSession(id, 'CANCELLED', Date.now());
    });
    if (ended) this.#queue.emitSession(id);
  }

  /**
   * Waits until the session is final or `maxWaitMs` passes.
   * @returns the session, or null when it still runs at the deadline.
   */
  async waitForCompletion(
    accountId: string,
    id: string,
    maxWaitMs: number,
    signal: AbortSignal,
  ): Promise<CheckSession | null> {
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      // Armed before the read: a result that ends the session while it is read wakes the wait at once.
      const wake = this.#queue.listenForSession(id);
      try {
        const session = await this.get(accountId, id);
        if (session.status !== 'PROGRESS') return session;
        const left = deadline - Date.now();
        if (left <= 0 || signal.aborted) return null;
        // Woken by the result that ends the session; the store is read again after the safety poll anyway.
        await wake.wait(Math.min(left, this.#queue.safetyPollMs()), signal);
      } finally {
        wake.dispose();
      }
    }
  }
}

/**
 * Ends a check session once it has no job left (queued, leased, or a retry's next attempt waiting
 * its back-off): TIMED_OUT when a run ended without a result (`timed_out_runs`), else the worst
 * status of its FINAL results (FAILED > DEGRADED > PASSED). Runs in the transaction that ended the
 * run (a stored result, a queue expiry, a lapsed lease), so a reader after its commit sees the end. On
 * PostgreSQL it locks the session's row first: of two runs ending at once, the second settles after the
 * first committed and sees its job gone, so the last run always ends the session.
 * @returns true when the session ended now (the caller wakes its waiters after the commit).
 */
export async function settleSession(tx: Tx, sessionId: string, nowMs: number): Promise<boolean> {
  const store = new SessionQueries(tx);
  // PostgreSQL: the session's row first. Two runs ending at once would otherwise each see the other's job not
  // yet deleted, and neither would end the session. Locked, the second's next statement reads after the first
  // committed. (SQLite runs one writer at a time: nothing to lock.)
  if (isPostgres(tx)) {
    const session = await store.lockSessionState(sessionId);
    if (session?.status !== 'PROGRESS') return false;
  }
  return store.endIfSettled(sessionId, nowMs);
}

/**
 * Counts a run of the session that ended without a result (its job expired unclaimed, or its check
 * was deleted), then settles the session (see settleSession), in the caller's transaction.
 * @returns true when the session ended now.
 */
export async function endRunWithoutResult(tx: Tx, sessionId: string, nowMs: number): Promise<boolean> {
  await new SessionQueries(tx).countTimedOutRun(sessionId);
  return settleSession(tx, sessionId, nowMs);
}
