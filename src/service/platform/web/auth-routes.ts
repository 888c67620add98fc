import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AuthFailureLimiter, refuseAuthentication } from '../http/auth.js';
import type { AuthEventListener } from '../http/auth-events.js';
import { sendError } from '../http/errors.js';
import type { WebSessions } from './sessions.js';

/**
 * A person's sign-in by email and password (docs/teams.md, "Signing in"), given by the service's wiring
 * (the people's module): it answers the request itself (SessionInfo and the cookie, a two-factor
 * challenge, 401 or 429).
 */
export type PasswordSignIn = (
  body: { email: string; password: string },
  request: FastifyRequest,
  reply: FastifyReply,
  sessions: WebSessions,
  /** Told of the sign-in, or of the failed one (with the person's account when the email is known). */
  onAuthEvent: AuthEventListener,
) => Promise<FastifyReply>;

/** Options of {@link authRoutes}. */
export type AuthRoutesOptions = {
  sessions: WebSessions;
  /** The limiter the /v1 auth hook counts in too: failed sign-ins and wrong keys share the limits. */
  limiter: AuthFailureLimiter;
  /** Told of each sign-in, failed sign-in and sign-out once answered (the audit log); default none. */
  onAuthEvent?: AuthEventListener;
  /** Sign-in by email and password; without it only `{ apiKey }` signs in. */
  passwordSignIn?: PasswordSignIn | undefined;
};

/** Largest sign-in body, bytes: an API key and some room. */
const SIGN_IN_BODY_LIMIT_BYTES = 4096;

const SignInBody = Type.Object(
  {
    apiKey: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'An account API key (op_…)' }),
    ),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'A person’s email' })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Their password' })),
  },
  { additionalProperties: false },
);

/** One message for every refused key, so the answer does not tell a private-location key from a wrong one. */
const WRONG_KEY = 'invalid API key: sign in with an account API key (op_…)';

/** 403 OUTPOST_ERR_CSRF when the request's `Origin` is present and foreign. */
export function refuseForeignOrigin(sessions: WebSessions) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const foreign = sessions.foreignOrigin(request);
    if (foreign === null) return;
    sendError(
      reply,
      'OUTPOST_ERR_CSRF',
      `origin ${foreign} is not this service's; sign in from the web app`,
      {
        field: 'origin',
        in: 'headers',
      },
    );
    return reply;
  };
}

/** 415 unless the body is declared `application/json` (checked before the body is read). */
export async function requireJson(request: FastifyRequest, reply: FastifyReply) {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') return;
  sendError(
    reply,
    'OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE',
    `a sign-in is sent as application/json, not ${type || 'no content-type'}`,
    { field: 'content-type', in: 'headers' },
  );
  return reply;
}

/**
 * The web app's session routes (docs/web-app.md, "Signing in"), outside `/v1` and the OpenAPI document:
 *
 * - `POST /auth/session` `{ apiKey }`, or `{ email, password }` handed to `passwordSignIn` (application/json only, else 415; a foreign `Origin` 403
 *   OUTPOST_ERR_CSRF): an account API key opens a session. 200 with the SessionInfo and the signed
 *   `outpost_session` cookie; 401 for a wrong, private-location or embedded-agent key, 403
 *   OUTPOST_ERR_SSO_REQUIRED for a key of an account whose people sign in by single sign-on only, 429 with
 *   `retry-after` past the failure limits (counted with the API's).
 * - `GET /auth/session`: the SessionInfo of the cookie's session; 401 without a live one (a dead cookie
 *   is cleared and counts as a failed authentication).
 * - `DELETE /auth/session`: signs out (x-csrf-token required, 403 OUTPOST_ERR_CSRF without it): deletes
 *   the session, clears the cookie, 204. Without a live session it only clears the cookie (204).
 *
 * Every answer is `cache-control: no-store` and `x-content-type-options: nosniff`. The key is never logged
 * or stored; only its SHA-256 is looked up.
 */
