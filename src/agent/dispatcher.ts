import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { Executor, RunArtifactFile } from '../checks/executor.js';
import {
  type CheckResult,
  type CheckType,
  JOB_CLASSES,
  type Job,
  type JobClass,
  jobClassOf,
  type RunOutcome,
} from '../protocol/index.js';
import { abortedError } from '../common/abort.js';
import type { Logger } from '../common/logger.js';
import { executeJob } from './execute.js';
import { renewLeaseUntilStopped } from './lease.js';
import { linkSignal } from '../common/linked-signal.js';
import type { AgentMetrics, JobOutcomeLabel } from './metrics.js';
import { rejectedJobResult, toCheckResult } from './check-result.js';
import { postResultWithRetry } from './result-poster.js';
import type { RejectedJob, ServiceClient } from './service-client.js';

/** Longest the `afterRun` hook may take per job, milliseconds. */
export const AFTER_RUN_TIMEOUT_MS = 45_000;

/** How long a result is retried before it is given up, milliseconds (10 min). */
export const DEFAULT_RESULT_RETRY_MS = 600_000;

/** Back-off of retried calls: jittered exponential from `baseMs` to `capMs` (src/common/abort.ts `backoffMs`). */
export type BackoffOptions = { baseMs: number; capMs: number };

/** Options of {@link JobDispatcher}. */
export type JobDispatcherOptions = {
  client: Pick<ServiceClient, 'renewLease' | 'postResult'>;
  /** Executors by check type; a job of another type gets an error result. */
  executors: ReadonlyMap<CheckType, Executor>;
  /** Jobs run at once per job class; 0 advertises no slot for that class. */
  concurrency: Record<JobClass, number>;
  logger: Logger;
  /** Aborts every running job and result post: the end of the shutdown grace period. */
  hardSignal: AbortSignal;
  /** How long a result post is retried on transient errors, milliseconds; default 600 000. */
  resultRetryMs?: number;
  /** Back-off of result posts and lease renewals; default 1 s → 30 s. */
  backoff?: BackoffOptions;
  /** Called with what an executor threw (bugs only), for the error reporter. */
  onExecutorCrash?: (err: unknown) => void;
  /**
   * Runs after a job's executor, before its result is posted, while the job still holds its
   * slot (the agent's network diagnostics: route trace and packet capture on network failures).
   * Returns the artifacts uploaded for the job; a throw or a timeout of
   * {@link AFTER_RUN_TIMEOUT_MS} only loses the artifacts, never the result.
   */
  afterRun?: (
    job: Job,
    outcome: RunOutcome,
    context: { signal: AbortSignal; log: Logger },
  ) => Promise<CheckResult['artifacts']>;
  /**
   * Uploads one artifact an executor attached (ExecutorContext.attachArtifacts) and returns its
   * stored size, bytes (the agent's `ServiceClient.uploadArtifact`); absent: attached files are
   * released without upload.
   */
  uploadArtifact?: (jobId: string, name: string, path: string, signal: AbortSignal) => Promise<number>;
  metrics?: AgentMetrics;
};

/** Calls every attached file set's `release` (never throws). */
async function releaseAll(attached: { release: () => Promise<void> }[], log: Logger): Promise<void> {
  for (const { release } of attached.splice(0)) {
    await release().catch((err: unknown) => log.warn({ err }, 'removing a run’s artifact files failed'));
  }
}

/**
 * Runs claimed jobs (docs/architecture.md, "The agent"): one p-queue per job class, each job
 * under a signal aborted by `hardSignal`, its `timeoutMs` or a lost lease, with a child
 * logger `{ jobId, checkId, checkType }`, its lease renewed every `leaseMs / 3`, its
 * result posted with retry. A lost lease (409) aborts the job and drops its result;
 * a job cut short by `hardSignal` is dropped too, so the service re-runs it once its
 * lease expires rather than recording a false failure.
 */
export class JobDispatcher {
  readonly #options: JobDispatcherOptions;
  readonly #queues: Record<JobClass, PQueue>;
  readonly #running: Record<JobClass, number> = { uptime: 0, main: 0 };
  readonly #posts = new Set<Promise<void>>();
  /** Ids of the jobs held from their claim until their lease renewal stops (run, then result post). */
  readonly #held = new Set<string>();
  readonly #slotWaiters = new Set<() => void>();
  readonly #backoff: BackoffOptions;

