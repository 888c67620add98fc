import { Value } from '@sinclair/typebox/value';
import type { Executor, ExecutorContext } from '../checks/executor.js';
import { type Job, type RunOutcome, RunOutcomeSchema } from '../protocol/index.js';
import { OutpostError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { errorOutcome } from './check-result.js';

/** How long an executor may take to settle once its signal aborted, milliseconds. */
export const ABANDON_AFTER_ABORT_MS = 5_000;

/** Options of {@link executeJob}. */
export type ExecuteOptions = {
  /** The executor of the job's check type; undefined when this agent has none. */
  executor: Executor | undefined;
  job: Job;
  /** Aborts on shutdown, timeout or lost lease. */
  signal: AbortSignal;
  /** The job's child logger, handed to the executor. */
  log: Logger;
  startedAt: Date;
  /** Why `signal` aborted, in words, for the result's `errorMessage`. */
  abortReason: () => string;
  /** Called with what the executor threw when the signal had not aborted: a bug to report. */
  onCrash?: (err: unknown) => void;
  /** Passed to the executor (ExecutorContext.attachArtifacts). */
  attachArtifacts?: ExecutorContext['attachArtifacts'];
};

/**
 * Runs one job and always yields an outcome (docs/architecture.md, "The agent"): a missing
 * executor, a throw, an outcome that does not match `RunOutcomeSchema`, or an executor
 * still busy {@link ABANDON_AFTER_ABORT_MS} after its signal aborted all become an
 * error outcome (`hasErrors: true`) with the reason in `errorMessage`.
 */
export async function executeJob(options: ExecuteOptions): Promise<RunOutcome> {
  const { executor, job, signal, log, startedAt } = options;
  if (executor === undefined) {
    return errorOutcome(`this agent has no executor for check type ${job.check.checkType}`, startedAt, 0);
  }
  const t0 = performance.now();
  try {
    // The async wrapper turns a synchronous throw into a rejection.
    const context: ExecutorContext = {
      signal,
      log,
      ...(options.attachArtifacts ? { attachArtifacts: options.attachArtifacts } : {}),
    };
    const running = (async () => executor.run(job, context))();
    const outcome = await settleWithin(running, signal, ABANDON_AFTER_ABORT_MS);
    if (Value.Check(RunOutcomeSchema, outcome)) return outcome;
    const first = Value.Errors(RunOutcomeSchema, outcome).First();
    throw new OutpostError(
      'OUTPOST_ERR_PROTOCOL',
      `executor returned an invalid outcome: ${first ? `${first.path || '/'}: ${first.message}` : 'unknown'}`,
    );
  } catch (err) {
    const elapsedMs = performance.now() - t0;
    if (signal.aborted) return errorOutcome(options.abortReason(), startedAt, elapsedMs);
    log.error({ err }, 'executor crashed');
    options.onCrash?.(err);
    return errorOutcome(`executor error: ${(err as Error)?.message ?? String(err)}`, startedAt, elapsedMs);
  }
}

/**
 * Settles like `promise`, but rejects OUTPOST_ERR_ABORTED when `signal` aborted
 * and `promise` did not settle `graceMs` later: an executor that ignores its
 * signal must not hold a slot forever.
 */
function settleWithin<T>(promise: Promise<T>, signal: AbortSignal, graceMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      timer = setTimeout(() => {
        reject(
          new OutpostError('OUTPOST_ERR_ABORTED', `executor did not stop within ${graceMs} ms of abort`),
        );
      }, graceMs);
      timer.unref();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
  });
}
