import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { clientBucketOf } from '../platform/http/auth.js';
import { sendError } from '../platform/http/errors.js';
import { storeRateLimiter } from '../platform/store/rate-limits.js';
import { NoContent } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { WebSessions } from '../platform/web/sessions.js';
import { PutSsoBody, SsoSettingsSchema } from './schemas.js';
import { type SingleSignOn, SsoRefusal, UNAVAILABLE_PATH } from './sso.js';

const tags = ['sso'];

/**
 * The account's single sign-on settings (docs/teams.md, "Single sign-on"): `GET /v1/sso` (admin; the
 * client secret answered only as `clientSecretConfigured`), `PUT /v1/sso` (owner; the issuer is
 * discovered through the outbound address policy first: 400 naming `issuer` when that fails),
 * `DELETE /v1/sso` (owner, 204).
 */
export function ssoSettingsRoutes(sso: SingleSignOn) {
  return async (app: ServiceApp): Promise<void> => {
    app.get(
      '/v1/sso',
      {
        config: { permission: 'admin' },
        schema: { tags, summary: 'Read the single sign-on settings', response: { 200: SsoSettingsSchema } },
      },
      async (request) => sso.view(request.accountId),
    );

    app.put(
      '/v1/sso',
      {
        config: { permission: 'owner' },
        schema: {
          tags,
          summary: 'Set up single sign-on',
          body: PutSsoBody,
          response: { 200: SsoSettingsSchema },
        },
      },
      async (request) => {
        const { clientSecret, groupsClaim, groupRoles, allowedDomains, ssoOnly, ...rest } = request.body;
        const view = await sso.save(request.accountId, {
          ...rest,
          ...(clientSecret === undefined ? {} : { clientSecret }),
          ...(groupsClaim === undefined ? {} : { groupsClaim }),
          ...(groupRoles === undefined ? {} : { groupRoles }),
          ...(allowedDomains === undefined ? {} : { allowedDomains }),
          ...(ssoOnly === undefined ? {} : { ssoOnly }),
        });
        request.log.info({ accountId: request.accountId, issuer: view.issuer }, 'single sign-on saved');
        return view;
      },
    );

    app.delete(
      '/v1/sso',
      {
        config: { permission: 'owner' },
        schema: { tags, summary: 'Turn single sign-on off', response: { 204: NoContent } },
      },
      async (request, reply) => {
        await sso.remove(request.accountId);
        request.log.info({ accountId: request.accountId }, 'single sign-on removed');
        return reply.code(204).send();
      },
    );
  };
}

/** The cookie binding a sign-in in progress to the browser that started it. */
export const SSO_COOKIE = 'outpost_sso';
const SSO_COOKIE_PATH = '/auth/sso';

const StartBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$' }) },
  { additionalProperties: false },
);

/**
 * Sign-ins one client (its address, an IPv6 client by its /64) may start per minute: each start may write a
 * row (a sign-in in progress, kept 10 minutes), so an anonymous caller must not fill the table. Counted in the
 * store's limiter, so replicas share it.
 */
export const SSO_STARTS_PER_CLIENT_PER_MINUTE = 30;

function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
}

/**
 * The keyless sign-in routes (docs/teams.md, "Single sign-on"):
 *
 * - `POST /auth/sso/start` `{ email }`: 200 `{ redirectUrl }`: the provider's authorization URL when an
 *   account's single sign-on signs in that email (its person, or its domain), with the `outpost_sso`
 *   cookie (signed, HttpOnly, SameSite=Lax, Path=/auth/sso, 10 minutes) binding the sign-in to this
 *   browser; else `/sign-in?sso=unavailable`, the same shape whatever the email (no account is named).
 *   A foreign `Origin` is refused (403 OUTPOST_ERR_CSRF); past SSO_STARTS_PER_CLIENT_PER_MINUTE starts a
 *   client gets 429 OUTPOST_ERR_AUTH_RATE_LIMITED with `retry-after`.
 * - `GET /auth/sso/callback`: the provider's redirect: verifies, opens the person's web session (the
 *   `outpost_session` cookie) and redirects (303) to `/`; any failure redirects to
 *   `/sign-in?error=<code>` (SsoFailure) and is logged without the provider's data.
 */
