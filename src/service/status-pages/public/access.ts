import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from '../../../common/logger.js';
import type { ServiceContext } from '../../context.js';
import { hashApiKey } from '../../platform/http/auth.js';
import {
  CustomDomainPolicy,
  reconcileCustomDomains,
  recheckPendingDomains,
} from '../admin/custom-domains.js';
import type { KeyDoc } from '../admin/status-pages.js';
import type { Database } from '../../platform/store/database.js';
import { secretBoxOf } from '../../platform/store/secret-box.js';
import { customDomainUrls, findPageByHost, findPageByUrl } from './page-queries.js';
import type { PageAccess, PublicPage } from './types.js';
import { answerPublicNotFound } from '../../platform/http/public-pages.js';

/** Where a request looks for a page: the `{url}` of `/status/{url}`, or a custom domain (its Host). */
export type PageWhere = { url: string } | { host: string };

/** Name of the cookie that opens a private page once its key was entered in the key form. */
export const PAGE_SESSION_COOKIE = 'outpost_status_page';
/** How long the key form's cookie opens a private page, ms (30 days); its Max-Age says the same. */
export const PAGE_SESSION_MS = 30 * 24 * 60 * 60 * 1000;
/** `SecretBox.deriveKey` purposes: the key form's cookie and the feed tokens. */
const SESSION_KEY_PURPOSE = 'status-page-session';
const FEED_KEY_PURPOSE = 'status-page-feed';

/** Requests the custom-domain URL rewrite moved under `/status/{url}`, with that url. */
const rewritten = new WeakMap<IncomingMessage, string>();

/**
 * Marks `raw` as rewritten from the root of a custom domain to `/status/{url}/…` (done by
 * {@link CustomDomains.rewrite}), so the page's links are made without the `/status/{url}` prefix.
 */
export function markRewritten(raw: IncomingMessage, url: string): void {
  rewritten.set(raw, url);
}

/** The url of the page a custom-domain request was rewritten to; undefined for any other request. */
export function rewrittenUrlOf(raw: IncomingMessage): string | undefined {
  return rewritten.get(raw);
}

/** The Host of a request without its port, lower-cased, without a final dot; '' when it has none. */
export function hostOf(request: { headers: IncomingMessage['headers'] }): string {
  const host = request.headers.host ?? '';
  // `[v6]:port`, `name:port` or a bare name.
  const bare = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return bare.trim().toLowerCase().replace(/\.$/, '');
}

/** The base path of a page as a request sees it: `''` on its custom domain, else `/status/{url}`. */
function basePathOf(request: FastifyRequest, where: PageWhere): string {
  if ('host' in where) return '';
  return rewrittenUrlOf(request.raw) === where.url ? '' : `/status/${where.url}`;
}

/** HMAC-SHA256 of `text` with `key`, base64url. */
function mac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

/** Constant-time equality of two strings (false at once only for different lengths). */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The key of `page` that `key` (an access key in clear, as typed in the key form) is, compared in constant
 * time against every key's SHA-256; null when it is none of them.
 */
export function matchPageKey(page: PublicPage, key: string): KeyDoc | null {
  const presented = createHash('sha256').update(hashApiKey(key.trim())).digest();
  let found: KeyDoc | null = null;
  for (const k of page.doc.keys) {
    // Hashed again to a fixed length, so a malformed stored hash cannot make the comparison throw.
    const stored = createHash('sha256').update(k.keyHash).digest();
    if (timingSafeEqual(presented, stored)) found = k;
  }
  return found;
}

/**
 * The token that opens `page`'s feeds and JSON for the holder of key `keyId` (`?token=…`):
 * `{keyId}.{base64url HMAC-SHA256(deriveKey('status-page-feed'), pageId + ':' + keyId)}`. It never
 * expires; deleting the key (or turning the page public) revokes it.
 */
