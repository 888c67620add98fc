import type { ServiceModule } from '../module.js';
import { analyticsRoutes } from './routes.js';

/** Analytics (docs/api.md, "Analytics"): aggregates of stored results, on reader threads over the store file. */
export const analyticsModule: ServiceModule = {
  name: 'analytics',
  routes: analyticsRoutes,
};
