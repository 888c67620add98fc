import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter, on } from 'node:events';
import type { Kysely, Transaction } from 'kysely';
import {
  type CheckResult,
  type CheckType,
  type Job,
  type JobClass,
  jobClassOf,
  type TriggerSource,
} from '../protocol/index.js';
import { linkSignal } from '../shared/linked-signal.js';
import { analyticsColumnsOf } from './analytics/columns.js';
import type { CheckDoc } from './checks.js';
import { HttpError, notFound } from './errors.js';
import type { Database } from './store/database.js';

/** Hard run limit per check type, ms (reference/check-types.md, "Operating figures"). */
export const RUN_TIMEOUT_MS: Record<CheckType, number> = {
  ICMP: 30_000,
  DNS: 30_000,
  TCP: 30_000,
  URL: 30_000,
  API: 30_000,
  HEARTBEAT: 30_000,
  BROWSER: 240_000,
  MULTI_STEP: 240_000,
  AGENTIC: 240_000,
  PLAYWRIGHT: 900_000,
};

/** Queue timing, ms. Defaults from design.md §2: 300 s leases, 6 min queue expiry. */
export type QueueOptions = { leaseMs: number; queueExpiryMs: number };

/** Which locations an agent's key lets it serve. `null` = every location of the account. */
export type AgentScope = { accountId: string; agentId: string; locations: string[] | null };

/** What `claim` needs from the agent's request. */
export type ClaimSpec = {
  checkTypes: readonly CheckType[];
  freeSlots: Record<JobClass, number>;
};

/** One run to enqueue. */
export type RunRequest = {
  check: CheckDoc;
  location: string;
  runSource: TriggerSource;
  checkSessionId: string | null;
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

  /** Builds the job an agent receives for one run. */
  static jobFor(run: RunRequest, jobId: string, accountId: string, leaseMs: number): Job {
    const c = run.check;
    return {
      jobId,
      accountId,
      check: {
        id: c.id,
        name: c.name,
        checkType: c.checkType,
        request: c.request,
        shouldFail: Boolean(c.shouldFail),
        degradedResponseTime: (c.degradedResponseTime as number | null | undefined) ?? null,
        maxResponseTime: (c.maxResponseTime as number | null | undefined) ?? null,
        degradedPacketLossThreshold: (c.degradedPacketLossThreshold as number | null | undefined) ?? null,
        maxPacketLossThreshold: (c.maxPacketLossThreshold as number | null | undefined) ?? null,
        runtimeId: (c.runtimeId as string | null | undefined) ?? null,
      },
      environmentVariables: (c.environmentVariables ?? []).map((v) => ({
        key: v.key,
        value: v.value,
        secret: Boolean(v.secret),
      })),
      runLocation: run.location,
      runSource: run.runSource,
      checkSessionId: run.checkSessionId,
      attempt: 1,
      timeoutMs: RUN_TIMEOUT_MS[c.checkType],
      leaseMs,
    };
  }

  /** Adds runs to the queues inside the caller's transaction; call `notify` after commit. */
  async enqueue(tx: Tx, accountId: string, runs: RunRequest[], nowMs: number): Promise<string[]> {
    const ids: string[] = [];
    for (const run of runs) {
      const id = randomUUID();
      ids.push(id);
      await tx
        .insertInto('jobs')
        .values({
          id,
          account_id: accountId,
          check_id: run.check.id,
          check_session_id: run.checkSessionId,
          location: run.location,
          job_class: jobClassOf(run.check.checkType),
          check_type: run.check.checkType,
          state: 'queued',
          attempt: 1,
          claims: 0,
          payload: JSON.stringify(JobQueue.jobFor(run, id, accountId, this.#options.leaseMs)),
          enqueued_at: nowMs,
          expires_at: nowMs + this.#options.queueExpiryMs,
          agent_id: null,
          lease_expires_at: null,
          result_hash: null,
        })
        .execute();
    }
    return ids;
  }

  /** Wakes long polls of the account. */
  notify(accountId: string): void {
    this.#events.emit(`jobs:${accountId}`);
  }

  /**
   * Hands out ready jobs: queued and unexpired, or leased with an expired
   * lease (its agent died). Never more than the free slots per class.
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
              eb.and([eb('state', '=', 'queued'), eb('expires_at', '>', nowMs)]),
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
   * Stores the final result of a job, exactly once. A repeat of the accepted
   * result from the same agent is acknowledged as a duplicate.
   * @returns the job's check and check session ids, and whether this was a duplicate.
   * @throws HttpError 404 unknown job; 409 lease lost (another agent holds or finished it, or it expired).
   */
  async submitResult(
    scope: AgentScope,
    jobId: string,
    result: CheckResult,
    nowMs: number,
  ): Promise<{ duplicate: boolean; checkSessionId: string | null; checkId: string }> {
    const hash = createHash('sha256').update(JSON.stringify(result)).digest('hex');
    return this.#db.transaction().execute(async (tx) => {
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
      if (job.state === 'done') {
        if (job.agent_id === scope.agentId && job.result_hash === hash) {
          return { duplicate: true, checkSessionId: job.check_session_id, checkId: job.check_id };
        }
        throw lost();
      }
      if (job.state !== 'leased' || job.agent_id !== scope.agentId) throw lost();
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
          run_location: result.runLocation,
          status: result.status,
          has_failures: result.hasFailures ? 1 : 0,
          has_errors: result.hasErrors ? 1 : 0,
          is_degraded: result.isDegraded ? 1 : 0,
          response_time: result.responseTime,
          result_type: result.resultType,
          started_at: Date.parse(result.startedAt) || nowMs,
          stopped_at: Date.parse(result.stoppedAt) || nowMs,
          doc: JSON.stringify(result),
          ...analyticsColumnsOf(result),
          created_at: nowMs,
        })
        .execute();
      if (job.check_session_id) await settleSession(tx, job.check_session_id, nowMs);
      return { duplicate: false, checkSessionId: job.check_session_id, checkId: job.check_id };
    });
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
