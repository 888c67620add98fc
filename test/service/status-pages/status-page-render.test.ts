import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult, Job } from '../../../src/protocol/index.js';
import { AlertQueries } from '../../../src/service/alerting/store.js';
import { findPageByUrl } from '../../../src/service/status-pages/public/page-queries.js';
import { LruMap, VersionedCache } from '../../../src/service/status-pages/public/cache.js';
import { buildPageModel, PageReader } from '../../../src/service/status-pages/public/page-reader.js';
import { DAY_MS, utcDayStart } from '../../../src/service/status-pages/public/uptime.js';
import { pageViewCaches, renderView } from '../../../src/service/status-pages/public/page-routes.js';
import { escapeHtml } from '../../../src/common/html.js';
import { renderStatusPage } from '../../../src/service/status-pages/public/render.js';
import type { PublicPage, StatusPageModel } from '../../../src/service/status-pages/public/types.js';
import { THEME_COLOR_FIELDS } from '../../../src/service/status-pages/admin/schema.js';
import {
  claimJobs,
  createCheck,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';
import { backdateServices, seedStatusPage } from '../../helpers/status-pages.js';

const HOUR = 3_600_000;
const AGENT = randomUUID();

let svc: TestService;
beforeAll(async () => {
  // The operator's allow-list makes the custom domain active without a TXT record.
  svc = await testService({ customDomains: { allowList: ['.render-test.example'] } });
});
afterAll(async () => svc.close());

let seq = 0;
const freshUrl = () => `render-${++seq}`;

async function service(name: string, backdate = true): Promise<string> {
  const res = await svc.request('POST', '/v1/status-pages/services', { name });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().id as string;
  if (backdate) await backdateServices(svc.context.db, [id], Date.now() - 100 * DAY_MS);
  return id;
}

async function page(cards: { name: string; services: string[] }[], over: Record<string, unknown> = {}) {
  const url = freshUrl();
  const res = await svc.request('POST', '/v1/status-pages', {
    name: 'Acme status',
    url,
    description: 'How Acme is doing.',
    cards: cards.map((c) => ({ name: c.name, services: c.services.map((id) => ({ id })) })),
    ...over,
  });
  expect(res.statusCode, res.body).toBe(201);
  return { url, id: res.json().id as string };
}

async function incident(body: Record<string, unknown>): Promise<string> {
  const res = await svc.request('POST', '/v1/incidents', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const get = (url: string, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url, headers });

async function modelOf(url: string, nowMs = Date.now()): Promise<StatusPageModel> {
  const found = (await findPageByUrl(svc.context.db, url)) as PublicPage;
  return buildPageModel(svc.context.db, found, nowMs);
}

function serviceOf(model: StatusPageModel, id: string) {
  const s = model.cards.flatMap((c) => c.services).find((x) => x.id === id);
  expect(s).toBeDefined();
  return s!;
}

/** One run of a check: a session, its jobs claimed, each location's result. */
async function run(checkId: string, outcome: 'PASSED' | 'FAILED' | 'DEGRADED'): Promise<void> {
  await triggerCheck(svc, checkId);
  const jobs = (await claimJobs(svc, AGENT)).filter((j: Job) => j.check.id === checkId);
  expect(jobs.length).toBeGreaterThan(0);
  for (const job of jobs) {
    const result: CheckResult = resultFor(job, outcome === 'FAILED' ? 'FAILED' : 'PASSED', {
      isDegraded: outcome === 'DEGRADED',
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': AGENT },
      payload: result,
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}

const trigger = (serviceId: string, severity: string) => ({
  serviceId,
  severity,
  name: 'Shop is down',
  description: 'We are looking into it.',
  notifySubscribers: false,
});

describe('service states', () => {
  it('an open incident of each impact sets its services; resolved ones and future ones do not', async () => {
    const [major, minor, maint, ok, later] = await Promise.all(
      ['Major', 'Minor', 'Maint', 'Fine', 'Later'].map((n) => service(n)),
    );
    const { url } = await page([{ name: 'Core', services: [major!, minor!, maint!, ok!, later!] }]);
    const now = Date.now();
    await incident({ name: 'm', impact: 'MAJOR', services: [{ id: major }], startedAt: iso(now - HOUR) });
    await incident({ name: 'p', impact: 'MINOR', services: [{ id: minor }, { id: major }] });
    await incident({ name: 'w', impact: 'MAINTENANCE', services: [{ id: maint }] });
    await incident({
      name: 'past',
      impact: 'MAJOR',
      services: [{ id: ok }],
      startedAt: iso(now - 3 * HOUR),
      stoppedAt: iso(now - 2 * HOUR),
    });
    await incident({
      name: 'resolved by update',
      impact: 'MAJOR',
      services: [{ id: ok }],
      incidentUpdates: [{ status: 'RESOLVED', description: 'Fixed.' }],
    });
    await incident({
      name: 'scheduled',
      impact: 'MAINTENANCE',
      services: [{ id: later }],
      startedAt: iso(now + 5 * HOUR),
      stoppedAt: iso(now + 6 * HOUR),
    });
    const model = await modelOf(url);
    expect(serviceOf(model, major!).state).toBe('major_outage');
    expect(serviceOf(model, minor!).state).toBe('partial_outage');
    expect(serviceOf(model, maint!).state).toBe('under_maintenance');
    expect(serviceOf(model, ok!).state).toBe('operational');
    expect(serviceOf(model, later!).state).toBe('operational');
    expect(model.overall).toBe('major_outage');
    expect(model.activeIncidents.map((i) => i.name).sort()).toEqual(['m', 'p', 'scheduled', 'w']);
    expect(model.incidents).toHaveLength(6);

    const html = (await get(`/status/${url}`)).body;
    expect(html).toMatch(
      /role="status" class="banner s-major_outage"><span aria-hidden="true">✕<\/span><span>Major outage/,
    );
    expect(html).toContain('Under maintenance</span>');
    expect(html).toContain('Partial outage</span>');
    expect(html).toContain('<h2 id="active">Active incidents</h2>');
  });

  it('a failing check whose triggerIncident names the service sets it, from its alert state too; degraded and muted checks', async () => {
    const [shop, slow, quiet] = await Promise.all(['Shop', 'Slow', 'Quiet'].map((n) => service(n)));
    const { url } = await page([{ name: 'Checks', services: [shop!, slow!, quiet!] }]);
    const body = (name: string, serviceId: string, severity: string, over: Record<string, unknown> = {}) => ({
      name,
      activated: true,
      frequency: 1440,
      request: { url: 'https://shop.example.test/', assertions: [] },
      triggerIncident: trigger(serviceId, severity),
      ...over,
    });
    const failing = await createCheck(svc, 'url', body('shop', shop!, 'CRITICAL'));
    const degraded = await createCheck(svc, 'url', body('slow', slow!, 'MAJOR'));
    const muted = await createCheck(svc, 'url', body('quiet', quiet!, 'MAJOR', { muted: true }));
    expect((await modelOf(url)).overall).toBe('operational');

    await run(failing, 'FAILED');
    await run(degraded, 'DEGRADED');
    await run(muted, 'FAILED');
    let model = await modelOf(url);
    expect(serviceOf(model, shop!).state).toBe('major_outage');
    expect(serviceOf(model, slow!).state).toBe('degraded_performance');
    expect(serviceOf(model, quiet!).state).toBe('operational');

    // Without the incident the trigger opened, the check's alert state still says it is failing.
    const opened = model.activeIncidents.filter((i) => i.serviceIds.includes(shop!));
    expect(opened).toHaveLength(1);
    expect((await svc.request('DELETE', `/v1/incidents/${opened[0]!.id}`)).statusCode).toBe(204);
    model = await modelOf(url);
    expect(model.activeIncidents.some((i) => i.serviceIds.includes(shop!))).toBe(false);
    expect(serviceOf(model, shop!).state).toBe('major_outage');

    // A MINOR trigger's failing state is a partial outage; pausing the check takes it out.
    const store = new AlertQueries(svc.context.db);
    const state = (await store.checkWithState<{ episode: object }>(svc.accountA.id, failing))!.state!;
    const minorCheck = await createCheck(svc, 'url', body('minor', slow!, 'MINOR'));
    await store.saveAlertState(svc.accountA.id, minorCheck, state, Date.now());
    model = await modelOf(url);
    expect(serviceOf(model, slow!).state).toBe('partial_outage');
    const put = await svc.request(
      'PUT',
      `/v1/checks/${failing}`,
      body('shop', shop!, 'CRITICAL', { activated: false, heartbeat: {}, script: '' }),
    );
    expect(put.statusCode, put.body).toBe(200);
    expect(serviceOf(await modelOf(url), shop!).state).toBe('operational');
    // A passing run closes the degraded episode.
    await run(degraded, 'PASSED');
    expect(serviceOf(await modelOf(url), slow!).state).toBe('partial_outage');
  });
});

describe('the 90-day strip (UPTIME_RULE)', () => {
  it('hand-computed days: MAJOR 6 h → 75 %, MINOR 10 h → 87.5 %, maintenance left out, MAJOR+MINOR overlap counted once', async () => {
    const [a, b, c, d, young] = await Promise.all(['A', 'B', 'C', 'D', 'E'].map((n) => service(n)));
    const { url } = await page([{ name: 'Strip', services: [a!, b!, c!, d!, young!] }]);
    const now = Date.now();
    const day = utcDayStart(now) - 3 * DAY_MS;
    const at = (h: number) => iso(day + h * HOUR);
    await incident({
      name: 'a',
      impact: 'MAJOR',
      services: [{ id: a }],
      startedAt: at(6),
      stoppedAt: at(12),
    });
    await incident({
      name: 'b',
      impact: 'MINOR',
      services: [{ id: b }],
      startedAt: at(2),
      stoppedAt: at(12),
    });
    // 12 h of maintenance, then 6 h MAJOR: 6 h down of 12 h counted → 50 %.
    await incident({
      name: 'c1',
      impact: 'MAINTENANCE',
      services: [{ id: c }],
      startedAt: at(0),
      stoppedAt: at(12),
    });
    await incident({
      name: 'c2',
      impact: 'MAJOR',
      services: [{ id: c }],
      startedAt: at(12),
      stoppedAt: at(18),
    });
    // MAJOR 0–6 h and MINOR 3–13 h: 6 h + 0.3 × 7 h = 8.1 h down → 66.25 %.
    await incident({
      name: 'd1',
      impact: 'MAJOR',
      services: [{ id: d }],
      startedAt: at(0),
      stoppedAt: at(6),
    });
    await incident({
      name: 'd2',
      impact: 'MINOR',
      services: [{ id: d }],
      startedAt: at(3),
      stoppedAt: at(13),
    });
    // A MAJOR incident across midnight: 22 h → 02 h next day: 2 h each side.
    await incident({
      name: 'a2',
      impact: 'MAJOR',
      services: [{ id: a }],
      startedAt: at(46),
      stoppedAt: at(50),
    });
    await backdateServices(svc.context.db, [young!], utcDayStart(now) - 1 * DAY_MS + 12 * HOUR);

    const model = await modelOf(url, now);
    const date = iso(day).slice(0, 10);
    const dayOf = (id: string, d0 = date) => serviceOf(model, id).uptime.find((u) => u.date === d0)!;
    for (const id of [a, b, c, d]) {
      const strip = serviceOf(model, id!).uptime;
      expect(strip).toHaveLength(90);
      expect(strip[89]!.date).toBe(iso(now).slice(0, 10));
    }
    expect(dayOf(a!)).toEqual({
      date,
      uptimePercent: 75,
      incidentCount: 1,
      worstImpact: 'MAJOR',
      runs: null,
    });
    expect(dayOf(b!)).toEqual({
      date,
      uptimePercent: 87.5,
      incidentCount: 1,
      worstImpact: 'MINOR',
      runs: null,
    });
    expect(dayOf(c!)).toEqual({
      date,
      uptimePercent: 50,
      incidentCount: 2,
      worstImpact: 'MAJOR',
      runs: null,
    });
    expect(dayOf(d!)).toEqual({
      date,
      uptimePercent: 66.25,
      incidentCount: 2,
      worstImpact: 'MAJOR',
      runs: null,
    });
    const d1 = iso(day + DAY_MS).slice(0, 10);
    const d2 = iso(day + 2 * DAY_MS).slice(0, 10);
    expect(dayOf(a!, d1)).toMatchObject({ incidentCount: 1, uptimePercent: round2(100 * (1 - 2 / 24)) });
    expect(dayOf(a!, d2)).toMatchObject({ incidentCount: 1, uptimePercent: round2(100 * (1 - 2 / 24)) });
    expect(dayOf(b!, d1)).toEqual({
      date: d1,
      uptimePercent: 100,
      incidentCount: 0,
      worstImpact: null,
      runs: null,
    });
    // 90-day figure of B: 3 h down (0.3 × 10 h) over the 89 whole days and today so far.
    const elapsedToday = now - utcDayStart(now);
    expect(serviceOf(model, b!).uptimePercent90d).toBe(
      round2(100 * (1 - (3 * HOUR) / (89 * DAY_MS + elapsedToday))),
    );
    // Days before a service existed have no data; the day it was created counts from its creation.
    const youngStrip = serviceOf(model, young!).uptime;
    expect(youngStrip.slice(0, 88).every((u) => u.uptimePercent === null)).toBe(true);
    expect(youngStrip[88]!.uptimePercent).toBe(100);

    const html = (await get(`/status/${url}`)).body;
    const shortDate = new Date(day).toLocaleString('en-US', {
      month: 'short',
      day: 'numeric',
      timeZone: 'UTC',
    });
    expect(html).toContain(
      `<li tabindex="0" class="x"><span>${shortDate}: 75.00 % uptime, 1 incident (major outage)</span></li>`,
    );
    expect(html).toContain(
      `<li tabindex="0" class="p"><span>${shortDate}: 87.50 % uptime, 1 incident (partial outage)</span></li>`,
    );
    expect(html).toContain(
      `<li tabindex="0" class="x"><span>${shortDate}: 66.25 % uptime, 2 incidents (major outage)</span></li>`,
    );
    expect(html).toMatch(/: no data<\/span><\/li>/);
    expect(html.match(/<li tabindex="0"/g)).toHaveLength(5 * 90);
  });
});

const round2 = (n: number) => Math.round(n * 100) / 100;

describe('history and incident pages', () => {
  it('history groups the last 90 days by month and links each incident; the incident page shows every update, older ones too', async () => {
    const [api, db] = await Promise.all([service('API'), service('Database')]);
    const { url } = await page([{ name: 'Core', services: [api!, db!] }]);
    const other = await page([{ name: 'Other', services: [await service('Elsewhere')] }]);
    const now = Date.now();
    const id = await incident({
      name: 'Slow API',
      impact: 'MINOR',
      services: [{ id: api }, { id: db }],
      startedAt: iso(now - 40 * DAY_MS),
      incidentUpdates: [
        {
          status: 'INVESTIGATING',
          description: 'Looking.',
          publicIncidentUpdateDate: iso(now - 40 * DAY_MS),
        },
        {
          status: 'IDENTIFIED',
          description: 'Found it.',
          publicIncidentUpdateDate: iso(now - 40 * DAY_MS + HOUR),
        },
      ],
    });
    const add = await svc.request('POST', `/v1/incidents/${id}/updates`, {
      status: 'RESOLVED',
      description: 'All good.\nSecond line.',
      publicIncidentUpdateDate: iso(now - 40 * DAY_MS + 2 * HOUR),
    });
    expect(add.statusCode, add.body).toBe(201);
    const old = await incident({
      name: 'Ancient',
      impact: 'MAJOR',
      services: [{ id: api }],
      startedAt: iso(now - 120 * DAY_MS),
      stoppedAt: iso(now - 119 * DAY_MS),
    });

    const history = await get(`/status/${url}/history`);
    expect(history.statusCode).toBe(200);
    const month = new Date(now - 40 * DAY_MS).toLocaleString('en-US', {
      month: 'long',
      year: 'numeric',
      timeZone: 'UTC',
    });
    expect(history.body).toContain(`>${month}</h2>`);
    expect(history.body).toContain(`<a href="/status/${url}/incidents/${id}">Slow API</a>`);
    expect(history.body).not.toContain('Ancient');
    expect(history.body).toContain('No incidents reported this month.');
    expect(history.body.match(/<h1>/g)).toHaveLength(1);

    const detail = await get(`/status/${url}/incidents/${id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('<h1>Slow API</h1>');
    expect(detail.body).toContain('<li>API</li><li>Database</li>');
    const order = ['Resolved', 'Identified', 'Investigating'].map((w) =>
      detail.body.indexOf(`<strong>${w}</strong>`),
    );
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    expect(detail.body).toContain('<p>All good.\nSecond line.</p>');
    expect(detail.body).toContain('<strong>Resolved</strong> · Partial outage');

    const notFound = await get(`/status/${freshUrl()}`);
    expect(notFound.statusCode).toBe(404);
    // An incident resolved before the 90 days is no longer listed, but its page stays: feed items and
    // subscriber mail link to it.
    const ancient = await get(`/status/${url}/incidents/${old}`);
    expect(ancient.statusCode).toBe(200);
    expect(ancient.body).toContain('<h1>Ancient</h1>');
    for (const path of [`/status/${other.url}/incidents/${id}`, `/status/${url}/incidents/${randomUUID()}`]) {
      const res = await get(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.body).toBe(notFound.body);
      expect(res.headers.etag).toBeUndefined();
    }
  });

  it('a private page answers the same 404 bytes as an unknown one', async () => {
    const { url } = await page([{ name: 'Core', services: [await service('Hidden')] }], { isPrivate: true });
    const res = await get(`/status/${url}`);
    const unknown = await get(`/status/${freshUrl()}`);
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe(unknown.body);
    expect(res.headers['cache-control']).toBe(unknown.headers['cache-control']);
    expect((await get(`/status/${url}/history`)).body).toBe(unknown.body);
  });
});

describe('private pages and custom domains', () => {
  it("a key holder (the key form's cookie) sees a private page, not cached by others; feed links carry the token", async () => {
    // The key in clear is shown once, in the answer of the create.
    const made = await svc.request('POST', '/v1/status-pages', {
      name: 'Private one',
      url: freshUrl(),
      cards: [{ name: 'Core', services: [{ id: await service('Vault') }] }],
      isPrivate: true,
    });
    expect(made.statusCode, made.body).toBe(201);
    const privateUrl = made.json().url as string;
    const key = (made.json().keys as { key?: string }[]).find((k) => typeof k.key === 'string')?.key;
    expect(key).toBeDefined();
    const form = await svc.app.inject({
      method: 'POST',
      url: `/status/${privateUrl}/access`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ key: key! }).toString(),
    });
    expect(form.statusCode, form.body).toBe(303);
    const cookie = String(form.headers['set-cookie']).split(';')[0]!;
    const seen = await get(`/status/${privateUrl}`, { cookie });
    expect(seen.statusCode).toBe(200);
    expect(seen.headers['cache-control']).toBe('private, no-store');
    expect(seen.headers.vary).toBe('Accept-Encoding, Cookie');
    expect(seen.body).toContain('<h1>Private one</h1>');
    expect(seen.body).toMatch(new RegExp(`href="/status/${privateUrl}/feed\\.atom\\?token=[^"]+"`));
    const history = await get(`/status/${privateUrl}/history`, { cookie });
    expect(history.statusCode).toBe(200);
    expect(history.headers['cache-control']).toBe('private, no-store');
    // Without the cookie: the shared 404, even right after a key holder's request filled the cache.
    const unknown = await get(`/status/${freshUrl()}`);
    const without = await get(`/status/${privateUrl}`);
    expect(without.statusCode).toBe(404);
    expect(without.body).toBe(unknown.body);
  });

  it("on its custom domain the page's links have no /status/{url} prefix", async () => {
    const s = await service('Edge');
    const { url } = await page([{ name: 'Core', services: [s] }], {
      customDomain: 'status.render-test.example',
    });
    const id = await incident({ name: 'Edge hiccup', services: [{ id: s }] });
    const host = { host: 'status.render-test.example' };
    const res = await get('/', host);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('<a href="/history"');
    expect(res.body).toContain(`<a href="/incidents/${id}">Edge hiccup</a>`);
    expect(res.body).toContain('href="/feed.atom"');
    expect(res.body).not.toContain(`/status/${url}`);
    const detail = await get(`/incidents/${id}`, host);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('<a href="/">← Acme status</a>');
    // The same page at /status/{url} keeps the prefix, and its rendering is cached apart.
    expect((await get(`/status/${url}`)).body).toContain(`<a href="/status/${url}/history"`);
  });
});

describe('escaping', () => {
  it('user text appears escaped in every view', async () => {
    const evil = '<script>alert(1)</script>';
    const quotes = `"'&`;
    const s1 = await service(evil);
    const s2 = await service(quotes);
    const { url } = await page([{ name: `${evil}${quotes}`, services: [s1!, s2!] }], {
      name: `${evil} ${quotes}`,
      description: `${evil} ${quotes}`,
      logo: "https://example.test/logo.png?a=1&b='2'",
      redirectTo: "https://example.test/?x='y'&z=1",
    });
    const id = await incident({
      name: `${evil}${quotes}`,
      services: [{ id: s1 }, { id: s2 }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: `${evil}${quotes}` }],
    });
    for (const path of ['', '/history', `/incidents/${id}`]) {
      const html = (await get(`/status/${url}${path}`)).body;
      expect(html, path).not.toContain('<script>');
      expect(html, path).not.toContain(`"'&`);
      expect(html, path).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html, path).toContain('&quot;&#39;&amp;');
    }
    const html = (await get(`/status/${url}`)).body;
    expect(html).toContain(
      '<img src="https://example.test/logo.png?a=1&amp;b=&#39;2&#39;" alt="&lt;script&gt;alert(1)&lt;/script&gt; &quot;&#39;&amp; logo">',
    );
    expect(html).toContain('<a href="https://example.test/?x=&#39;y&#39;&amp;z=1"><img');
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

describe('headers, ETag and the cache', () => {
  it('ETag and 304, the same bytes until an incident update changes the version, HEAD, security headers', async () => {
    const s = await service('Cached');
    const { url } = await page([{ name: 'Core', services: [s] }]);
    const id = await incident({
      name: 'Flaky',
      services: [{ id: s }],
      startedAt: iso(Date.now() - DAY_MS),
      stoppedAt: iso(Date.now() - DAY_MS + HOUR),
    });
    const first = await get(`/status/${url}`);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(first.headers['cache-control']).toBe('public, max-age=30, stale-while-revalidate=60');
    expect(first.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(first.headers['x-content-type-options']).toBe('nosniff');
    expect(first.headers['referrer-policy']).toBe('no-referrer');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const again = await get(`/status/${url}`);
    expect(again.body).toBe(first.body);
    expect(again.headers.etag).toBe(etag);
    const notModified = await get(`/status/${url}`, { 'if-none-match': etag });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers.etag).toBe(etag);
    expect((await get(`/status/${url}`, { 'if-none-match': '"other"' })).statusCode).toBe(200);

    const head = await svc.app.inject({ method: 'HEAD', url: `/status/${url}` });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(etag);
    for (const path of ['/history', `/incidents/${id}`]) {
      const h = await svc.app.inject({ method: 'HEAD', url: `/status/${url}${path}` });
      expect(h.statusCode, path).toBe(200);
      expect(h.headers.etag, path).toBeDefined();
    }
    expect((await svc.app.inject({ method: 'HEAD', url: `/status/${freshUrl()}` })).statusCode).toBe(404);

    const history = await get(`/status/${url}/history`);
    expect(history.headers.etag).not.toBe(etag);

    // Gzipped for clients that take it: the same bytes, its own strong ETag; either ETag is up to date.
    const zipped = await svc.app.inject({
      method: 'GET',
      url: `/status/${url}`,
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(zipped.rawPayload).toString('utf8')).toBe(first.body);
    expect(zipped.headers.etag).toBe(etag.replace(/"$/, '-gz"'));
    const refused = await get(`/status/${url}`, { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body).toBe(first.body);
    for (const tag of [etag, zipped.headers.etag as string]) {
      expect(
        (await get(`/status/${url}`, { 'if-none-match': tag, 'accept-encoding': 'gzip' })).statusCode,
      ).toBe(304);
    }

    const update = await svc.request('POST', `/v1/incidents/${id}/updates`, {
      status: 'MONITORING',
      description: 'Watching it closely.',
    });
    expect(update.statusCode).toBe(201);
    const changed = await get(`/status/${url}`, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect((await get(`/status/${url}/incidents/${id}`)).body).toContain('Watching it closely.');
    // Renaming a service changes the page too.
    await svc.request('PUT', `/v1/status-pages/services/${s}`, { name: 'Renamed' });
    expect((await get(`/status/${url}`)).body).toContain('<h3>Renamed</h3>');
  });

  it('renders once per version: the next requests are served from the cache until an incident update', async () => {
    const s = await service('Counted');
    const { url } = await page([{ name: 'Core', services: [s] }]);
    const id = await incident({
      name: 'Blip',
      services: [{ id: s }],
      startedAt: iso(Date.now() - DAY_MS),
      stoppedAt: iso(Date.now() - DAY_MS + HOUR),
    });
    const found = (await findPageByUrl(svc.context.db, url))!;
    let renders = 0;
    const render = (model: StatusPageModel) => {
      renders++;
      return `<p>${model.incidents.map((i) => i.updates.length).join(',')}</p>`;
    };
    const links = { basePath: `/status/${url}`, feedQuery: '' };
    const caches = pageViewCaches(new PageReader(svc.context.db));
    const view = async () => (await renderView(caches, found, 'counted', links, Date.now(), render))!;
    const a = await view();
    const b = await view();
    expect(renders).toBe(1);
    expect(b.body).toBe(a.body);
    expect(b.etag).toBe(a.etag);
    await svc.request('POST', `/v1/incidents/${id}/updates`, { status: 'RESOLVED', description: 'Done.' });
    const c = await view();
    expect(renders).toBe(2);
    expect(c.body.toString()).toBe('<p>1</p>');
    expect(c.etag).not.toBe(a.etag);
    // Another base path (a custom domain) is another rendering.
    await renderView(caches, found, 'counted', { ...links, basePath: '' }, Date.now(), render);
    expect(renders).toBe(3);
  });

  it('the caches are bounded (least recently used out) and make a value once for concurrent requests', async () => {
    const lru = new LruMap<number, number>(200);
    for (let i = 0; i < 250; i++) lru.set(i, i);
    expect(lru.size).toBe(200);
    expect(lru.get(0)).toBeUndefined();
    expect(lru.get(50)).toBe(50);
    lru.set(999, 999);
    expect(lru.get(50)).toBe(50);
    expect(lru.get(51)).toBeUndefined();

    const cache = new VersionedCache<string>(2);
    let made = 0;
    const make = async () => {
      made++;
      await new Promise((r) => setTimeout(r, 5));
      return { value: `v${made}`, freshUntilMs: 1_000 };
    };
    const [x, y] = await Promise.all([cache.get('k', 'v1', 0, make), cache.get('k', 'v1', 0, make)]);
    expect(made).toBe(1);
    expect(x.value).toBe(y.value);
    expect((await cache.get('k', 'v1', 999, make)).value).toBe('v1');
    expect((await cache.get('k', 'v1', 1_000, make)).value).toBe('v2');
    expect((await cache.get('k', 'v2', 0, make)).value).toBe('v3');
    await cache.get('a', 'v', 0, make);
    await cache.get('b', 'v', 0, make);
    expect(cache.size).toBe(2);
  });

  it('themes: LIGHT, DARK and AUTO produce their CSS; owner colours are used as set', async () => {
    const s = await service('Themed');
    const theme = (color: string) => Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, color]));
    const css = async (defaultTheme: string) => {
      const { url } = await page([{ name: 'Core', services: [s] }], {
        defaultTheme,
        themeColors: { light: theme('#ABCDEF'), dark: theme('#123456') },
      });
      const html = (await get(`/status/${url}`)).body;
      return html.slice(html.indexOf('<style>'), html.indexOf('</style>'));
    };
    const light = await css('LIGHT');
    expect(light).toContain(':root{color-scheme:light;--bg:#ABCDEF');
    expect(light).not.toContain('#123456');
    expect(light).not.toContain('prefers-color-scheme');
    const dark = await css('DARK');
    expect(dark).toContain(':root{color-scheme:dark;--bg:#123456');
    expect(dark).not.toContain('#ABCDEF');
    const auto = await css('AUTO');
    expect(auto).toMatch(
      /^<style>:root\{color-scheme:light;--bg:#ABCDEF.*@media \(prefers-color-scheme:dark\)\{:root\{color-scheme:dark;--bg:#123456/,
    );
  });
});

describe('a large page (5 cards × 10 services, 90 days of incidents)', () => {
  it('builds and renders in well under 100 ms; its HTML gzipped stays under 30 KB', async () => {
    const api = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => {
      const res = await svc.request(method, path, body);
      return { status: res.statusCode, json: res.body ? res.json() : null };
    };
    const seeded = await seedStatusPage(api, { url: 'large-page', db: svc.context.db });
    const found = (await findPageByUrl(svc.context.db, seeded.url))!;
    // Warm-up, then the median of several fresh builds and renders.
    await buildPageModel(svc.context.db, found, Date.now());
    const times: number[] = [];
    let html = '';
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      const model = await buildPageModel(svc.context.db, found, Date.now());
      html = renderStatusPage(model, { basePath: `/status/${seeded.url}`, feedQuery: '' });
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const median = times[3]!;
    const gzipped = gzipSync(html).length;
    console.log(
      `status page, ${seeded.services.length} services × 90 days, ${seeded.incidents.length} incidents: build + render median ${median.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times[6]!.toFixed(1)}); HTML ${html.length} bytes, gzipped ${gzipped} bytes`,
    );
    expect(median).toBeLessThan(100);
    expect(gzipped).toBeLessThan(30 * 1024);

    // Served as a browser asks (gzip): the first request renders, the next are cached. Timing goals (p95
    // under 20 ms) are printed; the assertion takes the median, which a busy machine disturbs less.
    const browser = { 'accept-encoding': 'gzip, deflate, br' };
    const first = performance.now();
    const firstRes = await get(`/status/${seeded.url}`, browser);
    const fresh = performance.now() - first;
    expect(firstRes.statusCode).toBe(200);
    expect(firstRes.rawPayload.length).toBeLessThan(30 * 1024);
    const cachedTimes: number[] = [];
    for (let i = 0; i < 40; i++) {
      const t0 = performance.now();
      const res = await get(`/status/${seeded.url}`, browser);
      cachedTimes.push(performance.now() - t0);
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe(firstRes.headers.etag);
    }
    cachedTimes.sort((a, b) => a - b);
    const p95 = cachedTimes[37]!;
    const cachedMedian = cachedTimes[20]!;
    console.log(
      `served (gzip, ${firstRes.rawPayload.length} bytes): first ${fresh.toFixed(1)} ms, cached median ${cachedMedian.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`,
    );
    expect(cachedMedian).toBeLessThan(20);

    // The open MAJOR incident of the seed shows on the page, and every service has its 90 days.
    const model = await buildPageModel(svc.context.db, found, Date.now());
    expect(model.overall).toBe('major_outage');
    expect(model.activeIncidents).toHaveLength(2);
    expect(model.cards.flatMap((c) => c.services)).toHaveLength(50);
    expect(html.match(/<li tabindex="0"/g)).toHaveLength(50 * 90);
  }, 60_000);
});
