import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../helpers/requirements.js';
import {
  audit,
  describeViolations,
  launchChromium,
  type LoopbackServer,
  SCREENSHOT_DIR,
  signIn,
  startLoopbackServer,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// "Run before saving" in Chromium against a real `outpost up` (its agent serves `local`): an API check form
// pointing at a loopback server is run once; the panel shows the assertions and the response the agent got,
// the server saw exactly one request, and the checks list holds no new check. A body the service refuses shows
// its error at the field, as Save does. Axe finds no violation; screenshots at 1280 px and on a phone.

const API_KEY = `op_trs_${'t'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'r'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;
const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('run before saving', () => {
  let up: UpProcess;
  let browser: Browser;
  let page: Page;
  let site: LoopbackServer;

  beforeAll(async () => {
    site = await startLoopbackServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-probe': 'before-saving' });
      res.end(JSON.stringify({ healthy: true, marker: 'probe-body-4711' }));
    });
    up = await startUp(API_KEY);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT);
    await signIn(page, up.baseUrl, API_KEY);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
    await site?.close();
  });

  /** Audits the page (axe) and saves it at 1280 px and at 390×844 into `<screenshots>/run-before-saving/`. */
  async function look(name: string): Promise<void> {
    const violations = await audit(page, `run-before-saving-${name}`);
    expect(violations, describeViolations(name, violations)).toEqual([]);
    mkdirSync(join(SCREENSHOT_DIR, 'run-before-saving'), { recursive: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({
      path: join(SCREENSHOT_DIR, 'run-before-saving', `${name}-phone.png`),
      fullPage: true,
    });
    const scrolls = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: any }).document;
      return doc.documentElement.scrollWidth > doc.documentElement.clientWidth;
    });
    expect(scrolls, `${name} scrolls sideways on a phone`).toBe(false);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({
      path: join(SCREENSHOT_DIR, 'run-before-saving', `${name}-desktop.png`),
      fullPage: true,
    });
  }

  it('runs the API check form once, shows its assertions and response, and saves no check', async () => {
    const before = (await up.api('GET', '/v1/checks')).json as { id: string }[];
    await page.goto(new URL('/checks/new?type=API', up.baseUrl).href);
    await page.getByLabel(/^Name\b/).fill('Probe before saving');
    await page.getByLabel(/^URL\b/).fill(`${site.url}/health`);
    const button = page.getByRole('button', { name: 'Run before saving' });
    await button.waitFor();
    // The button says what it does: nothing is saved.
    expect(await page.locator('#check-test-run-hint').textContent()).toContain('saves nothing');
    if ((await page.getByLabel('Assertion 1 source').count()) === 0) {
      await page.getByRole('button', { name: 'Add assertion' }).click();
    }
    await page.getByLabel('Assertion 1 source').selectOption('STATUS_CODE');
    await page.getByLabel('Assertion 1 comparison').selectOption('EQUALS');
    await page.getByLabel('Assertion 1 target').fill('200');
    await button.click();
    await page.getByText(/The test run passed/).waitFor({ timeout: 60_000 });
    const panel = page.getByRole('region', { name: 'Test run' });
    await panel.getByRole('heading', { name: 'Assertions' }).waitFor();
    expect(await panel.textContent()).toContain('STATUS_CODE');
    // The response the agent got from the loopback server.
    expect(await panel.textContent()).toContain('probe-body-4711');
    expect(await panel.textContent()).toContain('Nothing was saved');
    expect(site.requests).toEqual(['GET /health']);
    await look('api-passed');

    const after = (await up.api('GET', '/v1/checks')).json as { id: string }[];
    expect(after.map((c) => c.id)).toEqual(before.map((c) => c.id));
    await page.goto(new URL('/checks', up.baseUrl).href);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(await page.getByText('Probe before saving').count()).toBe(0);
  }, 90_000);

  it('shows a refused body at its field, as Save does', async () => {
    await page.goto(new URL('/checks/new?type=API', up.baseUrl).href);
    await page.getByLabel(/^Name\b/).fill('Probe with a bad limit');
    await page.getByLabel(/^URL\b/).fill(`${site.url}/health`);
    await page.getByText('Advanced (JSON)').click();
    await page.getByLabel('Other fields (JSON)').fill('{ "degradedResponseTime": 99999999 }');
    const requests = site.requests.length;
    await page.getByRole('button', { name: 'Run before saving' }).click();
    const error = page.locator('.field-error[role="alert"]').first();
    await error.waitFor();
    expect(await error.textContent()).toMatch(/degradedResponseTime/);
    expect(site.requests.length).toBe(requests);
    await look('refused');
  }, 60_000);
});
