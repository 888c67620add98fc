import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../helpers/requirements.js';
import {
  audit,
  describeViolations,
  type LoopbackServer,
  launchChromium,
  signIn,
  startLoopbackServer,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// Linking checks to a status-page service in Chromium against a real `outpost up` (docs/status-pages.md,
// "Linking checks"): on the status pages page, "Link checks" then a tick per check links it (two clicks),
// with no id typed; the API's service answers the linked checks; a linked check that starts failing on a
// loopback site turns the public page's service to "Major outage" and its runs show in today's strip day;
// unticking unlinks. axe finds no violation on the page with the picker open, nor on the public page.

const API_KEY = `op_spl_${'s'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('linking checks to a status-page service in Chromium', () => {
  let up: UpProcess;
  let site: LoopbackServer;
  let browser: Browser;
  let page: Page;
  // `/web` answers 500 once the site is broken: the check on it fails.
  let broken = false;

  beforeAll(async () => {
    site = await startLoopbackServer((req, res) => {
      const down = broken && req.url === '/web';
      res.writeHead(down ? 500 : 200, { 'content-type': 'text/plain' });
      res.end(down ? 'down' : 'up');
    });
    up = await startUp(API_KEY, { OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32' });
    browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
    page = await context.newPage();
    await signIn(page, up.baseUrl, API_KEY);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
    await site?.close();
  });

  async function expectNoViolations(name: string): Promise<void> {
    const violations = await audit(page, name);
    expect(violations, describeViolations(name, violations)).toEqual([]);
  }

  /** A URL check on the loopback site, every 24 h (the test runs it by hand), no retry. */
  async function urlCheck(name: string, path: string): Promise<string> {
    const res = await up.api('POST', '/v1/checks/url', {
      name,
      activated: true,
      frequency: 1440,
      doubleCheck: false,
      request: { url: `${site.url}${path}`, assertions: [] },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json.id as string;
  }

  /** Runs a check now and waits for its session to end. */
  async function runNow(checkId: string): Promise<void> {
    const res = await up.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    const sessionId = res.json.sessions[0].checkSessionId as string;
    await expect
      .poll(async () => (await up.api('GET', `/v1/check-sessions/${sessionId}`)).json.status, {
        timeout: 30_000,
        interval: 250,
      })
      .not.toBe('PROGRESS');
  }

  it('links two checks in two clicks each, the public page follows a failing one, and unlinking clears it', async () => {
    const service = await up.api('POST', '/v1/status-pages/services', { name: 'Checkout' });
    expect(service.status).toBe(201);
    const serviceId = service.json.id as string;
    const url = `checkout-${Math.random().toString(36).slice(2, 8)}`;
    const created = await up.api('POST', '/v1/status-pages', {
      name: 'Acme status',
      url,
      cards: [{ name: 'Shop', services: [{ id: serviceId }] }],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const api = await urlCheck('Checkout API', '/api');
    const web = await urlCheck('Checkout web', '/web');
    await urlCheck('Blog', '/blog');

    await page.goto(new URL('/status-pages', up.baseUrl).href);
    const row = page.getByRole('row', { name: /^Checkout\b/ });
    await row.getByText('none: incidents only').waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByRole('button', { name: 'Link checks of Checkout' }).click();
    const picker = page.getByRole('group', { name: 'Checks of Checkout' });
    // The account's checks by name, none linked yet.
    for (const name of ['Blog', 'Checkout API', 'Checkout web'])
      expect(await picker.getByLabel(name).isChecked()).toBe(false);
    await picker.getByLabel('Checkout API').check();
    await page.getByRole('status').filter({ hasText: 'Checkout API is linked to Checkout.' }).waitFor();
    await page.getByLabel('Severity of new links').selectOption('CRITICAL');
    await picker.getByLabel('Checkout web').check();
    await page.getByRole('status').filter({ hasText: 'Checkout web is linked to Checkout.' }).waitFor();
    await row.getByText('Checkout API, Checkout web').waitFor({ timeout: PAGE_TIMEOUT });
    await expectNoViolations('status-pages-check-picker');

    const linked = await up.api('GET', `/v1/status-pages/services/${serviceId}`);
    expect(linked.json.checks).toEqual([
      { id: api, name: 'Checkout API', severity: 'MAJOR' },
      { id: web, name: 'Checkout web', severity: 'CRITICAL' },
    ]);
    const check = await up.api('GET', `/v1/checks/${web}`);
    expect(check.json.triggerIncident).toMatchObject({ serviceId, severity: 'CRITICAL' });

    // Both pass: operational, today's strip day counts their runs.
    await runNow(api);
    await runNow(web);
    await page.goto(new URL(`/status/${url}`, up.baseUrl).href);
    const state = page.locator('.svc-head .state');
    expect(await state.textContent()).toContain('Operational');
    // (Each check also ran once when created: the schedule starts at once.)
    const passing = /100 % uptime, (\d+) runs, no incidents/.exec(
      (await page.locator('.strip li').last().textContent()) ?? '',
    );
    expect(passing).not.toBeNull();
    const runs = Number(passing![1]);
    expect(runs).toBeGreaterThanOrEqual(2);

    // The web check fails: the service turns to a major outage (its trigger is CRITICAL).
    broken = true;
    await runNow(web);
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator('.svc-head .state').textContent();
        },
        { timeout: 30_000, interval: 500 },
      )
      .toContain('Major outage');
    expect(await page.locator('.strip li').last().textContent()).toContain(`${runs + 1} runs, 1 failed`);
    await expectNoViolations('status-page-linked-failing');

    // Unticking unlinks: the check's trigger is cleared.
    await page.goto(new URL('/status-pages', up.baseUrl).href);
    await page.getByRole('button', { name: 'Link checks of Checkout' }).click();
    await page.getByRole('group', { name: 'Checks of Checkout' }).getByLabel('Checkout API').uncheck();
    await page
      .getByRole('status')
      .filter({ hasText: 'Checkout API is no longer linked to Checkout.' })
      .waitFor();
    const after = await up.api('GET', `/v1/status-pages/services/${serviceId}`);
    expect(after.json.checks.map((c: { name: string }) => c.name)).toEqual(['Checkout web']);
    expect((await up.api('GET', `/v1/checks/${api}`)).json.triggerIncident).toBeNull();
  });
});
