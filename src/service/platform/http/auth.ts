import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { storeRateLimiter } from '../store/rate-limits.js';
import { sendError } from './errors.js';
import type { Database } from '../store/database.js';
import { AccountQueries } from '../store/accounts.js';
import type { WebSessions } from '../web/sessions.js';
import type { CredentialView } from '../store/secret-fields.js';
import { authorize, type Principal, type Role, weakerRole } from './permissions.js';

/** API keys are `op_` + 32 random bytes in hex; only their SHA-256 is stored. */
export function generateApiKey(): string {
  return `op_${randomBytes(32).toString('hex')}`;
}

/**
 * Hash of a key for storage and look-up. Keys carry 256 random bits, so a
 * fast hash is enough: there is nothing to brute-force (unlike passwords).
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Creates an account; returns its id. */
export async function createAccount(
  db: Kysely<Database>,
  name: string,
  id: string = randomUUID(),
): Promise<string> {
  await new AccountQueries(db).insert(id, name, Date.now());
  return id;
}

/**
 * Stores a key for an account (generated unless given), acting with `role` (default OWNER: the account's
 * first key, printed by `outpost up`); returns the key in clear, the only time it is seen.
 */
export async function createApiKey(
  db: Kysely<Database>,
  accountId: string,
  key: string = generateApiKey(),
  label: string | null = null,
  role: Role = 'OWNER',
): Promise<string> {
  await new AccountQueries(db).insertKey({
    id: randomUUID(),
    account_id: accountId,
    key_hash: hashApiKey(key),
    key_prefix: key.slice(0, 7),
    label,
    role,
    created_at: Date.now(),
  });
  return key;
}

/** The private location a `pl_` key authenticated for. */
export type PrivateLocationRef = { id: string; slug: string };

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; set by the auth hook on every /v1 route. */
    accountId: string;
    /**
     * The private location when the request authenticated with a private-location
     * key (`pl_…`, agent routes only); null for an account API key.
     */
    privateLocation: PrivateLocationRef | null;
    /**
     * The `api_keys` row of the account key the request authenticated with, directly or through the web
     * session opened with it; null for a private-location key.
     */
    apiKeyId: string | null;
    /** The request authenticated with a web-app session cookie rather than an `Authorization` header. */
    viaWebSession: boolean;
  }
}

/**
 * How the answer to `request` shows stored credentials (docs/security.md, "Credentials in answers"): the
 * service's `configured` view (OUTPOST_API_CREDENTIALS) for a request made with an API key; always `masked` for
 * the web app, whose screens people see.
 */
export function credentialViewOf(
  request: Pick<FastifyRequest, 'viaWebSession'>,
  configured: CredentialView,
): CredentialView {
  return configured === 'clear' && request.viaWebSession === false ? 'clear' : 'masked';
}

/**
 * Headers by which a client names the account it means: Outpost's own and the one the hosted API's clients send
 * (the Go SDK and the CLI send `x-checkly-account` with every request).
 */
const ACCOUNT_HEADERS = ['x-service-account', 'x-checkly-account'] as const;

/** Whether every account header the request sends (ACCOUNT_HEADERS, when not empty) names `accountId`. */
function accountHeadersName(request: FastifyRequest, accountId: string): boolean {
  return ACCOUNT_HEADERS.every((name) => {
    const value = request.headers[name];
    return value === undefined || value === '' || value === accountId;
  });
}

/** Prefix of private-location keys (docs/architecture.md). */
export const PRIVATE_LOCATION_KEY_PREFIX = 'pl_';

/** Routes the web session cookie is never valid on: the agent protocol (docs/protocol.md). */
const AGENT_ROUTE_PREFIX = '/v1/agent/';

/**
 * Resolves a key to its account and principal, and to its private location for a `pl_` key; null when
 * unknown, past its `expires_at` (`nowMs`, epoch ms), or a person's key whose person is gone. A person's
 * key acts with the weaker of its own role and the person's current role.
 */
