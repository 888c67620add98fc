import type { Logger } from '../common/logger.js';
import type { CheckType, Job, RunOutcome } from '../protocol/index.js';

/** What an executor gets besides the job. */
export type ExecutorContext = {
  /** Aborts on agent shutdown or when the job's `timeoutMs` passes. */
  signal: AbortSignal;
  /** A child logger bound to the job. */
  log: Logger;
};

/**
 * One executor per check type (docs/architecture.md, "The agent"). `run` never throws for a
 * failing target: a target that is down is a result. It throws only for bugs;
 * the dispatcher turns such a throw into a result with `hasErrors: true`.
 */
export interface Executor {
  readonly checkType: CheckType;
  run(job: Job, context: ExecutorContext): Promise<RunOutcome>;
  /** Releases shared resources (sockets, browsers). Idempotent. */
  close(): Promise<void>;
}
