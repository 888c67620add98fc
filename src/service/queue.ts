import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter, on } from 'node:events';
import type { Kysely, Transaction } from 'kysely';
import { planRetry } from '../protocol/retry.js';
import { type CheckResult, type CheckType, type Job, type JobClass, jobClassOf } from '../protocol/index.js';
import { linkSignal } from '../shared/linked-signal.js';
import { analyticsColumnsOf } from './analytics/columns.js';
import { type CheckDoc, runLocationsOf } from './checks.js';
import { HttpError, notFound } from './errors.js';
import { JobBuilder, nextAttemptJob, type RunRequest } from './jobs.js';
import { retryLocation } from './retries.js';
import type { Database } from './store/database.js';

export { RUN_TIMEOUT_MS, type RunRequest } from './jobs.js';

/** Queue timing, ms. Defaults from design.md §2: 300 s leases, 6 min queue expiry. */
export type QueueOptions = { leaseMs: number; queueExpiryMs: number };

/** Which locations an agent's key lets it serve. `null` = every location of the account. */
export type AgentScope = { accountId: string; agentId: string; locations: string[] | null };

/** What `claim` needs from the agent's request. */
export type ClaimSpec = {
  checkTypes: readonly CheckType[];
  freeSlots: Record<JobClass, number>;
};

/** What `submitResult` did with a result. */
export type SubmitOutcome = {
  duplicate: boolean;
  checkSessionId: string | null;
  checkId: string;
  /** The result as stored: `resultType` set by the service (ATTEMPT when a retry follows). */
  result: CheckResult;
  /** The job of the next attempt, when one was enqueued. */
  retryJobId: string | null;
};

type Tx = Kysely<Database> | Transaction<Database>;

/**
 * The per-location job queues, kept in the store. Claims are atomic
 * (one transaction; SQLite serialises writers, PostgreSQL would add
 * `FOR UPDATE SKIP LOCKED`). Wakes long polls through an in-process emitter.
 */
export class JobQueue {
  readonly #db: Kysely<Database>;
  readonly #options: QueueOptions;
  readonly #events = new EventEmitter({ captureRejections: false });

  constructor(db: Kysely<Database>, options: QueueOptions) {
    this.#db = db;
    this.#options = options;
    this.#events.setMaxListeners(0);
  }

  get leaseMs(): number {
    return this.#options.leaseMs;
  }

