import type { FastifyReply } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { dashboardPageModel, publicDashboard } from './page.js';
import { renderDashboard } from './render.js';
import { answerPublicNotFound } from '../platform/http/public-pages.js';

/** `Content-Security-Policy` of the page: inline CSS only; images from the service or any https site. */
export const DASHBOARD_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** `Cache-Control` of the page: shared caches may keep it ten seconds. */
export const DASHBOARD_CACHE_CONTROL = 'public, max-age=10';

/** Most pages a dashboard is cut into that `?page=` may ask for (20 checks a page: 200 000 checks). */
const MAX_PAGE = 10_000;

const NOT_FOUND_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>No dashboard here</title></head>
<body><main><h1>No dashboard here</h1><p>There is no public dashboard at this address.</p></main></body></html>
`;

/** The one 404 of the public page: an unknown `customUrl` and a private dashboard answer it alike. */
function answerNotFound(reply: FastifyReply): FastifyReply {
  return answerPublicNotFound(reply, NOT_FOUND_HTML);
}

type PageRequest = { Params: { customUrl: string }; Querystring: { page?: string; refresh?: string } };

/**
 * `GET /dashboards/{customUrl}` (and `HEAD`), without a key (docs/api.md, "Dashboards"): the dashboard's
 * server-rendered page, `?page=N` for page N when it is paginated, `?refresh=off` without the automatic
 * refresh (the `Refresh` header). A `customUrl` no dashboard has, and a private dashboard, answer the
 * same 404. The page holds names, tags and states of the selected checks and nothing else of the account.
 */
export const dashboardPublicRoutes: RoutePlugin = async (app, ctx) => {
  app.get<PageRequest>('/dashboards/:customUrl', { schema: { hide: true } }, async (request, reply) => {
    const { customUrl } = request.params;
    if (customUrl.length > 63) return answerNotFound(reply);
    const found = await publicDashboard(ctx.db, customUrl);
    if (!found) return answerNotFound(reply);
    const raw = request.query.page;
    const page = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Math.min(Number(raw), MAX_PAGE) : 1;
    const model = await dashboardPageModel(ctx.db, found.accountId, found.doc, page, Date.now());
    const rendered = renderDashboard(model, request.query.refresh === 'off');
    if (rendered.refresh !== null) reply.header('refresh', rendered.refresh);
    return reply
      .header('cache-control', DASHBOARD_CACHE_CONTROL)
      .header('content-security-policy', DASHBOARD_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(rendered.html);
  });
};
