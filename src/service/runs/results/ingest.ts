import { createHash, randomUUID } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { CheckResult, Job } from '../../../protocol/index.js';
import { planRetry } from '../../../protocol/retry.js';
import { runLocationsOf } from '../../checks/index.js';
import { HttpError, notFound } from '../../platform/http/errors.js';
import type { Database } from '../../platform/store/database.js';
import { isPostgres } from '../../platform/store/dialect.js';
import { readDoc } from '../../platform/store/schema.js';
import { nextAttemptJob } from '../queue/jobs.js';
import { insertQueuedJob, openPayload } from '../queue/payload.js';
import type { AgentScope } from '../queue/queue.js';
import { leaseLost } from '../queue/refusals.js';
import { type JobRow, JobQueries, type Tx } from '../queue/store.js';
import { retryLocation } from '../scheduler/locations.js';
import { settleSession } from '../sessions/sessions.js';
import type { ResultHookFilter } from './outbox.js';
import { type ResultRecorder, type ResultRecording, recordResult } from './recorders.js';
import type { ResultAuthor, ResultOwner } from './store.js';
import { TestRunQueries } from '../test-runs/store.js';

/** What a test run's result is stored with besides its row: nothing (see ResultIngest's #storeJobResult). */
const UNRECORDED: ResultRecording = { hooks: [], recorders: [] };

/** Options of the result ingest. Times in ms. */
export type ResultIngestOptions = {
  /** How long the next attempt of a retried run waits for a claim once due (QueueOptions.queueExpiryMs). */
  queueExpiryMs: number;
  /**
   * The result hooks: each new result gets one `result_outbox` row per hook that takes it, written in
   * the result's transaction (see ResultOutbox in outbox.ts). Default none.
   */
  resultHooks?: readonly ResultHookFilter[];
  /** Called after a transaction that wrote outbox rows committed (the outbox worker's wake-up). */
  onResultStored?: () => void;
  /** Run in the transaction of each result, after its row is written (see ResultRecorder). Default none. */
  resultRecorders?: readonly ResultRecorder[];
};