  /**
   * Adds runs to the queues inside the caller's transaction; call `notify` after commit.
   * Each job is built from the store as it is now (see JobBuilder in jobs.ts).
   * @returns the new job ids, in the order of `runs`.
   */
  async enqueue(tx: Tx, accountId: string, runs: RunRequest[], nowMs: number): Promise<string[]> {
    const builder = new JobBuilder(tx, accountId);
    const ids: string[] = [];
    for (const run of runs) {
      const id = randomUUID();
      ids.push(id);
      const job = await builder.build(run, { jobId: id, nowMs, leaseMs: this.#options.leaseMs });
      await this.#insert(tx, job, run.check.checkType, nowMs);
    }
    return ids;
  }

  /**
   * Inserts a queued job. `readyAtMs` is when it may be claimed (`enqueued_at`; later than
   * now for a retry that waits its back-off); it expires `queueExpiryMs` after that.
   */
  async #insert(tx: Tx, job: Job, checkType: CheckType, readyAtMs: number): Promise<void> {
    await tx
      .insertInto('jobs')
      .values({
        id: job.jobId,
        account_id: job.accountId,
        check_id: job.check.id,
        check_session_id: job.checkSessionId,
        location: job.runLocation,
        job_class: jobClassOf(checkType),
        check_type: checkType,
        state: 'queued',
        attempt: job.attempt,
        claims: 0,
        payload: JSON.stringify(job),
        enqueued_at: readyAtMs,
        expires_at: readyAtMs + this.#options.queueExpiryMs,
        agent_id: null,
        lease_expires_at: null,
        result_hash: null,
      })
      .execute();
  }

  /** Wakes long polls of the account. */
  notify(accountId: string): void {
    this.#events.emit(`jobs:${accountId}`);
  }

  /**
   * Hands out ready jobs: queued, due (`enqueued_at` reached: a retry waits out its
   * back-off) and unexpired, or leased with an expired lease (its agent died).
   * Never more than the free slots per class.
   */
  async claim(scope: AgentScope, spec: ClaimSpec, nowMs: number): Promise<Job[]> {
    return this.#db.transaction().execute(async (tx) => {
      const jobs: Job[] = [];
      for (const jobClass of ['uptime', 'main'] as const) {
        const limit = spec.freeSlots[jobClass];
        if (limit <= 0 || spec.checkTypes.length === 0) continue;
        let query = tx
          .selectFrom('jobs')
          .select(['id', 'payload', 'claims'])
          .where('account_id', '=', scope.accountId)
          .where('job_class', '=', jobClass)
          .where('check_type', 'in', [...spec.checkTypes])
          .where((eb) =>
            eb.or([
              eb.and([
                eb('state', '=', 'queued'),
                eb('enqueued_at', '<=', nowMs),
                eb('expires_at', '>', nowMs),
              ]),
              eb.and([eb('state', '=', 'leased'), eb('lease_expires_at', '<=', nowMs)]),
            ]),
          )
          .orderBy('enqueued_at')
          .limit(limit);
        if (scope.locations) query = query.where('location', 'in', scope.locations);
        for (const row of await query.execute()) {
          const leaseExpiresAt = nowMs + this.#options.leaseMs;
          await tx
            .updateTable('jobs')
            .set({
              state: 'leased',
              agent_id: scope.agentId,
              lease_expires_at: leaseExpiresAt,
              claims: row.claims + 1,
            })
            .where('id', '=', row.id)
            .execute();
          jobs.push({ ...(JSON.parse(row.payload) as Job), leaseMs: this.#options.leaseMs });
        }
      }
      return jobs;
    });
  }

  /**
   * Long-poll claim: claims at once, else waits for new jobs (or a lease to
   * expire, checked every second) until `waitMs` passes or `signal` aborts.
   */
  async claimWait(scope: AgentScope, spec: ClaimSpec, waitMs: number, signal: AbortSignal): Promise<Job[]> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const jobs = await this.claim(scope, spec, Date.now());
      const left = deadline - Date.now();
      if (jobs.length > 0 || left <= 0 || signal.aborted) return jobs;
      await this.#waitFor(`jobs:${scope.accountId}`, Math.min(left, 1000), signal);
    }
  }

  /** Waits for `event`, at most `timeoutMs`; resolves false on timeout or abort. */
  async #waitFor(event: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    // linkSignal, not AbortSignal.any: on Node 20 `any` leaks an entry on a long-lived parent per call.
    const wait = linkSignal([signal], timeoutMs);
    try {
      for await (const _ of on(this.#events, event, { signal: wait.signal })) return true;
    } catch {
      // Aborted or timed out: the caller looks at the queue again.
    } finally {
      wait.dispose();
    }
    return false;
  }

  /** Waits until `emitSession(sessionId)` or the timeout; resolves true when woken. */
  waitForSession(sessionId: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return this.#waitFor(`session:${sessionId}`, timeoutMs, signal);
  }

  /** Wakes waiters on a check session. */
  emitSession(sessionId: string): void {
    this.#events.emit(`session:${sessionId}`);
  }

  /**
   * Extends the lease of a job the agent holds.
   * @throws HttpError 404 unknown job; 409 the lease was lost (job finished, expired or held by another agent).
   */
  async renewLease(scope: AgentScope, jobId: string, nowMs: number): Promise<number> {
    const row = await this.#db
      .selectFrom('jobs')
      .select(['state', 'agent_id', 'lease_expires_at'])
      .where('id', '=', jobId)
      .where('account_id', '=', scope.accountId)
      .executeTakeFirst();
    if (!row) throw notFound('job', jobId);
    if (row.state !== 'leased' || row.agent_id !== scope.agentId) {
      throw new HttpError(409, `lease of job ${jobId} was lost`, { jobId, code: 'OUTPOST_ERR_LEASE_LOST' });
    }
    const leaseExpiresAt = nowMs + this.#options.leaseMs;
    await this.#db
      .updateTable('jobs')
      .set({ lease_expires_at: leaseExpiresAt })
      .where('id', '=', jobId)
      .execute();
    return leaseExpiresAt;
  }

  /**
   * Stores the result of a job, exactly once. A repeat of the accepted result from the same
   * agent is acknowledged as a duplicate.
   *
   * Retries: when the job's `retryStrategy` calls for another attempt (planRetry of
   * src/checks/retry.ts, from the stored job's attempt and `runStartedAt` and this result),
   * the result is stored as `resultType` ATTEMPT and, in the same transaction, the next
   * attempt is queued: same check, session, run source, `checkRunId` and `runStartedAt`,
   * `attempt + 1`, claimable from now + the back-off, in the same location when `sameRegion`
   * and else the check's next one (see retryLocation). Otherwise the result is FINAL. The
   * agent's own `resultType` is overridden either way: the service decides.
   * @throws HttpError 404 unknown job; 409 lease lost (another agent holds or finished it, or it expired).
   */
  async submitResult(
    scope: AgentScope,
    jobId: string,
    result: CheckResult,
    nowMs: number,
  ): Promise<SubmitOutcome> {
    const hash = createHash('sha256').update(JSON.stringify(result)).digest('hex');
    const outcome = await this.#db.transaction().execute(async (tx): Promise<SubmitOutcome> => {
      const job = await tx
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', jobId)
        .where('account_id', '=', scope.accountId)
        .executeTakeFirst();
      if (!job) throw notFound('job', jobId);
      const lost = () =>
        new HttpError(409, `lease of job ${jobId} was lost; its result is not stored`, {
          jobId,
          code: 'OUTPOST_ERR_LEASE_LOST',
        });
      const base = { checkSessionId: job.check_session_id, checkId: job.check_id };
      if (job.state === 'done') {
        if (job.agent_id === scope.agentId && job.result_hash === hash) {
          const row = await tx
            .selectFrom('check_results')
            .select('doc')
            .where('job_id', '=', jobId)
            .executeTakeFirst();
          const stored = row ? (JSON.parse(row.doc) as CheckResult) : result;
          return { ...base, duplicate: true, result: stored, retryJobId: null };
        }
        throw lost();
      }
      if (job.state !== 'leased' || job.agent_id !== scope.agentId) throw lost();

      const payload = JSON.parse(job.payload) as Job;
      const plan = planRetry({
        strategy: payload.retryStrategy ?? null,
        attempt: job.attempt,
        runStartedAtMs: Date.parse(payload.runStartedAt ?? '') || Number(job.enqueued_at),
        nowMs,
        outcome: result,
      });
      const stored: CheckResult = { ...result, resultType: plan.retry ? 'ATTEMPT' : 'FINAL' };
      await tx
        .updateTable('jobs')
        .set({ state: 'done', result_hash: hash, lease_expires_at: null })
        .where('id', '=', jobId)
        .execute();
      await tx
        .insertInto('check_results')
        .values({
          id: randomUUID(),
          account_id: scope.accountId,
          check_id: job.check_id,
          job_id: jobId,
          check_session_id: job.check_session_id,
          run_location: stored.runLocation,
          status: stored.status,
          has_failures: stored.hasFailures ? 1 : 0,
          has_errors: stored.hasErrors ? 1 : 0,
          is_degraded: stored.isDegraded ? 1 : 0,
          response_time: stored.responseTime,
          result_type: stored.resultType,
          started_at: Date.parse(stored.startedAt) || nowMs,
          stopped_at: Date.parse(stored.stoppedAt) || nowMs,
          doc: JSON.stringify(stored),
          ...analyticsColumnsOf(stored),
          created_at: nowMs,
        })
        .execute();
      let retryJobId: string | null = null;
      if (plan.retry) {
        const location = retryLocation(
          await this.#runLocations(tx, job.account_id, job.check_id),
          job.location,
          payload.retryStrategy?.sameRegion ?? true,
        );
        retryJobId = randomUUID();
        await this.#insert(
          tx,
          nextAttemptJob(payload, retryJobId, location),
          job.check_type as CheckType,
          nowMs + plan.delayMs,
        );
      }
      // A queued retry keeps the session in PROGRESS: settleSession waits for every job.
      if (job.check_session_id) await settleSession(tx, job.check_session_id, nowMs);
      return { ...base, duplicate: false, result: stored, retryJobId };
    });
    if (outcome.retryJobId) this.notify(scope.accountId);
    return outcome;
  }

  /**
   * Asserts the agent may upload artifacts of a job: it holds the job's lease, or it
   * finished the job (artifacts may follow the result).
   * @throws HttpError 404 unknown job (or another account's); 409 OUTPOST_ERR_LEASE_LOST
   *   when another agent holds or finished it, or it is queued or expired.
   */
  async assertHeldBy(scope: AgentScope, jobId: string): Promise<void> {
    const job = await this.#db
      .selectFrom('jobs')
      .select(['state', 'agent_id'])
      .where('id', '=', jobId)
      .where('account_id', '=', scope.accountId)
      .executeTakeFirst();
    if (!job) throw notFound('job', jobId);
    if ((job.state !== 'leased' && job.state !== 'done') || job.agent_id !== scope.agentId) {
      throw new HttpError(409, `lease of job ${jobId} was lost; its artifacts are not stored`, {
        jobId,
        code: 'OUTPOST_ERR_LEASE_LOST',
      });
    }
  }

  /** The check's run locations as stored now; [] when the check is gone. */
  async #runLocations(tx: Tx, accountId: string, checkId: string): Promise<string[]> {
    const row = await tx
      .selectFrom('checks')
      .select('doc')
      .where('account_id', '=', accountId)
      .where('id', '=', checkId)
      .executeTakeFirst();
    return row ? runLocationsOf(JSON.parse(row.doc) as CheckDoc) : [];
  }

  /**
   * Expires queued jobs nobody claimed in time (6 minutes by default) and
   * ends their check sessions TIMED_OUT.
   * @returns ids of the check sessions that ended.
   */
  async expireStale(nowMs: number): Promise<string[]> {
    return this.#db.transaction().execute(async (tx) => {
      const stale = await tx
        .selectFrom('jobs')
        .select(['id', 'check_session_id'])
        .where('state', '=', 'queued')
        .where('expires_at', '<=', nowMs)
        .execute();
      if (stale.length === 0) return [];
      await tx
        .updateTable('jobs')
        .set({ state: 'expired' })
        .where(
          'id',
          'in',
          stale.map((s) => s.id),
        )
        .execute();
      const sessions = [
        ...new Set(stale.map((s) => s.check_session_id).filter((s): s is string => s !== null)),
      ];
      const ended: string[] = [];
      for (const id of sessions) if (await settleSession(tx, id, nowMs)) ended.push(id);
      return ended;
    });
  }
}

/**
 * Ends a check session once all its jobs are done or expired: TIMED_OUT if any
 * expired, else the worst result status (FAILED > DEGRADED > PASSED).
 * @returns true when the session ended now.
 */
async function settleSession(tx: Tx, sessionId: string, nowMs: number): Promise<boolean> {
  const jobs = await tx
    .selectFrom('jobs')
    .select(['state'])
    .where('check_session_id', '=', sessionId)
    .execute();
  if (jobs.some((j) => j.state !== 'done' && j.state !== 'expired')) return false;
  let status = 'PASSED';
  if (jobs.some((j) => j.state === 'expired')) {
    status = 'TIMED_OUT';
  } else {
    const results = await tx
      .selectFrom('check_results')
      .select('status')
      .where('check_session_id', '=', sessionId)
      .where('result_type', '=', 'FINAL')
      .execute();
    if (results.some((r) => r.status === 'FAILED')) status = 'FAILED';
    else if (results.some((r) => r.status === 'DEGRADED')) status = 'DEGRADED';
  }
  const res = await tx
    .updateTable('check_sessions')
    .set({ status, stopped_at: nowMs })
    .where('id', '=', sessionId)
    .where('status', '=', 'PROGRESS')
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}
