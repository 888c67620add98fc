import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../../context.js';
import { findPageByHost, findPageByUrl } from './lookup.js';
import type { PageAccess, PublicPage } from './types.js';

/** Where a request looks for a page: the `{url}` of `/status/{url}`, or a custom domain (its Host). */
export type PageWhere = { url: string } | { host: string };

/** Requests the custom-domain URL rewrite moved under `/status/{url}`, with that url. */
const rewritten = new WeakMap<IncomingMessage, string>();

/**
 * Marks `raw` as rewritten from the root of a custom domain to `/status/{url}/…` (called by the
 * service's `rewriteUrl`), so the page's links are made without the `/status/{url}` prefix.
 */
export function markRewritten(raw: IncomingMessage, url: string): void {
  rewritten.set(raw, url);
}

/** The url of the page a custom-domain request was rewritten to; undefined for any other request. */
export function rewrittenUrlOf(raw: IncomingMessage): string | undefined {
  return rewritten.get(raw);
}

/** The Host of a request without its port, lower-cased; '' when it has none. */
export function hostOf(request: { headers: IncomingMessage['headers'] }): string {
  const host = request.headers.host ?? '';
  // `[v6]:port`, `name:port` or a bare name.
  const bare = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return bare.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * Resolves which status page a request is for and whether it may see it. A public page is seen by
 * anyone; a private page is seen by nobody until its keys open it (step 2 of issue 14): unknown and
 * private pages both give null, and the caller answers {@link answerPageNotFound}.
 * `basePath` is `/status/{url}`, or `''` when the request came through the page's custom domain (found by
 * `{ host }`, or rewritten from it by the service's URL rewrite).
 * @returns a function of the request and where to look; it throws only when the store does.
 */
export function pageAccessResolver(
  ctx: ServiceContext,
): (request: FastifyRequest, where: PageWhere) => Promise<PageAccess | null> {
  return async (request, where) => {
    let page: PublicPage | null;
    let basePath: string;
    if ('host' in where) {
      page = await findPageByHost(ctx.db, where.host);
      basePath = '';
    } else {
      page = await findPageByUrl(ctx.db, where.url);
      basePath = rewrittenUrlOf(request.raw) === where.url ? '' : `/status/${where.url}`;
    }
    if (!page) return null;
    if (page.doc.isPrivate) return null;
    return { page, via: 'public', keyId: null, basePath };
  };
}

/** The one answer to a page that is unknown or that the request may not see (the same bytes for both). */
const NOT_FOUND_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>No status page here</title>
</head>
<body>
<main>
<h1>No status page here</h1>
<p>There is no status page at this address. Check the address you were given.</p>
</main>
</body>
</html>
`;

/**
 * Answers the one 404 shared by an unknown page and a private page the request may not see: a small HTML
 * page "No status page here", `Cache-Control: no-store`, the same status, headers and bytes in both cases,
 * so a visitor without a key cannot tell a private page exists. Call it before the route sets any header
 * of its own (an ETag, a cookie), or those would tell the two cases apart.
 * @returns the reply, sent.
 */
export function answerPageNotFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', "default-src 'none'; base-uri 'none'; frame-ancestors 'none'")
    .type('text/html; charset=utf-8')
    .send(NOT_FOUND_HTML);
}
