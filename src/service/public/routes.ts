import type { RoutePlugin } from '../http/service-app.js';

/**
 * `GET /openapi.json`: the OpenAPI 3 document of the API (built by http/openapi.ts from every
 * route's schemas), for clients and code generators that have no key yet.
 */
const openApiDocument: RoutePlugin = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};

/**
 * Route plugins anyone may call, without an API key: registered by app.ts in a scope of their own,
 * outside the `/v1` auth hook. Today the OpenAPI document; heartbeat pings and public status
 * pages register here. A public route authenticates nothing for the caller: whatever token its
 * URL carries (a ping's check token, a page's slug) it must check itself, and it must never
 * answer account data beyond what that token opens.
 */
export const PUBLIC_ROUTES: readonly RoutePlugin[] = [openApiDocument];
