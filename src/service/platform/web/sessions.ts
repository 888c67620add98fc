import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { hashApiKey, PRIVATE_LOCATION_KEY_PREFIX } from '../http/auth.js';
import type { Database } from '../store/database.js';
import { secretBoxOf } from '../store/secret-box.js';
import { type Role, weakerRole } from '../http/permissions.js';
import { WebSessionQueries } from './store.js';

const DAY_MS = 86_400_000;

/** Name of the cookie that carries the signed session id (docs/web-app.md, "Security"). */
export const SESSION_COOKIE = 'outpost_session';
/** Absolute lifetime of a session from its sign-in, ms (30 days); the cookie's Max-Age says the same. */
export const SESSION_MAX_AGE_MS = 30 * DAY_MS;
/** A session not used for this long ends, ms (7 days). */
export const SESSION_IDLE_MS = 7 * DAY_MS;
/** `last_seen_at` is written at most once per this interval per session, ms, so reads do not all write. */
export const LAST_SEEN_RESOLUTION_MS = 60_000;
/** Longest user agent kept with a session, characters. */
export const USER_AGENT_MAX_CHARS = 200;
/** Label of the key `outpost up` makes for its embedded agent: it opens no web session. */
export const EMBEDDED_AGENT_KEY_LABEL = 'embedded-agent';
/** `SecretBox.deriveKey` purposes of the cookie signature and of the CSRF tokens. */
export const COOKIE_KEY_PURPOSE = 'web-session-cookie';
export const CSRF_KEY_PURPOSE = 'web-csrf';

/** Methods that change nothing: no CSRF token is asked for them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** A session id: 32 random bytes, base64url without padding. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** What `POST` and `GET /auth/session` answer (the web app's `SessionInfo`). */
export type SessionInfo = {
  accountId: string;
  accountName: string;
  /** HMAC-SHA256 of the session id (base64url); sent back in `x-csrf-token` on state-changing requests. */
  csrfToken: string;
  /** Absolute end of the session, ISO 8601 (it ends earlier after SESSION_IDLE_MS without use). */
  expiresAt: string;
  /** The first characters of the API key the session was opened with; null for a person's session. */
  keyPrefix: string | null;
  /** The person signed in; null for a session opened with an API key. */
  user: { id: string; name: string; email: string } | null;
  /** The role the session acts with (the key's or the person's): the app shows only what it may do. */
  role: Role;
};

/** A live session, as the store holds it. Times in epoch ms. */
export type WebSession = {
  /** SHA-256 (hex) of the session id; the id itself is only in the browser's cookie. */
  idHash: string;
  accountId: string;
  accountName: string;
  /** The `api_keys` row it was opened with; null for a person's session. */
  apiKeyId: string | null;
  keyPrefix: string | null;
  /** The key's name (null for the account's first key, and for a person's session). */
  keyName: string | null;
  /** The person signed in; null for a session opened with an API key. */
  user: { id: string; name: string; email: string } | null;
  /** The key's or the person's role, read afresh with the session, so a changed role applies at once. */
  role: Role;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
};

/** An account API key that may open a session. */
export type SignInKey = {
  apiKeyId: string;
  accountId: string;
  accountName: string;
  keyPrefix: string;
  keyName: string | null;
  role: Role;
  /**
   * The account's people sign in by single sign-on only (docs/teams.md, "Single sign-on"): the key still
   * works on /v1, but opens no web session.
   */
  ssoOnly: boolean;
};

/** A person who may open a session: found, and their password (or second factor, or identity) checked. */
export type SignInUser = {
  userId: string;
  accountId: string;
  accountName: string;
  name: string;
  email: string;
  role: Role;
};

/** The session cookie of a request: absent, or present with its id (null when unsigned or tampered with). */
export type SessionCookie = { present: false } | { present: true; id: string | null };

/** Why a state-changing request made with the session cookie is refused (403 OUTPOST_ERR_CSRF). */
export type CrossSiteRefusal = { field: 'origin' | 'x-csrf-token'; message: string };

/** Options of {@link WebSessions}. */
export type WebSessionsOptions = {
  /**
   * The service's public URL (OUTPOST_APP_URL): its origin is accepted in `Origin` besides the request's own
   * (a TLS-terminating proxy makes the two differ), and an https one makes the cookie `Secure`.
   */
  appUrl: string;
  /** Key of the CSRF tokens; default `secretBoxOf(db).deriveKey('web-csrf')`. */
  csrfKey?: Buffer;
  /** The clock, epoch ms; default Date.now. */
  now?: () => number;
};

