import type { Logger } from '../common/logger.js';
import type { CheckType, Job, RunOutcome } from '../protocol/index.js';

/** A file an executor leaves for upload with its result: its artifact name and where it is. */
export type RunArtifactFile = { name: string; path: string };

/** What an executor gets besides the job. */
export type ExecutorContext = {
  /** Aborts on agent shutdown or when the job's `timeoutMs` passes. */
  signal: AbortSignal;
  /** A child logger bound to the job. */
  log: Logger;
  /**
   * Hands the agent files to upload as the run's artifacts, in this order (what matters most
   * first: the upload stops at the first file that fails or at the after-run deadline), before
   * the result is posted; `release` (removing the files) is called once they are uploaded or
   * given up. Absent where nothing uploads (tests running an executor alone): the executor
   * releases its files itself then. Files must be scrubbed already.
   */
  attachArtifacts?: (files: RunArtifactFile[], release: () => Promise<void>) => void;
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
