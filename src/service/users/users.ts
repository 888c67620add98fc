import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { HttpError, badField, notFound } from '../platform/http/errors.js';
import { type Principal, type Role, rankOf } from '../platform/http/permissions.js';
import type { Database } from '../platform/store/database.js';
import { hashPassword } from './passwords.js';
import { type UserRow, UserQueries } from './store.js';
import { newToken, tokenHashOf } from './tokens.js';

/** How long an invitation link works, ms (7 days). */
export const INVITATION_TTL_MS = 7 * 86_400_000;
/** How long a password-reset link works, ms (1 hour). */
export const RESET_TTL_MS = 3_600_000;
/** How long the second step of a sign-in with two-factor may wait, ms (5 minutes). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Codes a challenge takes in all, right or wrong (docs/teams.md, "Two-factor"). */
export const CHALLENGE_TRIES = 5;

/** A person as the API answers it (docs/teams.md, "People"): never a hash, seed or token. */
export type UserView = {
  id: string;
  email: string;
  name: string;
  role: Role;
  /** INVITED until the person accepts the invitation (sets a password) or signs in by single sign-on. */
  status: 'ACTIVE' | 'INVITED';
  twoFactorEnabled: boolean;
  sso: boolean;
  createdAt: string;
  lastSignInAt: string | null;
};

/** Whether the person has signed up: a password, or a single sign-on identity. */
export function isActive(row: Pick<UserRow, 'password_hash' | 'sso_subject'>): boolean {
  return row.password_hash !== null || row.sso_subject !== null;
}

/** The answer shape of a `users` row. */
export function presentUser(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    status: isActive(row) ? 'ACTIVE' : 'INVITED',
    twoFactorEnabled: row.totp_enabled_at !== null,
    sso: row.sso_subject !== null,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    lastSignInAt: row.last_sign_in_at === null ? null : new Date(Number(row.last_sign_in_at)).toISOString(),
  };
}

/** An email as stored: trimmed and lower-cased (emails are unique in the store, docs/teams.md). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Whether `err` is the store's unique violation (SQLite's or PostgreSQL's). */
function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    (typeof e?.message === 'string' && /UNIQUE constraint failed/.test(e.message))
  );
}

/** 409 OUTPOST_ERR_EMAIL_TAKEN, never saying which account holds the email. */
function emailTaken(): HttpError {
  return new HttpError('OUTPOST_ERR_EMAIL_TAKEN', 'this email already belongs to a person of Outpost', {
    field: 'email',
  });
}

/** The role a principal acts with (a private location's key holds none of the people's roles). */
export function roleOf(principal: Principal): Role {
  return principal.kind === 'private-location' ? 'READ_ONLY' : principal.role;
}

/**
 * The person a principal is (docs/teams.md, "Your own account"): the signed-in person, or the owner of a
 * person's API key.
 * @throws HttpError 409 OUTPOST_ERR_NOT_A_USER for an account key (no person's) or a private location's.
 */
export function userIdOf(principal: Principal): string {
  if (principal.kind === 'user') return principal.id;
  if (principal.kind === 'api-key' && principal.userId) return principal.userId;
  throw new HttpError(
    'OUTPOST_ERR_NOT_A_USER',
    'this API key belongs to no person: /v1/users/me is the signed-in person’s (sign in, or use a key of a person)',
  );
}

/**
 * The people of an account (docs/teams.md, "People"): the rules of who may invite, change and remove whom.
 * Times in epoch ms.
 */
