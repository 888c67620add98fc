import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter, on } from 'node:events';
import type { Kysely } from 'kysely';
import { planRetry } from '../../../protocol/retry.js';
import {
  type CheckResult,
  type CheckType,
  type Job,
  type JobClass,
  jobClassOf,
} from '../../../protocol/index.js';
import { linkSignal } from '../../../common/linked-signal.js';
import { runLocationsOf } from '../../checks/checks.js';
import { HttpError, notFound } from '../../platform/http/errors.js';
import { JobBuilder, nextAttemptJob, type RunRequest } from './jobs.js';
import { enqueueResultHooks } from '../results/outbox.js';
import { type JobRow, QueueStore, type ResultOwner, type Tx } from './store.js';
import { retryLocation } from '../results/retries.js';
import { SecretBox, secretBoxOf } from '../../platform/store/secret-box.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, type SessionStatus } from '../../platform/store/schema.js';

export type { RunRequest } from './jobs.js';

/**
 * Queue options. Times in ms. Defaults from docs/protocol.md: 300 s leases, 6 min queue expiry;
 * `maxClaims` 3 (issue 9, 2.4).
 */
export type QueueOptions = {
  leaseMs: number;
  queueExpiryMs: number;
  /** Claims a job may take; a lease lost after the last one ends the run with an error result. Default 3. */
  maxClaims?: number;
  /**
   * Names of the result hooks: each new result gets one `result_outbox` row per name, written in
   * the result's transaction (see ResultOutbox in outbox.ts). Default none.
   */
  resultHookNames?: readonly string[];
  /** Called after a transaction that wrote outbox rows committed (the outbox worker's wake-up). */
  onResultStored?: () => void;
  /**
   * Work done inside the transaction that stores each result, after the result row is written
   * (alerting: the alert state, alerts and notifications commit with the result or not at all;
   * docs/alerting.md, "Exactly once"). A recorder that throws rolls the result back.
   */
  resultRecorders?: readonly ResultRecorder[];
};

/** A result just written, as recorders see it inside its transaction. Times are epoch ms. */
export type StoredResultRef = {
  resultId: string;
  accountId: string;
  checkId: string;
  /** The run the result belongs to: shared by every location of a round, kept by retries. */
  roundId: string | null;
  result: CheckResult;
  nowMs: number;
};

/** See QueueOptions.resultRecorders. */
export type ResultRecorder = (tx: Tx, stored: StoredResultRef) => Promise<void>;

/**
 * Which agent a request comes from and what its key lets it serve. `locations` null = every
 * location of the account (an account API key); a private-location key serves its own slug only.
 */
export type AgentScope = { accountId: string; agentId: string; locations: string[] | null };

