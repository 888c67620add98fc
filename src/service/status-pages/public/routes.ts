import type { RoutePlugin } from '../../module.js';
import { statusPageAccessRoutes } from './access-routes.js';
import { machineRoutes, machineViewCaches } from './machine-routes.js';
import { PageReader } from './page-reader.js';
import { pageViewCaches, statusPageViewRoutes } from './page-routes.js';
import { subscriptionRoutes } from './subscriptions.js';

/**
 * Registers the routes of public status pages (docs/status-pages.md), without an API key (listed in
 * PUBLIC_ROUTES, src/service/heartbeats/ping-routes.ts): each plugin resolves the page itself (`access.ts`)
 * and answers an unknown page and a private page the request may not see with the same 404, so nothing
 * leaks. One plugin per concern, each in its own file: the page and its HTML views, email subscriptions,
 * the key form of private pages, feeds and the Statuspage-compatible JSON.
 *
 * Each registration (one per service) makes its own page reader (with its index of incident-triggering
 * checks) and its own caches of models and renderings, bounded, dropped with the service.
 */
export const statusPageRoutes: RoutePlugin = async (app, ctx) => {
  const reader = new PageReader(ctx.db);
  const plugins: RoutePlugin[] = [
    statusPageViewRoutes(pageViewCaches(reader)),
    subscriptionRoutes,
    statusPageAccessRoutes,
    machineRoutes(machineViewCaches(reader)),
  ];
  for (const plugin of plugins) await plugin(app, ctx);
};
