import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Insertable, Kysely } from 'kysely';
import { CLAIM_ACK_WINDOW_MS, type CheckType, type Job, type JobClass } from '../../../protocol/index.js';
import type { StoreNotifier } from '../../platform/store/store-notifier.js';
import type { Database } from '../../platform/store/database.js';
import { type ResultIngestOptions, ResultIngest } from '../results/ingest.js';
import { endRunWithoutResult } from '../sessions/sessions.js';
import { JobBuilder, type RunRequest } from './jobs.js';
import { openPayload, queuedJobRow } from './payload.js';
import { refuse } from './refusals.js';
import { type JobRow, JobQueries, type Tx } from './store.js';
import { armWakeup, type Wakeup } from './wakeup.js';
import { servedLocations } from '../../resources/index.js';

export type { RunRequest } from './jobs.js';

/**
 * Queue options. Times in ms. Defaults from docs/protocol.md: 300 s leases, 6 min queue expiry;
 * `maxClaims` 3 (issue 9, 2.4). The result options (`resultHooks`, `onResultStored`,
 * `resultRecorders`) are handed to the queue's ResultIngest (runs/results/ingest.ts).
 */
export type QueueOptions = {
  leaseMs: number;
  queueExpiryMs: number;
  /** Claims a job may take; a lease lost after the last one ends the run with an error result. Default 3. */
  maxClaims?: number;
} & Omit<ResultIngestOptions, 'queueExpiryMs'>;

/**
 * Which agent a request comes from and what its key lets it serve: `locations` are the run locations its
 * jobs may have (a private-location key: its own slug only; an account key: data-center locations only).
 * Null: every location (the service's own reads, never an agent). `agent` is the agent as its results record
 * it (docs/protocol.md, "Run locations").
 */
export type AgentScope = {
  accountId: string;
  agentId: string;
  locations: string[] | null;
  agent?: { id: string; version: string; hostName: string | null };
};

/** What `claim` needs from the agent's request. */
export type ClaimSpec = {
  checkTypes: readonly CheckType[];
  freeSlots: Record<JobClass, number>;
  /** Runtime ids the agent holds; a job whose script needs another runtime is not handed out. Default []. */
  runtimes?: readonly string[];
  /**
   * The agent acknowledges what it receives (`POST /v1/agent/jobs/ack`): the jobs are held for it for
   * CLAIM_ACK_WINDOW_MS and their leases start at the acknowledgement. False (older agents): leased at once.
   */
  acknowledges?: boolean;
};

/** What one expiry pass ended (see `expireStale`). */
export type ExpiryOutcome = {
  /** Check sessions that ended in this pass. */
  endedSessions: string[];
  /** Jobs whose lease lapsed and that are queued again for another agent. */
  requeued: string[];
  /** Jobs ended with an error result (lease lapsed past the run's usefulness, or claims used up). */
  failed: string[];
  /**
   * Runs that ended without running, deleted without a result and recorded in `expired_runs` with the reason:
   * queued jobs nobody claimed in time, and claims never acknowledged past the run's usefulness.
   */
  expired: string[];
};

/** Rows one expiry pass handles per kind at most; the caller runs another pass while one comes back full. */
export const EXPIRY_BATCH = 500;

/**
 * The per-location job queues, kept in the store. Claims are atomic
 * (one transaction; SQLite serialises writers, PostgreSQL would add
 * `FOR UPDATE SKIP LOCKED`). Wakes long polls through an in-process emitter.
 *
 * The queue holds queued and leased jobs only: a job that ends (result, queue expiry, a lease
 * lost past the run's usefulness, claims used up, its check deleted) is deleted in the same
 * transaction, payload (merged secrets) included. Results keep who posted them and the body's
 * hash, so a repeated post is still recognised. A job is never leased twice to one agent: a
 * holder whose lease lapsed (a stopped process, a partition) gets 409 OUTPOST_ERR_LEASE_LOST on
 * renewal, upload and result, and its claims never return the job (issue 9, 2.4, 2.5, 2.11).
 * Its SQL is in JobQueries (store.ts).
 *
 * Results are not stored here: `results` (ResultIngest, runs/results/ingest.ts) stores them, plans
 * retries and queues the next attempt; check sessions are settled by runs/sessions (settleSession).
 * The queue ends runs itself only on expiry: a run without a result, or one whose lease lapsed
 * for good, whose error result it hands to `results`.
 */