export function ssoAuthRoutes(sso: SingleSignOn) {
  return async (app: ServiceApp, ctx: ServiceContext): Promise<void> => {
    const sessions = new WebSessions(ctx.db, { appUrl: ctx.appUrl });
    const log = ctx.log.child({ component: 'sso' });
    const starts = storeRateLimiter(ctx.db, {
      keyPrefix: 'sso-start-client',
      points: SSO_STARTS_PER_CLIENT_PER_MINUTE,
      duration: 60,
    });

    app.post(
      '/auth/sso/start',
      { schema: { hide: true, body: StartBody }, bodyLimit: 4096 },
      async (request, reply) => {
        noStore(reply);
        const foreign = sessions.foreignOrigin(request);
        if (foreign !== null) {
          return sendError(
            reply,
            'OUTPOST_ERR_CSRF',
            `origin ${foreign} is not this service's; sign in from the web app`,
            {
              field: 'origin',
              in: 'headers',
            },
          );
        }
        try {
          await starts.consume(clientBucketOf(request.ip));
        } catch (res) {
          if (!(res instanceof RateLimiterRes)) throw res;
          const retryAfterSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
          reply.header('retry-after', String(retryAfterSeconds));
          return sendError(
            reply,
            'OUTPOST_ERR_AUTH_RATE_LIMITED',
            `too many single sign-on starts; retry in ${retryAfterSeconds} s`,
            { scope: 'client', retryAfterSeconds },
          );
        }
        let started: Awaited<ReturnType<SingleSignOn['start']>>;
        try {
          started = await sso.start(request.body.email);
        } catch (err) {
          log.warn(
            { err: { name: (err as Error).name, message: (err as Error).message } },
            'single sign-on could not start',
          );
          return { redirectUrl: '/sign-in?error=sso_failed' };
        }
        if (started === null) return { redirectUrl: UNAVAILABLE_PATH };
        reply.setCookie(SSO_COOKIE, started.browserBinding, {
          signed: true,
          httpOnly: true,
          sameSite: 'lax',
          path: SSO_COOKIE_PATH,
          maxAge: 600,
          secure: sessions.secure(request),
        });
        return { redirectUrl: started.redirectUrl };
      },
    );

    app.get('/auth/sso/callback', { schema: { hide: true } }, async (request, reply) => {
      noStore(reply);
      reply.header('referrer-policy', 'no-referrer');
      reply.clearCookie(SSO_COOKIE, {
        path: SSO_COOKIE_PATH,
        httpOnly: true,
        sameSite: 'lax',
        secure: sessions.secure(request),
      });
      const at = request.url.indexOf('?');
      const query = at < 0 ? '' : request.url.slice(at + 1, at + 1 + 8192);
      try {
        const user = await sso.finish(query, bindingOf(request));
        const previous = sessions.cookieOf(request);
        if (previous.present && previous.id !== null) await sessions.end(previous.id);
        const { id } = await sessions.openForUser(user, request.headers['user-agent']);
        sessions.setCookie(request, reply, id);
        log.info(
          { accountId: user.accountId, userId: user.userId, role: user.role },
          'web session opened by single sign-on',
        );
        return reply.redirect('/', 303);
      } catch (err) {
        if (err instanceof SsoRefusal) {
          log.warn({ failure: err.failure, reason: err.message }, 'single sign-on refused');
          return reply.redirect(`/sign-in?error=${err.failure}`, 303);
        }
        throw err;
      }
    });
  };
}

/** The browser binding of the request's `outpost_sso` cookie, its signature checked; null without one. */
function bindingOf(request: FastifyRequest): string | null {
  const raw = request.cookies?.[SSO_COOKIE];
  if (raw === undefined) return null;
  const unsigned = request.unsignCookie(raw);
  return unsigned.valid ? unsigned.value : null;
}
