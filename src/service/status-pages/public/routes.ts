import type { RoutePlugin } from '../../platform/http/service-app.js';
import { statusPageAccessRoutes } from './access-routes.js';
import { subscriptionRoutes } from './subscriptions.js';
import { statusPageViewRoutes } from './page-routes.js';
import { machineRoutes } from './machine-routes.js';

/**
 * The routes of public status pages (docs/status-pages.md), registered without an API key: each plugin
 * resolves the page itself (`access.ts`) and answers an unknown page and a private page the request may
 * not see with the same 404, so nothing leaks. One plugin per concern, each in its own file:
 * the page and its HTML views, feeds and the Statuspage-compatible JSON, the key form of private pages,
 * email subscriptions.
 */
const STATUS_PAGE_PLUGINS: RoutePlugin[] = [
  statusPageViewRoutes,
  subscriptionRoutes,
  statusPageAccessRoutes,
  machineRoutes,
];

/** Registers every status-page plugin (listed in PUBLIC_ROUTES, src/service/heartbeats/ping-routes.ts). */
export const statusPageRoutes: RoutePlugin = async (app, ctx) => {
  for (const plugin of STATUS_PAGE_PLUGINS) await plugin(app, ctx);
};
