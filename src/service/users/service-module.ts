import type { ServiceModule } from '../module.js';
import { userAuthRoutes } from './auth-routes.js';
import { userRoutes } from './routes.js';
import { userLimitsOf } from './limits.js';
import { UserQueries } from './store.js';

/** Used tokens are kept this long after their use, ms (1 day), then deleted with the expired ones. */
const USED_TOKEN_KEEP_MS = 86_400_000;

/**
 * People (docs/teams.md): the account's people under `/v1/users`, the signed-in person's own account under
 * `/v1/users/me`, and the keyless invitation, reset and two-factor routes under `/auth/`. Sign-in by
 * password is given to the web app's `POST /auth/session` by app.ts (`passwordSignIn`, index.ts).
 */
export const usersModule: ServiceModule = {
  name: 'users',
  routes: async (app, ctx) => userRoutes(userLimitsOf(ctx.db))(app, ctx),
  publicRoutes: userAuthRoutes,
  retention: () => [
    {
      run: (pass) =>
        pass.batches((limit) =>
          new UserQueries(pass.db).deleteOldTokens(pass.nowMs, pass.nowMs - USED_TOKEN_KEEP_MS, limit),
        ),
    },
  ],
};