export function feedToken(ctx: Pick<ServiceContext, 'db'>, page: PublicPage, keyId: string): string {
  const key = secretBoxOf(ctx.db).deriveKey(FEED_KEY_PURPOSE);
  return `${keyId}.${mac(key, `${page.id}:${keyId}`)}`;
}

/**
 * The value of the key form's cookie for `pageId` opened with `keyId` until `expiresAtMs`:
 * `{pageId}.{keyId}.{expiresAtMs}.{base64url HMAC-SHA256(deriveKey('status-page-session'), the rest)}`.
 */
export function pageSessionValue(
  ctx: Pick<ServiceContext, 'db'>,
  pageId: string,
  keyId: string,
  expiresAtMs: number,
): string {
  const key = secretBoxOf(ctx.db).deriveKey(SESSION_KEY_PURPOSE);
  const body = `${pageId}.${keyId}.${expiresAtMs}`;
  return `${body}.${mac(key, `${SESSION_KEY_PURPOSE}:${body}`)}`;
}

/** The feed query each private access carries, made by the resolver (it knows the service's keys). */
const feedQueries = new WeakMap<PageAccess, string>();

/**
 * The query to append to a page's feed and JSON links so they open for this visitor too: `''` for a public
 * page, `?token=…` ({@link feedToken} of the key that opened it) for a private one.
 * @throws Error for a private page's access not made by {@link pageAccessResolver}.
 */
export function feedQueryFor(access: PageAccess): string {
  if (access.keyId === null) return '';
  const query = feedQueries.get(access);
  if (query === undefined) throw new Error('feedQueryFor: this access was not made by pageAccessResolver');
  return query;
}

/** The `token` query parameter of a request's URL; undefined without one. */
function tokenOf(request: FastifyRequest): string | undefined {
  const url = request.raw.url ?? request.url;
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get('token') ?? undefined;
}

/**
 * Resolves which status page a request is for and whether it may see it: a public page by anyone; a
 * private page only with one of its keys still in place, presented as a valid `?token=` ({@link
 * feedToken}; `via: 'token'`) or as the key form's cookie (`via: 'cookie'`, for this page, not expired).
 * `basePath` is `/status/{url}`, or `''` when the request came through the page's custom domain (looked up
 * by `{ host }`, or rewritten from it by {@link CustomDomains}); only a verified domain finds its page, and the
 * service's own host names never do.
 * @returns null when the page is unknown, or private and not opened: the caller then answers
 *   {@link answerPageNotFound}, the same 404 for both. The function throws only when the store does.
 */
