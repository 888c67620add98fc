import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../helpers/requirements.js';
import {
  audit,
  type BrowserGlobals,
  describeViolations,
  launchChromium,
  signIn,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// The maintenance windows page (Settings) in Chromium against a real `outpost up`: a window created through
// the form (wall times in its time zone), a field error from the API shown at its field, the list, the
// deletion; axe finds no violation, and the page fits a 390 px phone. OUTPOST_SHOTS saves screenshots at
// 1280 px and 390×844.

const API_KEY = `op_mw_${'m'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'w'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;
const SHOTS = process.env.OUTPOST_SHOTS;

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('the maintenance windows page in Chromium against outpost up', () => {
  let up: UpProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    up = await startUp(API_KEY);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, up.baseUrl, API_KEY);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
  });

  async function expectAccessible(name: string): Promise<void> {
    const violations = await audit(page, `maintenance-windows-${name}`);
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
  }

  /** The page fits a 390×844 phone (no page-wide scrolling); screenshots at both sizes when OUTPOST_SHOTS says where. */
  async function fitsPhone(name: string): Promise<void> {
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}-1280.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate(
      () => (globalThis as unknown as BrowserGlobals).document.documentElement.scrollWidth,
    );
    expect(width, `${name} is ${width} px wide at 390 px`).toBeLessThanOrEqual(390);
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}-390.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  it('creates a weekly window in Berlin time, shows an API field error at its field, lists and deletes', async () => {
    await page.goto(new URL('/settings/maintenance-windows', up.baseUrl).href);
    await page
      .getByRole('heading', { level: 1, name: 'Maintenance windows' })
      .waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByText('No maintenance window yet.').waitFor({ timeout: PAGE_TIMEOUT });
    const tab = page
      .getByRole('navigation', { name: 'Settings' })
      .getByRole('link', { name: 'Maintenance windows' });
    expect(await tab.getAttribute('aria-current')).toBe('page');

    await page.getByRole('button', { name: 'New maintenance window' }).click();
    const form = page.getByRole('form', { name: 'New maintenance window' });
    await form.getByLabel('Name').fill('Database upgrade');
    await form.getByLabel('Starts').fill('2026-03-30T02:00');
    // Ends before it starts: the API's 400 names endsAt, shown under Ends.
    await form.getByLabel('Ends').fill('2026-03-30T01:00');
    await form.getByLabel(/^Time zone/).fill('Europe/Berlin');
    await form.getByLabel('Repeats').selectOption({ label: 'Weekly' });
    await form.getByLabel(/^Every how many weeks/).fill('2');
    await form.getByLabel(/^Tags/).fill('db, payments');
    await form.getByRole('button', { name: 'Create maintenance window' }).click();
    await form.getByText('must not be before startsAt').waitFor({ timeout: PAGE_TIMEOUT });
    expect(await form.getByLabel('Ends').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible('form');
    await fitsPhone('form');

    await form.getByLabel('Ends').fill('2026-03-30T04:00');
    await form.getByRole('button', { name: 'Create maintenance window' }).click();
    await page.getByRole('status').filter({ hasText: 'Created Database upgrade.' }).waitFor();
    const table = page.getByRole('table', { name: 'Maintenance windows' });
    const row = table.getByRole('row', { name: /Database upgrade/ });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/Every 2 weeks[\s\S]*Europe\/Berlin[\s\S]*tags db, payments/);
    expect(await row.innerText()).toContain('Runs skipped, alerts silenced');
    // 02:00 Berlin summer time is 00:00 UTC: the form's wall time was read in the window's zone.
    const stored = (await up.api('GET', '/v1/maintenance-windows')).json as Record<string, unknown>[];
    expect(stored).toEqual([
      expect.objectContaining({
        name: 'Database upgrade',
        startsAt: '2026-03-30T00:00:00.000Z',
        endsAt: '2026-03-30T02:00:00.000Z',
        repeatUnit: 'WEEK',
        repeatInterval: 2,
        timezone: 'Europe/Berlin',
        tags: ['db', 'payments'],
        pauseRuns: true,
        silenceAlerts: true,
      }),
    ]);
    await expectAccessible('list');
    await fitsPhone('list');

    await table.getByRole('button', { name: 'Delete Database upgrade' }).click();
    await page.getByRole('button', { name: 'Delete window' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted Database upgrade.' }).waitFor();
    expect((await up.api('GET', '/v1/maintenance-windows')).json).toEqual([]);
  });
});
