/**
 * The uptime strip from the linked checks' results (docs/status-pages.md, "The 90-day uptime strip") and
 * the linking convenience of the API (docs/api.md, "Status pages and services"): a real service on SQLite,
 * results planted in `check_results` on past days (the API stores a run at the time it is posted) and runs
 * posted through the agent routes for today.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult, Job } from '../../../src/protocol/index.js';
import { recordFinalResult } from '../../../src/service/resources/check-statuses/store.js';
import { findPageByUrl } from '../../../src/service/status-pages/public/page-queries.js';
import { buildPageModel } from '../../../src/service/status-pages/public/page-reader.js';
import { renderStatusPage } from '../../../src/service/status-pages/public/render.js';
import { StripResultQueries } from '../../../src/service/status-pages/public/result-queries.js';
import type { PublicPage, StatusPageModel } from '../../../src/service/status-pages/public/types.js';
import { DAY_MS, utcDayStart } from '../../../src/service/status-pages/public/uptime.js';
import {
  TEST_DATABASE,
  apiBody,
  claimJobs,
  createCheck,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';
import { backdateServices } from '../../helpers/status-pages.js';

const HOUR = 3_600_000;
const AGENT = randomUUID();

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

let seq = 0;
const iso = (ms: number) => new Date(ms).toISOString();
const round2 = (n: number) => Math.round(n * 100) / 100;

async function service(name: string, account: 'A' | 'B' = 'A'): Promise<string> {
  const res = await svc.request('POST', '/v1/status-pages/services', { name }, account);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function page(serviceIds: string[]): Promise<string> {
  const url = `uptime-${++seq}`;
  const res = await svc.request('POST', '/v1/status-pages', {
    name: 'Acme status',
    url,
    cards: [{ name: 'Core', services: serviceIds.map((id) => ({ id })) }],
  });
  expect(res.statusCode, res.body).toBe(201);
  return url;
}

async function incident(body: Record<string, unknown>): Promise<void> {
  const res = await svc.request('POST', '/v1/incidents', body);
  expect(res.statusCode, res.body).toBe(201);
}

const trigger = (serviceId: string, severity = 'MAJOR') => ({
  serviceId,
  severity,
  name: 'Shop is down',
  description: 'We are looking into it.',
  notifySubscribers: false,
});

/** An API check of account A (scheduled unless `activated` is false), optionally linked to a service. */
function check(name: string, over: Record<string, unknown> = {}): Promise<string> {
  return createCheck(svc, 'api', apiBody({ name, activated: true, ...over }));
}

/**
 * Plants final results of `checkId` on the UTC day starting `dayStartMs`, a millisecond apart from its
 * start (today's stay before the clock: the test does not run in the day's first second).
 */
async function plant(
  checkId: string,
  dayStartMs: number,
  runs: { passed?: number; degraded?: number; failed?: number },
): Promise<void> {
  const statuses = [
    ...Array<'PASSED'>(runs.passed ?? 0).fill('PASSED'),
    ...Array<'DEGRADED'>(runs.degraded ?? 0).fill('DEGRADED'),
    ...Array<'FAILED'>(runs.failed ?? 0).fill('FAILED'),
  ];
  const rows = statuses.map((status, i) => ({
    id: randomUUID(),
    account_id: svc.accountA.id,
    check_id: checkId,
    job_id: randomUUID(),
    check_session_id: null,
    run_location: 'eu-west-1',
    status,
    has_failures: status === 'FAILED' ? 1 : 0,
    has_errors: 0,
    is_degraded: status === 'DEGRADED' ? 1 : 0,
    response_time: 12,
    result_type: 'FINAL' as const,
    started_at: dayStartMs + i,
    stopped_at: dayStartMs + i,
    doc: '{}' as never,
    created_at: dayStartMs + i,
    phase_wait: null,
    phase_dns: null,
    phase_tcp: null,
    phase_first_byte: null,
    phase_download: null,
    status_code: null,
    agent_id: null,
    result_hash: null,
  }));
  // An ATTEMPT that was retried is not a final run: it must never count.
  rows.push({ ...rows[0]!, id: randomUUID(), status: 'FAILED', result_type: 'ATTEMPT' as never });
  // As the result ingest stores a result: the row, and for a FINAL one its rollups, in one transaction.
  await svc.context.db.transaction().execute(async (tx) => {
    await tx.insertInto('check_results').values(rows).execute();
    for (const row of rows) {
      if (row.result_type !== 'FINAL') continue;
      await recordFinalResult(tx, {
        accountId: row.account_id,
        checkId: row.check_id,
        resultId: row.id,
        checkSessionId: null,
        runLocation: row.run_location,
        status: row.status,
        hasFailures: row.has_failures === 1,
        hasErrors: false,
        isDegraded: row.is_degraded === 1,
        responseTime: row.response_time,
        startedAt: row.started_at,
        stoppedAt: row.stopped_at,
      });
    }
  });
}

