import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiBody, expectBadField, icmpBody, type TestService, testService } from '../../helpers/service.js';

// GET /v1/checks paged in the store (limit/page, filters in SQL, the nextId cursor), the alertChannels views
// built from one read of the channels, and compressed JSON answers; on the project's store (SQLite or
// PostgreSQL).

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Listed = {
  id: string;
  name: string;
  tags: string[];
  checkType: string;
  alertChannels: unknown;
  created_at: string;
};

/** `checks` in the list's order: creation time, then id (checks made in the same millisecond). */
const inListOrder = (checks: Listed[]) =>
  [...checks].sort((a, b) => a.created_at.localeCompare(b.created_at) || (a.id < b.id ? -1 : 1));

/** Creates an API check (not activated, no automatic alert channels) and returns its id. */
async function create(
  name: string,
  extra: Record<string, unknown> = {},
  account: 'A' | 'B' = 'A',
): Promise<string> {
  const res = await svc.request(
    'POST',
    '/v1/checks/api?autoAssignAlerts=false',
    apiBody({ name, ...extra }),
    account,
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function list(query: string, account: 'A' | 'B' = 'A') {
  const res = await svc.request('GET', `/v1/checks${query}`, undefined, account);
  expect(res.statusCode, res.body).toBe(200);
  return { checks: res.json() as Listed[], headers: res.headers };
}

describe('GET /v1/checks paged', () => {
  const made: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 25; i++) {
      const tags = [...(i % 2 === 0 ? ['even'] : []), ...(i % 3 === 0 ? ['three'] : []), 'paged'];
      made.push(await create(`Paged ${String(i).padStart(2, '0')}`, { tags }));
    }
  });

  it('pages of `limit` split the whole list at its boundaries, oldest first', async () => {
    const all = (await list('?tag=paged')).checks;
    expect(all).toEqual(inListOrder(all));
    expect(all.map((c) => c.id).sort()).toEqual([...made].sort());
    const pages = [];
    for (let page = 1; page <= 4; page++) pages.push(await list(`?tag=paged&limit=10&page=${page}`));
    expect(pages.map((p) => p.checks.length)).toEqual([10, 10, 5, 0]);
    expect(pages.flatMap((p) => p.checks)).toEqual(all);
    // A page followed by more names the next one; the last and those past it do not.
    expect(pages.map((p) => typeof p.headers['x-next-id'])).toEqual([
      'string',
      'string',
      'undefined',
      'undefined',
    ]);
    // limit=1 on the 25th page: the last check exactly; limit=100: every one.
    expect((await list('?tag=paged&limit=1&page=25')).checks).toEqual([all[24]]);
    expect((await list('?tag=paged&limit=100')).checks).toEqual(all);
  });

  it('filters before paging: pages count the filtered checks only', async () => {
    const all = (await list('')).checks;
    const both = all.filter((c) => c.tags.includes('even') && c.tags.includes('three'));
    expect(both.map((c) => c.name).sort()).toEqual([
      'Paged 00',
      'Paged 06',
      'Paged 12',
      'Paged 18',
      'Paged 24',
    ]);
    const first = await list('?tag=even&tag=three&limit=2&page=1');
    const third = await list('?tag=even&tag=three&limit=2&page=3');
    expect(first.checks).toEqual(both.slice(0, 2));
    expect(third.checks).toEqual(both.slice(4));
    expect(third.headers['x-next-id']).toBeUndefined();
    // search: name contains, case-insensitive (letters beyond ASCII too).
    const tens = all.filter((c) => c.name.startsWith('Paged 1'));
    expect(tens).toHaveLength(10);
    expect((await list('?search=PAGED%201&limit=3&page=2')).checks).toEqual(tens.slice(3, 6));
    const umlaut = await create('ÄRGER über Uptime');
    expect((await list('?search=%C3%A4rger')).checks.map((c) => c.id)).toEqual([umlaut]);
    // checkType, with tag.
    const icmp = await svc.request(
      'POST',
      '/v1/checks/icmp?autoAssignAlerts=false',
      icmpBody({ tags: ['paged'] }),
    );
    expect(icmp.statusCode).toBe(201);
    expect((await list('?checkType=ICMP&tag=paged&limit=5')).checks.map((c) => c.id)).toEqual([
      icmp.json().id,
    ]);
    expect((await list('?checkType=ICMP&tag=nothing&limit=5')).checks).toEqual([]);
    // Another account's checks are never counted.
    expect((await list('?tag=paged&limit=100', 'B')).checks).toEqual([]);
  });

  it('the nextId cursor walks every check exactly once while checks are created and deleted between pages', async () => {
    const before = (await list('?tag=paged')).checks.map((c) => c.id);
    const seen: string[] = [];
    const deletedUnseen = before.at(-3)!;
    const deletedSeen = before[1]!;
    let added: string | undefined;
    let res = await list('?tag=paged&limit=4');
    for (let n = 0; ; n++) {
      seen.push(...res.checks.map((c) => c.id));
      if (n === 1) {
        added = await create('Paged late', { tags: ['paged'] });
        expect((await svc.request('DELETE', `/v1/checks/${deletedUnseen}`)).statusCode).toBe(204);
        expect((await svc.request('DELETE', `/v1/checks/${deletedSeen}`)).statusCode).toBe(204);
      }
      const next = res.headers['x-next-id'];
      if (next === undefined) break;
      // The link names the same filters and limit with the cursor.
      expect(res.headers.link).toBe(
        `</v1/checks?limit=4&tag=paged&nextId=${encodeURIComponent(String(next))}>; rel="next"`,
      );
      res = await list(`?tag=paged&limit=4&nextId=${encodeURIComponent(String(next))}`);
      expect(n).toBeLessThan(20);
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...before.filter((id) => id !== deletedUnseen), added]);
  });

  it('refuses a cursor it did not answer, a cursor without limit and a cursor with a page, naming the field', async () => {
    for (const bad of ['nope', 'W10', Buffer.from('[1,""]').toString('base64url'), 'x'.repeat(300)]) {
      expectBadField(await svc.request('GET', `/v1/checks?limit=5&nextId=${bad}`), 'nextId', 'querystring');
    }
    const { headers } = await list('?tag=paged&limit=2');
    const next = encodeURIComponent(String(headers['x-next-id']));
    expectBadField(await svc.request('GET', `/v1/checks?nextId=${next}`), 'limit', 'querystring');
    expectBadField(
      await svc.request('GET', `/v1/checks?limit=2&page=2&nextId=${next}`),
      'page',
      'querystring',
    );
    expectBadField(await svc.request('GET', '/v1/checks?limit=101'), 'limit', 'querystring');
    expectBadField(await svc.request('GET', '/v1/checks?limit=0'), 'limit', 'querystring');
  });
});