async function lookUpKey(
  db: Kysely<Database>,
  key: string,
  nowMs: number,
): Promise<{
  accountId: string;
  apiKeyId: string | null;
  privateLocation: PrivateLocationRef | null;
  principal: Principal;
} | null> {
  const keyHash = hashApiKey(key);
  if (key.startsWith(PRIVATE_LOCATION_KEY_PREFIX)) {
    const row = await new AccountQueries(db).privateLocationOfKey(keyHash);
    return row
      ? {
          accountId: row.account_id,
          apiKeyId: null,
          privateLocation: { id: row.id, slug: row.slug },
          principal: { kind: 'private-location', id: row.id, name: row.slug },
        }
      : null;
  }
  const row = await new AccountQueries(db).keyOfHash(keyHash);
  if (row === undefined || (row.expires_at !== null && row.expires_at <= nowMs)) return null;
  // A person's key dies with the person, and acts with the weaker of its role and the person's now
  // (docs/teams.md, "A person's API keys").
  if (row.user_id !== null && row.user_role === null) return null;
  return {
    accountId: row.account_id,
    apiKeyId: row.id,
    privateLocation: null,
    principal: {
      kind: 'api-key',
      id: row.id,
      name: row.label,
      role: row.user_role === null ? row.role : weakerRole(row.role, row.user_role),
      viaWebSession: false,
      userId: row.user_id,
    },
  };
}

/** `api_keys.last_used_at` is written at most once per this interval per key, ms, so reads do not all write. */
export const KEY_USE_RESOLUTION_MS = 60_000;
/** Most keys whose last recorded use {@link KeyUseRecorder} remembers; past it, it starts afresh. */
const KEY_USE_MEMORY = 10_000;

/**
 * Records the uses of account API keys (`api_keys.last_used_at`, docs/api.md, "API keys"): at most one
 * write per key per KEY_USE_RESOLUTION_MS, remembered in memory (one service process), so a key used on
 * every request costs one write a minute. A failed write is logged and never fails the request.
 */
export class KeyUseRecorder {
  readonly #queries: AccountQueries;
  readonly #now: () => number;
  /** Key row id → when its use was last written, epoch ms. */
  readonly #written = new Map<string, number>();

  constructor(db: Kysely<Database>, now: () => number = Date.now) {
    this.#queries = new AccountQueries(db);
    this.#now = now;
  }

  /** Records a use of the key `apiKeyId` now, unless one was written less than KEY_USE_RESOLUTION_MS ago. */
  async used(apiKeyId: string, request: FastifyRequest): Promise<void> {
    const now = this.#now();
    const last = this.#written.get(apiKeyId);
    if (last !== undefined && now - last < KEY_USE_RESOLUTION_MS) return;
    if (this.#written.size >= KEY_USE_MEMORY) this.#written.clear();
    this.#written.set(apiKeyId, now);
    try {
      await this.#queries.recordKeyUse(apiKeyId, now);
    } catch (err) {
      request.log.warn({ err }, 'could not record the use of an API key');
    }
  }
}

/**
 * Limits on failed authentication (item 1.8 of the foundation issue: 3,000 wrong keys were
 * answered in 1.6 s). Only failures count, so a client with a valid key is never slowed.
 */
export type AuthFailureLimits = {
  /** Failed attempts one client address may make per window; IPv6 clients count per /64. Default 20. */
  perClientFailures: number;
  /**
   * Failed attempts all clients together may make per window with keys of one kind (`op_`, `pl_`,
   * anything else): a guesser spread over many addresses is limited too. Default 1000.
   */
  perKeyPrefixFailures: number;
  /** Length of the window, and of the block once a limit is passed, in milliseconds. Default 60 000. */
  windowMs: number;
};

/** Defaults of {@link AuthFailureLimits}. */
export const DEFAULT_AUTH_FAILURE_LIMITS: Readonly<AuthFailureLimits> = Object.freeze({
  perClientFailures: 20,
  perKeyPrefixFailures: 1000,
  windowMs: 60_000,
});

/**
 * The bucket of a client address: an IPv4 address as it is, an IPv6 address by its /64 (one
 * host usually holds a whole /64, so counting per address would let it rotate freely).
 */
export function clientBucketOf(ip: string): string {
  if (!isIPv6(ip) || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip)) return ip.replace(/^::ffff:/i, '');
  const [head = '', tail = ''] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** Kind of a presented key for the global limit: `op_`, `pl_` or `other`. */
function keyKindOf(key: string | undefined): string {
  if (key?.startsWith('op_')) return 'op_';
  if (key?.startsWith(PRIVATE_LOCATION_KEY_PREFIX)) return PRIVATE_LOCATION_KEY_PREFIX;
  return 'other';
}

/**
 * Counts failed authentications per client bucket and per key kind (rate-limiter-flexible; with `store`,
 * where the store keeps them: in memory for the embedded SQLite store, in PostgreSQL for replicas, which then
 * share the counts — see storeRateLimiter). `fail` records one failure and says whether the caller is over a
 * limit; nothing is counted for a request that authenticates.
 */
export class AuthFailureLimiter {
  readonly #perClient: RateLimiterAbstract;
  readonly #perKeyKind: RateLimiterAbstract;

