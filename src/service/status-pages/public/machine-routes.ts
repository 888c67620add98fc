/**
 * The machine-readable views of a status page (docs/status-pages.md, "Feeds and JSON"): RSS and Atom
 * feeds, the Statuspage-compatible v2 JSON and the SVG badge, each a `GET` (with `HEAD`) under
 * `/status/{url}/` (or the root of the page's custom domain).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { RoutePlugin } from '../../module.js';
import type { Database } from '../../platform/store/database.js';
import { answerPageNotFound, feedQueryFor, pageAccessResolver } from './access.js';
import { renderBadge } from './badge.js';
import { etagMatches, type RenderedPage, renderedPage, VersionedCache } from './cache.js';
import { FEED_CONTENT_TYPES, type FeedFormat, type MachineLinks, pageUrlOf, renderFeed } from './feeds.js';
import { modelFreshUntil } from './page-model.js';
import { readIncidentFacts } from './page-queries.js';
import type { PageReader } from './page-reader.js';
import { cachedModel, PRIVATE_CACHE_CONTROL, PUBLIC_CACHE_CONTROL } from './page-routes.js';
import { API_DOCUMENTS, type ApiDocument, incidentsShownBy, statuspageDocument } from './statuspage-api.js';
import type { PageAccess, PublicPage, StatusPageModel } from './types.js';

/** `Cache-Control` of a public page's badge (README renderers proxy it; a minute is fresh enough). */
export const BADGE_CACHE_CONTROL = 'public, max-age=60';

/** The machine views: a feed format, a JSON document of the Statuspage v2 API, or the badge. */
type MachineView =
  | { kind: 'feed'; format: FeedFormat }
  | { kind: 'json'; document: ApiDocument }
  | { kind: 'badge' };

/** A rendering with its content type. */
type Served = RenderedPage & { type: string };

/** Models and renderings of one service's machine views, made by {@link machineViewCaches}. */
export type MachineViewCaches = {
  /** Reads the pages' versions and models. */
  reader: PageReader;
  models: VersionedCache<StatusPageModel>;
  renders: VersionedCache<Served>;
};

/** The caches of the machine views of one service, bounded (100 models, 400 renderings), reading with `reader`. */
export function machineViewCaches(reader: PageReader): MachineViewCaches {
  return { reader, models: new VersionedCache(100), renders: new VersionedCache(400) };
}

/** The origin of a page's absolute links: `https://{customDomain}` on its custom domain, else the app URL. */
function originOf(access: PageAccess, appUrl: string): string {
  const domain = access.page.doc.customDomain;
  return access.basePath === '' && domain ? `https://${domain}` : appUrl;
}

/** The text of a view and its content type. */
async function make(
  db: Kysely<Database>,
  model: StatusPageModel,
  view: MachineView,
  links: MachineLinks,
): Promise<{ text: string; type: string }> {
  if (view.kind === 'feed')
    return { text: renderFeed(model, view.format, links), type: FEED_CONTENT_TYPES[view.format] };
  if (view.kind === 'badge') {
    return { text: renderBadge(model.page.doc.name, model.overall), type: 'image/svg+xml; charset=utf-8' };
  }
  const shown = incidentsShownBy(model, view.document).map((i) => i.id);
  const facts = await readIncidentFacts(db, model.page.accountId, shown);
  const body = statuspageDocument(
    model,
    view.document,
    { pageUrl: pageUrlOf(links).replace(/\/$/, '') },
    facts,
  );
  return { text: JSON.stringify(body), type: 'application/json; charset=utf-8' };
}

/**
 * The rendering of `view` for `page` at `nowMs`: the page's version (one set of aggregate queries) picks
 * the cached model and rendering while they and the clock are still right; otherwise they are made again
 * (once for concurrent requests).
 * @throws only when the store does.
 */
