import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THEME_COLOR_FIELDS } from '../../../src/service/status-pages/admin/schema.js';
import { DEFAULT_THEME_COLORS } from '../../../src/service/status-pages/admin/status-pages.js';
import { type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Account = 'A' | 'B';
const req: TestService['request'] = (...args) => svc.request(...args);

let urlSeq = 0;
const freshUrl = () => `page-${++urlSeq}`;

async function service(name = 'API', account: Account = 'A'): Promise<{ id: string; name: string }> {
  const res = await req('POST', '/v1/status-pages/services', { name }, account);
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function count(table: 'status_pages' | 'status_page_services'): Promise<number> {
  const row = await svc.context.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const theme = (color: string) => Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, color]));
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('status-page services', () => {
  it('creates, reads, renames and deletes a service with the spec shape', async () => {
    const created = await req('POST', '/v1/status-pages/services', { name: 'Database' });
    expect(created.statusCode).toBe(201);
    const s = created.json();
    expect(Object.keys(s).sort()).toEqual(['accountId', 'created_at', 'id', 'name', 'updated_at']);
    expect(s).toMatchObject({ name: 'Database', accountId: svc.accountA.id, updated_at: null });
    expect(s.created_at).toMatch(ISO);

    // GET adds the linked checks (an Outpost extension): none yet.
    expect((await req('GET', `/v1/status-pages/services/${s.id}`)).json()).toEqual({ ...s, checks: [] });
    const renamed = await req('PUT', `/v1/status-pages/services/${s.id}`, { name: 'DB' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: s.id, name: 'DB', created_at: s.created_at });
    expect(renamed.json().updated_at).toMatch(ISO);

    expect((await req('DELETE', `/v1/status-pages/services/${s.id}`)).statusCode).toBe(204);
    expect((await req('GET', `/v1/status-pages/services/${s.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/status-pages/services/${s.id}`)).statusCode).toBe(404);
  });

  it.each([
    ['missing name', {}, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['name of 256', { name: 'x'.repeat(256) }, 'name'],
    ['unknown field', { name: 'a', colour: 'red' }, 'colour'],
  ])('rejects %s with 400 naming the field and stores nothing', async (_label, body, field) => {
    const before = await count('status_page_services');
    const res = await req('POST', '/v1/status-pages/services', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      attributes: { field, in: 'body' },
    });
    expect(await count('status_page_services')).toBe(before);
  });

  it('accepts a name of 255 characters', async () => {
    expect((await req('POST', '/v1/status-pages/services', { name: 'x'.repeat(255) })).statusCode).toBe(201);
  });

  it('is served by the static route, not captured as a status page id', async () => {
    const res = await req('GET', '/v1/status-pages/services');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toHaveProperty('entries');
  });
});

describe('GET /v1/status-pages/services pagination', () => {
  let fresh: TestService;
  const get = (query: string) =>
    fresh.app.inject({ method: 'GET', url: `/v1/status-pages/services${query}`, headers: fresh.auth() });
  beforeAll(async () => {
    fresh = await testService();
    for (let i = 0; i < 25; i++) {
      await fresh.app.inject({
        method: 'POST',
        url: '/v1/status-pages/services',
        headers: fresh.auth(),
        payload: { name: `s${i}` },
      });
    }
  });
  afterAll(async () => fresh.close());

  it('answers 20 by default, then the rest, then nextId null', async () => {
    const first = (await get('')).json();
    expect(first.length).toBe(20);
    expect(first.entries).toHaveLength(20);
    expect(typeof first.nextId).toBe('string');
    const second = (await get(`?nextId=${first.nextId}`)).json();
    expect(second).toMatchObject({ length: 5, nextId: null });
    const names = [...first.entries, ...second.entries].map((s: { name: string }) => s.name);
    expect(new Set(names).size).toBe(25);
  });

  it('answers everything at once with paginated=false', async () => {
    const all = (await get('?paginated=false&limit=1')).json();
    expect(all).toMatchObject({ length: 25, nextId: null });
  });

  it('keeps its cursor stable when services are added between pages', async () => {
    const first = (await get('?limit=10')).json();
    await fresh.app.inject({
      method: 'POST',
      url: '/v1/status-pages/services',
      headers: fresh.auth(),
      payload: { name: 'late' },
    });
    const rest = (await get(`?paginated=true&limit=100&nextId=${first.nextId}`)).json();
    const names = [...first.entries, ...rest.entries].map((s: { name: string }) => s.name);
    expect(names).toHaveLength(26);
    expect(new Set(names).size).toBe(26);
    expect(names.at(-1)).toBe('late');
  });

  it.each([
    ['limit=1', 200],
    ['limit=100', 200],
    ['limit=0', 400],
    ['limit=101', 400],
    ['limit=abc', 400],
    ['paginated=maybe', 400],
    ['nextId=not-a-cursor', 400],
  ])('%s → %i', async (query, status) => {
    const res = await get(`?${query}`);
    expect(res.statusCode).toBe(status);
    if (status === 400) {
      expect(res.json().attributes).toMatchObject({ field: query.split('=')[0], in: 'querystring' });
    } else {
      expect(res.json().length).toBe(query === 'limit=1' ? 1 : 26);
    }
  });

  it('shows account B none of account A’s services', async () => {
    const res = await fresh.app.inject({
      method: 'GET',
      url: '/v1/status-pages/services',
      headers: fresh.auth('B'),
    });
    expect(res.json()).toEqual({ length: 0, entries: [], nextId: null });
  });
});