  constructor(options: JobDispatcherOptions) {
    this.#options = options;
    this.#backoff = options.backoff ?? { baseMs: 1000, capMs: 30_000 };
    // Each running job, result post and lease renewal listens on it: more than Node's default 10.
    setMaxListeners(0, options.hardSignal);
    // p-queue needs at least 1; a class with 0 slots still runs what a misbehaving service sends.
    this.#queues = {
      uptime: new PQueue({ concurrency: Math.max(1, options.concurrency.uptime) }),
      main: new PQueue({ concurrency: Math.max(1, options.concurrency.main) }),
    };
  }

  /** Free slots per job class: its concurrency minus its running and queued jobs, never below 0. */
  freeSlots(): Record<JobClass, number> {
    const free = (c: JobClass) => Math.max(0, this.#options.concurrency[c] - this.#running[c]);
    return { uptime: free('uptime'), main: free('main') };
  }

  /** Running and queued jobs per job class (result posts excluded). */
  runningJobs(): Record<JobClass, number> {
    return { ...this.#running };
  }

  /**
   * Resolves as soon as one of `classes` has a free slot (at once if one has);
   * rejects OUTPOST_ERR_ABORTED when `signal` aborts first.
   */
  waitForFreeSlot(classes: readonly JobClass[], signal: AbortSignal): Promise<void> {
    const hasFree = () => classes.some((c) => this.freeSlots()[c] > 0);
    if (hasFree()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#slotWaiters.delete(check);
        reject(abortedError(signal));
      };
      const check = () => {
        if (!hasFree()) return;
        this.#slotWaiters.delete(check);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal.aborted) return onAbort();
      this.#slotWaiters.add(check);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** True while a job of this id is queued, running or posting its result. */
  holds(jobId: string): boolean {
    return this.#held.has(jobId);
  }

  /**
   * Queues a claimed job in its class; it runs when a slot of that class frees.
   * A job id this dispatcher already holds (queued, running or posting its result) is
   * ignored with a warning: the same job never runs twice side by side on one agent
   * (a re-claim after a SIGSTOP/SIGCONT handed it back while the first run went on).
   *
   * @returns false when the job was ignored as a duplicate.
   */
  dispatch(job: Job): boolean {
    const jobClass = jobClassOf(job.check.checkType as CheckType);
    const log = this.#options.logger.child({
      jobId: job.jobId,
      checkId: job.check.id,
      checkType: job.check.checkType,
    });
    if (this.#held.has(job.jobId)) {
      log.warn({ attempt: job.attempt }, 'duplicate claim of a job already held; ignored');
      return false;
    }
    this.#held.add(job.jobId);
    // The lease is renewed from the claim on, also while the job waits in its queue.
    const leaseLost = new AbortController();
    const stopLeaseRenewal = renewLeaseUntilStopped({
      client: this.#options.client,
      job,
      onLost: (err) => leaseLost.abort(err),
      hardSignal: this.#options.hardSignal,
      backoff: this.#backoff,
      log,
    });
    // Every ending of the job (dropped, lease lost, result posted or given up) stops the renewal.
    const stopRenewal = () => {
      stopLeaseRenewal();
      this.#held.delete(job.jobId);
    };
    this.#running[jobClass] += 1;
    void this.#queues[jobClass]
      .add(() => this.#run(job, log, leaseLost.signal, stopRenewal))
      .catch((err: unknown) => {
        // Only a bug gets here; keep the agent alive and stop renewing a lease nobody uses.
        stopRenewal();
        log.error({ err }, 'job failed inside the dispatcher');
      })
      .finally(() => {
        this.#running[jobClass] -= 1;
        for (const waiter of [...this.#slotWaiters]) waiter();
      });
    return true;
  }

  /** Fails a malformed job: posts its error result when it has a `jobId`, logs it otherwise. */
  reject(rejected: RejectedJob): void {
    const log = this.#options.logger.child({
      jobId: rejected.jobId,
      checkId: rejected.checkId,
      checkType: rejected.checkType,
    });
    log.error({ reason: rejected.reason }, 'malformed job refused');
    this.#options.metrics?.jobFinished(rejected.checkType ?? 'unknown', 'error', 0);
    if (rejected.jobId === null) return;
    this.#post(rejected.jobId, rejectedJobResult(rejected), log, [], () => {});
  }

  /** Resolves once no job is running or queued and every result post has ended. */
  async drain(): Promise<void> {
    for (;;) {
      await Promise.all(JOB_CLASSES.map((c) => this.#queues[c].onIdle()));
      if (this.#posts.size === 0) {
        if (JOB_CLASSES.every((c) => this.#running[c] === 0)) return;
        continue;
      }
      await Promise.allSettled([...this.#posts]);
    }
  }

  async #run(job: Job, log: Logger, leaseLost: AbortSignal, stopRenewal: () => void): Promise<void> {
    const { check } = job;
    const { hardSignal } = this.#options;
    if (leaseLost.aborted || hardSignal.aborted) {
      stopRenewal();
      log.warn({ why: leaseLost.aborted ? 'lease_lost' : 'dropped' }, 'job dropped before it ran');
      return;
    }
    const run = linkSignal([hardSignal, leaseLost], job.timeoutMs);

    log.info({ attempt: job.attempt, timeoutMs: job.timeoutMs }, 'job started');
    const startedAt = new Date();
    const t0 = performance.now();
    const attached: { files: RunArtifactFile[]; release: () => Promise<void> }[] = [];
    const outcome = await executeJob({
      attachArtifacts: (files, release) => attached.push({ files, release }),
      executor: this.#options.executors.get(check.checkType as CheckType),
      job,
      signal: run.signal,
      log,
      startedAt,
      abortReason: () => {
        if (leaseLost.aborted) return 'lease lost';
        if (hardSignal.aborted) return 'agent shut down before the run finished';
        return `run timed out after ${job.timeoutMs} ms`;
      },
      ...(this.#options.onExecutorCrash ? { onCrash: this.#options.onExecutorCrash } : {}),
    });
    run.dispose();
    const durationMs = performance.now() - t0;

    if (leaseLost.aborted || hardSignal.aborted) {
      stopRenewal();
      await releaseAll(attached, log);
      const why = leaseLost.aborted ? 'lease_lost' : 'dropped';
      this.#options.metrics?.jobFinished(check.checkType, why, durationMs);
      log.warn({ durationMs: Math.round(durationMs), why }, 'job stopped; result dropped');
      return;
    }
    this.#options.metrics?.jobFinished(check.checkType, outcomeLabel(outcome), durationMs);
    log.info(
      { status: outcome.status, hasErrors: outcome.hasErrors, durationMs: Math.round(durationMs) },
      'job finished',
    );
    let artifacts: CheckResult['artifacts'] = [];
    if (attached.length > 0) {
      artifacts = await this.#uploadAttached(job, attached, [hardSignal, leaseLost], log);
    }
    if (this.#options.afterRun) {
      const after = linkSignal([hardSignal, leaseLost], AFTER_RUN_TIMEOUT_MS);
      try {
        artifacts = [
          ...artifacts,
          ...(await this.#options.afterRun(job, outcome, { signal: after.signal, log })),
        ];
      } catch (err) {
        log.warn({ err }, 'after-run diagnostics failed; posting the result without them');
      } finally {
        after.dispose();
      }
      if (leaseLost.aborted || hardSignal.aborted) {
        stopRenewal();
        log.warn({ why: leaseLost.aborted ? 'lease_lost' : 'dropped' }, 'job stopped; result dropped');
        return;
      }
    }
    // The lease is kept alive while the result is posted; a lease lost meanwhile ends the post.
    this.#post(job.jobId, toCheckResult(outcome, job, artifacts), log, [leaseLost], stopRenewal);
  }

  /**
   * Uploads the files executors attached, in order, within {@link AFTER_RUN_TIMEOUT_MS}; stops at the
   * first failure (the files after it are the less important ones) and releases every file.
   * Never throws: what is not uploaded is logged and left out of the result.
   */
  async #uploadAttached(
    job: Job,
    attached: { files: RunArtifactFile[]; release: () => Promise<void> }[],
    parents: AbortSignal[],
    log: Logger,
  ): Promise<CheckResult['artifacts']> {
    const uploaded: CheckResult['artifacts'] = [];
    const upload = this.#options.uploadArtifact;
    const deadline = linkSignal(parents, AFTER_RUN_TIMEOUT_MS);
    try {
      for (const { name, path } of attached.flatMap((a) => a.files)) {
        if (upload === undefined || deadline.signal.aborted) break;
        try {
          uploaded.push({ name, sizeBytes: await upload(job.jobId, name, path, deadline.signal) });
        } catch (err) {
          log.warn(
            { err, artifact: name },
            'artifact upload failed; the rest of the run’s artifacts are left out',
          );
          break;
        }
      }
    } finally {
      deadline.dispose();
      await releaseAll(attached, log);
    }
    return uploaded;
  }

  /** Posts in the background, tracked for `drain()`, until the hard signal, a parent or the retry deadline. */
  #post(jobId: string, result: CheckResult, log: Logger, parents: AbortSignal[], onEnd: () => void): void {
    const retryMs = this.#options.resultRetryMs ?? DEFAULT_RESULT_RETRY_MS;
    const deadline = linkSignal([this.#options.hardSignal, ...parents], retryMs);
    const post = postResultWithRetry({
      client: this.#options.client,
      jobId,
      result,
      log,
      signal: deadline.signal,
      backoff: this.#backoff,
      metrics: this.#options.metrics,
    }).finally(() => {
      deadline.dispose();
      onEnd();
      this.#posts.delete(post);
    });
    this.#posts.add(post);
  }
}

function outcomeLabel(outcome: RunOutcome): JobOutcomeLabel {
  if (outcome.hasErrors) return 'error';
  return outcome.status === 'PASSED' ? 'passed' : outcome.status === 'DEGRADED' ? 'degraded' : 'failed';
}
