import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Handlebars from 'handlebars';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { storeRateLimiter } from '../../platform/store/rate-limits.js';
import type { Kysely } from 'kysely';
import type { ServiceContext } from '../../context.js';
import type { RoutePlugin } from '../../module.js';
import type { Database } from '../../platform/store/database.js';
import {
  CONFIRMATION_TTL_MS,
  isSaneEmail,
  MAX_EMAIL_CHARS,
  pageServiceIds,
  type TokenPurpose,
  verifySubscriberToken,
} from '../admin/subscribers.js';
import { SubscriberQueries } from '../admin/subscriber-store.js';
import { answerPageNotFound, pageAccessResolver, rewrittenUrlOf } from './access.js';
import { findPageByUrl, pageServices } from './page-queries.js';
import type { PublicPage } from './types.js';

/** Subscribe requests a client address may make per minute. */
export const SUBSCRIBES_PER_MINUTE = 10;
/** Largest form body read, bytes (an address and a few hundred service ids). */
const FORM_BODY_LIMIT_BYTES = 32 * 1024;

/** Escapes text for HTML (handlebars' escaping: `& < > " ' \` =`). */
const escapeHtml = (text: string): string => Handlebars.Utils.escapeExpression(text);

/** A parsed urlencoded form: every field as the list of its values. */
type Form = Record<string, string[]>;

function parseForm(body: string): Form {
  // No prototype: a field named `__proto__` is a field like any other.
  const form: Form = Object.create(null) as Form;
  for (const [name, value] of new URLSearchParams(body)) {
    const values = form[name] ?? [];
    values.push(value);
    form[name] = values;
  }
  return form;
}

const first = (form: Form | undefined, name: string): string | undefined => form?.[name]?.[0];

/** The one stylesheet of these pages: system fonts, AA contrast in light and dark, visible focus. */
const STYLE = `
:root{color-scheme:light dark;--bg:#ffffff;--fg:#111827;--muted:#374151;--line:#6b7280;--accent:#1d4ed8;--accent-fg:#ffffff;--error:#b91c1c;--panel:#f3f4f6}
@media (prefers-color-scheme:dark){:root:not(.light){--bg:#0b1120;--fg:#f1f5f9;--muted:#cbd5e1;--line:#94a3b8;--accent:#93c5fd;--accent-fg:#0b1120;--error:#fca5a5;--panel:#1e293b}}
:root.dark{--bg:#0b1120;--fg:#f1f5f9;--muted:#cbd5e1;--line:#94a3b8;--accent:#93c5fd;--accent-fg:#0b1120;--error:#fca5a5;--panel:#1e293b}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header,main,footer{max-width:40rem;margin:0 auto;padding:1rem}
header a{font-weight:600}
a{color:var(--accent)}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
label{display:block;font-weight:600}
.check label{display:inline;font-weight:400;margin-left:.4rem}
input[type=email]{width:100%;max-width:28rem;padding:.5rem;font:inherit;color:var(--fg);background:var(--bg);border:2px solid var(--line);border-radius:4px}
fieldset{border:1px solid var(--line);border-radius:4px;margin:1rem 0;padding:.5rem 1rem}
fieldset fieldset{margin:.5rem 0}
legend{font-weight:600;padding:0 .25rem}
.check{margin:.35rem 0}
.hint{color:var(--muted);margin:.25rem 0}
.error{color:var(--error);font-weight:600;margin:.25rem 0}
[aria-invalid=true]{border-color:var(--error)}
button{font:inherit;font-weight:600;padding:.55rem 1.1rem;border:2px solid var(--accent);border-radius:4px;background:var(--accent);color:var(--accent-fg);cursor:pointer}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.panel{background:var(--panel);border-radius:4px;padding:1rem}
footer{color:var(--muted);font-size:.875rem}
`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');
const CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

/** A whole page: the status page's name as a link home, one h1, the body, a footer. */
function htmlPage(
  page: PublicPage,
  basePath: string,
  title: string,
  body: string,
  options: { error?: boolean } = {},
): string {
  const theme = page.doc.defaultTheme === 'LIGHT' ? 'light' : page.doc.defaultTheme === 'DARK' ? 'dark' : '';
  const home = basePath === '' ? '/' : basePath;
  return `<!doctype html>
<html lang="en"${theme ? ` class="${theme}"` : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${options.error ? 'Error: ' : ''}${escapeHtml(title)} · ${escapeHtml(page.doc.name)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><a href="${escapeHtml(home)}">${escapeHtml(page.doc.name)} status</a></header>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
<footer><p>Powered by Outpost</p></footer>
</body>
</html>
`;
}

