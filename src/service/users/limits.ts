import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { clientBucketOf } from '../platform/http/auth.js';
import { sendError } from '../platform/http/errors.js';
import type { Database } from '../platform/store/database.js';
import { storeRateLimiter } from '../platform/store/rate-limits.js';

/** What is limited (docs/teams.md, "Rate limits"). */
export type LimitedAction = 'sign-in' | 'two-factor' | 'reset' | 'token';

/** One action's limits: attempts per client address (IPv6 per /64) and per target, per window. */
export type ActionLimits = { perClient: number; perTarget: number; windowMs: number };

/**
 * Defaults (docs/teams.md, "Rate limits"): failed sign-ins 20 per address and 10 per email in 15 minutes;
 * wrong two-factor codes 20 per address and 10 per person in 15 minutes; reset requests 10 per address and
 * 3 per email an hour; wrong invitation or reset tokens 20 per address in 15 minutes (a token is its own
 * target: 256 random bits, nothing to aim at).
 */
export const DEFAULT_USER_LIMITS: Readonly<Record<LimitedAction, ActionLimits>> = Object.freeze({
  'sign-in': { perClient: 20, perTarget: 10, windowMs: 15 * 60_000 },
  'two-factor': { perClient: 20, perTarget: 10, windowMs: 15 * 60_000 },
  reset: { perClient: 10, perTarget: 3, windowMs: 60 * 60_000 },
  token: { perClient: 20, perTarget: 20, windowMs: 15 * 60_000 },
});

/** A refusal: which limit was passed and for how long, ms. */
export type Limited = { scope: 'client' | 'target'; retryAfterMs: number };

/**
 * The limits of people's sign-in, two-factor codes, reset requests and token tries, kept where the store
 * keeps rate limits (`storeRateLimiter`: PostgreSQL's `rate_limits` table, shared by replicas; memory for
 * SQLite), counted per client bucket (`clientBucketOf`) and per target (an email, a person).
 */
export class UserLimits {
  readonly #limiters = new Map<LimitedAction, { client: RateLimiterAbstract; target: RateLimiterAbstract }>();

  constructor(
    db: Kysely<Database>,
    limits: Readonly<Record<LimitedAction, ActionLimits>> = DEFAULT_USER_LIMITS,
  ) {
    for (const [action, limit] of Object.entries(limits) as [LimitedAction, ActionLimits][]) {
      const seconds = limit.windowMs / 1000;
      const options = { duration: seconds, blockDuration: seconds };
      this.#limiters.set(action, {
        client: storeRateLimiter(db, {
          ...options,
          keyPrefix: `users-${action}-client`,
          points: limit.perClient,
        }),
        target: storeRateLimiter(db, {
          ...options,
          keyPrefix: `users-${action}-target`,
          points: limit.perTarget,
        }),
      });
    }
  }

  #of(action: LimitedAction) {
    return this.#limiters.get(action)!;
  }

  /** Whether the client `ip` has used up its attempts at `action` (nothing counted). */
  async clientBlocked(action: LimitedAction, ip: string): Promise<Limited | null> {
    const res = await this.#of(action).client.get(clientBucketOf(ip));
    if (res !== null && res.consumedPoints >= this.#of(action).client.points) {
      return { scope: 'client', retryAfterMs: res.msBeforeNext };
    }
    return null;
  }

  /** Whether `target` has used up its attempts at `action` (nothing counted). */
  async targetBlocked(action: LimitedAction, target: string): Promise<Limited | null> {
    const res = await this.#of(action).target.get(target);
    if (res !== null && res.consumedPoints >= this.#of(action).target.points) {
      return { scope: 'target', retryAfterMs: res.msBeforeNext };
    }
    return null;
  }

  /**
   * Counts one attempt (a failure, or a reset request) of `ip` at `target` (null: the client only).
   * @returns null while under both limits, else the limit passed.
   */
  async count(action: LimitedAction, ip: string, target: string | null): Promise<Limited | null> {
    const consume = async (limiter: RateLimiterAbstract, key: string) => {
      try {
        await limiter.consume(key);
        return null;
      } catch (res) {
        if (res instanceof RateLimiterRes) return res.msBeforeNext;
        throw res;
      }
    };
    const client = await consume(this.#of(action).client, clientBucketOf(ip));
    const targetMs = target === null ? null : await consume(this.#of(action).target, target);
    if (client !== null) return { scope: 'client', retryAfterMs: client };
    if (targetMs !== null) return { scope: 'target', retryAfterMs: targetMs };
    return null;
  }
}

/**
 * Answers 429 OUTPOST_ERR_AUTH_RATE_LIMITED with `retry-after` (seconds), as the API's failure limit does
 * (platform/http/auth.ts); the target itself (an email) is never logged.
 */
export function sendLimited(
  request: FastifyRequest,
  reply: FastifyReply,
  limited: Limited,
  action: LimitedAction,
) {
  const retryAfterSeconds = Math.max(1, Math.ceil(limited.retryAfterMs / 1000));
  request.log.warn({ ip: request.ip, scope: limited.scope, action }, 'people’s sign-in rate-limited');
  reply.header('retry-after', String(retryAfterSeconds));
  return sendError(
    reply,
    'OUTPOST_ERR_AUTH_RATE_LIMITED',
    `too many attempts; retry in ${retryAfterSeconds} s`,
    { scope: limited.scope, retryAfterSeconds },
  );
}

const limitsOfStore = new WeakMap<object, UserLimits>();

/** The one {@link UserLimits} of the store `db` in this process (routes and sign-in share it). */
export function userLimitsOf(db: Kysely<Database>): UserLimits {
  let limits = limitsOfStore.get(db);
  if (!limits) {
    limits = new UserLimits(db);
    limitsOfStore.set(db, limits);
  }
  return limits;
}