/** The wake-ups of the job queue the ingest calls after a commit (JobQueue has both). */
export type QueueWakeups = {
  /** Wakes the account's long polls (a retry's next attempt was queued). */
  notify(accountId: string): void;
  /** Wakes waiters on a check session. */
  emitSession(sessionId: string): void;
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

/** One item's answer of `submitResults`: what submitResult returned, or the refusal it threw. */
export type BatchItemOutcome =
  | { jobId: string; outcome: SubmitOutcome; error?: undefined }
  | { jobId: string; outcome?: undefined; error: HttpError };

/** Items of a batch stored between two turns of the event loop (about 8 ms of statements on SQLite). */
const YIELD_EVERY_ITEMS = 4;

/** Marks an item of submitResults still to be stored (no prior outcome). */
const UNSTORED = {} as SubmitOutcome;

/**
 * Most single results (`POST /v1/agent/jobs/{id}/result`) stored in one shared transaction: the size of the
 * largest batch an agent posts (`POST /v1/agent/results`).
 */
const MAX_GROUP_ITEMS = 100;

/**
 * Shared transactions of single results under way at once: one on SQLite, whose one connection runs one
 * transaction at a time (the next group gathers meanwhile); a few on PostgreSQL, whose pool runs them side by
 * side.
 */
const GROUPS_IN_FLIGHT = { sqlite: 1, postgres: 4 } as const;

/** One result to store, as either route hands it over (see ResultIngest.#storeTogether). `nowMs` epoch ms. */
type ResultItem = { scope: AgentScope; jobId: string; result: CheckResult; hash: string; nowMs: number };

/** A single result waiting for the next shared transaction, with its caller's promise. */
type WaitingResult = ResultItem & {
  resolve(outcome: SubmitOutcome): void;
  reject(err: unknown): void;
};

/** What #storeTogether answers for one item: as BatchItemOutcome, or any other error of its fallback. */
type StoredItem = { outcome: SubmitOutcome; error?: undefined } | { outcome?: undefined; error: unknown };

/** What happened after a commit, for the wake-ups (see ResultIngest.announce). */
export type Ended = {
  /** Check sessions to wake: ended now, or with a new result. */
  sessions?: Iterable<string>;
  /** Accounts whose long polls to wake: a retry's next attempt was queued. */
  accounts?: Iterable<string>;
  /** Results were stored: wake the outbox worker. */
  resultsStored: boolean;
};

/**
 * Where results are stored: an agent's result of a job (submitResult), with retry planning and
 * the next attempt; the error result of a run that ended without its agent's (endRunWithError, for
 * the queue's lease expiry); and results the service itself observed (storeServiceResult,
 * heartbeats). Every result is written by recordResult (recorders.ts): its row, one outbox row per
 * result hook and the recorders, in one transaction. After the commit, `announce` is the one place
 * that wakes session waiters, long polls (a queued retry) and the outbox worker.
 */
export class ResultIngest {
  readonly #db: Kysely<Database>;
  readonly #wakeups: QueueWakeups;
  readonly #recording: ResultRecording;
  readonly #queueExpiryMs: number;
  readonly #onResultStored: (() => void) | undefined;
  /** Single results waiting for their shared transaction (submitResult). */
  readonly #waiting: WaitingResult[] = [];
  readonly #maxGroupsInFlight: number;
  #groupsInFlight = 0;
  #groupQueued = false;

  constructor(db: Kysely<Database>, wakeups: QueueWakeups, options: ResultIngestOptions) {
    this.#db = db;
    this.#maxGroupsInFlight = isPostgres(db) ? GROUPS_IN_FLIGHT.postgres : GROUPS_IN_FLIGHT.sqlite;
    this.#wakeups = wakeups;
    this.#recording = { hooks: options.resultHooks ?? [], recorders: options.resultRecorders ?? [] };
    this.#queueExpiryMs = options.queueExpiryMs;
    this.#onResultStored = options.onResultStored;
  }

  /**
   * Stores the result of a job, exactly once, and deletes the job (payload included). A repeat
   * of the accepted result from the same agent is acknowledged as a duplicate. In the same
   * transaction: the check session is settled when this was its last job (so a waiter reading
   * the session right after sees it ended; settleSession in runs/sessions), and one
   * `result_outbox` row per result hook is written (hooks run later, in the ResultOutbox worker).
   * After the commit the session's waiters are woken (duplicates too), and the long polls when a
   * retry was queued.
   *
   * Group commit: the single results that arrive in one turn of the event loop (from any agents of
   * any accounts) are stored together in one transaction, as a batch of `submitResults` is, up to
   * MAX_GROUP_ITEMS; the results that arrive while it runs make the next one. One commit then
   * writes the pages that all of them touch (the same index pages, the rollups, the outbox) once
   * instead of once per result, which is most of a single result's cost on SQLite, and on
   * PostgreSQL one commit waits for the log instead of many. Each result is still answered on its
   * own, with what it alone would have been answered, since each is judged against its own
   * agent's scope; when the shared transaction fails, each is stored again alone.
   *
   * Retries: when the job's `retryStrategy` calls for another attempt (planRetry of
   * src/protocol/retry.ts, from the stored job's attempt and `runStartedAt` and this result),
   * the result is stored as `resultType` ATTEMPT and, in the same transaction, the next
   * attempt is queued: same check, session, run source, `checkRunId` and `runStartedAt`,
   * `attempt + 1`, claimable from now + the back-off, in the same location when `sameRegion`
   * and else the check's next one (retryLocation in runs/scheduler/locations.ts). Otherwise the
   * result is FINAL. The agent's own `resultType` is overridden either way, and so is
   * `runLocation` (the job's). `nowMs` is epoch ms.
   * @throws HttpError 404 unknown job (or one outside the scope); 409 OUTPOST_ERR_LEASE_LOST
   *   when the agent does not hold the job (another agent holds or finished it, it was queued
   *   again after this agent's lease lapsed, or it ended).
   */
  submitResult(scope: AgentScope, jobId: string, result: CheckResult, nowMs: number): Promise<SubmitOutcome> {
    const hash = hashOf(result);
    return new Promise<SubmitOutcome>((resolve, reject) => {
      this.#waiting.push({ scope, jobId, result, hash, nowMs, resolve, reject });
      this.#scheduleGroup();
    });
  }

  /**
   * Stores the results of several jobs of one agent (`POST /v1/agent/results`), each as submitResult
   * would, in ONE transaction: one commit (and one fsync) for the batch instead of one per result. Each
   * item gets its own answer: stored or a duplicate (`outcome`), or the refusal submitResult would have
   * thrown (`error`: 404 unknown job, 409 lease lost), which costs the other items nothing, since a
   * refusal is found before any write of its item.
   *
   * The items are stored in the order of their checks' ids, so two batches that touch the same checks
   * and check sessions (a parallel run's locations on two agents) take their locks in one order. When the
   * batch's transaction fails all the same (an item's write was refused after it began, a deadlock, a
   * lost connection), every item is stored again in a transaction of its own, so no item pays for
   * another's failure. `nowMs` is epoch ms.
   * @returns one entry per item, in the order given.
   * @throws only what the fallback's store access throws outside an item (the connection is gone).
   */
  async submitResults(
    scope: AgentScope,
    items: readonly { jobId: string; result: CheckResult }[],
    nowMs: number,
  ): Promise<BatchItemOutcome[]> {
    const stored = await this.#storeTogether(
      items.map((item) => ({
        scope,
        jobId: item.jobId,
        result: item.result,
        hash: hashOf(item.result),
        nowMs,
      })),
    );
    return stored.map((answer, i) => {
      const jobId = items[i]!.jobId;
      if (answer.outcome) return { jobId, outcome: answer.outcome };
      if (answer.error instanceof HttpError) return { jobId, error: answer.error };
      throw answer.error;
    });
  }

  /** Starts the next shared transaction of single results after this turn, unless enough are under way. */
  #scheduleGroup(): void {
    if (this.#groupQueued || this.#groupsInFlight >= this.#maxGroupsInFlight) return;
    this.#groupQueued = true;
    // After this turn: the results whose requests were read in the same turn go together.
    setImmediate(() => {
      this.#groupQueued = false;
      void this.#storeGroup();
    });
  }

  /** Stores up to MAX_GROUP_ITEMS waiting single results in one transaction and answers each. */
  async #storeGroup(): Promise<void> {
    if (this.#waiting.length === 0 || this.#groupsInFlight >= this.#maxGroupsInFlight) return;
    const group = this.#waiting.splice(0, MAX_GROUP_ITEMS);
    this.#groupsInFlight++;
    try {
      const stored = await this.#storeTogether(group);
      for (const [i, item] of group.entries()) {
        const answer = stored[i]!;
        if (answer.outcome) item.resolve(answer.outcome);
        else item.reject(answer.error);
      }
    } catch (err) {
      for (const item of group) item.reject(err);
    } finally {
      this.#groupsInFlight--;
      if (this.#waiting.length > 0) this.#scheduleGroup();
    }
  }

  /**
   * Stores `items` in ONE transaction, each as submitResult describes, and wakes what their commit ended
   * (announce). Items of different agents and accounts may share it: each is judged against its own scope.
   * A refusal found before an item's first write (404 unknown job, 409 lease lost) is that item's answer and
   * costs the others nothing. The items are stored in the order of their checks' ids (see submitResults).
   * When the transaction fails, each item is stored again in a transaction of its own (#storeAlone).
   * @returns one answer per item, in the order given: its outcome, or the error it alone met.
   */
  async #storeTogether(items: readonly ResultItem[]): Promise<StoredItem[]> {
    const answers: StoredItem[] = new Array(items.length);
    const committed: { accountId: string; outcome: SubmitOutcome }[] = [];
    try {
      await this.#db.transaction().execute(async (tx) => {
        const store = new JobQueries(tx);
        // One read of the jobs per scope (an account and the locations its agent serves).
        const keys = items.map(({ scope }) => JSON.stringify([scope.accountId, scope.locations]));
        const byScope = new Map<string, { scope: AgentScope; jobIds: string[] }>();
        for (const [i, { scope, jobId }] of items.entries()) {
          const key = keys[i]!;
          const entry = byScope.get(key) ?? { scope, jobIds: [] };
          entry.jobIds.push(jobId);
          byScope.set(key, entry);
        }
        const jobsOfItem = new Map<string, JobRow>();
        for (const [key, { scope, jobIds }] of byScope) {
          for (const job of await store.jobsOf(scope, jobIds)) jobsOfItem.set(`${key}\0${job.id}`, job);
        }
        const jobs = items.map((item, i) => jobsOfItem.get(`${keys[i]}\0${item.jobId}`));
        // Which of the jobs' checks are test runs, read once for all of them instead of once per result.
        const testRuns = await new TestRunQueries(tx).testRunsAmong([
          ...new Set(jobs.flatMap((job) => (job ? [job.check_id] : []))),
        ]);
        const order = items
          .map((_, i) => i)
          .sort((a, b) => {
            const ca = jobs[a]?.check_id ?? '';
            const cb = jobs[b]?.check_id ?? '';
            return ca < cb ? -1 : ca > cb ? 1 : a - b;
          });
        // Jobs whose result this transaction stored: a second item of one of them (the same result posted twice
        // at once) is answered from that result, as a post after the commit would be.
        const storedJobs = new Set<string>();
        for (const [position, i] of order.entries()) {
          // SQLite runs each statement synchronously: without a turn of the event loop between items, a batch of
          // 100 would hold it for about 200 ms (2 ms of statements per result).
          if (position > 0 && position % YIELD_EVERY_ITEMS === 0) await yieldToLoop();
          const { scope, jobId, result, hash, nowMs } = items[i]!;
          const job = jobs[i];
          let outcome: SubmitOutcome;
          // Refusals found before the item's first write: the item is answered with it, the others go on.
          try {
            if (!job || storedJobs.has(job.id)) outcome = await priorOutcome(store, scope, jobId, hash);
            else if (
              job.state !== 'leased' ||
              job.agent_id !== scope.agentId ||
              Number(job.lease_expires_at) <= nowMs
            ) {
              throw leaseLost(jobId, 'its result is not stored');
            } else outcome = UNSTORED;
          } catch (err) {
            if (!(err instanceof HttpError)) throw err;
            answers[i] = { error: err };
            continue;
          }
          if (outcome === UNSTORED) {
            outcome = await this.#storeAgentResult(
              tx,
              job!,
              result,
              { agentId: scope.agentId, hash, nowMs },
              scope.agent,
              testRuns.has(job!.check_id),
            );
            storedJobs.add(job!.id);
          }
          answers[i] = { outcome };
          committed.push({ accountId: scope.accountId, outcome });
        }
      });
    } catch {
      // Each item again on its own: what failed is refused alone (and what was a duplicate stays one).
      // One after the other, in the order given: a job posted twice is stored by the first and is the
      // second's duplicate, as two posts one after the other.
      for (const [i, item] of items.entries()) {
        try {
          answers[i] = { outcome: await this.#storeAlone(item) };
        } catch (error) {
          answers[i] = { error };
        }
      }
      return answers;
    }
    this.announce({
      sessions: committed.flatMap((c) => (c.outcome.checkSessionId ? [c.outcome.checkSessionId] : [])),
      accounts: committed.flatMap((c) => (c.outcome.retryJobId ? [c.accountId] : [])),
      resultsStored: committed.some((c) => !c.outcome.duplicate),
    });
    return answers;
  }

  /** Stores one item in a transaction of its own, and wakes what its commit ended (the fallback of #storeTogether). */
  async #storeAlone(item: ResultItem): Promise<SubmitOutcome> {
    const { scope, jobId, result, hash, nowMs } = item;
    const outcome = await this.#db.transaction().execute(async (tx): Promise<SubmitOutcome> => {
      const job = await new JobQueries(tx).job(scope, jobId);
      if (!job) return priorOutcome(new JobQueries(tx), scope, jobId, hash);
      if (job.state !== 'leased' || job.agent_id !== scope.agentId || Number(job.lease_expires_at) <= nowMs) {
        throw leaseLost(jobId, 'its result is not stored');
      }
      return this.#storeAgentResult(tx, job, result, { agentId: scope.agentId, hash, nowMs }, scope.agent);
    });
    this.announce({
      sessions: outcome.checkSessionId ? [outcome.checkSessionId] : [],
      accounts: outcome.retryJobId ? [scope.accountId] : [],
      resultsStored: !outcome.duplicate,
    });
    return outcome;
  }

  /**
   * The part of submitResult in its transaction once the agent is known to hold `job`. `testRun`: whether
   * the job's check is a test run, when the caller read it already (see #storeJobResult).
   */
  async #storeAgentResult(
    tx: Tx,
    job: JobRow,
    result: CheckResult,
    by: ResultAuthor,
    agent: AgentScope['agent'],
    testRun?: boolean,
  ): Promise<SubmitOutcome> {
    const store = new JobQueries(tx);
    const payload = openPayload(store, job.id, job.payload);
    const plan = planRetry({
      strategy: payload.retryStrategy ?? null,
      attempt: job.attempt,
      runStartedAtMs: Date.parse(payload.runStartedAt ?? '') || Number(job.enqueued_at),
      nowMs: by.nowMs,
      outcome: result,
    });
    // Who ran it, as the service knows the agent (never as the body says): shown with the result.
    const stored: CheckResult & { agent?: AgentScope['agent'] } = {
      ...result,
      runLocation: job.location,
      resultType: plan.retry ? 'ATTEMPT' : 'FINAL',
      ...(agent ? { agent } : {}),
    };
    await this.#storeJobResult(tx, job, stored, by, testRun);
    const retryJobId = plan.retry
      ? await this.#queueNextAttempt(store, job, payload, by.nowMs + plan.delayMs)
      : null;
    // A queued retry keeps the session in PROGRESS: settleSession waits for every job.
    if (job.check_session_id) await settleSession(tx, job.check_session_id, by.nowMs);
    return {
      checkSessionId: job.check_session_id,
      checkId: job.check_id,
      duplicate: false,
      result: stored,
      retryJobId,
    };
  }

  /**
   * Queues the next attempt of `job`'s run, claimable from `readyAtMs` (epoch ms), in the same run
   * (`round_id`) and the location retryLocation picks.
   * @returns the new job's id.
   */
  async #queueNextAttempt(store: JobQueries, job: JobRow, payload: Job, readyAtMs: number): Promise<string> {
    const location = retryLocation(
      await runLocations(store, job.account_id, job.check_id),
      job.location,
      payload.retryStrategy?.sameRegion ?? true,
    );
    const retryJobId = randomUUID();
    await insertQueuedJob(store, {
      job: nextAttemptJob(payload, retryJobId, location),
      checkType: job.check_type,
      readyAtMs,
      queueExpiryMs: this.#queueExpiryMs,
      // `round_id` is the run: `checkRunId` in the protocol and API, "run" in the docs (see JobRow).
      roundId: job.round_id ?? job.id,
    });
    return retryJobId;
  }

  /**
   * Ends a run that ended without its agent's result (its lease lapsed past the run's usefulness,
   * or its claims are used up), in the caller's transaction: stores the FINAL error result
   * (FAILED, `hasErrors`, `reason` as its error message) and deletes the job, then settles its
   * session. The caller calls `announce` after the commit. `nowMs` is epoch ms.
   * @returns true when the job's check session ended now.
   */
  async endRunWithError(tx: Tx, job: JobRow, reason: string, nowMs: number): Promise<boolean> {
    await this.#storeJobResult(tx, job, errorResultOf(job, reason, nowMs), {
      agentId: null,
      hash: null,
      nowMs,
    });
    return job.check_session_id ? settleSession(tx, job.check_session_id, nowMs) : false;
  }

  /**
   * Stores a result of `job` and deletes the job (see recordResult). The result of a test run (runs/test-runs,
   * "Run before saving") is stored for its check session only: no result hook or recorder sees it (no alert,
   * notification, check status or error group), since no check has its id.
   *
   * One result per job: the result is stored only by the transaction that deletes the job's row. Two posts of
   * one job's result at once (or a post racing the run's end) read the same row; on PostgreSQL the second
   * delete waits for the first transaction and then finds the row gone, and its transaction rolls back here.
   * (On PostgreSQL no unique index can say it: `check_results` is partitioned by day, migration 0025.)
   * `testRun`: whether the job's check is a test run, when the caller read it already; else it is read here.
   * @throws HttpError 409 OUTPOST_ERR_LEASE_LOST when the job's row was deleted by another transaction.
   */
  async #storeJobResult(
    tx: Tx,
    job: JobRow,
    result: CheckResult,
    by: ResultAuthor,
    testRun?: boolean,
  ): Promise<void> {
    if (!(await new JobQueries(tx).deleteJob(job.id))) throw leaseLost(job.id, 'its result is not stored');
    const isTestRun = testRun ?? (await new TestRunQueries(tx).isTestRun(job.check_id));
    const recording = isTestRun ? UNRECORDED : this.#recording;
    await recordResult(tx, recording, { resultId: randomUUID(), owner: job, result, by });
  }

  /**
   * Stores a FINAL result the service itself observed, for a check no agent runs (a heartbeat
   * that was pinged, or became late): a run of its own (`job_id` = `round_id` = a new id), with
   * the result hooks and recorders of any result, in `tx` when given (so the caller's state
   * change commits with it) or in a transaction of its own. `input.nowMs` is epoch ms.
   * @returns the new result's id.
   * @throws what the store or a recorder throws (the transaction rolls back).
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
    const record = (on: Tx) =>
      recordResult(on, this.#recording, {
        resultId,
        owner,
        result: input.result,
        by: { agentId: null, hash: null, nowMs: input.nowMs },
      });
    if (tx) await record(tx);
    else await this.#db.transaction().execute(record);
    // With a caller's transaction the hooks' rows are only seen after its commit; the outbox
    // worker also polls, so an early wake-up costs nothing.
    this.announce({ resultsStored: true });
    return resultId;
  }

  /**
   * The wake-ups after a commit that stored results or ended runs, in one place: the accounts'
   * long polls (a retry's next attempt was queued), the sessions' waiters, and the outbox worker
   * when results were stored. Called by this ingest, and by the queue after its expiry passes.
   */
  announce(ended: Ended): void {
    for (const account of ended.accounts ?? []) this.#wakeups.notify(account);
    for (const session of ended.sessions ?? []) this.#wakeups.emitSession(session);
    if (ended.resultsStored) this.#onResultStored?.();
  }
}

/** The SHA-256 (hex) of a posted result: a repeat of the same body is a duplicate. */
function hashOf(result: CheckResult): string {
  return createHash('sha256').update(JSON.stringify(result)).digest('hex');
}

/**
 * The answer for a result of a job that is not in the queue: a duplicate when the same agent
 * posted the same body before, else refused.
 * @throws HttpError 409 OUTPOST_ERR_LEASE_LOST when another result is stored; 404 when none is.
 */
async function priorOutcome(
  store: JobQueries,
  scope: AgentScope,
  jobId: string,
  hash: string,
): Promise<SubmitOutcome> {
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

/** The check's run locations as stored now; [] when the check is gone. */
async function runLocations(store: JobQueries, accountId: string, checkId: string): Promise<string[]> {
  const doc = await store.checkDoc(accountId, checkId);
  return doc !== undefined ? runLocationsOf(readDoc(doc)) : [];
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