export function pageAccessResolver(
  ctx: ServiceContext,
): (request: FastifyRequest, where: PageWhere) => Promise<PageAccess | null> {
  const box = secretBoxOf(ctx.db);
  const sessionKey = box.deriveKey(SESSION_KEY_PURPOSE);
  const feedKey = box.deriveKey(FEED_KEY_PURPOSE);
  const tokenFor = (pageId: string, keyId: string) => `${keyId}.${mac(feedKey, `${pageId}:${keyId}`)}`;

  /** The key id a valid token of `page` names; null otherwise. */
  const byToken = (page: PublicPage, token: string | undefined): string | null => {
    if (token === undefined) return null;
    const dot = token.indexOf('.');
    if (dot <= 0) return null;
    const keyId = token.slice(0, dot);
    if (!sameText(token, tokenFor(page.id, keyId))) return null;
    return page.doc.keys.some((k) => k.id === keyId) ? keyId : null;
  };

  /** The key id a valid, unexpired cookie for `page` names; null otherwise. */
  const byCookie = (page: PublicPage, cookie: string | undefined): string | null => {
    if (cookie === undefined) return null;
    const parts = cookie.split('.');
    if (parts.length !== 4) return null;
    const [pageId, keyId, expires, signature] = parts as [string, string, string, string];
    const body = `${pageId}.${keyId}.${expires}`;
    if (!sameText(signature, mac(sessionKey, `${SESSION_KEY_PURPOSE}:${body}`))) return null;
    if (pageId !== page.id || !/^\d{1,16}$/.test(expires) || Number(expires) <= Date.now()) return null;
    return page.doc.keys.some((k) => k.id === keyId) ? keyId : null;
  };

  return async (request, where) => {
    if ('host' in where && ctx.statusPageDomains.isServiceHost(where.host)) return null;
    const page =
      'host' in where ? await findPageByHost(ctx.db, where.host) : await findPageByUrl(ctx.db, where.url);
    if (!page) return null;
    const basePath = basePathOf(request, where);
    if (!page.doc.isPrivate) return { page, via: 'public', keyId: null, basePath };
    let via: PageAccess['via'] = 'token';
    let keyId = byToken(page, tokenOf(request));
    if (keyId === null) {
      via = 'cookie';
      keyId = byCookie(page, request.cookies?.[PAGE_SESSION_COOKIE]);
    }
    if (keyId === null) return null;
    const access: PageAccess = { page, via, keyId, basePath };
    feedQueries.set(access, `?token=${encodeURIComponent(tokenFor(page.id, keyId))}`);
    return access;
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
  return answerPublicNotFound(reply, NOT_FOUND_HTML);
}

/**
 * Paths a custom domain never rewrites: the API, the web app's sign-in, heartbeat pings, the probes and metrics, the OpenAPI
 * document, the web app's assets and the trace viewer.
 */
const NOT_REWRITTEN = [
  '/v1',
  '/auth',
  '/ping',
  '/openapi.json',
  '/assets',
  '/trace-viewer',
  '/-',
  '/metrics',
];

/** Options of {@link CustomDomains}. */
export type CustomDomainsOptions = {
  /** The service's public URL (OUTPOST_APP_URL): its host is never a custom domain. */
  appUrl: string;
  /**
   * The service's host names, allow-list and TXT lookup; default: a policy of `appUrl` alone (no allow-list,
   * the system's DNS servers).
   */
  policy?: CustomDomainPolicy;
  /** The refresh period (reload, and check pending domains that are due), ms; default 30 000. */
  refreshMs?: number;
  /** A pending domain is checked again by the refresh once its last check is this old, ms; default 300 000. */
  recheckMs?: number;
  log?: Logger;
};

/**
 * Serves each status page with a verified `customDomain` at the root of that domain (docs/status-pages.md,
 * "Custom domains"). Fastify's `rewriteUrl` is synchronous, so the map host → page url is kept in memory:
 * loaded by {@link start}, reloaded after each status page change made through the API (before the API
 * answers) and every `refreshMs` as a safety net (changes made by another process); each refresh also checks
 * the pending domains that are due again (their TXT records).
 */
export class CustomDomains {
  readonly #db: Kysely<Database>;
  readonly #policy: CustomDomainPolicy;
  readonly #refreshMs: number;
  readonly #recheckMs: number;
  readonly #log: Logger | undefined;
  /** Whether the service's public URL is https (its cookies are then `Secure`). */
  readonly appUrlSecure: boolean;
  #map = new Map<string, string>();
  #started = 0;
  #applied = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Whether the map follows the changes made through the service (between {@link start} and {@link stop}). */
  #following = false;
  #refreshing: Promise<void> | undefined;
  #announce: (() => void) | undefined;

  /** @throws TypeError when `options.appUrl` is not a URL. */
  constructor(db: Kysely<Database>, options: CustomDomainsOptions) {
    const appUrl = new URL(options.appUrl);
    this.#db = db;
    this.#policy = options.policy ?? new CustomDomainPolicy({ appUrl: options.appUrl });
    this.appUrlSecure = appUrl.protocol === 'https:';
    this.#refreshMs = options.refreshMs ?? 30_000;
    this.#recheckMs = options.recheckMs ?? 300_000;
    this.#log = options.log;
  }

  /**
   * Brings the stored verifications in line with this process's settings (the service's host names, the
   * allow-list: `reconcileCustomDomains`), loads the map and starts following changes.
   * @throws what the store throws on the first load.
   */
  async start(): Promise<void> {
    await reconcileCustomDomains(this.#db, this.#policy, Date.now());
    await this.reload();
    this.#following = true;
    this.#timer = setInterval(() => {
      this.refresh().catch((err: unknown) =>
        this.#log?.warn({ err }, 'custom domains of status pages could not be refreshed'),
      );
    }, this.#refreshMs);
    this.#timer.unref();
  }

  /**
   * One refresh: checks the pending domains whose last check is at least `recheckMs` old (before `nowMs`;
   * `recheckPendingDomains`: at most 20, the DNS lookups 4 at once), then reloads the map. A refresh asked for
   * while one runs waits for that one instead of starting another.
   * @throws what the store throws.
   */
  refresh(nowMs = Date.now()): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        await recheckPendingDomains(this.#db, this.#policy, {
          nowMs,
          recheckMs: this.#recheckMs,
          changed: () => this.pagesChanged(),
        });
        await this.reload();
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /** Stops following changes. Idempotent. */
  stop(): void {
    clearInterval(this.#timer);
    this.#following = false;
  }

  /**
   * Reloads the map after status pages changed through this service (a page created, updated or deleted; a
   * custom domain verified or put back to pending): the admin routes await it before they answer, so the
   * next request sees the change. Only between {@link start} and {@link stop}. A reload that fails is
   * ignored here (the change itself was made; the periodic refresh is the safety net).
   */
  async pagesChanged(): Promise<void> {
    if (!this.#following) return;
    this.#announce?.();
    await this.reload().catch(() => undefined);
  }

  /**
   * Tells the other replicas of a shared store when pages change here (`announce`), and returns what to call
   * when one of them announces a change: a reload, so a custom domain added through one replica is served by
   * every one at once rather than at its next periodic refresh.
   */
  followReplicas(announce: () => void): () => void {
    this.#announce = announce;
    return () => {
      if (this.#following) void this.reload().catch(() => undefined);
    };
  }

  /**
   * Reloads the map from the store. Overlapping reloads are fine: a load's result is kept only when no
   * later-started load was applied first.
   */
  async reload(): Promise<void> {
    const generation = ++this.#started;
    const map = await customDomainUrls(this.#db);
    for (const host of map.keys()) if (this.#policy.isServiceHost(host)) map.delete(host);
    if (generation > this.#applied) {
      this.#applied = generation;
      this.#map = map;
    }
  }

  /**
   * Whether `host` (without port) is one of the service's own host names (its public URL's host,
   * `localhost`), which are never a custom domain.
   */
  isServiceHost(host: string): boolean {
    return this.#policy.isServiceHost(host);
  }

  /** The page url a host shows (lower-case host without port); undefined when it is no page's domain. */
  urlOfHost(host: string): string | undefined {
    return this.isServiceHost(host) ? undefined : this.#map.get(host);
  }

  /**
   * Fastify's `rewriteUrl`: a request whose Host is a page's custom domain and whose path is not under
   * one of the service's own prefixes (`/v1`, `/auth`, `/ping`, `/openapi.json`, `/assets`,
   * `/trace-viewer`) goes to `/status/{url}` + its path (`/` to `/status/{url}`), query kept, and is marked
   * so the page's base path is `''`. Every other request keeps its URL.
   */
  rewrite(raw: IncomingMessage): string {
    const url = raw.url ?? '/';
    if (this.#map.size === 0 || !url.startsWith('/')) return url;
    const pageUrl = this.urlOfHost(hostOf(raw));
    if (pageUrl === undefined) return url;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q);
    if (NOT_REWRITTEN.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return url;
    markRewritten(raw, pageUrl);
    return `/status/${pageUrl}${path === '/' ? '' : path}${query}`;
  }
}
