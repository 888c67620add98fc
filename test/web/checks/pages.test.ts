import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitSession } from '../../helpers/cli.js';
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

// The check pages in Chromium against a real `outpost up`: alert settings and a status-page incident set
// through the form with no JSON, kept after a reload and removed again; a heartbeat monitor's page showing
// its ping URL and a ping sent to it (and not the ping's body); a failed run marked red on the check page's
// response-time chart and on the result page's. axe finds no violation on any of them.

const API_KEY = `op_chk_${'c'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;

const missing = missingRequirement(webRequirements());

/** Pixels of the canvases of the page's response-time chart in the `--bad` red of the light scheme (#a40e26). */
function redPixels(page: Page, chart: number): Promise<number> {
  return page.evaluate((index) => {
    const doc = (globalThis as unknown as { document: any }).document;
    const canvas = doc.querySelectorAll('.time-chart-plot canvas')[index];
    if (!canvas) return -1;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
      if (a > 200 && Math.abs(r - 164) < 30 && g < 50 && Math.abs(b - 38) < 30) n++;
    }
    return n;
  }, chart);
}

describe.skipIf(missing !== null)('check pages in Chromium against outpost up', () => {
  let up: UpProcess;
  let site: LoopbackServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // `/down` answers 500: a URL check on it fails.
    site = await startLoopbackServer((req, res) => {
      res.writeHead(req.url === '/down' ? 500 : 200, { 'content-type': 'text/plain' });
      res.end(req.url === '/down' ? 'down' : 'up');
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

  /** Opens `path` and waits for its h1 and for "Loading…" to go. */
  async function show(path: string): Promise<void> {
    await page.goto(new URL(path, up.baseUrl).href);
    await page.locator('main h1').first().waitFor({ timeout: PAGE_TIMEOUT });
    await expect.poll(() => page.locator('main .loading').count(), { timeout: PAGE_TIMEOUT }).toBe(0);
  }

  async function expectNoViolations(name: string): Promise<void> {
    const violations = await audit(page, name);
    expect(violations, describeViolations(name, violations)).toEqual([]);
  }

  it('sets alert settings and a status-page incident through the form, keeps them, and removes the incident', async () => {
    const service = await up.api('POST', '/v1/status-pages/services', { name: 'Checkout API' });
    expect(service.status).toBe(201);
    const serviceId = service.json.id as string;

    await show('/checks/new?type=URL');
    await page.getByLabel(/^Name\b/).fill('Checkout health');
    await page.getByLabel(/^URL\b/).fill(`${site.url}/`);
    await page.getByLabel("This check's own settings").check();
    await page.getByLabel('After minutes failing').check();
    await page.getByLabel('Alert after (minutes failing)').selectOption('15');
    await page.getByLabel('Reminders', { exact: true }).selectOption({ label: '2 reminders' });
    await page.getByLabel('Reminder every (minutes)').fill('30');
    await page.getByLabel(/alert only when enough locations fail/).check();
    await page.getByLabel('Share of locations failing (%)').selectOption({ label: '50 %' });
    await page.getByLabel('Status-page service').selectOption({ label: 'Checkout API' });
    await page.getByLabel('Severity').selectOption('CRITICAL');
    await page.getByLabel('Incident name').fill('Checkout is down');
    await page.getByLabel('Incident description').fill('Payments fail; we are on it.');
    await page.getByLabel("Email the status pages' subscribers").check();
    await expectNoViolations('check-form-alerting');
    await page.getByRole('button', { name: 'Create check' }).click();
    await page.waitForURL((u) => /^\/checks\/(?!new$)[^/]+$/.test(u.pathname), { timeout: PAGE_TIMEOUT });
    const checkId = new URL(page.url()).pathname.split('/')[2]!;

    const stored = (await up.api('GET', `/v1/checks/${checkId}`)).json;
    expect(stored.frequency).toBe(1);
    expect(stored.useGlobalAlertSettings).toBe(false);
    expect(stored.alertSettings).toEqual({
      escalationType: 'TIME_BASED',
      runBasedEscalation: { failedRunThreshold: 1 },
      timeBasedEscalation: { minutesFailingThreshold: 15 },
      reminders: { amount: 2, interval: 30 },
      parallelRunFailureThreshold: { enabled: true, percentage: 50 },
    });
    expect(stored.triggerIncident).toEqual({
      serviceId,
      severity: 'CRITICAL',
      name: 'Checkout is down',
      description: 'Payments fail; we are on it.',
      notifySubscribers: true,
    });

    // Reloaded in the edit form: every choice is shown as it was made.
    await show(`/checks/${checkId}/edit`);
    expect(await page.getByLabel("This check's own settings").isChecked()).toBe(true);
    expect(await page.getByLabel('After minutes failing').isChecked()).toBe(true);
    expect(await page.getByLabel('Alert after (minutes failing)').inputValue()).toBe('15');
    expect(await page.getByLabel('Reminders', { exact: true }).inputValue()).toBe('2');
    expect(await page.getByLabel('Reminder every (minutes)').inputValue()).toBe('30');
    expect(await page.getByLabel('Share of locations failing (%)').inputValue()).toBe('50');
    const picked = page.getByLabel('Status-page service');
    expect(await picked.inputValue()).toBe(serviceId);
    expect(await picked.locator('option:checked').innerText()).toBe('Checkout API');
    expect(await page.getByLabel('Severity').inputValue()).toBe('CRITICAL');
    expect(await page.getByLabel("Email the status pages' subscribers").isChecked()).toBe(true);
    await expectNoViolations('check-form-alerting-edit');

    // Clearing the service removes the link; the alert settings stay.
    await picked.selectOption({ label: 'None: open no incident' });
    expect(await page.getByLabel('Severity').count()).toBe(0);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL((u) => u.pathname === `/checks/${checkId}`, { timeout: PAGE_TIMEOUT });
    const after = (await up.api('GET', `/v1/checks/${checkId}`)).json;
    expect(after.triggerIncident).toBeNull();
    expect(after.alertSettings.timeBasedEscalation).toEqual({ minutesFailingThreshold: 15 });
  }, 90_000);

  it("shows a heartbeat's ping URL with a curl line, and a ping sent to it, without its body", async () => {
    const created = await up.api('POST', '/v1/checks/heartbeat', {
      name: 'Nightly backup',
      heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' },
    });
    expect(created.status).toBe(201);
    const { id, pingUrl } = created.json as { id: string; pingUrl: string };

    await show(`/checks/${id}`);
    expect(await page.locator('#ping-url').inputValue()).toBe(pingUrl);
    expect(await page.locator('main pre').innerText()).toContain(`curl -fsS --retry 3 "${pingUrl}"`);
    await expect
      .poll(() => page.locator('main').innerText(), { timeout: PAGE_TIMEOUT })
      .toContain('No ping yet');

    // The job's output may hold anything: the page says how big the body was, never what it said.
    const secret = `s3cr3t-${Math.random().toString(36).slice(2)}`;
    const ping = await fetch(pingUrl, {
      method: 'POST',
      headers: { 'user-agent': 'nightly-backup/2.1', 'content-type': 'text/plain' },
      body: `backup done, token=${secret}`,
    });
    expect(ping.status).toBe(200);

    await page.reload();
    const row = page.locator('table.heartbeat-pings tbody tr').first();
    await row.waitFor({ timeout: PAGE_TIMEOUT });
    const text = await row.innerText();
    expect(text).toContain('Success');
    expect(text).toContain('On time');
    expect(text).toContain('POST');
    expect(text).toContain('127.0.0.1');
    expect(text).toContain('nightly-backup/2.1');
    expect(await page.locator('body').innerText()).not.toContain(secret);
    expect(await page.content()).not.toContain(secret);
    await expectNoViolations('check-detail-heartbeat');
  }, 60_000);

  it('marks a failed run red on the check page chart and on the result page chart, with a text list', async () => {
    const created = await up.api('POST', '/v1/checks/url', {
      name: 'Down page',
      activated: false,
      request: {
        url: `${site.url}/down`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'LESS_THAN', target: '400' }],
      },
    });
    expect(created.status).toBe(201);
    const checkId = created.json.id as string;
    const started = await up.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(started.status).toBe(201);
    const session = await awaitSession(up.api, started.json.sessions[0].checkSessionId, 60_000);
    expect(session.status).toBe('FAILED');

    await show(`/checks/${checkId}?window=1h`);
    const legend = page.locator('.time-chart-legend').first();
    await legend.waitFor({ timeout: PAGE_TIMEOUT });
    expect(await legend.innerText()).toMatch(/Failed run\s*1/);
    await expect.poll(() => redPixels(page, 0), { timeout: PAGE_TIMEOUT }).toBeGreaterThan(20);
    const list = page.locator('details.marked-runs');
    expect(await list.locator('summary').innerText()).toContain('1 failed, 0 degraded');
    await list.locator('summary').click();
    const resultLink = list.locator(`a[href^="/checks/${checkId}/results/"]`);
    expect(await resultLink.count()).toBe(1);
    await expectNoViolations('check-detail-failed-mark');

    await resultLink.click();
    await page.waitForURL(/\/results\//, { timeout: PAGE_TIMEOUT });
    const around = page.locator('.rv-around');
    await around.locator('.time-chart-plot canvas').first().waitFor({ timeout: PAGE_TIMEOUT });
    expect(await around.locator('.time-chart-legend').innerText()).toMatch(/Failed run\s*1/);
    await expect.poll(() => redPixels(page, 0), { timeout: PAGE_TIMEOUT }).toBeGreaterThan(20);
    await expectNoViolations('result-failed-mark');
  }, 90_000);
});