describe('POST /v1/status-pages', () => {
  it('creates a page with the spec defaults and full response shape', async () => {
    const api = await service('API');
    const web = await service('Web');
    const url = freshUrl();
    const res = await req('POST', '/v1/status-pages', {
      name: 'Acme status',
      url,
      cards: [{ name: 'Core', services: [{ id: api.id }, { id: web.id }] }],
    });
    expect(res.statusCode).toBe(201);
    const page = res.json();
    expect(page).toMatchObject({
      name: 'Acme status',
      url,
      description: null,
      customDomain: null,
      logo: null,
      redirectTo: null,
      favicon: null,
      defaultTheme: 'AUTO',
      isPrivate: false,
      whiteLabel: false,
      accountId: svc.accountA.id,
      updated_at: null,
      themeColors: DEFAULT_THEME_COLORS,
      incidents: [],
      keys: [],
    });
    expect(page.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(page.created_at).toMatch(ISO);
    expect(page.cards).toHaveLength(1);
    const card = page.cards[0];
    expect(Object.keys(card).sort()).toEqual(['created_at', 'id', 'name', 'services', 'updated_at']);
    expect(card).toMatchObject({ name: 'Core', updated_at: null });
    expect(card.services).toEqual([api, web]);
    expect((await req('GET', `/v1/status-pages/${page.id}`)).json()).toEqual(page);
  });

  it('takes a card without services: it starts with none', async () => {
    const created = await req('POST', '/v1/status-pages', {
      name: 'Empty',
      url: freshUrl(),
      cards: [{ name: 'Core' }],
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().cards).toMatchObject([{ name: 'Core', services: [] }]);
    const id = created.json().id;
    const updated = await req('PUT', `/v1/status-pages/${id}`, {
      name: 'Empty',
      url: created.json().url,
      cards: [{ name: 'Core' }, { name: 'Edge' }],
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json().cards).toMatchObject([
      { name: 'Core', services: [] },
      { name: 'Edge', services: [] },
    ]);
  });

  it('stores every optional field as given', async () => {
    const body = {
      name: 'Full',
      url: freshUrl(),
      cards: [],
      description: 'd'.repeat(500),
      customDomain: 'status.example.com',
      themeColors: { light: theme('#fff'), dark: theme('#0a0b0cff') },
      logo: 'https://example.com/logo.png',
      redirectTo: 'https://example.com',
      favicon: 'http://example.com/favicon.ico',
      defaultTheme: 'DARK',
      isPrivate: false,
    };
    const res = await req('POST', '/v1/status-pages', body);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject(body);
  });

  it('gives a private page one access key, in clear only in the create answer, stored hashed', async () => {
    const res = await req('POST', '/v1/status-pages', {
      name: 'Private',
      url: freshUrl(),
      cards: [],
      isPrivate: true,
    });
    expect(res.statusCode).toBe(201);
    const page = res.json();
    expect(page.keys).toHaveLength(1);
    const [key] = page.keys;
    expect(key.key).toMatch(/^spk_[0-9a-f]{48}$/);
    expect(key.maskedKey).toBe(`${key.key.slice(0, 8)}${'*'.repeat(16)}${key.key.slice(-4)}`);
    const again = (await req('GET', `/v1/status-pages/${page.id}`)).json();
    expect(again.keys).toEqual([
      { id: key.id, maskedKey: key.maskedKey, created_at: key.created_at, updated_at: null },
    ]);
    const row = await svc.context.db
      .selectFrom('status_pages')
      .select('doc')
      .where('id', '=', page.id)
      .executeTakeFirstOrThrow();
    expect(row.doc).not.toContain(key.key);
  });

  it('names the unknown service of a card, also when it belongs to another account', async () => {
    const mine = await service('mine');
    const theirs = await service('theirs', 'B');
    for (const id of ['no-such-service', theirs.id]) {
      const before = await count('status_pages');
      const res = await req('POST', '/v1/status-pages', {
        name: 'x',
        url: freshUrl(),
        cards: [{ name: 'c', services: [{ id: mine.id }, { id }] }],
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().attributes).toMatchObject({ field: 'cards[0].services[1].id', in: 'body' });
      expect(await count('status_pages')).toBe(before);
    }
  });

  it('rejects a service listed twice in one card', async () => {
    const s = await service();
    const res = await req('POST', '/v1/status-pages', {
      name: 'x',
      url: freshUrl(),
      cards: [{ name: 'c', services: [{ id: s.id }, { id: s.id }] }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes.field).toBe('cards[0].services[1].id');
  });

  const ok = () => ({ name: 'x', url: freshUrl(), cards: [] as unknown[] });
  it.each([
    ['missing name', { name: undefined }, 'name'],
    ['missing url', { url: undefined }, 'url'],
    ['missing cards', { cards: undefined }, 'cards'],
    ['url with upper case', { url: 'Acme' }, 'url'],
    ['url with a dot', { url: 'acme.io' }, 'url'],
    ['url ending in a hyphen', { url: 'acme-' }, 'url'],
    ['url of 64', { url: 'a'.repeat(64) }, 'url'],
    ['description of 501', { description: 'd'.repeat(501) }, 'description'],
    ['customDomain with a scheme', { customDomain: 'https://status.example.com' }, 'customDomain'],
    ['customDomain of one label', { customDomain: 'localhost' }, 'customDomain'],
    ['customDomain with a port', { customDomain: 'status.example.com:8080' }, 'customDomain'],
    ['logo not a URL', { logo: 'logo.png' }, 'logo'],
    ['favicon with ftp', { favicon: 'ftp://example.com/f.ico' }, 'favicon'],
    ['bad defaultTheme', { defaultTheme: 'SEPIA' }, 'defaultTheme'],
    ['isPrivate as a string', { isPrivate: 'true' }, 'isPrivate'],
    ['card without name', { cards: [{ services: [] }] }, 'cards[0].name'],
    ['card service without id', { cards: [{ name: 'c', services: [{}] }] }, 'cards[0].services[0].id'],
    ['51 cards', { cards: Array.from({ length: 51 }, () => ({ name: 'c', services: [] })) }, 'cards'],
    ['whiteLabel in the body', { whiteLabel: true }, 'whiteLabel'],
    [
      'colour name',
      { themeColors: { light: { ...theme('#fff'), borderColor: 'red' }, dark: theme('#000') } },
      'themeColors.light.borderColor',
    ],
    [
      'colour of 5 digits',
      { themeColors: { light: theme('#fff'), dark: { ...theme('#000'), linkFontColor: '#12345' } } },
      'themeColors.dark.linkFontColor',
    ],
    [
      'missing colour',
      { themeColors: { light: { ...theme('#fff'), titleFontColor: undefined }, dark: theme('#000') } },
      'themeColors.light.titleFontColor',
    ],
    ['missing dark theme', { themeColors: { light: theme('#fff') } }, 'themeColors.dark'],
  ])('rejects %s with 400 naming %s', async (_label, override, field) => {
    const before = await count('status_pages');
    const res = await req('POST', '/v1/status-pages', { ...ok(), ...override });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      attributes: { field, in: 'body' },
    });
    expect(await count('status_pages')).toBe(before);
  });

  it('accepts the limits at their edges', async () => {
    const res = await req('POST', '/v1/status-pages', {
      name: 'n'.repeat(255),
      url: `a${'b'.repeat(61)}c`,
      cards: Array.from({ length: 50 }, () => ({ name: 'c', services: [] })),
      description: 'd'.repeat(500),
      customDomain: 'a.io',
    });
    expect(res.statusCode).toBe(201);
  });

  it('answers 409 for a url any account already uses (/status/{url} names one page)', async () => {
    const url = freshUrl();
    expect((await req('POST', '/v1/status-pages', { name: 'one', url, cards: [] })).statusCode).toBe(201);
    const before = await count('status_pages');
    const dup = await req('POST', '/v1/status-pages', { name: 'two', url, cards: [] });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ statusCode: 409, error: 'Conflict', attributes: { field: 'url' } });
    expect(await count('status_pages')).toBe(before);
    const other = await req('POST', '/v1/status-pages', { name: 'b', url, cards: [] }, 'B');
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ attributes: { field: 'url' } });
  });
});

