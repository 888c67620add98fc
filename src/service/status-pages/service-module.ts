import { routesOf, type ServiceModule } from '../module.js';
import { statusPageRoutes as statusPageAdminRoutes } from './admin/routes.js';
import { incidentRoutes } from './incidents/routes.js';
import { statusPageRoutes as statusPagePublicRoutes } from './public/routes.js';
import { STATUS_PAGES_RETENTION } from './retention.js';

/**
 * Status pages (docs/status-pages.md): their administration under `/v1` (pages, services, keys,
 * subscribers, custom domains: admin/), incidents (incidents/), the keyless pages, feeds and subscriptions
 * (public/) and the subscriber mail (mail/).
 */
export const statusPagesModule: ServiceModule = {
  name: 'status-pages',
  routes: routesOf(statusPageAdminRoutes, incidentRoutes),
  publicRoutes: statusPagePublicRoutes,
  retention: () => STATUS_PAGES_RETENTION,
};
