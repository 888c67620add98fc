import type { ServiceModule } from '../module.js';
import { triggerPublicRoutes } from './public-routes.js';
import { TRIGGERS_RETENTION } from './retention.js';
import { triggerRoutes } from './routes.js';

/**
 * Triggers (docs/api.md, "Triggers"): the trigger of a check or check group under `/v1/triggers`, and its
 * keyless URL that runs the check, or the group's activated checks, now.
 */
export const triggersModule: ServiceModule = {
  name: 'triggers',
  routes: triggerRoutes,
  publicRoutes: triggerPublicRoutes,
  retention: () => TRIGGERS_RETENTION,
};
