import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { badField, HttpError, notFound } from '../platform/http/errors.js';
import { ErrorBodySchema, NoContent } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { hashSessionId, WebSessions } from '../platform/web/sessions.js';
import { sendLimited, type UserLimits } from './limits.js';
import { invitationMail, sendUserMail } from './mail.js';
import { checkPassword, hashPassword, verifyPassword } from './passwords.js';
import {
  ChangePasswordBody,
  CodeBody,
  DisableTwoFactorBody,
  InviteBody,
  InvitedUserSchema,
  RecoveryCodesSchema,
  SessionSchema,
  TwoFactorSetupSchema,
  UpdateUserBody,
  UserIdParams,
  UserSchema,
} from './schemas.js';
import { newRecoveryCodes, secondFactorMatches, totpAccepted } from './second-factor.js';
import { publicSessionIdOf } from './tokens.js';
import { newTotpSeed } from './two-factor.js';
import { INVITATION_TTL_MS, presentUser, roleOf, userIdOf, Users } from './users.js';

const tags = ['Users'];

/**
 * The people of the account (docs/teams.md, "People", "Your own account"): list, invite, change, remove,
 * end their sessions, turn their two-factor off; and the signed-in person's own password, sessions and
 * two-factor under `/v1/users/me`. No answer holds a hash, seed (except the one that hands a new seed over),
 * token or session id.
 */
