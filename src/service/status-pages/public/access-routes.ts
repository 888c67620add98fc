import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthFailureLimiter } from '../../platform/http/auth.js';
import type { RoutePlugin } from '../../module.js';
import {
  answerPageNotFound,
  hostOf,
  matchPageKey,
  PAGE_SESSION_COOKIE,
  PAGE_SESSION_MS,
  pageSessionValue,
  rewrittenUrlOf,
} from './access.js';
import { findPageByUrl } from './page-queries.js';

/** The longest key the form reads (keys are 52 characters); a longer value is simply wrong. */
const MAX_KEY_LENGTH = 256;

/** The form's own style; the Content-Security-Policy allows it by its hash, and nothing else. */
const STYLE = `:root{color-scheme:light dark;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5}
body{margin:0;padding:2rem 1rem}
main{max-width:28rem;margin:0 auto}
h1{font-size:1.5rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:1.25rem 0 .25rem}
input{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid;border-radius:4px}
button{font:inherit;margin-top:1rem;padding:.5rem 1.25rem;border:1px solid;border-radius:4px;cursor:pointer}
:focus-visible{outline:3px solid;outline-offset:2px}
.message{border-left:4px solid;padding-left:.75rem;font-weight:600}`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** Messages of the key form; fixed texts only, so nothing of any page is ever on it. */
const MESSAGES = {
  wrongKey: 'This key does not open the page.',
  foreign: 'This form was sent from another site. Enter the key here again.',
  limited: (seconds: number) =>
    `Too many wrong keys were entered from your network. Try again in ${seconds} seconds.`,
} as const;

/**
 * The key form, the same bytes for every url (known or not, public or private) so it tells nothing about
 * any page; `message` (one of MESSAGES) after a refused key. The form posts to its own address, which is
 * `/status/{url}/access` or `/access` on a custom domain.
 */
function keyForm(message: string | null): string {
  const alert =
    message === null ? '' : `<p class="message" id="key-message" role="alert">Error: ${message}</p>\n`;
  const described = message === null ? '' : ' aria-describedby="key-message" aria-invalid="true"';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>${message === null ? '' : 'Error: '}Access key for a private status page</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Open a private status page</h1>
<p>Private status pages open with an access key. Enter the key you were given.</p>
${alert}<form method="post">
<label for="key">Access key</label>
<input id="key" name="key" type="password" autocomplete="current-password" autocapitalize="off" spellcheck="false" required maxlength="${MAX_KEY_LENGTH}"${described}>
<button type="submit">Open the page</button>
</form>
</main>
</body>
</html>
`;
}

/** Answers the key form with `status` and an optional message. */
function sendForm(reply: FastifyReply, status: number, message: string | null): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    )
    .type('text/html; charset=utf-8')
    .send(keyForm(message));
}

/**
 * Whether a form post came from another site: an `Origin` whose host name is not the request's own (ports
 * aside, as for SameSite cookies). A post without `Origin` (an older client) is not refused.
 */
function isForeign(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).hostname.toLowerCase().replace(/\.$/, '') !== hostOf(request);
  } catch {
    // `null` (a sandboxed or privacy-restricted context) or garbage.
    return true;
  }
}

/** The `key` field of a parsed form body; undefined when there is none. */
function keyFieldOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const key = (body as Record<string, unknown>).key;
  return typeof key === 'string' && key.length <= MAX_KEY_LENGTH ? key : undefined;
}

/**
 * The key form of private status pages (docs/status-pages.md, "Private pages"):
 * - `GET /status/{url}/access`: a form with one password field, "Access key"; the same bytes for any url.
 * - `POST /status/{url}/access` (`application/x-www-form-urlencoded`, field `key`): a key of the page
 *   (compared in constant time by SHA-256) sets the page's cookie (signed; 30 days; HttpOnly;
 *   SameSite=Lax; Path the page's base path, `/` on its custom domain; Secure over HTTPS or when the
 *   service's URL is https) and answers 303 to the page. Anything else (a wrong key, an unknown or public
 *   page) answers 403 with the form and "This key does not open the page.", the same for every url, and
 *   counts as a failed authentication of the client's address (AuthFailureLimiter, as the API's keys):
 *   past the limit 429 with `Retry-After`. A post from another site (`Origin`) answers 403 with the form.
 * - Any other path under `/status/{url}/` that no status-page route serves: the shared 404
 *   (`answerPageNotFound`), so an unknown path tells nothing either, on a custom domain too.
 */
export const statusPageAccessRoutes: RoutePlugin = async (app, ctx) => {
  const limiter = new AuthFailureLimiter(undefined, ctx.db, 'status-page');
  await app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4096 },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    const options = { schema: { hide: true } } as const;

    // Any other path under a page: the shared 404, not the router's, whose message names the path (on a
    // custom domain, the rewritten one with the page's url). Every route of a page is more specific.
    scope.all('/status/:url/*', options, async (_request, reply) => answerPageNotFound(reply));

    scope.get<{ Params: { url: string } }>('/status/:url/access', options, async (_request, reply) =>
      sendForm(reply, 200, null),
    );

    scope.post<{ Params: { url: string } }>('/status/:url/access', options, async (request, reply) => {
      if (isForeign(request)) return sendForm(reply, 403, MESSAGES.foreign);
      const { url } = request.params;
      const presented = keyFieldOf(request.body);
      const page = await findPageByUrl(ctx.db, url);
      const key = page?.doc.isPrivate && presented !== undefined ? matchPageKey(page, presented) : null;
      if (!page || !key) {
        const limited = await limiter.fail(request.ip, presented);
        if (limited) {
          const seconds = Math.max(1, Math.ceil(limited.retryAfterMs / 1000));
          request.log.warn({ ip: request.ip, scope: limited.scope }, 'status page key form rate-limited');
          reply.header('retry-after', String(seconds));
          return sendForm(reply, 429, MESSAGES.limited(seconds));
        }
        return sendForm(reply, 403, MESSAGES.wrongKey);
      }
      const basePath = rewrittenUrlOf(request.raw) === url ? '' : `/status/${url}`;
      const secure = request.protocol === 'https' || ctx.statusPageDomains.appUrlSecure;
      const value = pageSessionValue(ctx, page.id, key.id, Date.now() + PAGE_SESSION_MS);
      reply.setCookie(PAGE_SESSION_COOKIE, value, {
        httpOnly: true,
        sameSite: 'lax',
        path: basePath === '' ? '/' : basePath,
        maxAge: PAGE_SESSION_MS / 1000,
        secure,
      });
      return reply
        .code(303)
        .header('cache-control', 'no-store')
        .header('location', basePath === '' ? '/' : basePath)
        .send();
    });
  });
};