/** What `claim` needs from the agent's request. */
export type ClaimSpec = {
  checkTypes: readonly CheckType[];
  freeSlots: Record<JobClass, number>;
  /** Runtime ids the agent holds; a job whose script needs another runtime is not handed out. Default []. */
  runtimes?: readonly string[];
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

/** What one expiry pass ended (see `expireStale`). */
export type ExpiryOutcome = {
  /** Check sessions that ended in this pass. */
  endedSessions: string[];
  /** Jobs whose lease lapsed and that are queued again for another agent. */
  requeued: string[];
  /** Jobs ended with an error result (lease lapsed past the run's usefulness, or claims used up). */
  failed: string[];
  /** Queued jobs nobody claimed in time, deleted without a result. */
  expired: string[];
};

/** Check types whose job always runs a script, so always needs its runtime. */
const SCRIPT_TYPES: ReadonlySet<CheckType> = new Set(['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT', 'AGENTIC']);

/** Rows one expiry pass handles per kind at most; the next pass (a second later) takes the rest. */
const EXPIRY_BATCH = 500;

/**
 * The runtime a job needs on its agent: the check's `runtimeId` when the job runs a script
 * (browser-like types, or an API check with a setup or teardown script), else null.
 */
export function requiredRuntimeOf(job: Job, checkType: CheckType): string | null {
  const runsScript = SCRIPT_TYPES.has(checkType) || Boolean(job.setupScript) || Boolean(job.tearDownScript);
  return runsScript ? job.check.runtimeId : null;
}

/** The place a job's payload is sealed for (SecretBox AAD): a payload copied to another row does not open. */
const payloadPlace = (jobId: string) => `jobs:${jobId}:payload`;

/**
 * A job's payload as stored: sealed with the store's SecretBox (it holds the merged secret variables and
 * client-certificate keys, issue 9, 1.7); a row written before sealing is plain JSON.
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when it cannot be opened (wrong key, damaged).
 */
function openPayload(store: QueueStore, jobId: string, stored: string): Job {
  const text = SecretBox.isSealed(stored) ? secretBoxOf(store.db).open(stored, payloadPlace(jobId)) : stored;
  return JSON.parse(text) as Job;
}

const leaseLost = (jobId: string, what: string) =>
  new HttpError('OUTPOST_ERR_LEASE_LOST', `lease of job ${jobId} was lost; ${what}`, { jobId });

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
 * Its SQL is in QueueStore (queue-store.ts).
 */
export class JobQueue {
  readonly #db: Kysely<Database>;
  readonly #store: QueueStore;
  readonly #options: Required<Omit<QueueOptions, 'onResultStored'>> & Pick<QueueOptions, 'onResultStored'>;
  readonly #events = new EventEmitter({ captureRejections: false });

  constructor(db: Kysely<Database>, options: QueueOptions) {
    this.#db = db;
    this.#store = new QueueStore(db);
    this.#options = { maxClaims: 3, resultHookNames: [], resultRecorders: [], ...options };
    this.#events.setMaxListeners(0);
  }

  get leaseMs(): number {
    return this.#options.leaseMs;
  }

  /** Claims a job may take before a lost lease ends it (QueueOptions.maxClaims). */
  get maxClaims(): number {
    return this.#options.maxClaims;
  }

  /**
   * Adds runs to the queues inside the caller's transaction; call `notify` after commit.
   * Each job is built from the store as it is now (see JobBuilder in jobs.ts).
   * @returns the new job ids, in the order of `runs`.
   */
  async enqueue(tx: Tx, accountId: string, runs: RunRequest[], nowMs: number): Promise<string[]> {
    const builder = new JobBuilder(tx, accountId);
    const store = new QueueStore(tx);
    const ids: string[] = [];
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
      await this.#insert(store, job, run.check.checkType, nowMs, roundId);
    }
    return ids;
  }

  /**
   * Inserts a queued job. `readyAtMs` is when it may be claimed (`enqueued_at`; later than
   * now for a retry that waits its back-off); it expires `queueExpiryMs` after that.
   */
  async #insert(
    store: QueueStore,
    job: Job,
    checkType: CheckType,
    readyAtMs: number,
    roundId: string | null,
  ): Promise<void> {
    await store.insertJob({
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
      payload: secretBoxOf(store.db).seal(JSON.stringify(job), payloadPlace(job.jobId)),
      enqueued_at: readyAtMs,
      expires_at: readyAtMs + this.#options.queueExpiryMs,
      agent_id: null,
      lease_expires_at: null,
      result_hash: null,
      runtime_id: requiredRuntimeOf(job, checkType),
      round_id: roundId,
    });
  }

  /** Wakes long polls of the account. */
  notify(accountId: string): void {
    this.#events.emit(`jobs:${accountId}`);
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
        for (const row of rows) {
          if (!(await store.checkExists(row.check_id))) {
            // The check was deleted after the run was queued: nothing to run it for.
            await store.deleteJob(row.id);
            if (row.check_session_id && (await endRunWithoutResult(store, row.check_session_id, nowMs))) {
              lapse.endedSessions.push(row.check_session_id);
            }
            continue;
          }
          await store.lease(row.id, scope.agentId, nowMs + this.#options.leaseMs);
          jobs.push({ ...openPayload(store, row.id, row.payload), leaseMs: this.#options.leaseMs });
        }
      }
      return jobs;
    });
    for (const id of lapse.endedSessions) this.emitSession(id);
    if (lapse.failed.length > 0) this.#options.onResultStored?.();
    return jobs;
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
   * Stores the result of a job, exactly once, and deletes the job (payload included). A repeat
   * of the accepted result from the same agent is acknowledged as a duplicate. In the same
   * transaction: the check session is settled when this was its last job (so a waiter reading
   * the session right after sees it ended), and one `result_outbox` row per result hook is
   * written (hooks run later, in the ResultOutbox worker, never inside this call).
   *
   * Retries: when the job's `retryStrategy` calls for another attempt (planRetry of
   * src/protocol/retry.ts, from the stored job's attempt and `runStartedAt` and this result),
   * the result is stored as `resultType` ATTEMPT and, in the same transaction, the next
   * attempt is queued: same check, session, run source, `checkRunId` and `runStartedAt`,
   * `attempt + 1`, claimable from now + the back-off, in the same location when `sameRegion`
   * and else the check's next one (see retryLocation). Otherwise the result is FINAL. The
   * agent's own `resultType` is overridden either way, and so is `runLocation` (the job's).
   * @throws HttpError 404 unknown job (or one outside the scope); 409 OUTPOST_ERR_LEASE_LOST
   *   when the agent does not hold the job (another agent holds or finished it, it was queued
   *   again after this agent's lease lapsed, or it ended).
   */
  async submitResult(
    scope: AgentScope,
    jobId: string,
    result: CheckResult,
    nowMs: number,
  ): Promise<SubmitOutcome> {
    const hash = createHash('sha256').update(JSON.stringify(result)).digest('hex');
    const outcome = await this.#transaction(async (store): Promise<SubmitOutcome> => {
      const job = await store.job(scope, jobId);
      if (!job) {
        const prior = await store.resultOf(scope, jobId);
        if (prior && prior.agent_id === scope.agentId && prior.result_hash === hash) {
          return {
            checkSessionId: prior.check_session_id,
            checkId: prior.check_id,
            duplicate: true,
            result: readDoc(prior.doc),
            retryJobId: null,
          };
        }
        if (prior) throw leaseLost(jobId, 'its result is not stored');
        throw notFound('job', jobId);
      }
      if (job.state !== 'leased' || job.agent_id !== scope.agentId || Number(job.lease_expires_at) <= nowMs) {
        throw leaseLost(jobId, 'its result is not stored');
      }

      const payload = openPayload(store, job.id, job.payload);
      const plan = planRetry({
        strategy: payload.retryStrategy ?? null,
        attempt: job.attempt,
        runStartedAtMs: Date.parse(payload.runStartedAt ?? '') || Number(job.enqueued_at),
        nowMs,
        outcome: result,
      });
      const stored: CheckResult = {
        ...result,
        runLocation: job.location,
        resultType: plan.retry ? 'ATTEMPT' : 'FINAL',
      };
      await this.#storeResult(store, job, stored, { agentId: scope.agentId, hash, nowMs });
      let retryJobId: string | null = null;
      if (plan.retry) {
        const location = retryLocation(
          await runLocations(store, job.account_id, job.check_id),
          job.location,
          payload.retryStrategy?.sameRegion ?? true,
        );
        retryJobId = randomUUID();
        await this.#insert(
          store,
          nextAttemptJob(payload, retryJobId, location),
          job.check_type,
          nowMs + plan.delayMs,
          job.round_id ?? job.id,
        );
      }
      // A queued retry keeps the session in PROGRESS: settleSession waits for every job.
      if (job.check_session_id) await settleSession(store, job.check_session_id, nowMs);
      return {
        checkSessionId: job.check_session_id,
        checkId: job.check_id,
        duplicate: false,
        result: stored,
        retryJobId,
      };
    });
    if (outcome.retryJobId) this.notify(scope.accountId);
    if (!outcome.duplicate) this.#options.onResultStored?.();
    return outcome;
  }

  /**
   * Stores a result of `job` and deletes the job, with one outbox row per result hook.
   * `agentId` null: a result the service wrote (a run ended without the agent's result).
   */
  async #storeResult(
    store: QueueStore,
    job: JobRow,
    stored: CheckResult,
    by: { agentId: string | null; hash: string | null; nowMs: number },
  ): Promise<string> {
    const resultId = randomUUID();
    await store.deleteJob(job.id);
    await this.#record(store, resultId, job, stored, by);
    return resultId;
  }

  /**
   * Writes a result row, one outbox row per result hook and the recorders' rows (alerting), in
   * the caller's transaction.
   */
  async #record(
    store: QueueStore,
    resultId: string,
    owner: ResultOwner,
    stored: CheckResult,
    by: { agentId: string | null; hash: string | null; nowMs: number },
  ): Promise<void> {
    await store.insertResult(resultId, owner, stored, by);
    await enqueueResultHooks(store.db, this.#options.resultHookNames, {
      accountId: owner.account_id,
      resultId,
      nowMs: by.nowMs,
    });
    for (const record of this.#options.resultRecorders ?? []) {
      await record(store.db, {
        resultId,
        accountId: owner.account_id,
        checkId: owner.check_id,
        roundId: owner.round_id,
        result: stored,
        nowMs: by.nowMs,
      });
    }
  }

  /**
   * Stores a FINAL result the service itself observed, for a check no agent runs (a heartbeat
   * that was pinged, or became late): a run of its own (`job_id` = `round_id` = a new id), with
   * the result hooks and recorders of any result, in `tx` when given (so the caller's state
   * change commits with it) or in a transaction of its own.
   * @returns the new result's id.
   */
  async storeServiceResult(
    input: { accountId: string; checkId: string; result: CheckResult; nowMs: number },
    tx?: Tx,
  ): Promise<string> {
    const resultId = randomUUID();
    const runId = randomUUID();
    const owner: ResultOwner = {
      id: runId,
      account_id: input.accountId,
      check_id: input.checkId,
      check_session_id: null,
      round_id: runId,
    };
    const by = { agentId: null, hash: null, nowMs: input.nowMs };
    if (tx) {
      await this.#record(new QueueStore(tx), resultId, owner, input.result, by);
    } else {
      await this.#transaction((store) => this.#record(store, resultId, owner, input.result, by));
    }
    // With a caller's transaction the hooks' rows are only seen after its commit; the outbox
    // worker also polls, so an early wake-up costs nothing.
    this.#options.onResultStored?.();
    return resultId;
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
   * - a queued job nobody claimed by `expires_at` (6 minutes by default) is deleted and its
   *   check session ends TIMED_OUT once its other runs end;
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
      for (const job of await store.expiredQueued(nowMs, EXPIRY_BATCH)) {
        await store.deleteJob(job.id);
        outcome.expired.push(job.id);
        if (job.check_session_id && (await endRunWithoutResult(store, job.check_session_id, nowMs))) {
          outcome.endedSessions.push(job.check_session_id);
        }
      }
      await this.#endLapsedLeases(store, nowMs, outcome, accounts);
    });
    for (const account of accounts) this.notify(account);
    for (const id of outcome.endedSessions) this.emitSession(id);
    if (outcome.failed.length > 0) this.#options.onResultStored?.();
    return outcome;
  }

  /**
   * Handles leased jobs whose lease lapsed by `nowMs` (of one account when `accountId` is
   * given): queued again for another agent, or ended with an error result (see expireStale).
   */
  async #endLapsedLeases(
    store: QueueStore,
    nowMs: number,
    outcome: ExpiryOutcome,
    accounts: Set<string>,
    accountId?: string,
  ): Promise<void> {
    for (const job of await store.lapsedLeases(nowMs, EXPIRY_BATCH, accountId)) {
      const lostBy = job.agent_id ?? '';
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
      await this.#storeResult(store, job, errorResultOf(job, reason, nowMs), {
        agentId: null,
        hash: null,
        nowMs,
      });
      outcome.failed.push(job.id);
      if (job.check_session_id && (await settleSession(store, job.check_session_id, nowMs))) {
        outcome.endedSessions.push(job.check_session_id);
      }
    }
  }

  /** Runs `work` in one transaction of the store. */
  #transaction<T>(work: (store: QueueStore) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute((tx) => work(new QueueStore(tx)));
  }
}