/** Sends a page with the headers every subscription page has (no caching, no referrer: links carry tokens). */
function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', CSP)
    .type('text/html; charset=utf-8')
    .send(html);
}

/** The services a subscriber may choose, by card. */
type Choice = { card: string; services: { id: string; name: string }[] };

/** What the subscribe form shows again after an error. */
type FormState = {
  email: string;
  all: boolean;
  services: Set<string>;
  emailError?: string;
  servicesError?: string;
};

function subscribeForm(page: PublicPage, basePath: string, choices: Choice[], state: FormState): string {
  const emailError = state.emailError
    ? `<p class="error" id="email-error">${escapeHtml(state.emailError)}</p>`
    : '';
  const servicesError = state.servicesError
    ? `<p class="error" id="services-error">${escapeHtml(state.servicesError)}</p>`
    : '';
  let n = 0;
  const cards = choices
    .filter((c) => c.services.length > 0)
    .map((c) => {
      const boxes = c.services
        .map((s) => {
          n += 1;
          const id = `service-${n}`;
          const checked = state.services.has(s.id) ? ' checked' : '';
          return `<div class="check"><input type="checkbox" id="${id}" name="services" value="${escapeHtml(s.id)}"${checked}><label for="${id}">${escapeHtml(s.name)}</label></div>`;
        })
        .join('\n');
      return `<fieldset><legend>${escapeHtml(c.card)}</legend>\n${boxes}\n</fieldset>`;
    })
    .join('\n');
  const choose =
    n === 0
      ? '<input type="hidden" name="all" value="1">'
      : `<fieldset${state.servicesError ? ' aria-describedby="services-error"' : ''}>
<legend>Updates about</legend>
${servicesError}
<div class="check"><input type="radio" id="scope-all" name="all" value="1"${state.all ? ' checked' : ''}><label for="scope-all">All services</label></div>
<div class="check"><input type="radio" id="scope-some" name="all" value="0"${state.all ? '' : ' checked'}><label for="scope-some">Only the services chosen below</label></div>
${cards}
</fieldset>`;
  return `<p>Get an email when an incident on ${escapeHtml(page.doc.name)} is opened, updated or resolved. We send a confirmation link first; nothing else is sent until you confirm.</p>
<form method="post" action="${escapeHtml(`${basePath}/subscribe`)}" novalidate>
<div>
<label for="email">Email address</label>
${emailError}
<input type="email" id="email" name="email" autocomplete="email" required maxlength="${MAX_EMAIL_CHARS}" value="${escapeHtml(state.email)}"${state.emailError ? ' aria-invalid="true" aria-describedby="email-error"' : ''}>
</div>
${choose}
<p><button type="submit">Subscribe</button></p>
</form>`;
}

