import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitSession } from '../../helpers/cli.js';
import { missingRequirement } from '../../helpers/requirements.js';
import {
  audit,
  describeViolations,
  launchChromium,
  SCREENSHOT_DIR,
  signIn,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// Where checks run, as the web app says it, in Chromium against a real `outpost up` whose queue expiry is
// 3 s: a new check starts in `local` (this machine) and the form lists no data-center name nobody serves; a
// check in us-east-1, which no agent serves, is flagged on the checks page and its check page names the
// location and the run that expired with its reason; a demo check's result says which agent ran it; a new
// private location shows commands that work on another machine. Every page at 1280 px and on a phone, axe
// finding no violation.

const API_KEY = `op_loc_${'l'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;
const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('run locations in the web app', () => {
  let up: UpProcess;
  let browser: Browser;
  let page: Page;
  let unservedId: string;

  beforeAll(async () => {
    up = await startUp(API_KEY, { OUTPOST_QUEUE_EXPIRY_SECONDS: '3' });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT);
    await signIn(page, up.baseUrl, API_KEY);
    const created = await up.api('POST', '/v1/checks/tcp', {
      name: 'Cloud database',
      activated: false,
      locations: ['us-east-1'],
      request: { hostname: '127.0.0.1', port: 9 },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    unservedId = created.json.id;
    const started = await up.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [unservedId] } });
    const done = await awaitSession(up.api, started.json.sessions[0].checkSessionId, 30_000);
    expect(done.status).toBe('TIMED_OUT');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
  });

  /** Audits the page (axe) and saves it at 1280 px and at 390 px wide into `<screenshots>/locations/`. */
  async function look(name: string): Promise<void> {
    const violations = await audit(page, `locations-${name}`);
    expect(violations, describeViolations(name, violations)).toEqual([]);
    mkdirSync(join(SCREENSHOT_DIR, 'locations'), { recursive: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'locations', `${name}-phone.png`), fullPage: true });
    const scrolls = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: any }).document;
      return doc.documentElement.scrollWidth > doc.documentElement.clientWidth;
    });
    expect(scrolls, `${name} scrolls sideways on a phone`).toBe(false);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'locations', `${name}-desktop.png`), fullPage: true });
  }

  it('a new check starts in local, this machine; no data-center name is offered when no agent serves one', async () => {
    await page.goto(new URL('/checks/new?type=URL', up.baseUrl).href);
    const local = page.getByLabel(/\(local\): 1 agent connected/);
    await local.waitFor();
    expect(await local.isChecked()).toBe(true);
    await page.getByText('No agent serves a data-center location').waitFor();
    await look('new-check-form');
  });

  it('flags a check in a location nobody serves, and its page says which runs expired and why', async () => {
    await page.goto(new URL('/checks', up.baseUrl).href);
    await page.getByText('no agent serves us-east-1').waitFor();
    await look('checks-list');
    await page.goto(new URL(`/checks/${unservedId}`, up.baseUrl).href);
    const notice = page.getByRole('region', { name: 'Runs that cannot run' });
    await notice.getByText('no connected agent serves location us-east-1').waitFor();
    expect(await notice.textContent()).toContain('No connected agent serves us-east-1');
    await look('check-unserved');
    // Editing it lists the location it has, marked.
    await page.goto(new URL(`/checks/${unservedId}/edit`, up.baseUrl).href);
    await page.getByLabel('us-east-1 (N. Virginia): no agent serves it, its runs expire').waitFor();
  });

  it('a result says which agent ran it', async () => {
    const demo = (await up.api('GET', '/v1/checks')).json.find(
      (c: { name: string }) => c.name === 'Demo: ping 127.0.0.1',
    );
    const deadline = Date.now() + 60_000;
    let results: { id: string }[] = [];
    while (results.length === 0 && Date.now() < deadline) {
      results = (await up.api('GET', `/v1/check-results/${demo.id}`)).json;
      if (results.length === 0) await new Promise((r) => setTimeout(r, 500));
    }
    await page.goto(new URL(`/checks/${demo.id}/results/${results[0]!.id}`, up.baseUrl).href);
    await page.getByText('Run by').waitFor();
    expect(await page.locator('dd', { hasText: hostname() }).count()).toBeGreaterThan(0);
    await look('result-run-by');
  }, 70_000);

  it('a new private location shows a docker run line and an npx line that work on another machine', async () => {
    await page.goto(new URL('/private-locations', up.baseUrl).href);
    await page.getByRole('button', { name: 'New private location' }).click();
    await page.getByLabel('Name').first().fill('Office LAN');
    await page.getByRole('button', { name: 'Create private location' }).click();
    await page.getByText(/docker run -d --name outpost-agent/).waitFor();
    expect(await page.getByText(/AGENT_HEALTH_PORT=8082/).count()).toBe(1);
    // The app is on 127.0.0.1 here: the page warns another machine cannot reach that address.
    await page.getByText(/another machine cannot reach it/).waitFor();
    await look('private-location-created');
  });
});
