import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { build } from '../../../src/service/app.js';
import {
  createCheck,
  expectBadField,
  icmpBody,
  type TestService,
  testService,
} from '../../helpers/service.js';

// GET /v1/check-statuses pages with `limit` and `page` (Outpost), and answers again the bytes it made for an
// ETag while the ETag holds, also compressed; a change made through another replica on the same store is
// seen at once. Both stores (in-process and postgres projects).

let svc: TestService;
let closeOther: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeOther?.();
  closeOther = undefined;
  await svc?.close();
});

type Entry = { checkId: string; name: string };

async function get(url: string, headers: Record<string, string> = {}) {
  return svc.app.inject({ method: 'GET', url, headers: { ...svc.auth(), ...headers } });
}

async function entries(url: string): Promise<Entry[]> {
  const res = await get(url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Entry[];
}

/** Seven ICMP checks named so that their order by name is not their order of creation. */
async function sevenChecks(): Promise<string[]> {
  const ids: string[] = [];
  for (const name of ['g', 'c', 'e', 'a', 'f', 'b', 'd'])
    ids.push(await createCheck(svc, 'icmp', icmpBody({ name, activated: false })));
  return ids;
}

describe('GET /v1/check-statuses?limit=&page=', () => {
  it('answers pages of the list by name, which together are the whole list', async () => {
    svc = await testService();
    await sevenChecks();
    const whole = await entries('/v1/check-statuses');
    expect(whole.map((e) => e.name)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    const pages = [
      await entries('/v1/check-statuses?limit=3'),
      await entries('/v1/check-statuses?limit=3&page=2'),
      await entries('/v1/check-statuses?limit=3&page=3'),
    ];
    expect(pages.map((p) => p.map((e) => e.name))).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
    expect(pages.flat()).toEqual(whole);
    expect(await entries('/v1/check-statuses?limit=3&page=4')).toEqual([]);
    expect(await entries('/v1/check-statuses?limit=1000')).toEqual(whole);
  });

  it('pages the checks `checkId` names', async () => {
    svc = await testService();
    const ids = await sevenChecks();
    // g, e, f, d by name: d, e, f, g.
    const named = `checkId=${ids[0]},${ids[2]},${ids[4]},${ids[6]}`;
    expect((await entries(`/v1/check-statuses?${named}&limit=2&page=2`)).map((e) => e.name)).toEqual([
      'f',
      'g',
    ]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=2.5', 'limit'],
    ['limit=10&page=0', 'page'],
    ['limit=10&page=x', 'page'],
    ['page=2', 'limit'],
  ])('answers 400 naming the field to %s', async (query, field) => {
    svc = await testService();
    expectBadField(await get(`/v1/check-statuses?${query}`), field, 'querystring');
  });
});

describe('GET /v1/check-statuses, the answer kept for its ETag', () => {
  it('answers the same bytes again, plain, gzip and brotli alike, and negotiates as the compression plugin does', async () => {
    svc = await testService();
    for (let i = 0; i < 20; i++)
      await createCheck(svc, 'icmp', icmpBody({ name: `check ${i}`, activated: false }));
    const plain = await get('/v1/check-statuses');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect((await get('/v1/check-statuses')).body).toBe(plain.body);

    for (const [accept, encoding] of [
      ['gzip', 'gzip'],
      ['gzip, deflate, br, zstd', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['*', 'gzip'],
      ['x-gzip', 'gzip'],
    ] as const) {
      for (let twice = 0; twice < 2; twice++) {
        const res = await get('/v1/check-statuses', { 'accept-encoding': accept });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-encoding'], accept).toBe(encoding);
        expect(res.headers.vary).toContain('accept-encoding');
        expect(res.headers.etag).toBe(plain.headers.etag);
        const decoded = encoding === 'br' ? brotliDecompressSync(res.rawPayload) : gunzipSync(res.rawPayload);
        expect(decoded.toString()).toBe(plain.body);
      }
    }
    for (const headers of [
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'gzip', 'x-no-compression': '1' },
    ]) {
      const res = await get('/v1/check-statuses', headers);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body).toBe(plain.body);
    }
  });

  it('answers a change made through another replica on the same store at once', async () => {
    svc = await testService();
    const id = await createCheck(svc, 'icmp', icmpBody({ name: 'before', activated: false }));
    const other = await build({ db: svc.context.db, log: pino({ level: 'silent' }) });
    closeOther = () => other.close();
    const first = await entries('/v1/check-statuses');
    expect(first.map((e) => e.name)).toEqual(['before']);
    expect(await entries('/v1/check-statuses?limit=5')).toEqual(first);

    await new Promise((resolve) => setTimeout(resolve, 5));
    const renamed = await other.app.inject({
      method: 'PUT',
      url: `/v1/checks/${id}`,
      headers: svc.auth(),
      payload: icmpBody({ name: 'after', activated: false }),
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect((await entries('/v1/check-statuses')).map((e) => e.name)).toEqual(['after']);
    expect((await entries('/v1/check-statuses?limit=5')).map((e) => e.name)).toEqual(['after']);

    const added = await other.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: svc.auth(),
      payload: icmpBody({ name: 'added', activated: false }),
    });
    expect(added.statusCode, added.body).toBe(201);
    expect((await entries('/v1/check-statuses')).map((e) => e.name)).toEqual(['added', 'after']);
  });
});
