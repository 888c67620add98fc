import { NETWORK_ERROR_CODES } from './enums.js';
import type { JobRetryStrategy } from './job.js';
import type { RunOutcome } from './result.js';

/** Defaults of a retry strategy's optional fields (Checkly's documented defaults). Seconds. */
export const RETRY_DEFAULTS = {
  baseBackoffSeconds: 60,
  maxRetries: 2,
  maxDurationSeconds: 600,
  sameRegion: true,
} as const;

/**
 * Wait before retry number `retry` (1 = the first retry), milliseconds, by strategy type:
 * FIXED `b, b, b`; LINEAR `b, 2b, 3b`; EXPONENTIAL `b, b², b³` (Checkly's documented
 * "5s, 25s, 125s" for b = 5); SINGLE_RETRY `b` once; NO_RETRIES never (Infinity).
 *
 * @param strategy the resolved strategy of the job (seconds).
 * @param retry 1-based retry number.
 * @throws RangeError when `retry` is not an integer ≥ 1.
 */
export function retryDelayMs(
  strategy: Pick<JobRetryStrategy, 'type' | 'baseBackoffSeconds'>,
  retry: number,
): number {
  if (!Number.isInteger(retry) || retry < 1)
    throw new RangeError(`retry must be an integer ≥ 1; got ${retry}`);
  const base = strategy.baseBackoffSeconds;
  switch (strategy.type) {
    case 'FIXED':
      return base * 1000;
    case 'LINEAR':
      return base * retry * 1000;
    case 'EXPONENTIAL':
      return base ** retry * 1000;
    case 'SINGLE_RETRY':
      return retry === 1 ? base * 1000 : Number.POSITIVE_INFINITY;
    case 'NO_RETRIES':
      return Number.POSITIVE_INFINITY;
  }
}

/** Retries a strategy allows at most: SINGLE_RETRY 1, NO_RETRIES 0, else `maxRetries`. */
export function maxRetriesOf(strategy: Pick<JobRetryStrategy, 'type' | 'maxRetries'>): number {
  if (strategy.type === 'NO_RETRIES') return 0;
  if (strategy.type === 'SINGLE_RETRY') return 1;
  return strategy.maxRetries;
}

/**
 * Codes our HTTP client gives for the same failures under another name: undici's connect
 * timeout is the TCP connection timing out (ETIMEDOUT), and undici's "other side closed"
 * socket error is the peer resetting or closing mid-request (ECONNRESET).
 */
const NETWORK_ERROR_ALIASES: Readonly<Record<string, (typeof NETWORK_ERROR_CODES)[number]>> = {
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_SOCKET: 'ECONNRESET',
};

/**
 * An error code that `onlyOn: ["NETWORK_ERROR"]` retries on: ECONNRESET, ENOTFOUND, ETIMEDOUT,
 * EAI_AGAIN, ECONNREFUSED only (docs/checks.md, "API"), and the undici names of two of
 * them (UND_ERR_CONNECT_TIMEOUT → ETIMEDOUT, UND_ERR_SOCKET → ECONNRESET).
 */
export function isNetworkErrorCode(code: string | null | undefined): boolean {
  if (code == null) return false;
  return (NETWORK_ERROR_CODES as readonly string[]).includes(NETWORK_ERROR_ALIASES[code] ?? code);
}

/**
 * The error code of a failed run's outcome: the HTTP or TCP part's `errorCode`, else null.
 * Only these parts carry system codes; an assertion failure has none.
 */
export function networkErrorCodeOf(
  outcome: Pick<RunOutcome, 'httpCheckResult' | 'tcpCheckResult'>,
): string | null {
  return outcome.httpCheckResult?.errorCode ?? outcome.tcpCheckResult?.errorCode ?? null;
}

/** The answer of {@link planRetry}. */
export type RetryPlan =
  | { retry: true /** 1-based number of the coming retry. */; retryNumber: number; delayMs: number }
  | { retry: false; reason: string };

/**
 * Whether a finished attempt is followed by a retry, and when (Checkly's retry semantics):
 * only a FAILED attempt retries; `onlyOn: NETWORK_ERROR` retries only when the outcome's code is
 * one of {@link NETWORK_ERROR_CODES}; never more than {@link maxRetriesOf} retries; never a retry
 * that would start after `runStartedAtMs + maxDurationSeconds`.
 *
 * @param input.attempt 1-based number of the attempt that just finished.
 * @param input.runStartedAtMs epoch ms the first attempt was enqueued.
 * @param input.nowMs epoch ms now (the attempt's end).
 */
export function planRetry(input: {
  strategy: JobRetryStrategy | null;
  attempt: number;
  runStartedAtMs: number;
  nowMs: number;
  outcome: Pick<RunOutcome, 'status' | 'httpCheckResult' | 'tcpCheckResult'>;
}): RetryPlan {
  const { strategy, attempt, outcome } = input;
  if (outcome.status !== 'FAILED') return { retry: false, reason: `the attempt ${outcome.status}` };
  if (strategy === null || strategy.type === 'NO_RETRIES')
    return { retry: false, reason: 'no retry strategy' };
  const retryNumber = attempt;
  if (retryNumber > maxRetriesOf(strategy)) {
    return { retry: false, reason: `${maxRetriesOf(strategy)} retries used` };
  }
  if (strategy.onlyOn.includes('NETWORK_ERROR')) {
    const code = networkErrorCodeOf(outcome);
    if (!isNetworkErrorCode(code)) {
      return {
        retry: false,
        reason: `retries only on network errors; this failure has ${code ?? 'no error code'}`,
      };
    }
  }
  const delayMs = retryDelayMs(strategy, retryNumber);
  const startsAt = input.nowMs + delayMs;
  if (startsAt > input.runStartedAtMs + strategy.maxDurationSeconds * 1000) {
    return {
      retry: false,
      reason: `a retry in ${Math.round(delayMs / 1000)} s would pass maxDurationSeconds ${strategy.maxDurationSeconds}`,
    };
  }
  return { retry: true, retryNumber, delayMs };
}