/**
 * Throws the answer for a job the agent does not hold: 409 when the job (or its result) is
 * in the scope, else 404 (another account's or location's jobs are not shown to exist).
 */
async function refuse(store: QueueStore, scope: AgentScope, jobId: string, what: string): Promise<never> {
  if (await store.jobInScope(scope, jobId)) throw leaseLost(jobId, what);
  if (await store.resultOf(scope, jobId)) throw leaseLost(jobId, what);
  throw notFound('job', jobId);
}

/** The check's run locations as stored now; [] when the check is gone. */
async function runLocations(store: QueueStore, accountId: string, checkId: string): Promise<string[]> {
  const doc = await store.checkDoc(accountId, checkId);
  return doc !== undefined ? runLocationsOf(readDoc(doc)) : [];
}

/** Counts a run of the session that ended without a result, then settles the session. */
async function endRunWithoutResult(store: QueueStore, sessionId: string, nowMs: number): Promise<boolean> {
  await store.countTimedOutRun(sessionId);
  return settleSession(store, sessionId, nowMs);
}

/**
 * The result the service stores for a run that ended without its agent's result: FAILED with
 * `hasErrors` (the check could not be run) and `reason` as its error message.
 */
function errorResultOf(job: JobRow, reason: string, nowMs: number): CheckResult {
  const at = new Date(nowMs).toISOString();
  return {
    status: 'FAILED',
    hasFailures: false,
    hasErrors: true,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: 0,
    startedAt: at,
    stoppedAt: at,
    errorMessage: reason,
    assertions: [],
    logs: [],
    runLocation: job.location,
    attempts: job.attempt,
    resultType: 'FINAL',
    artifacts: [],
  };
}

/**
 * Ends a check session once it has no job left: TIMED_OUT when a run ended without a result
 * (`timed_out_runs`), else the worst FINAL result status (FAILED > DEGRADED > PASSED).
 * @returns true when the session ended now.
 */
async function settleSession(store: QueueStore, sessionId: string, nowMs: number): Promise<boolean> {
  if (await store.sessionHasJobs(sessionId)) return false;
  const session = await store.sessionState(sessionId);
  if (session?.status !== 'PROGRESS') return false;
  let status: SessionStatus = 'PASSED';
  if (session.timed_out_runs > 0) {
    status = 'TIMED_OUT';
  } else {
    const statuses = await store.finalStatuses(sessionId);
    if (statuses.includes('FAILED')) status = 'FAILED';
    else if (statuses.includes('DEGRADED')) status = 'DEGRADED';
  }
  return store.endSession(sessionId, status, nowMs);
}