/** SHA-256 (hex) of a session id, as `web_sessions.id_hash` stores it. */
export function hashSessionId(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** The key @fastify/cookie signs the session cookie with: derived from the store's SecretBox key. */
export function cookieSecretOf(db: Kysely<Database>): Buffer {
  return secretBoxOf(db).deriveKey(COOKIE_KEY_PURPOSE);
}

/**
 * Web-app sessions (table `web_sessions`, docs/web-app.md): an account API key is exchanged once for a random
 * session id that a signed, httpOnly cookie carries; only the id's SHA-256 is stored, and the key never is.
 * A session ends at sign-out, 30 days after sign-in, after 7 days unused, or when its API key is deleted.
 * Its CSRF token is derived from the id (HMAC), never stored.
 */
export class WebSessions {
  readonly #queries: WebSessionQueries;
  readonly #csrfKey: Buffer;
  readonly #now: () => number;
  readonly #appOrigin: string | null;
  readonly #appUrlSecure: boolean;

  /** @throws TypeError when `appUrl` is not a URL. */
  constructor(db: Kysely<Database>, options: WebSessionsOptions) {
    this.#queries = new WebSessionQueries(db);
    this.#csrfKey = options.csrfKey ?? secretBoxOf(db).deriveKey(CSRF_KEY_PURPOSE);
    this.#now = options.now ?? Date.now;
    const appUrl = new URL(options.appUrl);
    this.#appOrigin = appUrl.origin === 'null' ? null : appUrl.origin;
    this.#appUrlSecure = appUrl.protocol === 'https:';
  }

  /**
   * The account key `apiKey` names, if it may open a session: an account API key (`op_…`) that is not the
   * embedded agent's. Private-location keys (`pl_…`) and unknown keys give null.
   */
  async signInKey(apiKey: string): Promise<SignInKey | null> {
    if (apiKey.startsWith(PRIVATE_LOCATION_KEY_PREFIX)) return null;
    const row = await this.#queries.signInKey(hashApiKey(apiKey));
    if (!row || row.label === EMBEDDED_AGENT_KEY_LABEL) return null;
    if (row.expires_at !== null && row.expires_at <= this.#now()) return null;
    return {
      apiKeyId: row.apiKeyId,
      accountId: row.accountId,
      accountName: row.accountName,
      keyPrefix: row.key_prefix,
      keyName: row.label,
      role: row.role,
      ssoOnly: row.sso_only === 1,
    };
  }

  /**
   * Opens a session for `key`: a new random id (32 bytes, base64url), stored as its SHA-256.
   * @returns the id (for the cookie only) and the session.
   */
  async open(key: SignInKey, userAgent: string | undefined): Promise<{ id: string; session: WebSession }> {
    const id = randomBytes(32).toString('base64url');
    const now = this.#now();
    const session: WebSession = {
      idHash: hashSessionId(id),
      accountId: key.accountId,
      accountName: key.accountName,
      apiKeyId: key.apiKeyId,
      keyPrefix: key.keyPrefix,
      keyName: key.keyName,
      user: null,
      role: key.role,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + SESSION_MAX_AGE_MS,
    };
    await this.#insert(session, userAgent);
    return { id, session };
  }

  /**
   * Opens a session for the person `user` (signed in by password, two-factor or single sign-on: the caller
   * has checked how): a new random id (32 bytes, base64url), stored as its SHA-256.
   * @returns the id (for the cookie only) and the session.
   */
  async openForUser(
    user: SignInUser,
    userAgent: string | undefined,
  ): Promise<{ id: string; session: WebSession }> {
    const id = randomBytes(32).toString('base64url');
    const now = this.#now();
    const session: WebSession = {
      idHash: hashSessionId(id),
      accountId: user.accountId,
      accountName: user.accountName,
      apiKeyId: null,
      keyPrefix: null,
      keyName: null,
      user: { id: user.userId, name: user.name, email: user.email },
      role: user.role,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + SESSION_MAX_AGE_MS,
    };
    await this.#insert(session, userAgent);
    return { id, session };
  }

  async #insert(session: WebSession, userAgent: string | undefined): Promise<void> {
    await this.#queries.insert({
      id_hash: session.idHash,
      account_id: session.accountId,
      api_key_id: session.apiKeyId,
      user_id: session.user?.id ?? null,
      created_at: session.createdAt,
      last_seen_at: session.lastSeenAt,
      expires_at: session.expiresAt,
      user_agent: userAgent ? userAgent.slice(0, USER_AGENT_MAX_CHARS) : null,
    });
  }

  /**
   * The live session of `id`, or null when there is none: never opened, signed out, past its absolute end,
   * idle for SESSION_IDLE_MS, or its API key or person deleted, or its key expired (such a row is deleted
   * now). Records the use in
   * `last_seen_at` when the last record is LAST_SEEN_RESOLUTION_MS old or more.
   */
  async find(id: string): Promise<WebSession | null> {
    if (!SESSION_ID.test(id)) return null;
    const idHash = hashSessionId(id);
    const row = await this.#queries.live(idHash);
    const now = this.#now();
    if (
      !row ||
      now >= row.expires_at ||
      now - row.last_seen_at >= SESSION_IDLE_MS ||
      (row.key_expires_at !== null && now >= row.key_expires_at) ||
      (row.key_user_id !== null && row.key_user_role === null)
    ) {
      // Gone, or over: make sure no row is left (a row whose key was deleted, an expired one).
      await this.#queries.delete(idHash);
      return null;
    }
    let lastSeenAt = row.last_seen_at;
    if (now - lastSeenAt >= LAST_SEEN_RESOLUTION_MS) {
      await this.#queries.touch(idHash, now);
      lastSeenAt = now;
    }
    return {
      idHash,
      accountId: row.account_id,
      accountName: row.account_name,
      apiKeyId: row.api_key_id,
      keyPrefix: row.key_prefix,
      keyName: row.key_name,
      user:
        row.user_id === null || row.user_name === null || row.user_email === null
          ? null
          : { id: row.user_id, name: row.user_name, email: row.user_email },
      role:
        row.user_role ??
        (row.key_role !== null && row.key_user_role !== null
          ? weakerRole(row.key_role, row.key_user_role)
          : row.key_role)!,
      createdAt: row.created_at,
      lastSeenAt,
      expiresAt: row.expires_at,
    };
  }

  /** Ends the session of `id` (deletes its row); nothing happens when there is none. */
  async end(id: string): Promise<void> {
    await this.#queries.delete(hashSessionId(id));
  }

  /** The CSRF token of session `id`: HMAC-SHA256 of the id under the derived `web-csrf` key, base64url. */
  csrfTokenOf(id: string): string {
    return createHmac('sha256', this.#csrfKey).update(id).digest('base64url');
  }

  /** Whether `token` is the CSRF token of session `id`, compared in constant time. */
  csrfMatches(id: string, token: unknown): boolean {
    if (typeof token !== 'string') return false;
    const expected = Buffer.from(this.csrfTokenOf(id));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** What the session routes answer for session `id`. */
  info(id: string, session: WebSession): SessionInfo {
    return {
      accountId: session.accountId,
      accountName: session.accountName,
      csrfToken: this.csrfTokenOf(id),
      expiresAt: new Date(session.expiresAt).toISOString(),
      keyPrefix: session.keyPrefix,
      user: session.user,
      role: session.role,
    };
  }

  /** The session cookie of `request`, its signature checked (@fastify/cookie must be registered). */
  cookieOf(request: FastifyRequest): SessionCookie {
    const raw = request.cookies?.[SESSION_COOKIE];
    if (raw === undefined) return { present: false };
    const unsigned = request.unsignCookie(raw);
    const id =
      unsigned.valid && unsigned.value !== null && SESSION_ID.test(unsigned.value) ? unsigned.value : null;
    return { present: true, id };
  }

  /** Whether the session cookie gets `Secure`: the request came over HTTPS, or the app URL is https. */
  secure(request: FastifyRequest): boolean {
    return request.protocol === 'https' || this.#appUrlSecure;
  }

  /** Sets the signed session cookie: HttpOnly, SameSite=Strict, Path=/, Max-Age 30 days, Secure over HTTPS. */
  setCookie(request: FastifyRequest, reply: FastifyReply, id: string): void {
    reply.setCookie(SESSION_COOKIE, id, {
      signed: true,
      httpOnly: true,
      sameSite: 'strict',
      path: '/',
      maxAge: SESSION_MAX_AGE_MS / 1000,
      secure: this.secure(request),
    });
  }

  /** Tells the browser to drop the session cookie. */
  clearCookie(request: FastifyRequest, reply: FastifyReply): void {
    reply.clearCookie(SESSION_COOKIE, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/',
      secure: this.secure(request),
    });
  }

  /**
   * The `Origin` of `request` when it is present and foreign, else null. Accepted: the request's own origin
   * (`<protocol>://<host>`) and the app URL's origin.
   */
  foreignOrigin(request: FastifyRequest): string | null {
    const origin = request.headers.origin;
    if (origin === undefined) return null;
    if (origin === `${request.protocol}://${request.host}` || origin === this.#appOrigin) return null;
    return origin;
  }

  /**
   * Why a request authenticated by session `id` must be refused as cross-site, or null when it is not. A
   * state-changing method (not GET, HEAD, OPTIONS) needs an `Origin`, when sent, that is not foreign, and the
   * session's `x-csrf-token`; GET, HEAD and OPTIONS need neither.
   */
  crossSiteRefusal(request: FastifyRequest, id: string): CrossSiteRefusal | null {
    if (SAFE_METHODS.has(request.method)) return null;
    const foreign = this.foreignOrigin(request);
    if (foreign !== null) {
      return {
        field: 'origin',
        message: `origin ${foreign} is not this service's; a request with the session cookie must come from the web app`,
      };
    }
    const token = request.headers['x-csrf-token'];
    if (token === undefined) {
      return {
        field: 'x-csrf-token',
        message:
          'header x-csrf-token is required: a request that changes something with the session cookie carries the session’s CSRF token',
      };
    }
    if (!this.csrfMatches(id, token)) {
      return { field: 'x-csrf-token', message: 'header x-csrf-token is not this session’s CSRF token' };
    }
    return null;
  }
}