async function renderMachineView(
  db: Kysely<Database>,
  caches: MachineViewCaches,
  page: PublicPage,
  view: MachineView,
  links: MachineLinks,
  nowMs: number,
): Promise<Served> {
  const version = await caches.reader.version(page, nowMs);
  const model = await cachedModel(caches.reader, caches.models, page, version, nowMs);
  const name =
    view.kind === 'feed' ? `feed.${view.format}` : view.kind === 'json' ? view.document : 'badge.svg';
  const key = [page.id, name, links.origin, links.basePath, links.feedQuery].join('\n');
  const cached = await caches.renders.get(key, version, nowMs, async () => {
    const { text, type } = await make(db, model, view, links);
    return { value: { ...renderedPage(name, version, text), type }, freshUntilMs: modelFreshUntil(model) };
  });
  return cached.value;
}

type UrlParams = { Params: { url: string } };

/**
 * Routes (docs/status-pages.md, "Feeds and JSON"), each `GET` and `HEAD`, for public pages and for private
 * ones opened with a key (`?token=` or the key form's cookie); anything else answers the shared 404
 * (`answerPageNotFound`):
 * - `/status/{url}/feed.rss` (RSS 2.0) and `/status/{url}/feed.atom` (Atom 1.0);
 * - `/status/{url}/api/v2/{document}` for each of {@link API_DOCUMENTS} (Statuspage's v2 JSON);
 * - `/status/{url}/badge.svg`.
 * Every answer has a strong `ETag` (the view, the page's version and the bytes; `If-None-Match` → 304) and
 * `X-Content-Type-Options: nosniff`. Public pages: `Cache-Control` {@link PUBLIC_CACHE_CONTROL} (the badge
 * {@link BADGE_CACHE_CONTROL}) and `Access-Control-Allow-Origin: *`; private pages: {@link
 * PRIVATE_CACHE_CONTROL}, no CORS, `Referrer-Policy: no-referrer`, `X-Robots-Tag: noindex`. Renderings are
 * kept in `caches` (one set per service).
 */
export function machineRoutes(caches: MachineViewCaches): RoutePlugin {
  return async (app, ctx) => {
    const resolve = pageAccessResolver(ctx);
    const appUrl = ctx.appUrl;
    const options = { schema: { hide: true } } as const;

    const serve = async (request: FastifyRequest<UrlParams>, reply: FastifyReply, view: MachineView) => {
      const access = await resolve(request, { url: request.params.url });
      if (!access) return answerPageNotFound(reply);
      const links: MachineLinks = {
        origin: originOf(access, appUrl),
        basePath: access.basePath,
        feedQuery: feedQueryFor(access),
      };
      const served = await renderMachineView(ctx.db, caches, access.page, view, links, Date.now());
      const isPrivate = access.page.doc.isPrivate;
      reply
        .header('etag', served.etag)
        .header(
          'cache-control',
          isPrivate
            ? PRIVATE_CACHE_CONTROL
            : view.kind === 'badge'
              ? BADGE_CACHE_CONTROL
              : PUBLIC_CACHE_CONTROL,
        )
        .header('x-content-type-options', 'nosniff')
        // Nothing of these documents runs or loads anything; an SVG opened on its own may use its inline style.
        .header(
          'content-security-policy',
          view.kind === 'badge' ? "default-src 'none'; style-src 'unsafe-inline'" : "default-src 'none'",
        );
      if (isPrivate) {
        reply
          .header('referrer-policy', 'no-referrer')
          .header('x-robots-tag', 'noindex')
          .header('vary', 'Cookie');
      } else {
        reply.header('access-control-allow-origin', '*');
      }
      if (etagMatches(request.headers['if-none-match'], served.etag)) return reply.code(304).send();
      return reply.type(served.type).send(served.body);
    };

    app.get<UrlParams>('/status/:url/feed.rss', options, (request, reply) =>
      serve(request, reply, { kind: 'feed', format: 'rss' }),
    );
    app.get<UrlParams>('/status/:url/feed.atom', options, (request, reply) =>
      serve(request, reply, { kind: 'feed', format: 'atom' }),
    );
    for (const document of API_DOCUMENTS) {
      app.get<UrlParams>(`/status/:url/api/v2/${document}`, options, (request, reply) =>
        serve(request, reply, { kind: 'json', document }),
      );
    }
    app.get<UrlParams>('/status/:url/badge.svg', options, (request, reply) =>
      serve(request, reply, { kind: 'badge' }),
    );
  };
}
