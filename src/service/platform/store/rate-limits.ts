import type { Kysely } from 'kysely';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import { postgresPoolOf } from './postgres.js';

/** Options of {@link storeRateLimiter}: rate-limiter-flexible's, with the prefix that keeps limiters apart. */
export type StoreRateLimiterOptions = {
  /** Names the limiter's counters in the shared table (`auth-client`, `heartbeat-ping`…). */
  keyPrefix: string;
  /** Points per window. */
  points: number;
  /** The window, seconds. */
  duration: number;
  /** Once over the limit, blocked this long, seconds (default: until the window ends). */
  blockDuration?: number;
};

/**
 * A rate limiter whose counters live where the service's state does: on a PostgreSQL store in its
 * `rate_limits` table (rate-limiter-flexible's RateLimiterPostgres on the store's pool), so replicas
 * sharing the store share every limit and three replicas do not allow three times the attempts; with an
 * in-memory limiter as its insurance while the database does not answer. On the embedded SQLite store,
 * one process: in memory.
 */
export function storeRateLimiter(
  db: Kysely<unknown> | object,
  options: StoreRateLimiterOptions,
): RateLimiterAbstract {
  const pool = postgresPoolOf(db);
  if (pool === undefined) return new RateLimiterMemory(options);
  return new RateLimiterPostgres({
    ...options,
    storeClient: pool,
    storeType: 'pool',
    tableName: 'rate_limits',
    // Made by migration 0023; its old rows go in the platform's retention pass.
    tableCreated: true,
    clearExpiredByTimeout: false,
    insuranceLimiter: new RateLimiterMemory(options),
  });
}