  /**
   * @param store - the service's store (its counters are kept as {@link storeRateLimiter} says); none: memory.
   * @param name - keeps this limiter's counters apart from another's on one store (`api`, `status-page`).
   * @throws RangeError when a limit is not a positive integer or the window not a positive number of ms.
   */
  constructor(limits: AuthFailureLimits = DEFAULT_AUTH_FAILURE_LIMITS, store?: object, name = 'api') {
    for (const name of ['perClientFailures', 'perKeyPrefixFailures'] as const) {
      if (!Number.isInteger(limits[name]) || limits[name] < 1) {
        throw new RangeError(`${name} must be a positive integer, was ${limits[name]}`);
      }
    }
    if (!(limits.windowMs > 0)) throw new RangeError(`windowMs must be above 0, was ${limits.windowMs}`);
    const durationSeconds = limits.windowMs / 1000;
    const options = { duration: durationSeconds, blockDuration: durationSeconds };
    this.#perClient = storeRateLimiter(store ?? {}, {
      ...options,
      keyPrefix: `${name}-auth-client`,
      points: limits.perClientFailures,
    });
    this.#perKeyKind = storeRateLimiter(store ?? {}, {
      ...options,
      keyPrefix: `${name}-auth-key-kind`,
      points: limits.perKeyPrefixFailures,
    });
  }

  /**
   * Records one failed attempt of `ip` with `key` (the presented key, if any).
   * @returns null while under both limits; otherwise which limit was passed and how long until
   *   a failure may be tried again, in milliseconds.
   */
  async fail(
    ip: string,
    key: string | undefined,
  ): Promise<{ scope: 'client' | 'keyPrefix'; retryAfterMs: number } | null> {
    const over = async (limiter: RateLimiterAbstract, bucket: string) => {
      try {
        await limiter.consume(bucket);
        return null;
      } catch (res) {
        if (res instanceof RateLimiterRes) return res.msBeforeNext;
        throw res;
      }
    };
    const client = await over(this.#perClient, clientBucketOf(ip));
    if (client !== null) return { scope: 'client', retryAfterMs: client };
    const kind = await over(this.#perKeyKind, keyKindOf(key));
    if (kind !== null) return { scope: 'keyPrefix', retryAfterMs: kind };
    return null;
  }
}

/**
 * Answers a failed authentication and counts it in `limiter`: 401 with `message`, or 429 with
 * `retry-after` (seconds) once the caller passed a failure limit. Both carry the spec's error body.
 * `key` is the presented key, used only for its kind (`op_`, `pl_`, other); it is never logged.
 */
export async function refuseAuthentication(
  limiter: AuthFailureLimiter,
  request: FastifyRequest,
  reply: FastifyReply,
  key: string | undefined,
  message: string,
): Promise<FastifyReply> {
  const limited = await limiter.fail(request.ip, key);
  if (!limited) return sendError(reply, 'OUTPOST_ERR_UNAUTHORIZED', message);
  const retryAfterSeconds = Math.max(1, Math.ceil(limited.retryAfterMs / 1000));
  request.log.warn({ ip: request.ip, scope: limited.scope }, 'failed authentication rate-limited');
  reply.header('retry-after', String(retryAfterSeconds));
  return sendError(
    reply,
    'OUTPOST_ERR_AUTH_RATE_LIMITED',
    `too many failed authentication attempts; retry in ${retryAfterSeconds} s`,
    {
      scope: limited.scope,
      retryAfterSeconds,
    },
  );
}

/** Options of {@link authHook}. */
export type AuthHookOptions = {
  /**
   * Where failures are counted; default a new limiter with the hook's `limits`. The service shares one
   * with the web app's sign-in (POST /auth/session), so both count against the same limits.
   */
  limiter?: AuthFailureLimiter;
  /** The web app's sessions: without them, the session cookie is ignored (the API key alone works). */
  sessions?: WebSessions;
};

/**
 * Authenticates a request by the web app's session cookie (docs/web-app.md, "Security"): never on
 * `/v1/agent/*`; an ended, unknown or tampered-with session is a failed authentication (401, counted,
 * cookie cleared); a state-changing request also needs the session's `x-csrf-token` and no foreign
 * `Origin` (403 OUTPOST_ERR_CSRF). Answers marked `cache-control: no-store` and `x-content-type-options:
 * nosniff`.
 * @returns true when it answered (refused), false when the request is authenticated.
 */
async function authenticateBySession(
  sessions: WebSessions,
  limiter: AuthFailureLimiter,
  request: FastifyRequest,
  reply: FastifyReply,
  id: string | null,
): Promise<boolean> {
  if (request.routeOptions.url?.startsWith(AGENT_ROUTE_PREFIX)) {
    sendError(
      reply,
      'OUTPOST_ERR_UNAUTHORIZED',
      'the web session cookie is not valid on /v1/agent/ routes; agents authenticate with an API key',
    );
    return true;
  }
  const session = id === null ? null : await sessions.find(id);
  if (!session) {
    sessions.clearCookie(request, reply);
    await refuseAuthentication(
      limiter,
      request,
      reply,
      undefined,
      'the web session has ended (signed out, expired, or its API key was deleted) or its cookie is invalid; sign in again',
    );
    return true;
  }
  if (!accountHeadersName(request, session.accountId)) {
    await refuseAuthentication(limiter, request, reply, undefined, 'invalid API key or account');
    return true;
  }
  const refusal = sessions.crossSiteRefusal(request, id!);
  if (refusal) {
    sendError(reply, 'OUTPOST_ERR_CSRF', refusal.message, { field: refusal.field, in: 'headers' });
    return true;
  }
  reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
  request.accountId = session.accountId;
  request.privateLocation = null;
  request.apiKeyId = session.apiKeyId;
  request.viaWebSession = true;
  request.principal =
    session.user !== null
      ? { kind: 'user', id: session.user.id, name: session.user.email, role: session.role }
      : {
          kind: 'api-key',
          id: session.apiKeyId!,
          name: session.keyName,
          role: session.role,
          viaWebSession: true,
        };
  return authorize(request, reply);
}

/**
 * Fastify onRequest hook: `Authorization: Bearer <key>` is required, unless the request carries none and
 * a web session cookie instead (with `options.sessions`; see authenticateBySession). An
 * `x-service-account` or `x-checkly-account` header, when sent, must name the key's account; an expired key
 * is a wrong key. A private-location key (`pl_…`) authenticates as its location's account and
 * sets `request.privateLocation`. Once authenticated, `request.principal` must hold the route's declared
 * permission (permissions.ts `authorize`: 403 OUTPOST_ERR_FORBIDDEN; a private-location key outside
 * `/v1/agent/*` is 401, as it authenticates nothing there).
 * An account key's use is recorded in `api_keys.last_used_at`, at most once a minute (KeyUseRecorder).
 * Anything else answers 401 with the spec's body (docs/api.md, "Authentication"), or 429
 * with `retry-after` once the client passed a limit of `limits` (failures only are counted; a
 * valid key is always let through, so a client sharing an address with a guesser keeps working).
 */
export function authHook(
  db: Kysely<Database>,
  limits: AuthFailureLimits = DEFAULT_AUTH_FAILURE_LIMITS,
  options: AuthHookOptions = {},
) {
  const limiter = options.limiter ?? new AuthFailureLimiter(limits, db);
  const sessions = options.sessions;
  const keyUses = new KeyUseRecorder(db);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    // The header wins when sent; the cookie is used only without it.
    if (header === undefined && sessions) {
      const cookie = sessions.cookieOf(request);
      if (cookie.present) {
        if (await authenticateBySession(sessions, limiter, request, reply, cookie.id)) return reply;
        if (request.apiKeyId) await keyUses.used(request.apiKeyId, request);
        return;
      }
    }
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      await refuseAuthentication(
        limiter,
        request,
        reply,
        undefined,
        'missing or malformed Authorization header; expected "Bearer <API key>"',
      );
      return reply;
    }
    const found = await lookUpKey(db, match[1]!, Date.now());
    if (!found || !accountHeadersName(request, found.accountId)) {
      await refuseAuthentication(limiter, request, reply, match[1], 'invalid API key or account');
      return reply;
    }
    request.accountId = found.accountId;
    request.privateLocation = found.privateLocation;
    request.apiKeyId = found.apiKeyId;
    request.viaWebSession = false;
    request.principal = found.principal;
    // The matched route's declared permission, not the raw URL, so no path trick reaches another route.
    if (authorize(request, reply)) return reply;
    if (found.apiKeyId) await keyUses.used(found.apiKeyId, request);
  };
}
