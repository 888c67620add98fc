import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { sendError } from '../platform/http/errors.js';
import type { Database } from '../platform/store/database.js';
import type { AuthEventListener } from '../platform/http/auth-events.js';
import type { PasswordSignIn } from '../platform/web/auth-routes.js';
import type { WebSessions } from '../platform/web/sessions.js';
import { isSsoOnly, ssoRequiredMessage } from '../sso/index.js';
import { sendLimited, userLimitsOf } from './limits.js';
import { verifyPassword } from './passwords.js';
import type { UserWithAccount } from './store.js';
import { CHALLENGE_TTL_MS, normalizeEmail, Users } from './users.js';

/** The one message of a refused sign-in, whether the email or the password was wrong (no enumeration). */
export const WRONG_EMAIL_OR_PASSWORD = 'wrong email or password';

/**
 * Opens a session for `user` (their password, second factor or invitation checked by the caller), records
 * the sign-in, sets the cookie and answers the SessionInfo. A sign-in over a live session replaces it.
 */
export async function openUserSession(
  db: Kysely<Database>,
  sessions: WebSessions,
  user: UserWithAccount,
  request: FastifyRequest,
  reply: FastifyReply,
  onAuthEvent: AuthEventListener,
): Promise<FastifyReply> {
  // Every way a person opens a session here (password, two-factor, invitation) passes this one check: an
  // account that signs in by single sign-on only opens none of them (docs/teams.md, "Single sign-on").
  if (await isSsoOnly(db, user.account_id)) {
    return sendError(reply, 'OUTPOST_ERR_SSO_REQUIRED', ssoRequiredMessage(user.account_name));
  }
  const previous = sessions.cookieOf(request);
  if (previous.present && previous.id !== null) await sessions.end(previous.id);
  const { id, session } = await sessions.openForUser(
    {
      userId: user.id,
      accountId: user.account_id,
      accountName: user.account_name,
      name: user.name,
      email: user.email,
      role: user.role,
    },
    request.headers['user-agent'],
  );
  await new Users(db).queries.signedIn(user.id, Date.now());
  sessions.setCookie(request, reply, id);
  request.log.info({ accountId: user.account_id, userId: user.id }, 'web session opened for a person');
  onAuthEvent({
    kind: 'sign-in',
    accountId: user.account_id,
    principal: { kind: 'user', id: user.id, name: user.email, role: user.role },
    request,
  });
  return reply.send(sessions.info(id, session));
}

/**
 * People's sign-in by email and password (docs/teams.md, "Signing in"), for `POST /auth/session`:
 *
 * - a client bucket over its failed sign-ins is refused first (429), before any hashing;
 * - the password is verified with Argon2id, against a dummy hash when the email is unknown or the person
 *   has no password (invited), so both take as long and answer the same 401 "wrong email or password";
 * - a failure counts per client bucket and per email (429 past either limit); a right password from a
 *   client under its limit is never refused;
 * - the right password of a person whose account signs in by single sign-on only: 403
 *   OUTPOST_ERR_SSO_REQUIRED (docs/teams.md, "Single sign-on");
 * - with two-factor on: 200 `{ twoFactorRequired: true, challenge }` (single-use, 5 minutes, 5 codes) and
 *   no cookie; else the session.
 */
export function passwordSignIn(db: Kysely<Database>): PasswordSignIn {
  const users = new Users(db);
  return async (body, request, reply, sessions, onAuthEvent) => {
    const limits = userLimitsOf(db);
    const blocked = await limits.clientBlocked('sign-in', request.ip);
    if (blocked) return sendLimited(request, reply, blocked, 'sign-in');
    const email = normalizeEmail(body.email);
    const user = await users.queries.byEmail(email);
    const right = await verifyPassword(user?.password_hash ?? null, body.password);
    if (!user || !right) {
      // A wrong password for a known person is told to their account's audit log; an unknown email to none.
      onAuthEvent({ kind: 'sign-in-failed', accountId: user?.account_id ?? null, principal: null, request });
      const over = await limits.count('sign-in', request.ip, `email:${email}`);
      if (over) return sendLimited(request, reply, over, 'sign-in');
      return sendError(reply, 'OUTPOST_ERR_UNAUTHORIZED', WRONG_EMAIL_OR_PASSWORD);
    }
    // Said only to whom knows the password: single sign-on only accounts refuse it (no session, no challenge).
    if (await isSsoOnly(db, user.account_id)) {
      return sendError(reply, 'OUTPOST_ERR_SSO_REQUIRED', ssoRequiredMessage(user.account_name));
    }
    if (user.totp_enabled_at !== null) {
      const challenge = await users.issueToken(user, 'challenge', CHALLENGE_TTL_MS, Date.now());
      return reply.send({ twoFactorRequired: true, challenge });
    }
    return openUserSession(db, sessions, user, request, reply, onAuthEvent);
  };
}