describe('GET /v1/status-pages', () => {
  let fresh: TestService;
  const get = (query: string, account: Account = 'A') =>
    fresh.app.inject({ method: 'GET', url: `/v1/status-pages${query}`, headers: fresh.auth(account) });
  const create = (i: number) =>
    fresh.app.inject({
      method: 'POST',
      url: '/v1/status-pages',
      headers: fresh.auth(),
      payload: { name: `p${i}`, url: `p${i}`, cards: [] },
    });
  beforeAll(async () => {
    fresh = await testService();
    for (let i = 0; i < 22; i++) expect((await create(i)).statusCode).toBe(201);
  });
  afterAll(async () => fresh.close());

  it('pages 20 at a time in creation order with list-entry fields', async () => {
    const first = (await get('')).json();
    expect(first.length).toBe(20);
    expect(first.entries[0]).toMatchObject({
      name: 'p0',
      accountId: fresh.accountA.id,
      incidents: [],
      keys: [],
      cards: [],
    });
    expect(first.entries[0]).toHaveProperty('updated_at', null);
    const second = (await get(`?nextId=${first.nextId}`)).json();
    expect(second.entries.map((p: { name: string }) => p.name)).toEqual(['p20', 'p21']);
    expect(second.nextId).toBeNull();
  });

  it('neither repeats nor skips pages created or deleted between calls', async () => {
    const first = (await get('?limit=5')).json();
    const nextName = (await get(`?limit=1&nextId=${first.nextId}`)).json().entries[0];
    expect((await create(99)).statusCode).toBe(201);
    await fresh.app.inject({
      method: 'DELETE',
      url: `/v1/status-pages/${nextName.id}`,
      headers: fresh.auth(),
    });
    const rest = (await get(`?limit=100&nextId=${first.nextId}`)).json();
    const names = [...first.entries, ...rest.entries].map((p: { name: string }) => p.name);
    expect(names).toEqual([
      ...Array.from({ length: 22 }, (_, i) => `p${i}`).filter((n) => n !== nextName.name),
      'p99',
    ]);
  });

  it.each([['limit=0'], ['limit=101'], ['limit=1.5'], ['nextId='], ['nextId=bm9wZQ'], ['page=2']])(
    'rejects %s',
    async (q) => {
      const res = await get(`?${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().attributes).toMatchObject({ field: q.split('=')[0], in: 'querystring' });
    },
  );

  it('accepts limit 1 and 100', async () => {
    expect((await get('?limit=1')).json().length).toBe(1);
    expect((await get('?limit=100')).json().nextId).toBeNull();
  });

  it('shows account B none of account A’s pages', async () => {
    expect((await get('', 'B')).json()).toEqual({ length: 0, entries: [], nextId: null });
  });
});

describe('PUT and DELETE /v1/status-pages/{id}', () => {
  it('replaces name, url and cards, keeps omitted fields and the ids of named cards', async () => {
    const [a, b] = [await service('a'), await service('b')];
    const page = (
      await req('POST', '/v1/status-pages', {
        name: 'v1',
        url: freshUrl(),
        description: 'kept',
        cards: [
          { name: 'one', services: [{ id: a.id }] },
          { name: 'two', services: [] },
        ],
      })
    ).json();
    const [one, two] = page.cards;
    const url = freshUrl();
    const res = await req('PUT', `/v1/status-pages/${page.id}`, {
      name: 'v2',
      url,
      cards: [
        { id: two.id, statusPageId: page.id, name: 'two', services: [] },
        { id: one.id, name: 'one', services: [{ id: b.id }] },
        { id: 'not-a-card', name: 'three', services: [] },
      ],
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json();
    expect(updated).toMatchObject({
      id: page.id,
      name: 'v2',
      url,
      description: 'kept',
      created_at: page.created_at,
    });
    expect(updated.updated_at).toMatch(ISO);
    expect(updated.cards.map((c: { id: string }) => c.id).slice(0, 2)).toEqual([two.id, one.id]);
    expect(updated.cards[0]).toMatchObject({ created_at: two.created_at, updated_at: null });
    expect(updated.cards[1].services).toEqual([b]);
    expect(updated.cards[1].updated_at).toMatch(ISO);
    expect(updated.cards[2].id).not.toBe('not-a-card');
    expect((await req('GET', `/v1/status-pages/${page.id}`)).json()).toEqual(updated);
  });

  it('rejects a card naming another page, a url taken by another page, and keeps the page', async () => {
    const [p1, p2] = [
      (await req('POST', '/v1/status-pages', { name: 'p1', url: freshUrl(), cards: [] })).json(),
      (await req('POST', '/v1/status-pages', { name: 'p2', url: freshUrl(), cards: [] })).json(),
    ];
    const wrong = await req('PUT', `/v1/status-pages/${p1.id}`, {
      name: 'x',
      url: p1.url,
      cards: [{ name: 'c', statusPageId: p2.id, services: [] }],
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().attributes.field).toBe('cards[0].statusPageId');
    const taken = await req('PUT', `/v1/status-pages/${p1.id}`, { name: 'x', url: p2.url, cards: [] });
    expect(taken.statusCode).toBe(409);
    expect((await req('GET', `/v1/status-pages/${p1.id}`)).json()).toEqual(p1);
    expect(
      (await req('PUT', `/v1/status-pages/${p1.id}`, { name: 'same url', url: p1.url, cards: [] }))
        .statusCode,
    ).toBe(200);
  });

  it('makes a key when a page turns private and drops it when it turns public', async () => {
    const page = (await req('POST', '/v1/status-pages', { name: 'p', url: freshUrl(), cards: [] })).json();
    const priv = (
      await req('PUT', `/v1/status-pages/${page.id}`, {
        name: 'p',
        url: page.url,
        cards: [],
        isPrivate: true,
      })
    ).json();
    expect(priv.keys).toHaveLength(1);
    expect(priv.keys[0].key).toMatch(/^spk_/);
    const still = (
      await req('PUT', `/v1/status-pages/${page.id}`, { name: 'q', url: page.url, cards: [] })
    ).json();
    expect(still).toMatchObject({ isPrivate: true, keys: [{ id: priv.keys[0].id }] });
    expect(still.keys[0].key).toBeUndefined();
    const pub = (
      await req('PUT', `/v1/status-pages/${page.id}`, {
        name: 'p',
        url: page.url,
        cards: [],
        isPrivate: false,
      })
    ).json();
    expect(pub.keys).toEqual([]);
  });

  it('deletes a page (204), then 404; a service on a card cannot be deleted until then', async () => {
    const s = await service();
    const page = (
      await req('POST', '/v1/status-pages', {
        name: 'p',
        url: freshUrl(),
        cards: [{ name: 'c', services: [{ id: s.id }] }],
      })
    ).json();
    const blocked = await req('DELETE', `/v1/status-pages/services/${s.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json()).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      attributes: { statusPageIds: [page.id] },
    });
    expect((await req('DELETE', `/v1/status-pages/${page.id}`)).statusCode).toBe(204);
    expect((await req('GET', `/v1/status-pages/${page.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/status-pages/${page.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/status-pages/services/${s.id}`)).statusCode).toBe(204);
  });

  it('answers 404 for unknown ids', async () => {
    const body = { name: 'x', url: freshUrl(), cards: [] };
    expect((await req('GET', '/v1/status-pages/nope')).statusCode).toBe(404);
    expect((await req('PUT', '/v1/status-pages/nope', body)).statusCode).toBe(404);
    expect((await req('PUT', '/v1/status-pages/services/nope', { name: 'x' })).statusCode).toBe(404);
  });
});

