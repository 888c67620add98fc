import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PACKAGE_ROOT } from '../../../common/paths.js';

/** Options of {@link webAppStatic}. */
export type WebStaticOptions = {
  /** Folder of the built web app (index.html, favicon.svg, assets/); default `<package root>/dist/app`. */
  appDir?: string;
  /**
   * Folder of the Playwright trace viewer; default playwright-core's `lib/vite/traceViewer`. null: not
   * served (its paths answer 503).
   */
  traceViewerDir?: string | null;
};

/**
 * Paths the web app's router answers (app/src/app.tsx): each of these and everything under it answers
 * index.html, as do `/` and `/sign-in`. Anything else outside `/v1` keeps the JSON 404.
 */
export const APP_ROUTE_PREFIXES = [
  '/checks',
  '/accounts',
  '/private-locations',
  '/agents',
  '/alert-channels',
  '/check-groups',
  '/incidents',
  '/status-pages',
  '/settings',
  '/forgot-password',
  '/reset-password',
  '/accept-invitation',
] as const;

/** The web app's Content-Security-Policy: its own files only, nothing from another origin. */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every answer of the web app (its pages, assets, and the 503 when it is not built). */
export const APP_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': APP_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
});

/**
 * The trace viewer's Content-Security-Policy, with the hashes of its inline scripts. It registers a
 * service worker (`worker-src 'self'`) that reads the trace from this origin only (`connect-src 'self'`:
 * a `trace=` URL of another origin is refused by the browser), shows snapshots in same-origin and data:
 * iframes, screenshots and videos as blob: and data: URLs, uses inline styles, and may be framed by this
 * origin only.
 */
