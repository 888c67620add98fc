import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuthFailureLimiter } from '../http/auth.js';
import type { Database } from '../store/database.js';
import { authRoutes, type PasswordSignIn } from './auth-routes.js';
import { cookieSecretOf, WebSessions } from './sessions.js';
import { webAppStatic, type WebStaticOptions } from './static.js';

/** Options of {@link registerWebApp}. */
export type WebAppOptions = WebStaticOptions & {
  db: Kysely<Database>;
  /** The service's public URL (OUTPOST_APP_URL): an accepted `Origin`, and https makes the cookie Secure. */
  appUrl: string;
  /** The failure limiter shared with the /v1 auth hook. */
  limiter: AuthFailureLimiter;
  /** People's sign-in by email and password (the people's module); without it, API keys only. */
  passwordSignIn?: PasswordSignIn;
};

/**
 * Registers the web app on the root instance (docs/web-app.md), before the `/v1` scope: @fastify/cookie for
 * every scope (the /v1 auth hook reads the session cookie), its secret derived from the store's SecretBox
 * key (`web-session-cookie`) so cookies survive restarts with the same key; the session routes under
 * `/auth/session`; the app's files and the trace viewer.
 * @returns the sessions, for the /v1 auth hook.
 */
export async function registerWebApp(app: FastifyInstance, options: WebAppOptions): Promise<WebSessions> {
  // @fastify/cookie is not encapsulated: registered here, it parses cookies on every route.
  await app.register(fastifyCookie, { secret: cookieSecretOf(options.db), hook: 'onRequest' });
  const sessions = new WebSessions(options.db, { appUrl: options.appUrl });
  await app.register(authRoutes, {
    sessions,
    limiter: options.limiter,
    passwordSignIn: options.passwordSignIn,
  });
  await webAppStatic(app, {
    ...(options.appDir === undefined ? {} : { appDir: options.appDir }),
    ...(options.traceViewerDir === undefined ? {} : { traceViewerDir: options.traceViewerDir }),
  });
  return sessions;
}
