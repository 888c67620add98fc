import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../../module.js';
import { answerPageNotFound, feedQueryFor, pageAccessResolver } from './access.js';
import { acceptsGzip, etagMatches, type RenderedPage, renderedPage, VersionedCache } from './cache.js';
import { modelFreshUntil } from './page-model.js';
import type { PageReader } from './page-reader.js';
import { type RenderLinks, renderHistory, renderIncident, renderStatusPage } from './render.js';
import type { PageAccess, PublicPage, StatusPageModel } from './types.js';

/** `Content-Security-Policy` of the HTML views: inline CSS only; images from the service or any https site. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** `Cache-Control` of a public page's views (shared caches may keep them briefly). */
export const PUBLIC_CACHE_CONTROL = 'public, max-age=30, stale-while-revalidate=60';
/** `Cache-Control` of a private page's views (served to key holders only). */
export const PRIVATE_CACHE_CONTROL = 'private, no-store';

/** Models and renderings of one service's status pages, made by {@link pageViewCaches}. */
export type PageViewCaches = {
  /** Reads the pages' versions and models. */
  reader: PageReader;
  models: VersionedCache<StatusPageModel>;
  pages: VersionedCache<RenderedPage | null>;
};

/** The caches of the HTML views of one service, bounded (100 models, 200 renderings), reading with `reader`. */
export function pageViewCaches(reader: PageReader): PageViewCaches {
  return { reader, models: new VersionedCache(100), pages: new VersionedCache(200) };
}

/**
 * The model of `page` at `nowMs` from `models` while its `version` and the clock leave it right; built by
 * `reader` otherwise (once for concurrent requests).
 * @throws only when the store does.
 */
export async function cachedModel(
  reader: PageReader,
  models: VersionedCache<StatusPageModel>,
  page: PublicPage,
  version: string,
  nowMs: number,
): Promise<StatusPageModel> {
  return (
    await models.get(page.id, version, nowMs, async () => {
      const model = await reader.model(page, nowMs);
      return { value: model, freshUntilMs: modelFreshUntil(model) };
    })
  ).value;
}

/**
 * The rendering of one view of `page` for this request's links: computes the page's version (one set of
 * aggregate queries) and serves the cached bytes while it and the clock leave them right; renders
 * otherwise (once for concurrent requests). `shows` is asked first, on the (cached) model: a view it
 * refuses (an incident not on the page) is neither rendered nor cached.
 * @returns null when `shows` refuses the view or `render` has nothing to show. Throws only when the store
 *   or `render` does.
 */
export async function renderView(
  caches: PageViewCaches,
  page: PublicPage,
  view: string,
  links: RenderLinks,
  nowMs: number,
  render: (model: StatusPageModel, links: RenderLinks) => string | null,
  shows: (model: StatusPageModel) => boolean = () => true,
): Promise<RenderedPage | null> {
  const version = await caches.reader.version(page, nowMs);
  const model = await cachedModel(caches.reader, caches.models, page, version, nowMs);
  if (!shows(model)) return null;
  const key = [page.id, view, links.basePath, links.feedQuery].join('\n');
  const cached = await caches.pages.get(key, version, nowMs, async () => {
    const html = render(model, links);
    return {
      value: html === null ? null : renderedPage(view, version, html),
      freshUntilMs: modelFreshUntil(model),
    };
  });
  return cached.value;
}

/**
 * Sends a rendering with its headers (gzipped when the client accepts it), or 304 when the request
 * already holds it.
 */
function send(request: FastifyRequest, reply: FastifyReply, access: PageAccess, page: RenderedPage) {
  const gzip = acceptsGzip(request.headers['accept-encoding']);
  const isPrivate = access.page.doc.isPrivate;
  reply
    .header('etag', gzip ? page.gzipEtag : page.etag)
    .header('cache-control', isPrivate ? PRIVATE_CACHE_CONTROL : PUBLIC_CACHE_CONTROL)
    .header('content-security-policy', PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    // A public page is the same for every visitor (a shared cache need not keep one copy per cookie).
    .header('vary', isPrivate ? 'Accept-Encoding, Cookie' : 'Accept-Encoding');
  if (etagMatches(request.headers['if-none-match'], page.etag, page.gzipEtag)) return reply.code(304).send();
  reply.type('text/html; charset=utf-8');
  if (gzip) return reply.header('content-encoding', 'gzip').send(page.gzip);
  return reply.send(page.body);
}

type UrlParams = { Params: { url: string } };
type IncidentParams = { Params: { url: string; id: string } };

/** Incident ids are UUIDs (at most 64 characters of id are ever looked at). */
const MAX_ID_LENGTH = 64;

/**
 * The HTML views of a status page (docs/status-pages.md), each with `HEAD`:
 * - `GET /status/{url}`: the page (banner, active incidents, cards with each service's state and strip);
 * - `GET /status/{url}/history`: incidents of the last 90 days by month;
 * - `GET /status/{url}/incidents/{id}`: one incident with every update.
 * An unknown page, a private page the request may not see and an incident not on the page all answer
 * the shared 404 (`answerPageNotFound`). Answers carry a strong `ETag` (`If-None-Match` → 304), the CSP
 * {@link PAGE_CSP}, `nosniff`, `no-referrer`, and `Cache-Control` {@link PUBLIC_CACHE_CONTROL} or, for a
 * private page, {@link PRIVATE_CACHE_CONTROL}. Renderings are kept in `caches` (one set per service).
 */
export function statusPageViewRoutes(caches: PageViewCaches): RoutePlugin {
  return async (app, ctx) => {
    const resolve = pageAccessResolver(ctx);
    const options = { schema: { hide: true } } as const;

    const serve = async (
      request: FastifyRequest,
      reply: FastifyReply,
      url: string,
      view: string,
      render: (model: StatusPageModel, links: RenderLinks) => string | null,
      shows?: (model: StatusPageModel) => boolean,
    ) => {
      const access = await resolve(request, { url });
      if (!access) return answerPageNotFound(reply);
      const links: RenderLinks = { basePath: access.basePath, feedQuery: feedQueryFor(access) };
      const page = await renderView(caches, access.page, view, links, Date.now(), render, shows);
      if (!page) return answerPageNotFound(reply);
      return send(request, reply, access, page);
    };

    app.get<UrlParams>('/status/:url', options, (request, reply) =>
      serve(request, reply, request.params.url, 'page', renderStatusPage),
    );
    app.get<UrlParams>('/status/:url/history', options, (request, reply) =>
      serve(request, reply, request.params.url, 'history', renderHistory),
    );
    app.get<IncidentParams>('/status/:url/incidents/:id', options, (request, reply) => {
      const { url, id } = request.params;
      if (id.length > MAX_ID_LENGTH) return answerPageNotFound(reply);
      return serve(
        request,
        reply,
        url,
        `incident:${id}`,
        (model, links) => renderIncident(model, id, links),
        (model) => model.incidents.some((i) => i.id === id) || model.olderIncidents.some((i) => i.id === id),
      );
    });
  };
}
