import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { badField, sendError } from '../platform/http/errors.js';
import { strict } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { refuseForeignOrigin, requireJson } from '../platform/web/auth-routes.js';
import { WebSessions } from '../platform/web/sessions.js';
import { sendLimited, userLimitsOf } from './limits.js';
import { resetMail, sendUserMail } from './mail.js';
import { checkPassword, hashPassword } from './passwords.js';
import { Email, PasswordField, PersonName, TokenField } from './schemas.js';
import { secondFactorMatches } from './second-factor.js';
import { openUserSession } from './sign-in.js';
import { CHALLENGE_TRIES, isActive, normalizeEmail, RESET_TTL_MS, Users } from './users.js';

/** Largest body of these routes, bytes. */
const BODY_LIMIT_BYTES = 4096;

/**
 * The keyless routes of people (docs/teams.md, "Signing in", "Password resets", "Invitations"), outside
 * `/v1` and the OpenAPI document like `/auth/session`: JSON only (415), a foreign `Origin` 403
 * OUTPOST_ERR_CSRF, every answer `cache-control: no-store`. Tokens travel in bodies (or, for the
 * invitation look-up, in the path the app builds from the link's fragment) and are never logged.
 */
export async function userAuthRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const db = ctx.db;
  const users = new Users(db);
  const sessions = new WebSessions(db, { appUrl: ctx.appUrl });
  const limits = userLimitsOf(db);
  const guards = { onRequest: [refuseForeignOrigin(sessions), requireJson], bodyLimit: BODY_LIMIT_BYTES };

  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
    });

    /** 429 when the client is over its wrong-token limit; else counts nothing. */
    const tokenBlocked = async (request: FastifyRequest, reply: FastifyReply) => {
      const blocked = await limits.clientBlocked('token', request.ip);
      return blocked ? sendLimited(request, reply, blocked, 'token') : null;
    };
    /** Counts a wrong token; 429 past the limit, else `otherwise`. */
    const wrongToken = async (
      request: FastifyRequest,
      reply: FastifyReply,
      otherwise: () => FastifyReply,
    ) => {
      const over = await limits.count('token', request.ip, null);
      return over ? sendLimited(request, reply, over, 'token') : otherwise();
    };

    scope.post(
      '/auth/session/two-factor',
      {
        ...guards,
        schema: {
          hide: true,
          body: Type.Object(
            { challenge: TokenField, code: Type.String({ minLength: 1, maxLength: 64 }) },
            strict,
          ),
        },
      },
      async (request, reply) => {
        const blocked = await limits.clientBlocked('two-factor', request.ip);
        if (blocked) return sendLimited(request, reply, blocked, 'two-factor');
        const now = Date.now();
        const live = await users.liveToken('challenge', request.body.challenge, now);
        const refuse = async (message: string) => {
          const over = await limits.count('two-factor', request.ip, live ? live.user.id : null);
          return over
            ? sendLimited(request, reply, over, 'two-factor')
            : sendError(reply, 'OUTPOST_ERR_UNAUTHORIZED', message);
        };
        if (!live || live.row.tries >= CHALLENGE_TRIES) {
          return refuse('the sign-in has expired or was used: sign in again with your email and password');
        }
        const targetBlocked = await limits.targetBlocked('two-factor', live.user.id);
        if (targetBlocked) return sendLimited(request, reply, targetBlocked, 'two-factor');
        if (!(await secondFactorMatches(db, live.user, request.body.code, now))) {
          await users.queries.addTry(live.tokenHash);
          return refuse('wrong code');
        }
        if (!(await users.queries.useToken(live.tokenHash, now))) {
          return refuse('the sign-in has expired or was used: sign in again with your email and password');
        }
        return openUserSession(db, sessions, live.user, request, reply);
      },
    );

    scope.post(
      '/auth/password-reset',
      { ...guards, schema: { hide: true, body: Type.Object({ email: Email }, strict) } },
      async (request, reply) => {
        const email = normalizeEmail(request.body.email);
        const over = await limits.count('reset', request.ip, `email:${email}`);
        if (over) return sendLimited(request, reply, over, 'reset');
        // The answer is the same whatever the email, and sent before any mail: the time taken says nothing.
        reply.code(202).send({});
        const smtp = ctx.smtp;
        void (async () => {
          const user = await users.queries.byEmail(email);
          if (!user || !isActive(user) || smtp === null) return;
          const token = await users.issueToken(user, 'reset', RESET_TTL_MS, Date.now());
          await sendUserMail(
            smtp,
            resetMail(user.email, `${ctx.appUrl}/reset-password#token=${token}`),
            request.log,
          );
        })().catch((err: unknown) => request.log.error({ err }, 'could not send a password-reset mail'));
        return reply;
      },
    );

    scope.post(
      '/auth/password-reset/confirm',
      {
        ...guards,
        schema: { hide: true, body: Type.Object({ token: TokenField, password: PasswordField }, strict) },
      },
      async (request, reply) => {
        const blocked = await tokenBlocked(request, reply);
        if (blocked) return blocked;
        const now = Date.now();
        const live = await users.liveToken('reset', request.body.token, now);
        const invalid = () => {
          throw badField(
            'token',
            'is not a live reset link: it was used, has expired, or is wrong',
            'liveToken',
          );
        };
        if (!live) return wrongToken(request, reply, invalid);
        checkPassword(request.body.password, 'password');
        const hash = await hashPassword(request.body.password);
        if (!(await users.queries.useToken(live.tokenHash, now))) return wrongToken(request, reply, invalid);
        await users.queries.update(live.user.account_id, live.user.id, { password_hash: hash }, now);
        await users.queries.endSessions(live.user.id);
        request.log.info({ userId: live.user.id }, 'password reset');
        return reply.code(204).send();
      },
    );

    scope.get(
      '/auth/invitations/:token',
      { schema: { hide: true, params: Type.Object({ token: TokenField }, strict) } },
      async (request, reply) => {
        const blocked = await tokenBlocked(request, reply);
        if (blocked) return blocked;
        const live = await users.liveToken('invitation', request.params.token, Date.now());
        if (!live || isActive(live.user)) {
          return wrongToken(request, reply, () =>
            sendError(reply, 'OUTPOST_ERR_NOT_FOUND', 'this invitation was used, has expired, or is wrong'),
          );
        }
        return { email: live.user.email, accountName: live.user.account_name };
      },
    );

    scope.post(
      '/auth/invitations/accept',
      {
        ...guards,
        schema: {
          hide: true,
          body: Type.Object({ token: TokenField, name: PersonName, password: PasswordField }, strict),
        },
      },
      async (request, reply) => {
        const blocked = await tokenBlocked(request, reply);
        if (blocked) return blocked;
        const now = Date.now();
        const live = await users.liveToken('invitation', request.body.token, now);
        const invalid = () => {
          throw badField(
            'token',
            'is not a live invitation: it was used, has expired, or is wrong',
            'liveToken',
          );
        };
        if (!live || isActive(live.user)) return wrongToken(request, reply, invalid);
        checkPassword(request.body.password, 'password');
        const hash = await hashPassword(request.body.password);
        if (!(await users.queries.useToken(live.tokenHash, now))) return wrongToken(request, reply, invalid);
        const name = request.body.name.trim() || live.user.name;
        await users.queries.update(live.user.account_id, live.user.id, { password_hash: hash, name }, now);
        request.log.info({ accountId: live.user.account_id, userId: live.user.id }, 'invitation accepted');
        return openUserSession(db, sessions, { ...live.user, name, password_hash: hash }, request, reply);
      },
    );
  });
}
