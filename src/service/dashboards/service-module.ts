import type { ServiceModule } from '../module.js';
import { dashboardPublicRoutes } from './public-routes.js';
import { dashboardRoutes } from './routes.js';

/**
 * Dashboards (docs/api.md, "Dashboards"): their administration under `/v1/dashboards` and the keyless
 * public page `/dashboards/{customUrl}` of the account's checks they select.
 */
export const dashboardsModule: ServiceModule = {
  name: 'dashboards',
  routes: dashboardRoutes,
  publicRoutes: dashboardPublicRoutes,
};