export function userRoutes(limits: UserLimits) {
  return async (app: ServiceApp, ctx: ServiceContext): Promise<void> => {
    const users = new Users(ctx.db);
    const sessions = new WebSessions(ctx.db, { appUrl: ctx.appUrl });

    /** The id hash of the session the request came with, or null (an API key). */
    const currentIdHash = (request: FastifyRequest): string | null => {
      if (!request.viaWebSession) return null;
      const cookie = sessions.cookieOf(request);
      return cookie.present && cookie.id !== null ? hashSessionId(cookie.id) : null;
    };
    /** The signed-in person (409 OUTPOST_ERR_NOT_A_USER for an account key). */
    const me = async (request: FastifyRequest) => users.get(request.accountId, userIdOf(request.principal));

    app.get(
      '/v1/users',
      {
        config: { permission: 'read' },
        schema: {
          tags,
          summary: 'List the account’s people, oldest first',
          response: { 200: Type.Array(UserSchema) },
        },
      },
      async (request) => (await users.queries.list(request.accountId)).map(presentUser),
    );

    app.post(
      '/v1/users/invitations',
      {
        config: { permission: 'admin' },
        schema: {
          tags,
          summary: 'Invite a person by email',
          description:
            'Sends an invitation link (single-use, 7 days). Without an SMTP server configured, the answer holds the link in invitationUrl instead.',
          body: InviteBody,
          response: { 201: InvitedUserSchema, 400: ErrorBodySchema, 409: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const now = Date.now();
        users.checkGrant(roleOf(request.principal), request.body.role);
        const row = await users.create(request.accountId, request.body, now);
        const token = await users.issueToken(row, 'invitation', INVITATION_TTL_MS, now);
        const link = `${ctx.appUrl}/accept-invitation#token=${token}`;
        request.log.info({ accountId: request.accountId, userId: row.id }, 'person invited');
        if (ctx.smtp === null) return reply.code(201).send({ ...presentUser(row), invitationUrl: link });
        const accountName = (await users.queries.accountName(request.accountId)) ?? '';
        await sendUserMail(ctx.smtp, invitationMail(row.email, accountName, link), request.log);
        return reply.code(201).send(presentUser(row));
      },
    );

    app.get(
      '/v1/users/me',
      {
        config: { permission: 'read' },
        schema: {
          tags,
          summary: 'The signed-in person',
          response: { 200: UserSchema, 409: ErrorBodySchema },
        },
      },
      async (request) => presentUser(await me(request)),
    );

    app.put(
      '/v1/users/me/password',
      {
        config: { permission: 'self' },
        schema: {
          tags,
          summary: 'Change my password (ends my other sessions)',
          body: ChangePasswordBody,
          response: { 204: NoContent, 400: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const user = await me(request);
        const limited = await limits.clientBlocked('sign-in', request.ip);
        if (limited) return sendLimited(request, reply, limited, 'sign-in');
        if (!(await verifyPassword(user.password_hash, request.body.currentPassword))) {
          const over = await limits.count('sign-in', request.ip, user.email);
          if (over) return sendLimited(request, reply, over, 'sign-in');
          throw badField('currentPassword', 'is not your password', 'currentPassword');
        }
        checkPassword(request.body.newPassword, 'newPassword');
        const now = Date.now();
        await users.queries.update(
          user.account_id,
          user.id,
          { password_hash: await hashPassword(request.body.newPassword) },
          now,
        );
        await users.queries.endSessions(user.id, currentIdHash(request));
        request.log.info({ userId: user.id }, 'password changed');
        return reply.code(204).send();
      },
    );

    app.get(
      '/v1/users/me/sessions',
      {
        config: { permission: 'read' },
        schema: { tags, summary: 'My sessions, newest first', response: { 200: Type.Array(SessionSchema) } },
      },
      async (request) => {
        const user = await me(request);
        const current = currentIdHash(request);
        const now = Date.now();
        return (await users.queries.sessions(user.id))
          .filter((s) => Number(s.expires_at) > now)
          .map((s) => ({
            id: publicSessionIdOf(ctx.db, s.id_hash),
            current: s.id_hash === current,
            userAgent: s.user_agent,
            createdAt: new Date(Number(s.created_at)).toISOString(),
            lastSeenAt: new Date(Number(s.last_seen_at)).toISOString(),
            expiresAt: new Date(Number(s.expires_at)).toISOString(),
          }));
      },
    );

    app.delete(
      '/v1/users/me/sessions/:id',
      {
        config: { permission: 'self' },
        schema: {
          tags,
          summary: 'End one of my sessions',
          params: UserIdParams,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        const user = await me(request);
        const found = (await users.queries.sessions(user.id)).find(
          (s) => publicSessionIdOf(ctx.db, s.id_hash) === request.params.id,
        );
        if (!found) throw notFound('session', request.params.id);
        await users.queries.endSession(user.id, found.id_hash);
        if (found.id_hash === currentIdHash(request)) sessions.clearCookie(request, reply);
        return reply.code(204).send();
      },
    );

    app.post(
      '/v1/users/me/two-factor',
      {
        config: { permission: 'self' },
        schema: {
          tags,
          summary: 'Start turning two-factor on: a new seed, pending until confirmed with a code',
          response: { 200: TwoFactorSetupSchema, 409: ErrorBodySchema },
        },
      },
      async (request) => {
        const user = await me(request);
        if (user.totp_enabled_at !== null) {
          throw new HttpError(
            'OUTPOST_ERR_TWO_FACTOR_ENABLED',
            'two-factor is on already: turn it off first',
          );
        }
        const seed = newTotpSeed(ctx.db, user.id, user.email);
        await users.queries.update(user.account_id, user.id, { totp_secret: seed.sealed }, Date.now());
        return { secret: seed.secret, otpauthUrl: seed.otpauthUrl };
      },
    );

    app.post(
      '/v1/users/me/two-factor/confirm',
      {
        config: { permission: 'self' },
        schema: {
          tags,
          summary: 'Turn two-factor on with a code of the new seed; answers the recovery codes, once',
          body: CodeBody,
          response: { 200: RecoveryCodesSchema, 400: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const user = await me(request);
        if (user.totp_enabled_at !== null) {
          throw new HttpError(
            'OUTPOST_ERR_TWO_FACTOR_ENABLED',
            'two-factor is on already: turn it off first',
          );
        }
        if (user.totp_secret === null) {
          throw badField(
            'code',
            'has no seed to confirm: POST /v1/users/me/two-factor first',
            'twoFactorPending',
          );
        }
        const limited = await limits.targetBlocked('two-factor', user.id);
        if (limited) return sendLimited(request, reply, limited, 'two-factor');
        const now = Date.now();
        if (
          !(await totpAccepted(ctx.db, user, user.totp_secret, request.body.code.replace(/\s/g, ''), now))
        ) {
          const over = await limits.count('two-factor', request.ip, user.id);
          if (over) return sendLimited(request, reply, over, 'two-factor');
          throw badField('code', 'is not the current code of the new seed', 'totp');
        }
        await users.queries.update(user.account_id, user.id, { totp_enabled_at: now }, now);
        const recoveryCodes = await newRecoveryCodes(ctx.db, user, now);
        request.log.info({ userId: user.id }, 'two-factor turned on');
        return { recoveryCodes };
      },
    );

    app.delete(
      '/v1/users/me/two-factor',
      {
        config: { permission: 'self' },
        schema: {
          tags,
          summary: 'Turn my two-factor off (password and a code or recovery code)',
          body: DisableTwoFactorBody,
          response: { 204: NoContent, 400: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const user = await me(request);
        const limited =
          (await limits.clientBlocked('two-factor', request.ip)) ??
          (await limits.targetBlocked('two-factor', user.id));
        if (limited) return sendLimited(request, reply, limited, 'two-factor');
        const now = Date.now();
        const passwordOk = await verifyPassword(user.password_hash, request.body.password);
        const codeOk = passwordOk && (await secondFactorMatches(ctx.db, user, request.body.code, now));
        if (!passwordOk || !codeOk) {
          const over = await limits.count('two-factor', request.ip, user.id);
          if (over) return sendLimited(request, reply, over, 'two-factor');
          throw passwordOk
            ? badField('code', 'is not a current code nor an unused recovery code', 'secondFactor')
            : badField('password', 'is not your password', 'currentPassword');
        }
        await users.queries.update(
          user.account_id,
          user.id,
          { totp_secret: null, totp_enabled_at: null },
          now,
        );
        await users.queries.deleteTokens(user.id, 'recovery');
        request.log.info({ userId: user.id }, 'two-factor turned off');
        return reply.code(204).send();
      },
    );

    app.put(
      '/v1/users/:id',
      {
        config: { permission: 'admin' },
        schema: {
          tags,
          summary: 'Change a person’s role or name',
          params: UserIdParams,
          body: UpdateUserBody,
          response: { 200: UserSchema, 400: ErrorBodySchema, 403: ErrorBodySchema, 409: ErrorBodySchema },
        },
      },
      async (request) => {
        const target = await users.get(request.accountId, request.params.id);
        const role = request.body.role ?? null;
        if (role !== null && role !== target.role)
          await users.checkChange(roleOf(request.principal), target, role);
        const changes = {
          ...(role === null ? {} : { role }),
          ...(request.body.name === undefined ? {} : { name: request.body.name.trim() || target.name }),
        };
        if (Object.keys(changes).length > 0) {
          await users.queries.update(request.accountId, target.id, changes, Date.now());
          request.log.info({ accountId: request.accountId, userId: target.id, role }, 'person changed');
        }
        return presentUser(await users.get(request.accountId, target.id));
      },
    );

    app.delete(
      '/v1/users/:id',
      {
        config: { permission: 'admin' },
        schema: {
          tags,
          summary: 'Remove a person (ends their sessions and keys)',
          params: UserIdParams,
          response: { 204: NoContent, 403: ErrorBodySchema, 409: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const target = await users.get(request.accountId, request.params.id);
        await users.checkChange(roleOf(request.principal), target, null);
        await users.queries.delete(request.accountId, target.id);
        request.log.info({ accountId: request.accountId, userId: target.id }, 'person removed');
        return reply.code(204).send();
      },
    );

    app.post(
      '/v1/users/:id/sessions/revoke',
      {
        config: { permission: 'admin' },
        schema: {
          tags,
          summary: 'End every session of a person',
          params: UserIdParams,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        const target = await users.get(request.accountId, request.params.id);
        if (target.role === 'OWNER' && roleOf(request.principal) !== 'OWNER') {
          throw new HttpError('OUTPOST_ERR_FORBIDDEN', 'only an OWNER may end an OWNER’s sessions', {
            permission: 'owner',
            role: 'OWNER',
          });
        }
        await users.queries.endSessions(target.id);
        request.log.info({ accountId: request.accountId, userId: target.id }, 'sessions of a person ended');
        return reply.code(204).send();
      },
    );

    app.delete(
      '/v1/users/:id/two-factor',
      {
        config: { permission: 'owner' },
        schema: {
          tags,
          summary: 'Turn a person’s two-factor off (lost phone and recovery codes)',
          params: UserIdParams,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        const target = await users.get(request.accountId, request.params.id);
        await users.queries.update(
          request.accountId,
          target.id,
          { totp_secret: null, totp_enabled_at: null },
          Date.now(),
        );
        await users.queries.deleteTokens(target.id, 'recovery');
        request.log.info(
          { accountId: request.accountId, userId: target.id },
          'two-factor of a person turned off',
        );
        return reply.code(204).send();
      },
    );
  };
}