export async function authRoutes(
  app: FastifyInstance,
  { sessions, limiter, onAuthEvent = () => {}, passwordSignIn }: AuthRoutesOptions,
): Promise<void> {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
  });

  app.post<{ Body: { apiKey?: string; email?: string; password?: string } }>(
    '/auth/session',
    {
      schema: { hide: true, body: SignInBody },
      bodyLimit: SIGN_IN_BODY_LIMIT_BYTES,
      onRequest: [refuseForeignOrigin(sessions), requireJson],
    },
    async (request, reply) => {
      const { apiKey, email, password } = request.body;
      if (apiKey === undefined) {
        if (email !== undefined && password !== undefined && passwordSignIn) {
          return passwordSignIn({ email, password }, request, reply, sessions, onAuthEvent);
        }
        return sendError(
          reply,
          'OUTPOST_ERR_VALIDATION',
          passwordSignIn ? 'body must hold either apiKey, or email and password' : 'body.apiKey is required',
          {
            // Neither form: the API key's field, as before people could sign in.
            field: passwordSignIn && email !== undefined ? 'password' : 'apiKey',
            in: 'body',
            rule: 'required',
          },
        );
      }
      const key = await sessions.signInKey(apiKey);
      if (!key) {
        await refuseAuthentication(limiter, request, reply, apiKey, WRONG_KEY);
        onAuthEvent({ kind: 'sign-in-failed', accountId: null, principal: null, request });
        return reply;
      }
      if (key.ssoOnly) {
        // The key is right (not a failed authentication), and keeps working on /v1 for automation.
        return sendError(
          reply,
          'OUTPOST_ERR_SSO_REQUIRED',
          `${key.accountName} signs in with single sign-on only: use "Sign in with single sign-on"; API keys keep working on the API`,
        );
      }
      // A sign-in over a live session replaces it.
      const previous = sessions.cookieOf(request);
      if (previous.present && previous.id !== null) await sessions.end(previous.id);
      const userAgent = request.headers['user-agent'];
      const { id, session } = await sessions.open(key, userAgent);
      sessions.setCookie(request, reply, id);
      request.log.info({ accountId: key.accountId, keyPrefix: key.keyPrefix }, 'web session opened');
      onAuthEvent({
        kind: 'sign-in',
        accountId: key.accountId,
        principal: {
          kind: 'api-key',
          id: key.apiKeyId,
          name: key.keyName,
          role: key.role,
          viaWebSession: true,
        },
        request,
      });
      return sessions.info(id, session);
    },
  );

  app.get('/auth/session', { schema: { hide: true } }, async (request, reply) => {
    const cookie = sessions.cookieOf(request);
    if (!cookie.present) {
      return sendError(reply, 'OUTPOST_ERR_UNAUTHORIZED', 'not signed in: no session cookie');
    }
    const session = cookie.id === null ? null : await sessions.find(cookie.id);
    if (!session) {
      sessions.clearCookie(request, reply);
      await refuseAuthentication(
        limiter,
        request,
        reply,
        undefined,
        'the web session has ended (signed out, expired, or its API key was deleted) or its cookie is invalid; sign in again',
      );
      return reply;
    }
    return sessions.info(cookie.id!, session);
  });

  app.delete('/auth/session', { schema: { hide: true } }, async (request, reply) => {
    const cookie = sessions.cookieOf(request);
    const session = cookie.present && cookie.id !== null ? await sessions.find(cookie.id) : null;
    if (session && cookie.present && cookie.id !== null) {
      const refusal = sessions.crossSiteRefusal(request, cookie.id);
      if (refusal) {
        return sendError(reply, 'OUTPOST_ERR_CSRF', refusal.message, { field: refusal.field, in: 'headers' });
      }
      await sessions.end(cookie.id);
      request.log.info({ accountId: session.accountId }, 'web session ended');
      onAuthEvent({
        kind: 'sign-out',
        accountId: session.accountId,
        principal:
          session.user !== null
            ? { kind: 'user', id: session.user.id, name: session.user.email, role: session.role }
            : {
                kind: 'api-key',
                id: session.apiKeyId!,
                name: session.keyName,
                role: session.role,
                viaWebSession: true,
              },
        request,
      });
    }
    sessions.clearCookie(request, reply);
    return reply.code(204).send();
  });
}