export class JobQueue {
  readonly #db: Kysely<Database>;
  readonly #store: JobQueries;
  readonly #options: { leaseMs: number; queueExpiryMs: number; maxClaims: number };
  readonly #events = new EventEmitter({ captureRejections: false });
  #notifier: StoreNotifier | null = null;
  /**
   * Where results are stored (runs/results/ingest.ts): the agent's results of this queue's jobs,
   * the error results of runs the queue ends, and the service's own results. Built from the result
   * options of QueueOptions.
   */
  readonly results: ResultIngest;

  constructor(db: Kysely<Database>, options: QueueOptions) {
    const { leaseMs, queueExpiryMs, maxClaims = 3, ...resultOptions } = options;
    this.#db = db;
    this.#store = new JobQueries(db);
    this.#options = { leaseMs, queueExpiryMs, maxClaims };
    this.#events.setMaxListeners(0);
    this.results = new ResultIngest(db, this, { ...resultOptions, queueExpiryMs });
  }

  /** How long a claim or a renewal leases a job, ms (QueueOptions.leaseMs). */
  get leaseMs(): number {
    return this.#options.leaseMs;
  }

  /** How long a queued job waits for a claim before it expires, ms (QueueOptions.queueExpiryMs). */
  get queueExpiryMs(): number {
    return this.#options.queueExpiryMs;
  }

  /** Claims a job may take before a lost lease ends it (QueueOptions.maxClaims). */
  get maxClaims(): number {
    return this.#options.maxClaims;
  }