export function traceViewerCsp(inlineScriptHashes: readonly string[]): string {
  return [
    "default-src 'self'",
    ['script-src', "'self'", ...inlineScriptHashes.map((h) => `'sha256-${h}'`)].join(' '),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "frame-src 'self' data: blob:",
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join('; ');
}

/** SHA-256 (base64) of each inline `<script>` (one without `src`) of an HTML page, for `script-src`. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const match of html.matchAll(/<script\b(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script\s*>/gi)) {
    const body = match[1] ?? '';
    if (body.trim() !== '') hashes.push(createHash('sha256').update(body, 'utf8').digest('base64'));
  }
  return hashes;
}

/** Where playwright-core keeps its built trace viewer; null when playwright-core cannot be found. */
export function defaultTraceViewerDir(): string | null {
  try {
    const pkg = createRequire(import.meta.url).resolve('playwright-core/package.json');
    return join(dirname(pkg), 'lib', 'vite', 'traceViewer');
  } catch {
    return null;
  }
}

/** Default folder of the built web app: `dist/app` under the package root (from src/ and dist/ alike). */
export const DEFAULT_APP_DIR = join(PACKAGE_ROOT, 'dist', 'app');

/** One year, ms: how long a hashed asset (its name changes with its content) may be cached. */
const ONE_YEAR_MS = 365 * 86_400_000;

function htmlPage(title: string, text: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <title>${title}</title>
  </head>
  <body>
    <main>
      <h1>${title}</h1>
      <p>${text}</p>
    </main>
  </body>
</html>
`;
}

/** What the app's paths answer (503) while `dist/app/index.html` is missing. */
export const NOT_BUILT_HTML = htmlPage(
  'The Outpost web app is not built',
  'This service answers its API under <code>/v1</code>, but the web app’s files (<code>dist/app</code>) are missing. Run <code>npm run build</code> in the Outpost folder, then reload this page.',
);

const TRACE_VIEWER_MISSING_HTML = htmlPage(
  'The trace viewer is not installed',
  'The Playwright trace viewer comes with the <code>playwright-core</code> package, which this installation lacks. Run <code>npm install</code> in the Outpost folder, then reload this page.',
);

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Serves the web app and the Playwright trace viewer (docs/web-app.md, "Serving"):
 *
 * - `/assets/*`: the app's hashed files, `cache-control: public, max-age=31536000, immutable`;
 * - `/favicon.svg`;
 * - `/`, `/sign-in` and each of APP_ROUTE_PREFIXES with everything under it: `index.html` (`no-cache`),
 *   or 503 text/html saying to run `npm run build` while it is missing;
 * - `/trace-viewer/*`: playwright-core's trace viewer (`no-cache`), with its own CSP
 *   (traceViewerCsp); `/trace-viewer` redirects to `/trace-viewer/`.
 *
 * Every app answer carries APP_SECURITY_HEADERS. `/v1`, `/ping`, `/openapi.json` and `/status` are not
 * touched; other paths keep the JSON 404. Paths leaving the folders (`..`, encoded or not) are refused by
 * @fastify/static.
 */
export async function webAppStatic(app: FastifyInstance, options: WebStaticOptions = {}): Promise<void> {
  const appDir = options.appDir ?? DEFAULT_APP_DIR;
  const indexFile = join(appDir, 'index.html');

  await app.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => {
      reply.headers(APP_SECURITY_HEADERS);
    });
    await scope.register(fastifyStatic, {
      root: join(appDir, 'assets'),
      prefix: '/assets/',
      // send writes `public, max-age=31536000, immutable`.
      maxAge: ONE_YEAR_MS,
      immutable: true,
      index: false,
      redirect: false,
      list: false,
      dotfiles: 'ignore',
      // The folder appears with `npm run build`, possibly after start: looked up per request.
      suppressWarning: true,
    });

    scope.get('/favicon.svg', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=86400');
      return reply.sendFile('favicon.svg', appDir, { cacheControl: false });
    });

    const serveIndex = async (_request: FastifyRequest, reply: FastifyReply) => {
      if (!(await exists(indexFile))) {
        return reply
          .code(503)
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(NOT_BUILT_HTML);
      }
      // Revalidated on every load (ETag, Last-Modified): a new build is seen at once.
      reply.header('cache-control', 'no-cache');
      return reply.sendFile('index.html', appDir, { cacheControl: false });
    };
    const spa = { schema: { hide: true } };
    scope.get('/', spa, serveIndex);
    scope.get('/sign-in', spa, serveIndex);
    for (const prefix of APP_ROUTE_PREFIXES) {
      scope.get(prefix, spa, serveIndex);
      scope.get(`${prefix}/*`, spa, serveIndex);
    }
  });

  const traceViewerDir =
    options.traceViewerDir === undefined ? defaultTraceViewerDir() : options.traceViewerDir;
  let indexHtml: string | null = null;
  try {
    indexHtml = traceViewerDir === null ? null : readFileSync(join(traceViewerDir, 'index.html'), 'utf8');
  } catch {
    indexHtml = null;
  }
  await app.register(async (scope) => {
    const csp = traceViewerCsp(indexHtml === null ? [] : inlineScriptHashes(indexHtml));
    scope.addHook('onRequest', async (_request, reply) => {
      reply.headers({
        'content-security-policy': csp,
        // It frames its own snapshot.html: same origin only.
        'x-frame-options': 'SAMEORIGIN',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
        // Its files keep their names across playwright-core versions (index.html, sw.bundle.js): revalidate.
        'cache-control': 'no-cache',
      });
    });
    if (traceViewerDir === null || indexHtml === null) {
      const missing = async (_request: FastifyRequest, reply: FastifyReply) =>
        reply
          .code(503)
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(TRACE_VIEWER_MISSING_HTML);
      scope.get('/trace-viewer', { schema: { hide: true } }, missing);
      scope.get('/trace-viewer/*', { schema: { hide: true } }, missing);
      return;
    }
    await scope.register(fastifyStatic, {
      root: traceViewerDir,
      prefix: '/trace-viewer',
      index: ['index.html'],
      // `/trace-viewer` → `/trace-viewer/` (query kept), so the viewer's relative URLs resolve.
      redirect: true,
      list: false,
      dotfiles: 'ignore',
      cacheControl: false,
    });
  });
}