async function modelOf(url: string, nowMs: number): Promise<StatusPageModel> {
  const found = (await findPageByUrl(svc.context.db, url)) as PublicPage;
  return buildPageModel(svc.context.db, found, nowMs);
}

function serviceOf(model: StatusPageModel, id: string) {
  const s = model.cards.flatMap((c) => c.services).find((x) => x.id === id);
  expect(s).toBeDefined();
  return s!;
}

/** `Nov 12` of a UTC day start. */
const short = (ms: number) =>
  new Date(ms).toLocaleString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** One run of a check posted through the agent routes now: a session, its jobs claimed, each result. */
async function run(checkId: string, outcome: 'PASSED' | 'FAILED'): Promise<void> {
  await triggerCheck(svc, checkId);
  const jobs = (await claimJobs(svc, AGENT)).filter((j: Job) => j.check.id === checkId);
  expect(jobs.length).toBeGreaterThan(0);
  for (const job of jobs) {
    const result: CheckResult = resultFor(job, outcome);
    const res = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': AGENT },
      payload: result,
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}

describe('a fresh service', () => {
  it('has no data before it existed, and its uptime says over how many days it is measured (no "90-day 57.98 %")', async () => {
    const now = utcDayStart(Date.now()) + 12 * HOUR;
    const [incidents, checked] = [await service('Fresh'), await service('Fresh with a check')];
    const url = await page([incidents, checked]);
    // Three minutes old; a MINOR incident backdated to 252.12 s ago: before the fix its time before the
    // service counted (0.3 × 252.12 s of 180 s down: "90-day 57.98 % uptime").
    await backdateServices(svc.context.db, [incidents, checked], now - 180_000);
    await incident({
      name: 'Slow',
      impact: 'MINOR',
      services: [{ id: incidents }],
      startedAt: iso(now - 252_120),
    });
    const linked = await check('Fresh check', { triggerIncident: trigger(checked) });
    await plant(linked, utcDayStart(now) + 11 * HOUR, { passed: 3 });

    const model = await modelOf(url, now);
    const a = serviceOf(model, incidents);
    expect(a.uptime.slice(0, 89).every((d) => d.uptimePercent === null)).toBe(true);
    // Only the service's own 3 minutes count: 0.3 × 180 s down of 180 s.
    expect(a.uptime[89]!.uptimePercent).toBe(70);
    expect(a.uptime90d).toEqual({ days: 90, daysWithData: 1, percent: 70 });
    expect(a.uptime30d).toEqual({ days: 30, daysWithData: 1, percent: 70 });
    const b = serviceOf(model, checked);
    expect(b.uptime[89]).toMatchObject({ uptimePercent: 100, runs: { passed: 3, degraded: 0, failed: 0 } });
    expect(b.uptime90d).toEqual({ days: 90, daysWithData: 1, percent: 100 });

    const html = renderStatusPage(model, { basePath: `/status/${url}`, feedQuery: '' });
    expect(html).not.toContain('57.98');
    expect(html).not.toMatch(/90-day/);
    expect(html).toContain(
      '<span class="l90">70.00 % uptime over 1 day</span><span class="l30">70.00 % uptime over 1 day</span>',
    );
    expect(html).toContain('<span class="l90">100 % uptime over 1 day</span>');
    expect(html).toContain(`${short(now - DAY_MS)}: no data</span>`);
  });
});

describe('the strip from the linked checks’ results', () => {
  it('counts per UTC day the final runs not failing (degraded up) of linked, not-paused checks, with incidents on top', async () => {
    const now = utcDayStart(Date.now()) + 10 * HOUR;
    const day = (back: number) => utcDayStart(now) - back * DAY_MS;
    const shop = await service('Shop');
    const plain = await service('Blog');
    const url = await page([shop, plain]);
    await backdateServices(svc.context.db, [shop, plain], day(10) + HOUR);
    const c1 = await check('Shop API', { triggerIncident: trigger(shop) });
    const c2 = await check('Shop checkout', { triggerIncident: trigger(shop, 'MINOR'), muted: true });
    const paused = await check('Shop old', { triggerIncident: trigger(shop), activated: false });
    const unlinked = await check('Something else');

    // Day -5: 10 failed of 200 → 95 %. Day -4: degraded runs count as up → 100 % (the paused and the
    // unlinked checks fail all day, and do not count). Day -3: no run → no data.
    await plant(c1, day(5), { passed: 90, failed: 10 });
    await plant(c2, day(5), { passed: 100 });
    await plant(c1, day(4), { passed: 50, degraded: 50 });
    for (const other of [paused, unlinked]) await plant(other, day(4), { failed: 100 });
    // Day -2: every run passed, a MAJOR incident of 6 h on top → 75 %.
    await plant(c1, day(2), { passed: 100 });
    await plant(c2, day(2), { passed: 100 });
    await incident({
      name: 'Down',
      impact: 'MAJOR',
      services: [{ id: shop }, { id: plain }],
      startedAt: iso(day(2) + 6 * HOUR),
      stoppedAt: iso(day(2) + 12 * HOUR),
    });
    // Day -1: 20 % of the runs failed, a MINOR incident of 10 h (0.3 × 10/24 = 12.5 %) → 80 %.
    await plant(c1, day(1), { passed: 80, failed: 20 });
    await incident({
      name: 'Slow',
      impact: 'MINOR',
      services: [{ id: shop }],
      startedAt: iso(day(1) + 2 * HOUR),
      stoppedAt: iso(day(1) + 12 * HOUR),
    });
    // Day -6: half the runs failed under 12 h of maintenance: maintenance leaves the day's runs as they are.
    await plant(c1, day(6), { passed: 30, degraded: 20, failed: 50 });
    await incident({
      name: 'Upgrade',
      impact: 'MAINTENANCE',
      services: [{ id: shop }],
      startedAt: iso(day(6)),
      stoppedAt: iso(day(6) + 12 * HOUR),
    });
    // Today: 4 passed.
    await plant(c1, day(0), { passed: 4 });

    const model = await modelOf(url, now);
    const strip = serviceOf(model, shop).uptime;
    const at = (back: number) => strip[89 - back]!;
    expect(at(6)).toMatchObject({ uptimePercent: 50, runs: { passed: 30, degraded: 20, failed: 50 } });
    expect(at(5)).toMatchObject({ uptimePercent: 95, runs: { passed: 190, degraded: 0, failed: 10 } });
    expect(at(4)).toMatchObject({ uptimePercent: 100, runs: { passed: 50, degraded: 50, failed: 0 } });
    expect(at(3)).toMatchObject({ uptimePercent: null, runs: null, incidentCount: 0 });
    expect(at(2)).toMatchObject({ uptimePercent: 75, worstImpact: 'MAJOR', incidentCount: 1 });
    expect(at(1)).toMatchObject({ uptimePercent: 80, worstImpact: 'MINOR' });
    expect(at(0)).toMatchObject({ uptimePercent: 100, runs: { passed: 4, degraded: 0, failed: 0 } });
    // Before day -6 (the service existed from day -10, but nothing ran): no data.
    expect(strip.slice(0, 83).every((d) => d.uptimePercent === null)).toBe(true);

    // Over the 6 days with data: the maintenance half of day -6 left out, today so far.
    const elapsed = now - day(0);
    const up = 0.5 * 12 * HOUR + (0.95 + 1 + 0.75 + 0.8) * DAY_MS + elapsed;
    const total = 12 * HOUR + 4 * DAY_MS + elapsed;
    const percent = round2((100 * up) / total);
    expect(serviceOf(model, shop).uptime90d).toEqual({ days: 90, daysWithData: 6, percent });
    expect(serviceOf(model, shop).uptime30d).toEqual({ days: 30, daysWithData: 6, percent });

    // A service without linked checks keeps the incident-only rule: every day since it exists has data.
    const blog = serviceOf(model, plain);
    expect(blog.uptime[89 - 2]).toMatchObject({ uptimePercent: 75, runs: null });
    expect(blog.uptime[89 - 3]).toMatchObject({ uptimePercent: 100 });
    expect(blog.uptime90d.daysWithData).toBe(11);

    const html = renderStatusPage(model, { basePath: `/status/${url}`, feedQuery: '' });
    expect(html).toContain(
      `<li tabindex="0" class="p"><span>${short(day(5))}: 95.00 % uptime, 200 runs, 10 failed, no incidents</span></li>`,
    );
    expect(html).toContain(
      `<li tabindex="0" class="o"><span>${short(day(4))}: 100 % uptime, 100 runs, 50 degraded, no incidents</span></li>`,
    );
    expect(html).toContain(`<li tabindex="0" class="n"><span>${short(day(3))}: no data</span></li>`);
    expect(html).toContain(
      `<li tabindex="0" class="x"><span>${short(day(2))}: 75.00 % uptime, 200 runs, 1 incident (major outage)</span></li>`,
    );
    expect(html).toContain(`<span class="l90">${percent.toFixed(2)} % uptime over 6 days</span>`);
    expect(html).toContain('a degraded run counts as up');
  });

  it('counts per check, UTC day and status from the daily rollup, final runs only, within the bounds', async () => {
    const a = await check('Counted A');
    const b = await check('Counted B');
    const d0 = utcDayStart(Date.now()) - 20 * DAY_MS;
    await plant(a, d0, { passed: 2, failed: 1 });
    await plant(a, d0 + DAY_MS, { degraded: 3 });
    await plant(b, d0, { failed: 4 });
    await plant(b, d0 - DAY_MS, { passed: 5 });
    const counts = await new StripResultQueries(svc.context.db).dailyCounts([a, b], d0, d0 + 2 * DAY_MS);
    const sorted = counts.sort((x, y) => x.checkId.localeCompare(y.checkId) || x.dayStartMs - y.dayStartMs);
    expect(sorted).toEqual(
      [
        { checkId: a, dayStartMs: d0, counts: { passed: 2, degraded: 0, failed: 1 } },
        { checkId: a, dayStartMs: d0 + DAY_MS, counts: { passed: 0, degraded: 3, failed: 0 } },
        { checkId: b, dayStartMs: d0, counts: { passed: 0, degraded: 0, failed: 4 } },
      ].sort((x, y) => x.checkId.localeCompare(y.checkId) || x.dayStartMs - y.dayStartMs),
    );
    // The read walks the rollup's primary key (check_id, day_start), never the results: SQLite's plan.
    if (TEST_DATABASE !== 'sqlite') return;
    const compiled = svc.context.db
      .selectFrom('check_stats_daily')
      .select(['check_id', 'day_start', 'passed', 'degraded', 'failed'])
      .where('check_id', 'in', [a, b])
      .where('day_start', '>=', d0)
      .where('day_start', '<', d0 + 2 * DAY_MS)
      .compile();
    const plan = await svc.context.db.executeQuery<{ detail: string }>({
      ...compiled,
      sql: `EXPLAIN QUERY PLAN ${compiled.sql}`,
    });
    const detail = plan.rows.map((r) => r.detail).join('\n');
    expect(detail).toMatch(
      /SEARCH check_stats_daily USING INDEX sqlite_autoindex_check_stats_daily_1 \(check_id=\? AND day_start>\? AND day_start<\?\)/,
    );
    expect(detail).not.toMatch(/check_results/);
  });

  it('the public page follows a new run of a linked check (the version counts runs)', async () => {
    const api = await service('Public API');
    const url = await page([api]);
    // No retry: a failed run is final at once.
    const linked = await check('Public API health', {
      triggerIncident: trigger(api),
      doubleCheck: false,
      retryStrategy: null,
    });
    await run(linked, 'PASSED');
    const first = await svc.app.inject({ method: 'GET', url: `/status/${url}` });
    expect(first.statusCode).toBe(200);
    const today = short(Date.now());
    expect(first.body).toContain(`${today}: 100 % uptime, 1 run, no incidents`);
    await run(linked, 'FAILED');
    const second = await svc.app.inject({ method: 'GET', url: `/status/${url}` });
    expect(second.headers.etag).not.toBe(first.headers.etag);
    expect(second.body).toContain(`${today}: 50.00 % uptime, 2 runs, 1 failed`);
  });
});

describe('linking checks to a service (API)', () => {
  it('GET and list answer the linked checks by name; PUT /v1/checks/{id} links and unlinks; nothing else of the check leaks', async () => {
    const id = await service('Checkout');
    const secret = `sekret-${randomUUID()}`;
    const zeta = await check('Zeta probe', {
      activated: false,
      environmentVariables: [{ key: 'TOKEN', value: secret, secret: true }],
      request: { url: `https://api.example.test/health?token=${secret}` },
    });
    const alpha = await check('Alpha probe', { activated: false });
    const get = async () => {
      const res = await svc.request('GET', `/v1/status-pages/services/${id}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    expect((await get()).checks).toEqual([]);

    for (const [checkId, severity] of [
      [zeta, 'CRITICAL'],
      [alpha, 'MINOR'],
    ] as const) {
      const put = await svc.request('PUT', `/v1/checks/${checkId}`, {
        heartbeat: {},
        script: null,
        triggerIncident: trigger(id, severity),
      });
      expect(put.statusCode, put.body).toBe(200);
    }
    const linked = await get();
    expect(linked.checks).toEqual([
      { id: alpha, name: 'Alpha probe', severity: 'MINOR' },
      { id: zeta, name: 'Zeta probe', severity: 'CRITICAL' },
    ]);
    for (const query of ['paginated=false', 'limit=100']) {
      const list = await svc.request('GET', `/v1/status-pages/services?${query}`);
      expect(list.statusCode).toBe(200);
      expect(list.json().entries.find((s: { id: string }) => s.id === id).checks).toEqual(linked.checks);
      expect(list.body).not.toContain(secret);
    }
    expect(JSON.stringify(linked)).not.toContain(secret);

    // Unlinking clears the trigger; the check keeps its other fields.
    const unlink = await svc.request('PUT', `/v1/checks/${zeta}`, {
      heartbeat: {},
      script: null,
      triggerIncident: null,
    });
    expect(unlink.statusCode, unlink.body).toBe(200);
    expect(unlink.json()).toMatchObject({ name: 'Zeta probe', triggerIncident: null });
    expect((await get()).checks).toEqual([{ id: alpha, name: 'Alpha probe', severity: 'MINOR' }]);

    // Another account sees neither the service nor A's checks on its own service.
    expect((await svc.request('GET', `/v1/status-pages/services/${id}`, undefined, 'B')).statusCode).toBe(
      404,
    );
    const theirs = await service('Theirs', 'B');
    const b = await svc.request('GET', `/v1/status-pages/services/${theirs}`, undefined, 'B');
    expect(b.json().checks).toEqual([]);
  });
});