  /**
   * Adds runs to the queues inside the caller's transaction; call `notify` after commit.
   * Each job is built from the store as it is now (see JobBuilder in jobs.ts). The runs of one
   * check in one call are one run (`round_id`, `checkRunId` in the protocol): a parallel check's
   * locations. `nowMs` is epoch ms: the jobs are claimable from then.
   * @returns the new job ids, in the order of `runs`.
   */
  async enqueue(tx: Tx, accountId: string, runs: RunRequest[], nowMs: number): Promise<string[]> {
    const builder = new JobBuilder(tx, accountId);
    const store = new JobQueries(tx);
    const ids: string[] = [];
    const rows: Insertable<Database['jobs']>[] = [];
    // The runs of one check in one call are one run (round): a parallel check's locations.
    const rounds = new Map<string, string>();
    for (const run of runs) {
      const id = randomUUID();
      ids.push(id);
      const job = await builder.build(run, { jobId: id, nowMs, leaseMs: this.#options.leaseMs });
      let roundId = rounds.get(run.check.id);
      if (!roundId) {
        roundId = id;
        rounds.set(run.check.id, roundId);
      }
      rows.push(
        queuedJobRow(store, {
          job,
          checkType: run.check.checkType,
          readyAtMs: nowMs,
          queueExpiryMs: this.#options.queueExpiryMs,
          roundId,
        }),
      );
    }
    await store.insertJobs(rows);
    return ids;
  }

  /** Wakes long polls of the account (on every replica, with a notifier attached). */
  notify(accountId: string): void {
    this.#events.emit(`jobs:${accountId}`);
    this.#notifier?.publish('outpost_jobs', accountId);
  }

  /**
   * Carries this queue's wake-ups to the other replicas on the store and theirs to this one's waiters
   * (PostgreSQL's LISTEN/NOTIFY, platform/store/store-notifier.ts). With it, waiters look at the store
   * again every 2–5 s (jittered) as a safety net, instead of every second.
   */
  attachNotifier(notifier: StoreNotifier): void {
    this.#notifier = notifier;
    notifier.subscribe(({ channel, id }) => {
      if (channel !== 'outpost_jobs' && channel !== 'outpost_session') return;
      const prefix = channel === 'outpost_jobs' ? 'jobs:' : 'session:';
      if (id !== '*') {
        this.#events.emit(`${prefix}${id}`);
        return;
      }
      for (const name of this.#events.eventNames()) {
        if (typeof name === 'string' && name.startsWith(prefix)) this.#events.emit(name);
      }
    });
  }

  /** How long a waiter waits before it looks at the store again without a wake-up, ms. */
  safetyPollMs(): number {
    return this.#notifier ? 2000 + Math.floor(Math.random() * 3000) : 1000;
  }

  /**
   * Hands out ready jobs: queued, due (`enqueued_at` reached: a retry waits out its back-off),
   * unexpired, of the scope's locations and the agent's check types, needing no runtime or one
   * the agent holds, and never lost by this agent before. Never more than the free slots per
   * class. A job whose check was deleted is dropped instead of handed out.
   */
  async claim(scope: AgentScope, spec: ClaimSpec, nowMs: number): Promise<Job[]> {
    const lapse: ExpiryOutcome = { endedSessions: [], requeued: [], failed: [], expired: [] };
    const jobs = await this.#transaction(async (store) => {
      // Lapsed leases of the account first, so a job whose agent died goes to this one now
      // rather than at the next expiry pass.
      await this.#endLapsedLeases(store, nowMs, lapse, new Set(), scope.accountId);
      const jobs: Job[] = [];
      for (const jobClass of ['uptime', 'main'] as const) {
        const limit = spec.freeSlots[jobClass];
        if (limit <= 0 || spec.checkTypes.length === 0) continue;
        const rows = await store.claimable({
          accountId: scope.accountId,
          jobClass,
          nowMs,
          checkTypes: spec.checkTypes,
          runtimes: spec.runtimes ?? [],
          agentId: scope.agentId,
          locations: scope.locations,
          limit,
        });
        const existing = await store.existingChecks(rows.map((row) => row.check_id));
        const leased: string[] = [];
        for (const row of rows) {
          if (!existing.has(row.check_id)) {
            // The check was deleted after the run was queued: nothing to run it for.
            await store.deleteJob(row.id);
            if (row.check_session_id && (await endRunWithoutResult(store.db, row.check_session_id, nowMs))) {
              lapse.endedSessions.push(row.check_session_id);
            }
            continue;
          }
          leased.push(row.id);
          jobs.push({ ...openPayload(store, row.id, row.payload), leaseMs: this.#options.leaseMs });
        }
        // An acknowledging agent holds the jobs for the acknowledgement window; their leases start when it
        // says it received them (acknowledge), so a claim answered to nobody never runs as a failure.
        if (spec.acknowledges === true) {
          await store.lease(leased, scope.agentId, nowMs + CLAIM_ACK_WINDOW_MS, null);
        } else {
          await store.lease(leased, scope.agentId, nowMs + this.#options.leaseMs, nowMs);
        }
      }
      return jobs;
    });
    this.results.announce({ sessions: lapse.endedSessions, resultsStored: lapse.failed.length > 0 });
    return jobs;
  }

  /**
   * The agent says it received the jobs of a claim's answer: each job it holds (leased to it, unlapsed at
   * `nowMs`, in its scope) is acknowledged and its lease starts now, for `leaseMs`. One transaction.
   * @returns the jobs acknowledged, and those lost: gone, another agent's, or whose hold lapsed (they went
   *   back to the queue); the agent must not run those.
   */
  async acknowledge(
    scope: AgentScope,
    jobIds: readonly string[],
    nowMs: number,
  ): Promise<{ acknowledged: string[]; lost: string[] }> {
    const unique = [...new Set(jobIds)];
    const acknowledged = await this.#transaction((store) =>
      store.acknowledge(scope, unique, nowMs, nowMs + this.#options.leaseMs),
    );
    const held = new Set(acknowledged);
    return { acknowledged: unique.filter((id) => held.has(id)), lost: unique.filter((id) => !held.has(id)) };
  }

  /**
   * Long-poll claim: claims at once, else waits for new jobs (or a lease to
   * expire, checked every second) until `waitMs` passes or `signal` aborts.
   */
  async claimWait(scope: AgentScope, spec: ClaimSpec, waitMs: number, signal: AbortSignal): Promise<Job[]> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      // Armed before the claim reads the queue: a job queued while it reads wakes this wait at once.
      const wake = armWakeup(this.#events, `jobs:${scope.accountId}`);
      try {
        const jobs = await this.claim(scope, spec, Date.now());
        const left = deadline - Date.now();
        if (jobs.length > 0 || left <= 0 || signal.aborted) return jobs;
        await wake.wait(Math.min(left, this.safetyPollMs()), signal);
      } finally {
        wake.dispose();
      }
    }
  }

  /**
   * Listens for the end of a check session from now on (emitSession, on this replica or, with a notifier,
   * any other): arm it before reading the session, then wait on it, so an end stored in between is not
   * missed. The caller disposes of it.
   */
  listenForSession(sessionId: string): Wakeup {
    return armWakeup(this.#events, `session:${sessionId}`);
  }

  /** Wakes waiters on a check session (on every replica, with a notifier attached). */
  emitSession(sessionId: string): void {
    this.#events.emit(`session:${sessionId}`);
    this.#notifier?.publish('outpost_session', sessionId);
  }

  /**
   * Extends the lease of a job the agent holds: one conditional UPDATE (the job is leased, to
   * this agent, in the scope's account and locations, and the lease has not lapsed by `nowMs`),
   * so it cannot race a re-claim.
   * @returns the new lease end, epoch ms.
   * @throws HttpError 404 unknown job (or one outside the scope); 409 OUTPOST_ERR_LEASE_LOST
   *   when the lease was lost (the job finished, was queued again or is held by another agent).
   */
  async renewLease(scope: AgentScope, jobId: string, nowMs: number): Promise<number> {
    const leaseExpiresAt = nowMs + this.#options.leaseMs;
    if (await this.#store.renewLease(scope, jobId, nowMs, leaseExpiresAt)) return leaseExpiresAt;
    return refuse(this.#store, scope, jobId, 'the lease is not renewed');
  }

  /**
   * Asserts the agent may upload artifacts of a job: it holds the job's lease, unlapsed at `nowMs`. Uploads come
   * before the result; once the job has ended, nothing more is stored for it.
   * @throws HttpError 404 unknown job (or one outside the scope); 409 OUTPOST_ERR_LEASE_LOST
   *   when another agent holds it, it is queued, or it has ended.
   */
  async assertHeldBy(scope: AgentScope, jobId: string, nowMs: number = Date.now()): Promise<void> {
    if (await this.#store.isHeldBy(scope, jobId, nowMs)) return;
    await refuse(this.#store, scope, jobId, 'its artifacts are not stored');
  }

  /**
   * One expiry pass, over due rows only (indexes `jobs_queue_expiry`, `jobs_lease_expiry`):
   * - a queued job nobody claimed by `expires_at` (6 minutes by default) is deleted, the run is recorded
   *   in `expired_runs` with the reason (no connected agent serves its location, or none had a free
   *   slot), and its check session ends TIMED_OUT once its other runs end;
   * - a claimed job its agent never acknowledged goes back to the queue, its claim not counted, or
   *   past `expires_at` expires like an unclaimed one (the agent never received it);
   * - a leased job whose lease lapsed (its agent died or stopped) is queued again for another
   *   agent while the run is still useful (before `expires_at`) and claims are left; else the
   *   run ends with an error result (FAILED, `hasErrors`) saying why, stored as the location's
   *   FINAL result, so its session settles and a scheduled run shows what happened.
   * At most 500 rows of each kind per pass.
   */
  async expireStale(nowMs: number): Promise<ExpiryOutcome> {
    const outcome: ExpiryOutcome = { endedSessions: [], requeued: [], failed: [], expired: [] };
    const accounts = new Set<string>();
    await this.#transaction(async (store) => {
      const expiredJobs = await store.expiredQueued(nowMs, EXPIRY_BATCH);
      const served = new Map<string, ReadonlyMap<string, number>>();
      for (const job of expiredJobs) {
        let locations = served.get(job.account_id);
        if (!locations) {
          locations = await servedLocations(store.db, job.account_id, nowMs);
          served.set(job.account_id, locations);
        }
        await expireRun(
          store,
          job,
          unclaimedReason(job.location, locations, this.#options.queueExpiryMs),
          nowMs,
          outcome,
        );
      }
      await this.#endLapsedLeases(store, nowMs, outcome, accounts);
    });
    for (const account of accounts) this.notify(account);
    this.results.announce({ sessions: outcome.endedSessions, resultsStored: outcome.failed.length > 0 });
    return outcome;
  }

  /**
   * Handles leased jobs whose lease lapsed by `nowMs` (of one account when `accountId` is
   * given): queued again for another agent, or ended with an error result (see expireStale).
   */
  async #endLapsedLeases(
    store: JobQueries,
    nowMs: number,
    outcome: ExpiryOutcome,
    accounts: Set<string>,
    accountId?: string,
  ): Promise<void> {
    for (const job of await store.lapsedLeases(nowMs, EXPIRY_BATCH, accountId)) {
      const lostBy = job.agent_id ?? '';
      if (job.acknowledged_at === null) {
        // The agent never said it received the job (its claim's answer went nowhere): the job never ran. It
        // goes back to the queue, its claim not counted, or, past its usefulness, the run expires with that
        // reason; never a failure of the target.
        if (nowMs < job.expires_at) {
          await store.release(job.id);
          outcome.requeued.push(job.id);
          accounts.add(job.account_id);
        } else {
          const reason = `agent ${lostBy} claimed the run but never confirmed it received it, and the run is past its deadline`;
          await expireRun(store, job, reason, nowMs, outcome);
        }
        continue;
      }
      if (job.claims < this.#options.maxClaims && nowMs < job.expires_at) {
        await store.requeue(job.id, job.lost_agents ? `${job.lost_agents},${lostBy}` : lostBy);
        outcome.requeued.push(job.id);
        accounts.add(job.account_id);
        continue;
      }
      const reason =
        job.claims >= this.#options.maxClaims
          ? `the job was claimed ${job.claims} times without a result; the last agent stopped renewing its lease`
          : 'the agent running the job stopped renewing its lease and the run is past its deadline';
      const ended = await this.results.endRunWithError(store.db, job, reason, nowMs);
      outcome.failed.push(job.id);
      if (ended && job.check_session_id) outcome.endedSessions.push(job.check_session_id);
    }
  }

  /** Runs `work` in one transaction of the store. */
  #transaction<T>(work: (store: JobQueries) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute((tx) => work(new JobQueries(tx)));
  }
}

/**
 * Ends a run that never ran: deletes its job, records it in `expired_runs` with `reason`, and ends its check
 * session (TIMED_OUT) once its other runs ended.
 */
async function expireRun(
  store: JobQueries,
  job: Pick<JobRow, 'id' | 'account_id' | 'check_id' | 'check_session_id' | 'round_id' | 'location'>,
  reason: string,
  nowMs: number,
  outcome: ExpiryOutcome,
): Promise<void> {
  await store.deleteJob(job.id);
  await store.recordExpiredRun({
    id: job.id,
    account_id: job.account_id,
    check_id: job.check_id,
    check_session_id: job.check_session_id,
    round_id: job.round_id,
    location: job.location,
    reason,
    expired_at: nowMs,
  });
  outcome.expired.push(job.id);
  if (job.check_session_id && (await endRunWithoutResult(store.db, job.check_session_id, nowMs))) {
    outcome.endedSessions.push(job.check_session_id);
  }
}

/**
 * Why a queued run of `location` was not claimed within `queueExpiryMs`: no connected agent serves the location
 * (`served`, servedLocations), or its agents had no free slot in time.
 */
export function unclaimedReason(
  location: string,
  served: ReadonlyMap<string, number>,
  queueExpiryMs: number,
): string {
  const minutes = Math.round(queueExpiryMs / 60_000);
  const within = minutes >= 1 ? `${minutes} min` : `${Math.round(queueExpiryMs / 1000)} s`;
  const agents = served.get(location) ?? 0;
  if (agents === 0) return `no connected agent serves location ${location}`;
  return `the ${agents === 1 ? 'agent' : `${agents} agents`} of location ${location} had no free slot for it within ${within}`;
}
