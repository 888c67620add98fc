import type { CheckResult, Job } from '../../../src/protocol/index.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCheck, icmpBody, resultFor, type TestService, testService } from '../../helpers/service.js';

// The lists the web app polls answer an ETag and 304 to an If-None-Match naming it (docs/api.md, "Conditional
// requests"); without If-None-Match, the answers are today's. Both stores (in-process and postgres projects).

const HOUR = 3_600_000;

let svc: TestService;
afterEach(async () => {
  vi.useRealTimers();
  await svc?.close();
});

type Answer = { status: number; etag: string; body: string };

async function get(url: string, account: 'A' | 'B' = 'A', ifNoneMatch?: string): Promise<Answer> {
  const res = await svc.app.inject({
    method: 'GET',
    url,
    headers: { ...svc.auth(account), ...(ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {}) },
  });
  expect([200, 304], res.body).toContain(res.statusCode);
  return { status: res.statusCode, etag: String(res.headers.etag), body: res.body };
}

/** Asks `url` again with `etag`: 304 with no body when it still holds, else 200 with a new tag. */
async function again(url: string, etag: string, account: 'A' | 'B' = 'A'): Promise<Answer> {
  const res = await get(url, account, etag);
  if (res.status === 304) {
    expect(res.body).toBe('');
    expect(res.etag).toBe(etag);
  } else expect(res.etag).not.toBe(etag);
  return res;
}

function icmpCheck(name: string): Promise<string> {
  return createCheck(svc, 'icmp', icmpBody({ name, activated: false }));
}

/** A FINAL result of `checkId` stored as the service stores its own, started at `startedAtMs`. */
async function storeFinal(checkId: string, startedAtMs: number, responseTime = 20): Promise<void> {
  const job = { runLocation: 'eu-west-1', attempt: 1 } as Job;
  const result: CheckResult = resultFor(job, 'PASSED', {
    status: 'PASSED',
    responseTime,
    startedAt: new Date(startedAtMs).toISOString(),
    stoppedAt: new Date(startedAtMs + responseTime).toISOString(),
  });
  await svc.queue.results.storeServiceResult({
    accountId: svc.accountA.id,
    checkId,
    nowMs: Date.now(),
    result,
  });
}

describe.each(['/v1/check-statuses', '/v1/checks'])('conditional GET %s', (url) => {
  it('answers an ETag, 304 without a body to a matching If-None-Match, and the same 200 without one', async () => {
    svc = await testService();
    await icmpCheck('one');
    const first = await get(url);
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^W\/"[\w-]{22}"$/);
    const plain = await get(url);
    expect(plain).toEqual(first);
    expect((await get(url, 'A', first.etag)).status).toBe(304);
    expect((await get(url, 'A', `"other", ${first.etag}`)).status).toBe(304);
    expect((await get(url, 'A', first.etag.slice(2))).status).toBe(304);
    expect((await get(url, 'A', '*')).status).toBe(304);
    expect((await get(url, 'A', 'W/"stale"')).status).toBe(200);
  });

  it('changes when a check is created, updated or deleted; a stale tag gets 200 with the new body', async () => {
    svc = await testService();
    const id = await icmpCheck('one');
    let { etag } = await get(url);

    await icmpCheck('two');
    let next = await again(url, etag);
    expect(next.status).toBe(200);
    expect(next.body).toContain('"two"');
    etag = next.etag;
    expect((await again(url, etag)).status).toBe(304);

    const res = await svc.request('PUT', `/v1/checks/${id}`, { name: 'renamed' });
    expect(res.statusCode, res.body).toBe(200);
    next = await again(url, etag);
    expect(next.status).toBe(200);
    expect(next.body).toContain('"renamed"');
    etag = next.etag;

    expect((await svc.request('DELETE', `/v1/checks/${id}`)).statusCode).toBe(204);
    next = await again(url, etag);
    expect(next.status).toBe(200);
    expect(next.body).not.toContain('"renamed"');
    expect((await again(url, next.etag)).status).toBe(304);
  });

  it('differs between accounts and query strings', async () => {
    svc = await testService();
    await icmpCheck('one');
    const a = await get(url);
    const b = await get(url, 'B');
    expect(b.etag).not.toBe(a.etag);
    expect((await get(url, 'B', a.etag)).status).toBe(200);
    const query = url === '/v1/checks' ? '?limit=10' : `?checkId=${JSON.parse(a.body)[0].checkId ?? ''}`;
    const filtered = await get(`${url}${query}`);
    expect(filtered.etag).not.toBe(a.etag);
    expect((await get(`${url}${query}`, 'A', a.etag)).status).toBe(200);
  });
});

describe('conditional GET /v1/check-statuses and results', () => {
  it('changes after a new result, an older result (its hour only) and when the hour turns', async () => {
    svc = await testService();
    const url = '/v1/check-statuses';
    const id = await icmpCheck('one');
    const now = Date.now();
    let { etag } = await get(url);

    await storeFinal(id, now - 1000, 20);
    let next = await again(url, etag);
    expect(next.status).toBe(200);
    expect(JSON.parse(next.body)[0].responseTimeAvg24h).toBe(20);
    etag = next.etag;
    expect((await again(url, etag)).status).toBe(304);

    // Older than the stored one: the last result stays, the hourly figures move.
    await storeFinal(id, now - 2 * HOUR, 40);
    next = await again(url, etag);
    expect(next.status).toBe(200);
    expect(JSON.parse(next.body)[0].responseTimeAvg24h).toBe(30);
    etag = next.etag;

    // The clock of the routes (Date) moves to the next hour: the buckets shift, so the tag changes.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Math.floor(now / HOUR) * HOUR + HOUR + 60_000);
    next = await again(url, etag);
    expect(next.status).toBe(200);
    expect((await again(url, next.etag)).status).toBe(304);
  });
});