export class Users {
  readonly #db: Kysely<Database>;
  readonly queries: UserQueries;

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.queries = new UserQueries(db);
  }

  /** The person `id` of `accountId`. @throws HttpError 404 when there is none in that account. */
  async get(accountId: string, id: string): Promise<UserRow> {
    const row = await this.queries.get(accountId, id);
    if (!row) throw notFound('user', id);
    return row;
  }

  /**
   * Creates a person of `accountId`: ACTIVE with `password`, INVITED without one.
   * @throws HttpError 409 OUTPOST_ERR_EMAIL_TAKEN when the email belongs to a person (of any account).
   */
  async create(
    accountId: string,
    fields: { email: string; name?: string | undefined; role: Role; password?: string | undefined },
    nowMs: number,
  ): Promise<UserRow> {
    const email = normalizeEmail(fields.email);
    if (await this.queries.byEmail(email)) throw emailTaken();
    const row: UserRow = {
      id: randomUUID(),
      account_id: accountId,
      email,
      name: fields.name?.trim() || email.split('@')[0] || email,
      role: fields.role,
      password_hash: fields.password === undefined ? null : await hashPassword(fields.password),
      totp_secret: null,
      totp_enabled_at: null,
      sso_subject: null,
      created_at: nowMs,
      updated_at: nowMs,
      last_sign_in_at: null,
    };
    try {
      await this.queries.insert(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw emailTaken();
      throw err;
    }
    return row;
  }

  /**
   * A new single-use token of `kind` for person `user` valid `ttlMs` (only its HMAC is stored).
   * @returns the token in clear (for the mail or the answer only).
   */
  async issueToken(
    user: Pick<UserRow, 'id' | 'account_id'>,
    kind: 'invitation' | 'reset' | 'challenge',
    ttlMs: number,
    nowMs: number,
  ): Promise<string> {
    const token = newToken();
    await this.queries.insertToken({
      token_hash: tokenHashOf(this.#db, kind, token),
      kind,
      user_id: user.id,
      account_id: user.account_id,
      created_at: nowMs,
      expires_at: nowMs + ttlMs,
      used_at: null,
    });
    return token;
  }

  /**
   * The live token `token` of `kind` (stored, not used, not expired) with its person; null otherwise.
   * Nothing is used up.
   */
  async liveToken(kind: 'invitation' | 'reset' | 'challenge', token: string, nowMs: number) {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const tokenHash = tokenHashOf(this.#db, kind, token);
    const row = await this.queries.token(tokenHash, kind);
    if (!row || row.used_at !== null || row.expires_at === null || Number(row.expires_at) <= nowMs)
      return null;
    const user = await this.queries.withAccount(row.user_id);
    if (!user || user.account_id !== row.account_id) return null;
    return { tokenHash, row, user };
  }

  /**
   * Checks that a caller of role `callerRole` may give `role` (at most their own).
   * @throws HttpError 400 naming `role`.
   */
  checkGrant(callerRole: Role, role: Role): void {
    if (rankOf(role) > rankOf(callerRole)) {
      throw badField('role', `${role} is above your role ${callerRole}`, 'roleAtMostCaller');
    }
  }

  /**
   * Checks that a caller of role `callerRole` may change person `target` (and to `newRole`): only an OWNER
   * changes or makes an OWNER; no role above the caller's is given; the last active OWNER stays one.
   * @throws HttpError 400 naming `role`, 403 OUTPOST_ERR_FORBIDDEN, 409 OUTPOST_ERR_LAST_OWNER.
   */
  async checkChange(callerRole: Role, target: UserRow, newRole: Role | null): Promise<void> {
    if (newRole !== null) this.checkGrant(callerRole, newRole);
    if (target.role === 'OWNER' && callerRole !== 'OWNER') {
      throw new HttpError('OUTPOST_ERR_FORBIDDEN', 'only an OWNER may change or remove an OWNER', {
        permission: 'owner',
        role: 'OWNER',
      });
    }
    if (target.role === 'OWNER' && newRole !== 'OWNER' && isActive(target)) {
      if ((await this.queries.countActive(target.account_id, 'OWNER')) <= 1) {
        throw new HttpError(
          'OUTPOST_ERR_LAST_OWNER',
          'this person is the account’s last OWNER: make another person OWNER first',
        );
      }
    }
  }
}
