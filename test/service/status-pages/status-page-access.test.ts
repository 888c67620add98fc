/**
 * Who may see a status page (docs/status-pages.md, "Private pages", "Custom domains"): the lookup by url and
 * by custom domain, the one 404 of unknown and private pages, the key form and its cookie, feed tokens, the
 * keys API, the custom-domain URL rewrite, url unique across accounts and a customDomain served by one page.
 * The domains here are on the operator's allow-list, so they are active without a TXT record; their DNS
 * verification is tested in status-page-domains.test.ts.
 */
import type { IncomingMessage } from 'node:http';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyRequest, type LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answerPageNotFound,
  CustomDomains,
  feedQueryFor,
  feedToken,
  PAGE_SESSION_COOKIE,
  PAGE_SESSION_MS,
  pageAccessResolver,
  pageSessionValue,
} from '../../../src/service/status-pages/public/access.js';
import { findPageByHost, findPageByUrl } from '../../../src/service/status-pages/public/page-queries.js';
import type { PageAccess } from '../../../src/service/status-pages/public/types.js';
import { build } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { backfillCustomDomains } from '../../../src/service/status-pages/admin/store.js';
import { openSqliteDatabase } from '../../../src/service/platform/store/database.js';
import { expectNoSecret } from '../../helpers/secrets.js';
import { type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
let resolve: ReturnType<typeof pageAccessResolver>;
beforeAll(async () => {
  svc = await testService({
    customDomains: { allowList: ['.example.com', '.example.org', '.example.net', 'localhost.example'] },
  });
  resolve = pageAccessResolver(svc.context);
});
afterAll(async () => svc.close());

const req: TestService['request'] = (...args) => svc.request(...args);

let seq = 0;
/** A url no other test uses. */
const freshUrl = (stem = 'page') => `${stem}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/** A request as a route sees it: its URL, Host and the key form's cookie. */
function fakeRequest(
  options: { url?: string; host?: string; cookie?: string; raw?: IncomingMessage } = {},
): FastifyRequest {
  const url = options.url ?? '/';
  const headers = { host: options.host ?? 'localhost:3000' };
  const raw = options.raw ?? ({ url, headers } as unknown as IncomingMessage);
  return {
    raw,
    url,
    headers,
    cookies: options.cookie === undefined ? {} : { [PAGE_SESSION_COOKIE]: options.cookie },
  } as unknown as FastifyRequest;
}

/** A page with one card of two services and an open incident on one, every name distinctive. */
async function makePage(fields: Record<string, unknown> = {}, account: 'A' | 'B' = 'A') {
  const tag = Math.random().toString(36).slice(2, 10);
  const serviceNames = [`Quasar Ledger ${tag}`, `Zephyr Relay ${tag}`];
  const services = [];
  for (const name of serviceNames) {
    const res = await req('POST', '/v1/status-pages/services', { name }, account);
    expect(res.statusCode).toBe(201);
    services.push(res.json() as { id: string; name: string });
  }
  const name = `Halcyon Vortex Status ${tag}`;
  const url = freshUrl();
  const created = await req(
    'POST',
    '/v1/status-pages',
    {
      name,
      url,
      description: `Borealis description ${tag}`,
      cards: [{ name: `Nebula Card ${tag}`, services: services.map((s) => ({ id: s.id })) }],
      ...fields,
    },
    account,
  );
  expect(created.statusCode, created.body).toBe(201);
  const incidentName = `Obsidian Meltdown ${tag}`;
  const incident = await req(
    'POST',
    '/v1/incidents',
    {
      name: incidentName,
      impact: 'MAJOR',
      services: [{ id: services[0]!.id }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: `Cobalt investigation ${tag}` }],
    },
    account,
  );
  expect(incident.statusCode, incident.body).toBe(201);
  const page = created.json() as {
    id: string;
    url: string;
    keys: { id: string; key?: string; maskedKey: string }[];
  };
  return {
    page,
    url,
    secrets: [name, incidentName, ...serviceNames, `Borealis description ${tag}`, `Nebula Card ${tag}`],
  };
}

/** The key form's cookie a response set; undefined when it set none. */
const cookieOf = (res: LightMyRequestResponse) =>
  (res.cookies as { name: string; value: string; [k: string]: unknown }[]).find(
    (c) => c.name === PAGE_SESSION_COOKIE,
  );

const postKey = (path: string, key: string, headers: Record<string, string> = {}) =>
  svc.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams({ key }).toString(),
    remoteAddress: headers['x-test-ip'] ?? '10.1.1.1',
  });

/** A response as compared for byte identity: status, headers but Date, body. */
function wire(res: LightMyRequestResponse) {
  const { date: _date, ...headers } = res.headers;
  return { status: res.statusCode, headers, body: res.body };
}

describe('finding a page', () => {
  it('resolves a public page by url and by custom domain, with the right base paths', async () => {
    const domain = `status-${++seq}.example.com`;
    const { page, url } = await makePage({ customDomain: domain.toUpperCase() });

    const byUrl = await resolve(fakeRequest(), { url });
    expect(byUrl).toMatchObject({ via: 'public', keyId: null, basePath: `/status/${url}` });
    expect(byUrl!.page).toMatchObject({ id: page.id, url, accountId: svc.accountA.id });
    expect(byUrl!.page.doc.name).toMatch(/^Halcyon Vortex Status/);

    const byHost = await resolve(fakeRequest(), { host: domain });
    expect(byHost).toMatchObject({ via: 'public', keyId: null, basePath: '' });
    expect(byHost!.page.id).toBe(page.id);
    expect(feedQueryFor(byHost!)).toBe('');
    expect((await findPageByHost(svc.context.db, domain.toUpperCase()))?.id).toBe(page.id);
    expect(await findPageByHost(svc.context.db, `other.${domain}`)).toBeNull();
    expect(await findPageByUrl(svc.context.db, `${url}x`)).toBeNull();
  });

  it('keeps the custom_domain column with the document and backfills rows written before it', async () => {
    const { page } = await makePage({ customDomain: 'Mixed.Case.Example.org' });
    const column = async () =>
      (
        await svc.context.db
          .selectFrom('status_pages')
          .select('custom_domain')
          .where('id', '=', page.id)
          .executeTakeFirstOrThrow()
      ).custom_domain;
    expect(await column()).toBe('mixed.case.example.org');

    const body = { name: 'n', url: page.url, cards: [], customDomain: 'moved.example.org' };
    expect((await req('PUT', `/v1/status-pages/${page.id}`, body)).statusCode).toBe(200);
    expect(await column()).toBe('moved.example.org');
    // Omitted on PUT: the stored domain stays, and so does the column.
    const { customDomain: _d, ...withoutDomain } = body;
    expect((await req('PUT', `/v1/status-pages/${page.id}`, withoutDomain)).statusCode).toBe(200);
    expect(await column()).toBe('moved.example.org');

    // A row written before migration 0012: the column is null, the document has the domain.
    await svc.context.db
      .updateTable('status_pages')
      .set({ custom_domain: null })
      .where('id', '=', page.id)
      .execute();
    expect(await findPageByHost(svc.context.db, 'moved.example.org')).toBeNull();
    expect(await backfillCustomDomains(svc.context.db)).toBe(1);
    expect(await column()).toBe('moved.example.org');
    expect(await backfillCustomDomains(svc.context.db)).toBe(0);
    expect((await findPageByHost(svc.context.db, 'moved.example.org'))?.id).toBe(page.id);

    expect(
      (await req('PUT', `/v1/status-pages/${page.id}`, { ...body, customDomain: null })).statusCode,
    ).toBe(200);
    expect(await column()).toBeNull();
  });

  it('answers 409 when another account uses the url; a custom domain held by another page stays pending', async () => {
    const { page, url } = await makePage({ customDomain: 'taken.example.net' });
    const other = await req('POST', '/v1/status-pages', { name: 'b', url, cards: [] }, 'B');
    expect(other.statusCode).toBe(409);
    expect(other.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_URL_TAKEN', field: 'url' });

    const mine = await req('POST', '/v1/status-pages', { name: 'b', url: freshUrl(), cards: [] }, 'B');
    expect(mine.statusCode).toBe(201);
    const moved = await req('PUT', `/v1/status-pages/${mine.json().id}`, { name: 'b', url, cards: [] }, 'B');
    expect(moved.statusCode).toBe(409);
    expect(moved.json().attributes).toMatchObject({ field: 'url' });

    for (const [method, path] of [
      ['POST', '/v1/status-pages'],
      ['PUT', `/v1/status-pages/${mine.json().id}`],
    ] as const) {
      const res = await req(
        method,
        path,
        { name: 'b', url: freshUrl(), cards: [], customDomain: 'TAKEN.example.net' },
        'B',
      );
      expect(res.statusCode, `${method} ${path}`).toBe(method === 'POST' ? 201 : 200);
      expect(res.json()).toMatchObject({ customDomainStatus: 'PENDING', customDomainVerifiedAt: null });
      expect(res.json().customDomainProblem).toMatch(/another status page serves taken\.example\.net/);
    }
    // The domain still shows the first page.
    expect((await findPageByHost(svc.context.db, 'taken.example.net'))?.id).toBe(page.id);
    // The page itself may keep both.
    const same = await req('PUT', `/v1/status-pages/${page.id}`, {
      name: 'a',
      url,
      cards: [],
      customDomain: 'taken.example.net',
    });
    expect(same.statusCode).toBe(200);
  });

  it('takes the oldest page when legacy rows of two accounts share a url', async () => {
    const url = freshUrl('legacy');
    const a = await req('POST', '/v1/status-pages', { name: 'older', url, cards: [] }, 'A');
    const b = await req('POST', '/v1/status-pages', { name: 'newer', url: freshUrl(), cards: [] }, 'B');
    // Written before urls were unique across accounts: straight into the store, column and document.
    const row = await svc.context.db
      .selectFrom('status_pages')
      .select('doc')
      .where('id', '=', b.json().id)
      .executeTakeFirstOrThrow();
    await svc.context.db
      .updateTable('status_pages')
      .set({ url, doc: JSON.stringify({ ...JSON.parse(row.doc), url }), created_at: Date.now() + 60_000 })
      .where('id', '=', b.json().id)
      .execute();
    expect((await findPageByUrl(svc.context.db, url))?.id).toBe(a.json().id);
    // The newer page stays editable while it keeps its url; moving another page onto the url is refused.
    const keep = await req(
      'PUT',
      `/v1/status-pages/${b.json().id}`,
      { name: 'renamed', url, cards: [] },
      'B',
    );
    expect(keep.statusCode).toBe(200);
    const c = await req('POST', '/v1/status-pages', { name: 'c', url: freshUrl(), cards: [] }, 'B');
    const onto = await req('PUT', `/v1/status-pages/${c.json().id}`, { name: 'c', url, cards: [] }, 'B');
    expect(onto.statusCode).toBe(409);
  });
});

describe('the one 404', () => {
  /**
   * A page route as the page, feed and JSON routes use the resolver: the page's name when it may be seen,
   * else answerPageNotFound.
   */
  async function pageApp() {
    const app = Fastify();
    await app.register(fastifyCookie);
    app.get<{ Params: { url: string } }>('/status/:url', async (request, reply) => {
      const access = await resolve(request, { url: request.params.url });
      if (!access) return answerPageNotFound(reply);
      return reply.type('text/plain').send(access.page.doc.name);
    });
    return app;
  }

  it('answers byte-identical 404s for an unknown url and a private page without a key, and leaks nothing', async () => {
    const { url, secrets, page } = await makePage({ isPrivate: true });
    const app = await pageApp();
    try {
      const unknown = await app.inject({ url: `/status/${freshUrl('nobody')}` });
      const hidden = await app.inject({ url: `/status/${url}` });
      expect(hidden.statusCode).toBe(404);
      expect(wire(hidden)).toEqual(wire(unknown));
      expect(hidden.headers['cache-control']).toBe('no-store');
      expect(hidden.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(hidden.body).toContain('<h1>No status page here</h1>');
      // A made-up cookie and a wrong token change nothing.
      const forged = await app.inject({
        url: `/status/${url}?token=${page.keys[0]!.id}.AAAA`,
        cookies: { [PAGE_SESSION_COOKIE]: `${page.id}.${page.keys[0]!.id}.99999999999999.AAAA` },
      });
      expect(wire(forged)).toEqual(wire(unknown));
      for (const res of [hidden, forged]) {
        for (const secret of secrets) expectNoSecret(JSON.stringify(res.headers) + res.body, secret);
      }
    } finally {
      await app.close();
    }
  });
});

describe('through the page routes', () => {
  it('answers the one 404 for every view of an unknown or a hidden private page, and leaks nothing', async () => {
    const domain = `hidden-${++seq}.example.com`;
    const { url, secrets } = await makePage({ isPrivate: true, customDomain: domain });
    const nobody = freshUrl('nobody');
    const answers: LightMyRequestResponse[] = [];
    for (const path of [
      '',
      '/history',
      '/incidents/x',
      '/no-such-view',
      '/feed.rss',
      '/api/v2/summary.json',
    ]) {
      const unknown = await svc.app.inject({ url: `/status/${nobody}${path}` });
      const hidden = await svc.app.inject({ url: `/status/${url}${path}` });
      const onDomain = await svc.app.inject({ url: path || '/', headers: { host: domain } });
      expect(hidden.statusCode, path).toBe(404);
      expect(wire(hidden), path).toEqual(wire(unknown));
      expect(wire(onDomain), path).toEqual(wire(unknown));
      answers.push(hidden, onDomain);
    }
    for (const res of answers) {
      const text = JSON.stringify(res.headers) + res.body;
      for (const secret of [...secrets, url]) expectNoSecret(text, secret);
    }
  });

  it('shows the page to the key form’s cookie, and the 404 again once its key is deleted', async () => {
    const { page, url, secrets } = await makePage({ isPrivate: true });
    const ok = await postKey(`/status/${url}/access`, page.keys[0]!.key!);
    const cookies = { [PAGE_SESSION_COOKIE]: cookieOf(ok)!.value };
    const seen = await svc.app.inject({ url: `/status/${url}`, cookies });
    expect(seen.statusCode).toBe(200);
    expect(seen.body).toContain(secrets[0]);
    expect(seen.headers['cache-control']).toMatch(/no-store/);

    await req('POST', `/v1/status-pages/${page.id}/keys`);
    expect((await req('DELETE', `/v1/status-pages/${page.id}/keys/${page.keys[0]!.id}`)).statusCode).toBe(
      204,
    );
    const after = await svc.app.inject({ url: `/status/${url}`, cookies });
    const unknown = await svc.app.inject({ url: `/status/${freshUrl('nobody')}`, cookies });
    expect(after.statusCode).toBe(404);
    expect(wire(after)).toEqual(wire(unknown));
  });

  it('serves a public page at the root of its custom domain', async () => {
    const domain = `root-${++seq}.example.com`;
    const { url, secrets } = await makePage({ customDomain: domain });
    const home = await svc.app.inject({ url: '/', headers: { host: domain } });
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain(secrets[0]);
    expect(home.body).toContain('href="/history"');
    expect(home.body).not.toContain(`/status/${url}`);
  });
});

describe('the key form', () => {
  it('answers the same bytes for any url: unknown, public or private', async () => {
    const priv = await makePage({ isPrivate: true });
    const pub = await makePage();
    const forms = await Promise.all(
      [priv.url, pub.url, freshUrl('nobody')].map((u) => svc.app.inject({ url: `/status/${u}/access` })),
    );
    expect(forms[0]!.statusCode).toBe(200);
    expect(forms[0]!.body).toContain('<label for="key">Access key</label>');
    expect(forms[0]!.body).toMatch(/<input id="key" name="key" type="password"/);
    expect(forms[0]!.body).toContain('<button type="submit">');
    expect(forms[0]!.body).not.toMatch(/does not open/);
    expect(forms[0]!.headers['cache-control']).toBe('no-store');
    expect(wire(forms[1]!)).toEqual(wire(forms[0]!));
    expect(wire(forms[2]!)).toEqual(wire(forms[0]!));
    for (const secret of [...priv.secrets, ...pub.secrets, priv.url]) {
      expectNoSecret(JSON.stringify(forms[0]!.headers) + forms[0]!.body, secret);
    }
  });

  it('refuses a wrong key with the form and no cookie, the same for an unknown page', async () => {
    const { url, secrets } = await makePage({ isPrivate: true });
    const wrong = await postKey(`/status/${url}/access`, `spk_${'0'.repeat(48)}`, {
      'x-test-ip': '10.2.0.1',
    });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.body).toContain('This key does not open the page.');
    expect(wrong.body).toContain('aria-invalid="true"');
    expect(cookieOf(wrong)).toBeUndefined();
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const unknown = await postKey(`/status/${freshUrl('nobody')}/access`, 'whatever', {
      'x-test-ip': '10.2.0.2',
    });
    expect(wire(unknown)).toEqual(wire(wrong));
    for (const secret of [...secrets, url])
      expectNoSecret(JSON.stringify(wrong.headers) + wrong.body, secret);
  });

  it('opens the page with the right key until the key is deleted; public drops keys', async () => {
    const { page, url } = await makePage({ isPrivate: true });
    const key = page.keys[0]!;
    expect(key.key).toMatch(/^spk_[0-9a-f]{48}$/);

    const ok = await postKey(`/status/${url}/access`, `  ${key.key!}\n`);
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe(`/status/${url}`);
    const cookie = cookieOf(ok)!;
    expect(cookie).toMatchObject({
      path: `/status/${url}`,
      httpOnly: true,
      sameSite: 'Lax',
      maxAge: PAGE_SESSION_MS / 1000,
    });
    expect(cookie.secure).toBeFalsy();
    expect(cookie.value.startsWith(`${page.id}.${key.id}.`)).toBe(true);

    const opened = await resolve(fakeRequest({ cookie: cookie.value }), { url });
    expect(opened).toMatchObject({ via: 'cookie', keyId: key.id, basePath: `/status/${url}` });
    expect(opened!.page.id).toBe(page.id);
    // Its feed links carry a token that opens the page without the cookie.
    const query = feedQueryFor(opened!);
    expect(query).toMatch(/^\?token=/);
    expect(await resolve(fakeRequest({ url: `/status/${url}/feed.atom${query}` }), { url })).toMatchObject({
      via: 'token',
      keyId: key.id,
    });

    // A second key; deleting the first revokes its cookie at once, the second still opens.
    const second = await req('POST', `/v1/status-pages/${page.id}/keys`);
    const cookie2 = cookieOf(await postKey(`/status/${url}/access`, second.json().key))!;
    expect((await req('DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(204);
    expect(await resolve(fakeRequest({ cookie: cookie.value }), { url })).toBeNull();
    expect(await resolve(fakeRequest({ cookie: cookie2.value }), { url })).toMatchObject({ via: 'cookie' });
    const reused = await postKey(`/status/${url}/access`, key.key!);
    expect(reused.statusCode).toBe(403);

    // Public: every key is dropped, and anyone sees the page.
    const body = { name: 'n', url, cards: [] };
    const pub = await req('PUT', `/v1/status-pages/${page.id}`, { ...body, isPrivate: false });
    expect(pub.json().keys).toEqual([]);
    expect(await resolve(fakeRequest(), { url })).toMatchObject({ via: 'public', keyId: null });
    // Private again: a new key; the old cookie opens nothing.
    const again = await req('PUT', `/v1/status-pages/${page.id}`, { ...body, isPrivate: true });
    expect(again.json().keys).toHaveLength(1);
    expect(await resolve(fakeRequest({ cookie: cookie2.value }), { url })).toBeNull();
    expect(await resolve(fakeRequest(), { url })).toBeNull();
  });

  it('makes the cookie Secure when the service is served over https', async () => {
    const db = await openSqliteDatabase(':memory:');
    const service = await build({
      db,
      log: pino({ level: 'silent' }),
      appUrl: 'https://status.example.test',
      retention: false,
      alerting: { delivery: { start: false } },
    });
    try {
      const key = await createApiKey(db, await createAccount(db, 'S'));
      const made = await service.app.inject({
        method: 'POST',
        url: '/v1/status-pages',
        headers: { authorization: `Bearer ${key}` },
        payload: { name: 'S', url: 'secure-page', cards: [], isPrivate: true },
      });
      expect(made.statusCode).toBe(201);
      const ok = await service.app.inject({
        method: 'POST',
        url: '/status/secure-page/access',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `key=${made.json().keys[0].key}`,
      });
      expect(ok.statusCode).toBe(303);
      expect(cookieOf(ok)).toMatchObject({ secure: true, httpOnly: true, path: '/status/secure-page' });
    } finally {
      await service.close();
      await db.destroy();
    }
  });

  it('does not take a cookie made for another page, expired or tampered with', async () => {
    const a = await makePage({ isPrivate: true });
    const b = await makePage({ isPrivate: true });
    const keyA = a.page.keys[0]!.id;
    const valid = pageSessionValue(svc.context, a.page.id, keyA, Date.now() + 60_000);
    expect(await resolve(fakeRequest({ cookie: valid }), { url: a.url })).toMatchObject({ keyId: keyA });
    expect(await resolve(fakeRequest({ cookie: valid }), { url: b.url })).toBeNull();
    const expired = pageSessionValue(svc.context, a.page.id, keyA, Date.now() - 1);
    expect(await resolve(fakeRequest({ cookie: expired }), { url: a.url })).toBeNull();
    const [pageId, keyId, expires, signature] = valid.split('.');
    const longer = `${pageId}.${keyId}.${Number(expires) + 1}.${signature}`;
    expect(await resolve(fakeRequest({ cookie: longer }), { url: a.url })).toBeNull();
    const flipped = `${pageId}.${keyId}.${expires}.${signature!.slice(0, -1)}${signature!.endsWith('A') ? 'B' : 'A'}`;
    expect(await resolve(fakeRequest({ cookie: flipped }), { url: a.url })).toBeNull();
    // B's key in a cookie signed for A's page id does not open B.
    const crossed = pageSessionValue(svc.context, a.page.id, b.page.keys[0]!.id, Date.now() + 60_000);
    expect(await resolve(fakeRequest({ cookie: crossed }), { url: b.url })).toBeNull();
  });

  it('refuses a post from another site, and answers 429 past the failure limit', async () => {
    const { page, url } = await makePage({ isPrivate: true });
    const foreign = await postKey(`/status/${url}/access`, page.keys[0]!.key!, {
      origin: 'https://evil.example',
    });
    expect(foreign.statusCode).toBe(403);
    expect(cookieOf(foreign)).toBeUndefined();
    const sameSite = await postKey(`/status/${url}/access`, page.keys[0]!.key!, {
      origin: 'http://LOCALHOST:3000',
      host: 'localhost:3000',
    });
    expect(sameSite.statusCode).toBe(303);

    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      statuses.push(
        (await postKey(`/status/${url}/access`, `wrong-${i}`, { 'x-test-ip': '10.9.9.9' })).statusCode,
      );
    }
    expect(statuses.slice(0, 20).every((s) => s === 403)).toBe(true);
    expect(statuses[20]).toBe(429);
    const limited = await postKey(`/status/${url}/access`, 'wrong', { 'x-test-ip': '10.9.9.9' });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toContain('Too many wrong keys');
    // Another address is not slowed.
    expect(
      (await postKey(`/status/${url}/access`, page.keys[0]!.key!, { 'x-test-ip': '10.9.9.10' })).statusCode,
    ).toBe(303);
  });
});

describe('feed tokens', () => {
  it('open a private page while their key exists, and only that page', async () => {
    const a = await makePage({ isPrivate: true });
    const b = await makePage({ isPrivate: true });
    const at = (url: string, token: string) =>
      resolve(fakeRequest({ url: `/status/${url}/feed.rss?token=${encodeURIComponent(token)}` }), { url });

    const token = feedToken(svc.context, (await findPageByUrl(svc.context.db, a.url))!, a.page.keys[0]!.id);
    expect(await at(a.url, token)).toMatchObject({ via: 'token', keyId: a.page.keys[0]!.id });
    // Another page's token, and this token on another page.
    const tokenB = feedToken(svc.context, (await findPageByUrl(svc.context.db, b.url))!, b.page.keys[0]!.id);
    expect(await at(a.url, tokenB)).toBeNull();
    expect(await at(b.url, token)).toBeNull();
    // Tampered: another key id with the same signature, a changed signature.
    const [keyId, signature] = token.split('.') as [string, string];
    expect(await at(a.url, `${b.page.keys[0]!.id}.${signature}`)).toBeNull();
    expect(await at(a.url, `${keyId}.${signature.slice(1)}`)).toBeNull();
    expect(await at(a.url, keyId)).toBeNull();
    // The key deleted: the token opens nothing.
    await req('POST', `/v1/status-pages/${a.page.id}/keys`);
    expect((await req('DELETE', `/v1/status-pages/${a.page.id}/keys/${keyId}`)).statusCode).toBe(204);
    expect(await at(a.url, token)).toBeNull();
  });

  it('feedQueryFor refuses a private access the resolver did not make', async () => {
    const { page, url } = await makePage({ isPrivate: true });
    const found = (await findPageByUrl(svc.context.db, url))!;
    const made: PageAccess = { page: found, via: 'cookie', keyId: page.keys[0]!.id, basePath: '' };
    expect(() => feedQueryFor(made)).toThrow(/pageAccessResolver/);
  });
});

describe('keys API', () => {
  it('adds a key shown in clear once, masks it later and deletes it', async () => {
    const { page } = await makePage({ isPrivate: true });
    const added = await req('POST', `/v1/status-pages/${page.id}/keys`);
    expect(added.statusCode).toBe(201);
    const key = added.json();
    expect(Object.keys(key).sort()).toEqual(['created_at', 'id', 'key', 'maskedKey', 'updated_at']);
    expect(key.key).toMatch(/^spk_[0-9a-f]{48}$/);
    expect(key.maskedKey).toBe(`${key.key.slice(0, 8)}${'*'.repeat(16)}${key.key.slice(-4)}`);

    const got = await req('GET', `/v1/status-pages/${page.id}`);
    const keys = got.json().keys as Record<string, unknown>[];
    expect(keys.map((k) => k.id)).toEqual([page.keys[0]!.id, key.id]);
    expect(keys.every((k) => !('key' in k))).toBe(true);
    expectNoSecret(got.body, key.key);
    expectNoSecret((await req('GET', '/v1/status-pages')).body, key.key);

    expect((await req('DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(204);
    expect((await req('DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(404);
    expect(
      (await req('GET', `/v1/status-pages/${page.id}`)).json().keys.map((k: { id: string }) => k.id),
    ).toEqual([page.keys[0]!.id]);
  });

  it('answers 404 for another account or an unknown page, 400 for a public page', async () => {
    const { page } = await makePage({ isPrivate: true });
    expect((await req('POST', `/v1/status-pages/${page.id}/keys`, undefined, 'B')).statusCode).toBe(404);
    expect(
      (await req('DELETE', `/v1/status-pages/${page.id}/keys/${page.keys[0]!.id}`, undefined, 'B'))
        .statusCode,
    ).toBe(404);
    expect((await req('POST', '/v1/status-pages/no-such-page/keys')).statusCode).toBe(404);
    const pub = await makePage();
    const refused = await req('POST', `/v1/status-pages/${pub.page.id}/keys`);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().attributes).toMatchObject({ field: 'id', rule: 'isPrivate' });
    expect(
      (await svc.app.inject({ method: 'POST', url: `/v1/status-pages/${page.id}/keys` })).statusCode,
    ).toBe(401);
  });
});

describe('custom domains', () => {
  it('serves a page at the root of its domain, not the API, nor on the service host', async () => {
    const domain = `rewrite-${++seq}.example.com`;
    const { url } = await makePage({ customDomain: domain });
    const domains = svc.context.statusPageDomains;
    const raw = (path: string, host: string) =>
      ({ url: path, headers: { host } }) as unknown as IncomingMessage;

    expect(domains.rewrite(raw('/', `${domain.toUpperCase()}:8443`))).toBe(`/status/${url}`);
    expect(domains.rewrite(raw('/?x=1', domain))).toBe(`/status/${url}?x=1`);
    expect(domains.rewrite(raw('/history', domain))).toBe(`/status/${url}/history`);
    expect(domains.rewrite(raw('/feed.atom?token=a.b', domain))).toBe(`/status/${url}/feed.atom?token=a.b`);
    for (const kept of [
      '/v1/checks',
      '/v1',
      '/auth/session',
      '/ping/abc',
      '/openapi.json',
      '/assets/a.js',
      '/trace-viewer/',
    ]) {
      expect(domains.rewrite(raw(kept, domain)), kept).toBe(kept);
    }
    expect(domains.rewrite(raw('/versions', domain))).toBe(`/status/${url}/versions`);
    expect(domains.rewrite(raw('/', 'localhost:3000'))).toBe('/');
    expect(domains.isServiceHost('LOCALHOST')).toBe(true);
    expect(domains.rewrite(raw('/', `x.${domain}`))).toBe('/');

    // The resolver sees a rewritten request at base path ''.
    const rewrittenRaw = raw('/', domain);
    domains.rewrite(rewrittenRaw);
    expect(await resolve(fakeRequest({ raw: rewrittenRaw }), { url })).toMatchObject({ basePath: '' });
    expect(await resolve(fakeRequest(), { url })).toMatchObject({ basePath: `/status/${url}` });

    // Through the service: the key form at /access on the domain, the API still the API.
    const form = await svc.app.inject({ url: '/access', headers: { host: domain } });
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('Access key');
    const api = await svc.app.inject({ url: '/v1/status-pages', headers: { host: domain, ...svc.auth() } });
    expect(api.statusCode).toBe(200);
  });

  it('follows changes made through the API at once, and a deleted page frees its domain', async () => {
    const domain = `follow-${++seq}.example.com`;
    const { page, url } = await makePage({ isPrivate: true });
    const form = () => svc.app.inject({ url: '/access', headers: { host: domain } });
    expect((await form()).statusCode).toBe(404);

    const body = { name: 'n', url, cards: [], customDomain: domain };
    expect((await req('PUT', `/v1/status-pages/${page.id}`, body)).statusCode).toBe(200);
    expect((await form()).statusCode).toBe(200);

    // The key form on the domain: cookie for the whole domain, back to its root.
    const ok = await svc.app.inject({
      method: 'POST',
      url: '/access',
      headers: { host: domain, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `key=${page.keys[0]!.key!}`,
    });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/');
    expect(cookieOf(ok)).toMatchObject({ path: '/' });
    expect(await resolve(fakeRequest({ cookie: cookieOf(ok)!.value }), { host: domain })).toMatchObject({
      via: 'cookie',
      basePath: '',
    });

    expect((await req('DELETE', `/v1/status-pages/${page.id}`)).statusCode).toBe(204);
    expect((await form()).statusCode).toBe(404);
    const reuse = await req(
      'POST',
      '/v1/status-pages',
      { name: 'c', url: freshUrl(), cards: [], customDomain: domain },
      'B',
    );
    expect(reuse.statusCode).toBe(201);
  });

  it('never treats the service host as a custom domain', async () => {
    const { url } = await makePage({ customDomain: 'localhost.example' });
    const domains = new CustomDomains(svc.context.db, { appUrl: 'https://localhost.example:8443/' });
    try {
      await domains.reload();
      expect(domains.urlOfHost('localhost.example')).toBeUndefined();
      expect(
        domains.rewrite({ url: '/', headers: { host: 'localhost.example' } } as unknown as IncomingMessage),
      ).toBe('/');
      expect(domains.appUrlSecure).toBe(true);
    } finally {
      domains.stop();
    }
    // Never started: the service's own instance (its host is localhost) is still the one in use, and for it
    // the domain is a page's.
    expect(svc.context.statusPageDomains).not.toBe(domains);
    expect(svc.context.statusPageDomains.urlOfHost('localhost.example')).toBe(url);
  });
});