describe('two accounts', () => {
  it('account B can neither read, list, change nor delete account A’s pages and services', async () => {
    const s = await service('private to A');
    const page = (
      await req('POST', '/v1/status-pages', {
        name: 'A only',
        url: freshUrl(),
        cards: [{ name: 'c', services: [{ id: s.id }] }],
      })
    ).json();
    const body = { name: 'hijack', url: freshUrl(), cards: [] };
    for (const [method, url, payload] of [
      ['GET', `/v1/status-pages/${page.id}`],
      ['PUT', `/v1/status-pages/${page.id}`, body],
      ['DELETE', `/v1/status-pages/${page.id}`],
      ['GET', `/v1/status-pages/services/${s.id}`],
      ['PUT', `/v1/status-pages/services/${s.id}`, { name: 'hijack' }],
      ['DELETE', `/v1/status-pages/services/${s.id}`],
    ] as const) {
      const res = await req(method, url, payload, 'B');
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    const listed = JSON.stringify([
      (await req('GET', '/v1/status-pages?limit=100', undefined, 'B')).json(),
      (await req('GET', '/v1/status-pages/services?paginated=false', undefined, 'B')).json(),
    ]);
    expect(listed).not.toContain(page.id);
    expect(listed).not.toContain(s.id);
    expect((await req('GET', `/v1/status-pages/${page.id}`)).json()).toEqual(page);
    expect((await req('GET', `/v1/status-pages/services/${s.id}`)).json()).toEqual({ ...s, checks: [] });
  });

  it('answers 401 without a key', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/status-pages' });
    expect(res.statusCode).toBe(401);
  });
});