/** Confirmation and unsubscribe pages: one button that POSTs (mail scanners prefetch GET links). */
function buttonForm(action: string, label: string, hidden: Record<string, string> = {}): string {
  const fields = Object.entries(hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<form method="post" action="${escapeHtml(action)}">${fields}<p><button type="submit">${escapeHtml(label)}</button></p></form>`;
}

/** A link back to the status page (its root on a custom domain). */
function homeLink(basePath: string): string {
  return `<p><a href="${escapeHtml(basePath === '' ? '/' : basePath)}">Back to the status page</a></p>`;
}

/** The answer to a token link whose subscriber no longer exists (404). */
function sendGone(reply: FastifyReply, page: PublicPage, basePath: string): FastifyReply {
  return sendHtml(
    reply,
    404,
    htmlPage(
      page,
      basePath,
      'This subscription no longer exists',
      `<p>It was cancelled, or it was never confirmed within 7 days. <a href="${escapeHtml(`${basePath}/subscribe`)}">Subscribe again</a>.</p>`,
      { error: true },
    ),
  );
}

/** The answer of an unsubscribe (also when the subscriber was already gone). */
function sendUnsubscribed(reply: FastifyReply, page: PublicPage, basePath: string): FastifyReply {
  return sendHtml(
    reply,
    200,
    htmlPage(
      page,
      basePath,
      'You are unsubscribed',
      `<div class="panel" role="status"><p>No more incident updates of ${escapeHtml(page.doc.name)} will be sent to this address.</p></div>
<p><a href="${escapeHtml(`${basePath}/subscribe`)}">Subscribe again</a></p>`,
    ),
  );
}

/** The answer to a token link that does not verify, on a page the request may see (400). */
function sendBadLink(reply: FastifyReply, page: PublicPage, basePath: string): FastifyReply {
  return sendHtml(
    reply,
    400,
    htmlPage(
      page,
      basePath,
      'This link does not work',
      `<p>The link is incomplete, was changed, or has expired (confirmation links hold for ${CONFIRMATION_TTL_MS / 86_400_000} days).</p>
<p><a href="${escapeHtml(`${basePath}/subscribe`)}">Subscribe again</a> to get a new confirmation link.</p>`,
      { error: true },
    ),
  );
}

/** The 429 of a client address past {@link SUBSCRIBES_PER_MINUTE}. */
function sendTooMany(reply: FastifyReply, limited: RateLimiterRes): FastifyReply {
  return reply
    .code(429)
    .header('retry-after', String(Math.max(1, Math.ceil(limited.msBeforeNext / 1000))))
    .header('cache-control', 'no-store')
    .type('text/plain; charset=utf-8')
    .send('Too many subscribe requests from this address; try again in a minute.');
}

/** The services of a page by card, names read fresh; services that no longer exist are left out. */
async function choicesOf(db: Kysely<Database>, page: PublicPage): Promise<Choice[]> {
  const names = new Map<string, string>();
  for (const r of await pageServices(db, page.accountId, pageServiceIds(page.doc))) names.set(r.id, r.name);
  return page.doc.cards.map((c) => ({
    card: c.name,
    services: c.serviceIds.flatMap((id) => {
      const name = names.get(id);
      return name === undefined ? [] : [{ id, name }];
    }),
  }));
}

/**
 * The subscribe form's answer read from `form`: the address (trimmed), all services or the chosen ones
 * (those the page offers), with the errors to show.
 */
function readSubscribeForm(form: Form, choices: Choice[]): FormState & { chosen: string[] } {
  const email = (first(form, 'email') ?? '').trim();
  const all = first(form, 'all') !== '0' && (first(form, 'all') === '1' || form.services === undefined);
  const offered = new Set(choices.flatMap((c) => c.services.map((s) => s.id)));
  const chosen = [...new Set(form.services ?? [])].filter((id) => offered.has(id));
  const state: FormState & { chosen: string[] } = { email, all, services: new Set(chosen), chosen };
  if (email === '') state.emailError = 'Enter your email address.';
  else if (email.length > MAX_EMAIL_CHARS)
    state.emailError = `Enter an email address of at most ${MAX_EMAIL_CHARS} characters.`;
  else if (!isSaneEmail(email)) state.emailError = 'Enter an email address in the form name@example.com.';
  if (!all && chosen.length === 0) state.servicesError = 'Choose at least one service, or All services.';
  return state;
}

/** What the handlers share: the context, the page resolver, the subscribers' store and the rate limiter. */
type Deps = {
  ctx: ServiceContext;
  resolve: ReturnType<typeof pageAccessResolver>;
  store: SubscriberQueries;
  limiter: RateLimiterAbstract;
};

type UrlRoute = { Params: { url: string } };
type FormRoute = { Params: { url: string }; Body: Form | undefined };
type TokenRoute = { Params: { url: string }; Querystring: { token?: string }; Body: Form | undefined };

/** The token of a token link: in the query string, else in the form (the button's POST). */
const tokenOf = (request: FastifyRequest<TokenRoute>) =>
  request.query.token ?? first(request.body ?? undefined, 'token');

/**
 * The page of a token link and the subscriber the token names: through the resolver when the request
 * may see the page, else by the token alone (a mail's link to a private page works without a key).
 * Sends the answer itself (404, or 400 for a bad link on a page the request may see) when it returns null.
 */
async function tokenPage(
  deps: Deps,
  request: FastifyRequest<TokenRoute>,
  reply: FastifyReply,
  purpose: TokenPurpose,
): Promise<{ page: PublicPage; basePath: string; subscriberId: string } | null> {
  const { url } = request.params;
  const token = tokenOf(request);
  const access = await deps.resolve(request, { url });
  const db = deps.ctx.db;
  const page = access?.page ?? (await findPageByUrl(db, url));
  const subscriberId =
    page && token !== undefined ? verifySubscriberToken(db, token, purpose, page.id, Date.now()) : null;
  if (!page || (!access && subscriberId === null)) {
    answerPageNotFound(reply);
    return null;
  }
  const basePath = access?.basePath ?? (rewrittenUrlOf(request.raw) === url ? '' : `/status/${url}`);
  if (subscriberId === null) {
    sendBadLink(reply, page, basePath);
    return null;
  }
  return { page, basePath, subscriberId };
}

/** `GET /status/{url}/subscribe`: the empty form. */
async function showSubscribeForm(deps: Deps, request: FastifyRequest<UrlRoute>, reply: FastifyReply) {
  const access = await deps.resolve(request, { url: request.params.url });
  if (!access) return answerPageNotFound(reply);
  const choices = await choicesOf(deps.ctx.db, access.page);
  const form = subscribeForm(access.page, access.basePath, choices, {
    email: '',
    all: true,
    services: new Set(),
  });
  return sendHtml(reply, 200, htmlPage(access.page, access.basePath, 'Subscribe to updates', form));
}

/**
 * `POST /status/{url}/subscribe`: 429 past the client address's rate; the form again (400) with its
 * errors; else subscribes (the store queues the confirmation mail) and answers "Check your inbox".
 */
async function subscribe(deps: Deps, request: FastifyRequest<FormRoute>, reply: FastifyReply) {
  try {
    await deps.limiter.consume(request.ip ?? 'unknown');
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    return sendTooMany(reply, err);
  }
  const access = await deps.resolve(request, { url: request.params.url });
  if (!access) return answerPageNotFound(reply);
  const { page, basePath } = access;
  const choices = await choicesOf(deps.ctx.db, page);
  const state = readSubscribeForm(request.body ?? {}, choices);
  if (state.emailError || state.servicesError) {
    const body = subscribeForm(page, basePath, choices, state);
    return sendHtml(reply, 400, htmlPage(page, basePath, 'Subscribe to updates', body, { error: true }));
  }
  const outcome = await deps.store.subscribe(
    { id: page.id, accountId: page.accountId, name: page.doc.name },
    state.email,
    state.all ? null : state.chosen,
    Date.now(),
  );
  if (outcome.confirmationQueued) deps.ctx.delivery.kick();
  // The same answer whatever the address's state: nobody learns who is subscribed.
  const body = `<div class="panel" role="status"><p>If <strong>${escapeHtml(state.email.toLowerCase())}</strong> can receive mail, a message with a confirmation link is on its way. Open it to start getting updates; the link holds for 7 days.</p></div>
${homeLink(basePath)}`;
  return sendHtml(reply, 200, htmlPage(page, basePath, 'Check your inbox', body));
}

/** `GET /status/{url}/subscribe/confirm?token=`: the "Confirm subscription" button (or "already confirmed"). */
async function showConfirm(deps: Deps, request: FastifyRequest<TokenRoute>, reply: FastifyReply) {
  const found = await tokenPage(deps, request, reply, 'confirm');
  if (!found) return reply;
  const { page, basePath, subscriberId } = found;
  const subscriber = await deps.store.get(page.id, subscriberId);
  if (!subscriber) return sendGone(reply, page, basePath);
  const action = `${basePath}/subscribe/confirm?token=${encodeURIComponent(tokenOf(request) ?? '')}`;
  const body =
    subscriber.confirmed_at !== null
      ? `<p>${escapeHtml(subscriber.email)} already gets the updates of ${escapeHtml(page.doc.name)}.</p>`
      : `<p>Confirm that <strong>${escapeHtml(subscriber.email)}</strong> should get an email when an incident on ${escapeHtml(page.doc.name)} is opened, updated or resolved.</p>
${buttonForm(action, 'Confirm subscription')}`;
  return sendHtml(reply, 200, htmlPage(page, basePath, 'Confirm your subscription', body));
}

/** `POST /status/{url}/subscribe/confirm?token=`: confirms the subscriber (the double opt-in). */
async function confirm(deps: Deps, request: FastifyRequest<TokenRoute>, reply: FastifyReply) {
  const found = await tokenPage(deps, request, reply, 'confirm');
  if (!found) return reply;
  const { page, basePath, subscriberId } = found;
  if (!(await deps.store.confirm(page.id, subscriberId, Date.now()))) return sendGone(reply, page, basePath);
  deps.ctx.log.info({ statusPageId: page.id, subscriberId }, 'status page subscription confirmed');
  const body = `<div class="panel" role="status"><p>You will get an email when an incident on ${escapeHtml(page.doc.name)} is opened, updated or resolved. Every email has a link to unsubscribe.</p></div>
${homeLink(basePath)}`;
  return sendHtml(reply, 200, htmlPage(page, basePath, 'Subscription confirmed', body));
}

/** `GET /status/{url}/unsubscribe?token=`: the "Unsubscribe" button. */
async function showUnsubscribe(deps: Deps, request: FastifyRequest<TokenRoute>, reply: FastifyReply) {
  const found = await tokenPage(deps, request, reply, 'unsubscribe');
  if (!found) return reply;
  const { page, basePath, subscriberId } = found;
  const subscriber = await deps.store.get(page.id, subscriberId);
  if (!subscriber) return sendUnsubscribed(reply, page, basePath);
  const action = `${basePath}/unsubscribe?token=${encodeURIComponent(tokenOf(request) ?? '')}`;
  const body = `<p>Stop sending incident updates of ${escapeHtml(page.doc.name)} to <strong>${escapeHtml(subscriber.email)}</strong>?</p>
${buttonForm(action, 'Unsubscribe', { 'List-Unsubscribe': 'One-Click' })}`;
  return sendHtml(reply, 200, htmlPage(page, basePath, 'Unsubscribe', body));
}

/** `POST /status/{url}/unsubscribe?token=` (also RFC 8058's one-click POST): deletes the subscriber. */
async function unsubscribe(deps: Deps, request: FastifyRequest<TokenRoute>, reply: FastifyReply) {
  const found = await tokenPage(deps, request, reply, 'unsubscribe');
  if (!found) return reply;
  const { page, basePath, subscriberId } = found;
  if (await deps.store.delete(page.id, subscriberId)) {
    deps.ctx.log.info({ statusPageId: page.id, subscriberId }, 'status page subscriber unsubscribed');
  }
  return sendUnsubscribed(reply, page, basePath);
}

/**
 * Email subscriptions of public status pages (docs/status-pages.md, "Subscriptions"), keyless:
 * - `GET|POST /status/{url}/subscribe`: the form (email; all services or chosen ones) and its answer,
 *   "Check your inbox", the same whether the address was known or not; 10 subscribe requests a minute
 *   per client address (429 past it). A private page only for a request its keys opened.
 * - `GET|POST /status/{url}/subscribe/confirm?token=`: a page with a "Confirm subscription" button,
 *   whose POST confirms (the double opt-in).
 * - `GET|POST /status/{url}/unsubscribe?token=`: a page with an "Unsubscribe" button; the POST (also
 *   the RFC 8058 one-click POST of mail clients, `List-Unsubscribe=One-Click`, no cookie needed)
 *   deletes the subscriber.
 * The tokens are the authority of the last two (signed, see subscribers.ts); on a page the request
 * may not see, anything but a valid token gets the shared 404, so nothing leaks.
 */
export const subscriptionRoutes: RoutePlugin = async (app, ctx) => {
  const deps: Deps = {
    ctx,
    resolve: pageAccessResolver(ctx),
    store: new SubscriberQueries(ctx.db),
    limiter: storeRateLimiter(ctx.db, {
      keyPrefix: 'status-page-subscribe',
      points: SUBSCRIBES_PER_MINUTE,
      duration: 60,
    }),
  };
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, parseForm(String(body))),
    );
    // RFC 8058 allows multipart/form-data for the one-click POST; the token in the URL is what counts.
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES }, (_r, _b, done) =>
      done(null, {}),
    );
    const hide = { schema: { hide: true } } as const;
    scope.get<UrlRoute>('/status/:url/subscribe', hide, (req, reply) => showSubscribeForm(deps, req, reply));
    scope.post<FormRoute>('/status/:url/subscribe', hide, (req, reply) => subscribe(deps, req, reply));
    scope.get<TokenRoute>('/status/:url/subscribe/confirm', hide, (req, reply) =>
      showConfirm(deps, req, reply),
    );
    scope.post<TokenRoute>('/status/:url/subscribe/confirm', hide, (req, reply) => confirm(deps, req, reply));
    scope.get<TokenRoute>('/status/:url/unsubscribe', hide, (req, reply) =>
      showUnsubscribe(deps, req, reply),
    );
    scope.post<TokenRoute>('/status/:url/unsubscribe', hide, (req, reply) => unsubscribe(deps, req, reply));
  });
};
