import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../src/protocol/index.js';
import { chromiumRequirement, missingRequirement } from '../../helpers/requirements.js';
import { expectNoSecret } from '../../helpers/secrets.js';
import {
  apiBody,
  claimJobs,
  createCheck,
  icmpBody,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';
import { audit, type BrowserGlobals, describeViolations, launchChromium } from '../../helpers/web.js';

// The public page of a dashboard, `/dashboards/{customUrl}` (docs/api.md, "Dashboards"), served without a
// key: the checks its tags select with their state from real results posted as an agent would, and
// nothing else of the account (a secret planted in a check's URL and headers never reaches it); a private
// dashboard and an unknown url answer the same 404; pagination turns pages with a meta refresh; and in
// Chromium the page passes axe (WCAG 2.2 AA) and fits 1280 px and a phone without scrolling sideways.

/** Planted in the Payments check's URL and in one of its headers. */
const SECRET_URL = 'qs-7c41e0b9d2aa58f3';
const SECRET_HEADER = 'hdr-5e8f2a91c07d6b34';
const AGENT = '00000000-0000-4000-8000-0000000000d1';

let svc: TestService;
const ids: Record<string, string> = {};

/** Starts a run of `checkId` and posts `status` for it as the agent would. */
async function run(checkId: string, status: 'PASSED' | 'FAILED'): Promise<void> {
  await triggerCheck(svc, checkId);
  const jobs: Job[] = await claimJobs(svc, AGENT);
  const job = jobs.find((j) => j.check.id === checkId);
  expect(job, `a job of ${checkId}`).toBeDefined();
  const res = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job!.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': AGENT },
    payload: resultFor(job!, status),
  });
  expect(res.statusCode, res.body).toBe(200);
}

async function dashboard(body: Record<string, unknown>): Promise<{ dashboardId: string }> {
  const res = await svc.request('POST', '/v1/dashboards', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The public page, without any key. */
const page = (path: string) => svc.app.inject({ method: 'GET', url: path });

beforeAll(async () => {
  svc = await testService();
  ids.payments = await createCheck(
    svc,
    'api',
    apiBody({
      name: 'Payments API',
      activated: true,
      tags: ['prod', 'eu'],
      // A failed run is final at once: no retry.
      retryStrategy: { type: 'NO_RETRIES' },
      request: {
        url: `https://payments.example.test/health?token=${SECRET_URL}`,
        headers: [{ key: 'X-Api-Key', value: SECRET_HEADER }],
      },
    }),
  );
  ids.search = await createCheck(svc, 'icmp', icmpBody({ name: 'Search pinger', tags: ['prod'] }));
  ids.staging = await createCheck(svc, 'icmp', icmpBody({ name: 'Staging only', tags: ['staging'] }));
  ids.paused = await createCheck(
    svc,
    'icmp',
    icmpBody({ name: 'Paused ledger', tags: ['prod', 'eu'], activated: false }),
  );
  await run(ids.payments, 'FAILED');
  await run(ids.search, 'PASSED');
  await run(ids.staging, 'PASSED');
});
afterAll(async () => svc.close());

describe('GET /dashboards/{customUrl}', () => {
  it('shows the selected checks with their state and availability, and nothing else of the account', async () => {
    await dashboard({
      header: 'Production <status>',
      description: 'Our prod checks',
      customUrl: 'Prod-Board',
      tags: ['prod'],
      logo: 'https://cdn.example.test/logo.png',
      link: 'https://example.test/',
      sortByStatus: true,
    });
    const res = await page('/dashboards/prod-board');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    const html = res.body;
    // Header escaped, description, logo linked.
    expect(html).toContain('<h1>Production &lt;status&gt;</h1>');
    expect(html).toContain('Our prod checks');
    expect(html).toContain('<a href="https://example.test/"><img src="https://cdn.example.test/logo.png"');
    // The prod checks, failing first, with their states; never the staging one.
    const names = [...html.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1]);
    expect(names).toEqual(['Payments API', 'Search pinger', 'Paused ledger']);
    expect(html).toMatch(/Payments API<\/h2><span class="state">.*Failing/);
    expect(html).toMatch(/Search pinger<\/h2><span class="state">.*Passing/);
    expect(html).toMatch(/Paused ledger<\/h2><span class="state">.*Paused/);
    expect(html).toContain('3 checks: 1 passing, 0 degraded, 1 failing, 1 paused.');
    expect(html).toContain('<dt>Last 24 hours</dt><dd>100.00%</dd>');
    expect(html).toContain('<dt>Last 24 hours</dt><dd>0.00%</dd>');
    expect(html).not.toContain('Staging only');
    // Nothing of the checks beyond names, tags and states: no secret, host, id or account.
    expectNoSecret(html, SECRET_URL);
    expectNoSecret(html, SECRET_HEADER);
    expect(html).not.toContain('payments.example.test');
    for (const id of Object.values(ids)) expect(html).not.toContain(id);
    expect(html).not.toContain(svc.accountA.id);
    expect(html).not.toMatch(/check-sessions|\/v1\//);
  });

  it('selects checks having all tags with useTagsAndOperator, and hides tags and header when told', async () => {
    await dashboard({
      header: 'EU only',
      description: 'not shown',
      customUrl: 'eu-board',
      tags: ['prod', 'eu'],
      useTagsAndOperator: true,
      hideTags: true,
      showHeader: false,
    });
    const html = (await page('/dashboards/eu-board')).body;
    const names = [...html.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1]);
    expect(names).toEqual(['Payments API', 'Paused ledger']);
    expect(html).not.toContain('class="tags"');
    expect(html).toContain('<h1 class="vh">EU only</h1>');
    expect(html).not.toContain('not shown');
    // Without tags: every check of the account, tags shown.
    await dashboard({ header: 'All', customUrl: 'all-board' });
    const all = (await page('/dashboards/all-board')).body;
    expect([...all.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1])).toHaveLength(4);
    expect(all).toContain('<ul class="tags" aria-label="Tags"><li>staging</li></ul>');
  });

  it('cuts the checks into pages turned by the Refresh header, which a visitor can stop', async () => {
    await dashboard({ header: 'Paged', customUrl: 'paged', checksPerPage: 1, paginationRate: 30 });
    const first = await page('/dashboards/paged');
    expect(first.headers.refresh).toBe('30; url=?page=2');
    expect(first.body).toContain('Page 1 of 4');
    expect(first.body).toContain('<a href="?refresh=off">Stop automatic refresh</a>');
    const second = await page('/dashboards/paged?page=2');
    expect([...second.body.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1])).toEqual(['Search pinger']);
    const last = await page('/dashboards/paged?page=999');
    expect(last.body).toContain('Page 4 of 4');
    expect(last.headers.refresh).toBe('30; url=?');
    // Stopped: no Refresh header, the page links keep it stopped, and a link turns it back on.
    const stopped = await page('/dashboards/paged?page=2&refresh=off');
    expect(stopped.headers.refresh).toBeUndefined();
    expect(stopped.body).toContain('<a href="?page=3&amp;refresh=off">Next page</a>');
    expect(stopped.body).toContain('<a href="?page=2">Turn automatic refresh on</a>');
    await dashboard({ header: 'Unpaged', customUrl: 'unpaged', paginate: false, refreshRate: 300 });
    const unpaged = await page('/dashboards/unpaged');
    expect(unpaged.headers.refresh).toBe('300');
    expect(unpaged.body).not.toContain('Page 1');
    await dashboard({ header: 'Still', customUrl: 'still', paginate: false, refreshRate: 0 });
    const still = await page('/dashboards/still');
    expect(still.headers.refresh).toBeUndefined();
    expect(still.body).not.toContain('automatic refresh');
  });

  it('answers a private dashboard with the same 404 as an unknown url, and serves it again when public', async () => {
    const made = await dashboard({ header: 'Secret board', customUrl: 'private-board', isPrivate: true });
    const unknown = await page('/dashboards/no-such-board');
    const hidden = await page('/dashboards/private-board');
    expect(unknown.statusCode).toBe(404);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.body).toBe(unknown.body);
    expect(hidden.body).not.toContain('Secret board');
    expect(hidden.headers['cache-control']).toBe('no-store');
    const res = await svc.request('PUT', `/v1/dashboards/${made.dashboardId}`, { isPrivate: false });
    expect(res.statusCode, res.body).toBe(200);
    expect((await page('/dashboards/private-board')).statusCode).toBe(200);
    await svc.request('DELETE', `/v1/dashboards/${made.dashboardId}`);
    expect((await page('/dashboards/private-board')).statusCode).toBe(404);
  });
});

