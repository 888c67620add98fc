import { planRetry } from '../protocol/retry.js';
import type { CheckResult, Job, RunOutcome } from '../protocol/index.js';
import { failedOutcome } from '../checks/outcome.js';
import type { RejectedJob } from './service-client.js';

/** Longest `errorMessage` the agent writes, characters. */
const MAX_REASON_LENGTH = 1024;

/**
 * The outcome of a run the agent could not carry out (bad job, no executor,
 * executor crash or timeout): `hasErrors` and `hasFailures` true, status FAILED,
 * `reason` as `errorMessage` and as one ERROR log line.
 *
 * @param reason why, in one line; cut to 1024 characters (and `…`) when longer.
 * @param startedAt when the run started; `stoppedAt` is now.
 * @param responseTimeMs time spent before giving up, milliseconds (0 when nothing ran).
 */
export function errorOutcome(reason: string, startedAt: Date, responseTimeMs: number): RunOutcome {
  const stoppedAt = new Date().toISOString();
  const message = reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH)}…` : reason;
  return failedOutcome({
    startedAt: startedAt.toISOString(),
    stoppedAt,
    errorMessage: message,
    logs: [{ time: stoppedAt, level: 'ERROR', msg: message }],
    responseTime: Math.max(0, Math.round(responseTimeMs)),
    hasErrors: true,
  });
}

/**
 * The result the agent posts for a run: the executor's outcome plus the agent-filled fields
 * `runLocation`, `attempts` (= `job.attempt`), `artifacts`, and `resultType`: ATTEMPT when the
 * job's retry strategy retries this outcome (src/protocol/retry.ts `planRetry`, the rule the
 * service applies too), else FINAL.
 *
 * @param nowMs epoch ms the run ended; default now.
 */
export function toCheckResult(
  outcome: RunOutcome,
  job: Pick<Job, 'runLocation' | 'attempt'> & Partial<Pick<Job, 'retryStrategy' | 'runStartedAt'>>,
  artifacts: CheckResult['artifacts'] = [],
  nowMs = Date.now(),
): CheckResult {
  const runStartedAtMs = job.runStartedAt ? Date.parse(job.runStartedAt) : Number.NaN;
  const retry = planRetry({
    strategy: job.retryStrategy ?? null,
    attempt: job.attempt,
    runStartedAtMs: Number.isNaN(runStartedAtMs) ? Date.parse(outcome.startedAt) || nowMs : runStartedAtMs,
    nowMs,
    outcome,
  });
  return {
    ...outcome,
    runLocation: job.runLocation,
    attempts: job.attempt,
    resultType: retry.retry ? 'ATTEMPT' : 'FINAL',
    artifacts,
  };
}

/**
 * The error result of a job the claim answer held but that did not match `JobSchema`: FINAL,
 * its `reason` as `errorMessage`, at the job's run location and attempt when the answer had them
 * (else `unknown` and 1).
 */
export function rejectedJobResult(rejected: RejectedJob): CheckResult {
  return toCheckResult(errorOutcome(rejected.reason, new Date(), 0), {
    runLocation: rejected.runLocation ?? 'unknown',
    attempt: rejected.attempt ?? 1,
  });
}
