/** Share of a job's timeout kept free for building and posting the result. */
const RESERVE_SHARE = 0.1;
/** Upper bound of that reserve, ms. */
const MAX_RESERVE_MS = 500;

/**
 * How long a run may measure, ms: the job's `timeoutMs` less a reserve of 10 %
 * (at most 500 ms) for building and posting the result, so a slow target ends
 * as a FAILED result rather than as a job the dispatcher had to abort.
 */
export function runBudgetMs(timeoutMs: number): number {
  return timeoutMs - Math.min(MAX_RESERVE_MS, timeoutMs * RESERVE_SHARE);
}
