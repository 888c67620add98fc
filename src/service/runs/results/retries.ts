import { RETRY_DEFAULTS } from '../../../protocol/retry.js';
import type { JobRetryStrategy, RetryStrategyType } from '../../../protocol/index.js';

/** A retry strategy as a check or group stores it (docs/api.md, "Retry strategy"): only `type` is required. */
export type StoredRetryStrategy = {
  type: RetryStrategyType;
  baseBackoffSeconds?: number;
  maxRetries?: number;
  maxDurationSeconds?: number;
  sameRegion?: boolean;
  onlyOn?: 'NETWORK_ERROR'[];
};

/**
 * What the deprecated `doubleCheck: true` means without a retry strategy: one retry, 5 s
 * after the failure, from another location when the check has several (the market leader's
 * double check re-ran a failed check from a different region), within the usual 600 s.
 */
export const DOUBLE_CHECK_RETRY_STRATEGY: Readonly<JobRetryStrategy> = Object.freeze({
  type: 'SINGLE_RETRY',
  baseBackoffSeconds: 5,
  maxRetries: 1,
  maxDurationSeconds: RETRY_DEFAULTS.maxDurationSeconds,
  sameRegion: false,
  onlyOn: [],
});

/** A stored strategy with every field: RETRY_DEFAULTS for the missing ones, `onlyOn` []. */
export function completeRetryStrategy(stored: StoredRetryStrategy): JobRetryStrategy {
  return {
    type: stored.type,
    baseBackoffSeconds: stored.baseBackoffSeconds ?? RETRY_DEFAULTS.baseBackoffSeconds,
    maxRetries: stored.maxRetries ?? RETRY_DEFAULTS.maxRetries,
    maxDurationSeconds: stored.maxDurationSeconds ?? RETRY_DEFAULTS.maxDurationSeconds,
    sameRegion: stored.sameRegion ?? RETRY_DEFAULTS.sameRegion,
    onlyOn: [...(stored.onlyOn ?? [])],
  };
}

/**
 * The retry strategy a run goes by (src/protocol/job.ts, JobRetryStrategySchema), as the market
 * leader resolves it — a group's retry settings override its checks' unless the group says
 * FALLBACK ("fall back to each check's own"):
 * 1. in a group whose `retryStrategy` is an object, the group's (completed with RETRY_DEFAULTS);
 * 2. else the check's own `retryStrategy`;
 * 3. else, with `doubleCheck` true (the spec's default) and `options.honourDoubleCheck` (default
 *    true; the job builder passes false for uptime monitors, which retry only when a strategy is set),
 *    {@link DOUBLE_CHECK_RETRY_STRATEGY};
 * 4. else null (no retries).
 * `{ type: NO_RETRIES }` on the check or group is how retries are turned off while doubleCheck is on.
 */
export function resolveRetryStrategy(
  check: Readonly<Record<string, unknown>>,
  group: Readonly<Record<string, unknown>> | null,
  options: { honourDoubleCheck?: boolean } = {},
): JobRetryStrategy | null {
  const fromGroup = group?.retryStrategy;
  if (fromGroup && typeof fromGroup === 'object')
    return completeRetryStrategy(fromGroup as StoredRetryStrategy);
  const own = check.retryStrategy;
  if (own && typeof own === 'object') return completeRetryStrategy(own as StoredRetryStrategy);
  if ((options.honourDoubleCheck ?? true) && check.doubleCheck !== false) {
    return { ...DOUBLE_CHECK_RETRY_STRATEGY, onlyOn: [] };
  }
  return null;
}