const missing = missingRequirement([chromiumRequirement()]);

describe.skipIf(missing !== null)('the dashboard page in Chromium', () => {
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(svc.app.server.address() as AddressInfo).port}`;
    await dashboard({
      header: 'Acme production',
      description: 'Synthetic checks of the production services, refreshed every minute.',
      customUrl: 'browser-board',
      logo: `${origin}/favicon.svg`,
      link: 'https://example.test/',
    });
    await dashboard({ header: 'Narrow', customUrl: 'narrow-board', width: '960PX', checksPerPage: 2 });
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  const sizes = [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ];
  for (const board of ['browser-board', 'narrow-board']) {
    for (const size of sizes) {
      it(`${board} at ${size.width} px: no axe violation, no sideways scroll`, async () => {
        const context = await browser.newContext({ viewport: { width: size.width, height: size.height } });
        try {
          const tab = await context.newPage();
          const res = await tab.goto(`${origin}/dashboards/${board}`);
          expect(res?.status()).toBe(200);
          await tab.getByRole('heading', { level: 2 }).first().waitFor();
          const overflow = await tab.evaluate(() => {
            const { documentElement } = (globalThis as unknown as BrowserGlobals).document;
            return documentElement.scrollWidth - documentElement.clientWidth;
          });
          // The logo, when there is one, loaded and has a size.
          if (board === 'browser-board') {
            const logo = tab.getByRole('img', { name: 'Acme production logo' });
            expect((await logo.boundingBox())?.height).toBeGreaterThan(0);
          }
          expect(overflow).toBe(0);
          const name = `dashboard-${board}-${size.name}`;
          const violations = await audit(tab, name);
          expect(violations, describeViolations(name, violations)).toEqual([]);
        } finally {
          await context.close();
        }
      });
    }
  }
});