describe('alertChannels views of a list', () => {
  it('shows each check its own activated channels, several checks sharing them', async () => {
    const channel = async (body: Record<string, unknown>) => {
      const res = await svc.request('POST', '/v1/alert-channels', body, 'B');
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    };
    const ops = await channel({ type: 'EMAIL', config: { address: 'ops@example.test' } });
    const dev = await channel({ type: 'EMAIL', config: { address: 'dev@example.test' } });
    const hook = await channel({
      type: 'WEBHOOK',
      config: {
        name: 'pager',
        url: 'https://hooks.example.test/in',
        headers: [
          { key: 'Authorization', value: 'Bearer secret' },
          { key: 'X-Team', value: 'ops' },
        ],
      },
    });
    const sub = (id: number, activated = true) => ({ alertChannelId: id, activated });
    const ids = [
      await create('chan a', { alertChannelSubscriptions: [sub(hook), sub(ops)] }, 'B'),
      await create('chan b', { alertChannelSubscriptions: [sub(dev), sub(ops)] }, 'B'),
      await create('chan c', { alertChannelSubscriptions: [sub(ops, false)] }, 'B'),
      await create('chan d', {}, 'B'),
    ];
    const email = (address: string) => ({ address });
    const webhook = {
      url: 'https://hooks.example.test/in',
      name: 'pager',
      method: 'POST',
      headers: [
        { key: 'Authorization', value: '*****', locked: false },
        { key: 'X-Team', value: 'ops', locked: false },
      ],
      queryParameters: [],
    };
    const views = [
      { email: [email('ops@example.test')], webhook: [webhook], slack: [], sms: [] },
      { email: [email('ops@example.test'), email('dev@example.test')], webhook: [], slack: [], sms: [] },
      { email: [], webhook: [], slack: [], sms: [] },
      { email: [], webhook: [], slack: [], sms: [] },
    ];
    const viewOf = new Map(ids.map((id, i) => [id, views[i]]));
    const listed = (await list('?search=chan', 'B')).checks;
    expect(listed.map((c) => c.id).sort()).toEqual([...ids].sort());
    for (const c of listed) expect(c.alertChannels).toEqual(viewOf.get(c.id));
    const second = (await list('?search=chan&limit=2&page=2', 'B')).checks;
    expect(second.map((c) => c.id)).toEqual(listed.slice(2).map((c) => c.id));
    for (const c of second) expect(c.alertChannels).toEqual(viewOf.get(c.id));
    // The same as each check's own answer.
    for (const [i, id] of ids.entries()) {
      expect((await svc.request('GET', `/v1/checks/${id}`, undefined, 'B')).json().alertChannels).toEqual(
        views[i],
      );
    }
    // A deleted channel leaves the views.
    expect((await svc.request('DELETE', `/v1/alert-channels/${ops}`, undefined, 'B')).statusCode).toBe(204);
    const after = new Map([
      [ids[0], { ...views[0], email: [] }],
      [ids[1], { ...views[1], email: [email('dev@example.test')] }],
      [ids[2], views[2]],
      [ids[3], views[3]],
    ]);
    for (const c of (await list('?search=chan&limit=4', 'B')).checks)
      expect(c.alertChannels).toEqual(after.get(c.id));
  });
});

describe('compressed answers', () => {
  const get = (url: string, headers: Record<string, string> = {}) =>
    svc.app.inject({ method: 'GET', url, headers: { ...svc.auth(), ...headers } });

  it('compresses JSON when asked (gzip, br), to the same JSON; not when not asked', async () => {
    const plain = await get('/v1/checks');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(1024);
    const json = plain.json();

    const gzip = await get('/v1/checks', { 'accept-encoding': 'gzip' });
    expect(gzip.statusCode).toBe(200);
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(String(gzip.headers.vary)).toMatch(/accept-encoding/i);
    expect(gzip.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
    expect(JSON.parse(gunzipSync(gzip.rawPayload).toString('utf8'))).toEqual(json);

    const br = await get('/v1/checks', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString('utf8'))).toEqual(json);

    expect(
      (await get('/v1/checks', { 'accept-encoding': 'identity' })).headers['content-encoding'],
    ).toBeUndefined();
    expect(
      (await get('/v1/checks', { 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding'],
    ).toBeUndefined();
  });

  it('leaves small answers and errors under 1 KiB as they are', async () => {
    const small = await get('/v1/checks?search=no-such-check', { 'accept-encoding': 'gzip' });
    expect(small.statusCode).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.json()).toEqual([]);
    const bad = await get('/v1/checks?limit=0', { 'accept-encoding': 'gzip' });
    expect(bad.headers['content-encoding']).toBeUndefined();
    expectBadField(bad, 'limit', 'querystring');
  });
});
