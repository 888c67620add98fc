import type { ServiceModule } from '../module.js';
import type { ServiceContext } from '../context.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { ssoAuthRoutes, ssoSettingsRoutes } from './routes.js';
import { SingleSignOn } from './sso.js';

/** One SingleSignOn per context: the settings and sign-in routes share its discovery cache. */
const instances = new WeakMap<ServiceContext, SingleSignOn>();
function ssoOf(ctx: ServiceContext): SingleSignOn {
  let sso = instances.get(ctx);
  if (!sso) {
    sso = new SingleSignOn(ctx.db, { appUrl: ctx.appUrl, outbound: ctx.outbound });
    instances.set(ctx, sso);
  }
  return sso;
}

/**
 * Single sign-on with OpenID Connect (docs/teams.md, "Single sign-on"): the account's settings under
 * `/v1/sso`, and the keyless `/auth/sso/start` and `/auth/sso/callback` of the sign-in.
 */
export const ssoModule: ServiceModule = {
  name: 'sso',
  routes: (app: ServiceApp, ctx) => ssoSettingsRoutes(ssoOf(ctx))(app),
  publicRoutes: (app: ServiceApp, ctx) => ssoAuthRoutes(ssoOf(ctx))(app, ctx),
};
