import type { RunStatus } from '../protocol/index.js';

/** Inputs of the status rule of a run. Times in milliseconds, packet loss in percent. */
export type StatusInputs = {
  /** An assertion failed, or the target could not be reached. */
  failed: boolean;
  responseTimeMs: number | null;
  degradedResponseTimeMs: number | null;
  maxResponseTimeMs: number | null;
  packetLossPercent?: number | null;
  degradedPacketLossThreshold?: number | null;
  maxPacketLossThreshold?: number | null;
  shouldFail: boolean;
};

/** What the status rule decided. */
export type StatusDecision = {
  status: RunStatus;
  hasFailures: boolean;
  isDegraded: boolean;
  overMaxResponseTime: boolean;
};

/**
 * The status of a run (docs/checks.md, "Status of a run"): failed
 * assertions, an unreachable target, a response time at or above
 * `maxResponseTime` or packet loss at or above the max threshold → FAILED;
 * otherwise at or above the degraded limits → DEGRADED; otherwise PASSED.
 * `shouldFail` swaps pass and fail; a degraded run stays degraded.
 */
export function decideStatus(input: StatusInputs): StatusDecision {
  const rt = input.responseTimeMs;
  const overMax = rt !== null && input.maxResponseTimeMs !== null && rt >= input.maxResponseTimeMs;
  const overDegraded =
    rt !== null && input.degradedResponseTimeMs !== null && rt >= input.degradedResponseTimeMs;
  const loss = input.packetLossPercent ?? null;
  const lossFailed =
    loss !== null && input.maxPacketLossThreshold != null && loss >= input.maxPacketLossThreshold;
  const lossDegraded =
    loss !== null && input.degradedPacketLossThreshold != null && loss >= input.degradedPacketLossThreshold;

  let failed = input.failed || overMax || lossFailed;
  if (input.shouldFail) failed = !failed;
  const isDegraded = !failed && (overDegraded || lossDegraded) && !input.shouldFail;
  return {
    status: failed ? 'FAILED' : isDegraded ? 'DEGRADED' : 'PASSED',
    hasFailures: failed,
    isDegraded,
    overMaxResponseTime: overMax,
  };
}
