import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../helpers/requirements.js';
import {
  audit,
  describeViolations,
  launchChromium,
  signIn,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// The checks page with 400 checks in Chromium against a real `outpost up`: the table draws only the rows in
// view (table.tsx, useRowWindow), scrolling draws later rows, the keyboard walks past the first window, sort
// and search reach every check, and the statuses' poll is a conditional request the service answers 304.

const API_KEY = `op_win_${'w'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const CHECKS = 400;
const PAGE_TIMEOUT = 15_000;

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('checks page with many checks in Chromium against outpost up', () => {
  let up: UpProcess;
  let browser: Browser;
  let page: Page;
  const statusPolls: Response[] = [];

  beforeAll(async () => {
    up = await startUp(API_KEY);
    // `outpost up` makes a demo check: removed, so the list is the test's checks alone.
    for (const demo of (await up.api('GET', '/v1/checks')).json as { id: string }[]) {
      expect((await up.api('DELETE', `/v1/checks/${demo.id}`)).status).toBe(204);
    }
    for (let start = 0; start < CHECKS; start += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, CHECKS - start) }, async (_, k) => {
          const i = start + k;
          const made = await up.api('POST', '/v1/checks/url', {
            name: `Check ${String(i).padStart(4, '0')}`,
            activated: false,
            frequency: 10,
            tags: i % 2 ? ['odd'] : ['even'],
            request: { url: `https://site-${i}.example.test/`, assertions: [] },
          });
          if (made.status !== 201) throw new Error(`check ${i}: ${made.status} ${JSON.stringify(made.json)}`);
        }),
      );
    }
    browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
    page = await context.newPage();
    page.on('response', (r) => {
      // The whole list's polls only: the page first reads the statuses of its first checks (`?checkId=`).
      const url = new URL(r.url());
      if (url.pathname === '/v1/check-statuses' && url.search === '') statusPolls.push(r);
    });
    await signIn(page, up.baseUrl, API_KEY);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
  });

  /** The names of the check rows in the DOM, in order. */
  const drawnNames = () =>
    page.locator('main table tbody tr:not(.checks-spacer) th[scope="row"] a').allInnerTexts();

  it('draws a window of the rows, the later ones as the page scrolls', async () => {
    await page.goto(new URL('/checks?sort=name', up.baseUrl).href);
    await page
      .getByRole('status')
      .filter({ hasText: `${CHECKS} of ${CHECKS} checks` })
      .waitFor({ timeout: PAGE_TIMEOUT });
    const first = await drawnNames();
    expect(first[0]).toBe('Check 0000');
    expect(first.length).toBeGreaterThan(15);
    expect(first.length).toBeLessThan(80);
    expect(await page.locator('main table').getAttribute('aria-rowcount')).toBe(String(CHECKS + 1));
    // The page is as tall as every row: scrolled to its middle, the rows of the middle are drawn.
    await page.evaluate(() => {
      const w = globalThis as unknown as { scrollTo(x: number, y: number): void; document: any };
      w.scrollTo(0, w.document.documentElement.scrollHeight / 2);
    });
    await expect.poll(async () => (await drawnNames())[0], { timeout: 5000 }).not.toBe('Check 0000');
    const middle = await drawnNames();
    const numbers = middle.map((n) => Number(n.slice(6)));
    expect(Math.min(...numbers)).toBeGreaterThan(100);
    expect(Math.max(...numbers)).toBeLessThan(320);
    // Each drawn row's check is in view or next to it.
    const link = page.getByRole('link', { name: middle[20]!, exact: true });
    expect(await link.getAttribute('href')).toMatch(/^\/checks\/[^/]+$/);
    const violations = await audit(page, 'checks-many');
    expect.soft(violations, describeViolations('checks-many', violations)).toEqual([]);
  });

  it('walks every row from the keyboard, past the first window', async () => {
    await page.goto(new URL('/checks?sort=name', up.baseUrl).href);
    await page.getByRole('link', { name: 'Check 0000', exact: true }).focus();
    // One link per row (no check has run): 120 Tabs reach the 121st check, far past the rows first drawn.
    for (let i = 0; i < 120; i++) await page.keyboard.press('Tab');
    const focused = await page.evaluate(
      () => (globalThis as unknown as { document: any }).document.activeElement?.textContent,
    );
    expect(focused).toBe('Check 0120');
  });

  it('sorts and searches every check, not only those drawn', async () => {
    await page.goto(new URL('/checks?sort=-name', up.baseUrl).href);
    await expect.poll(async () => (await drawnNames())[0], { timeout: PAGE_TIMEOUT }).toBe('Check 0399');
    await page.getByLabel('Search by name').fill('0250');
    await expect.poll(drawnNames, { timeout: PAGE_TIMEOUT }).toEqual(['Check 0250']);
  });

  it('polls the statuses with the ETag it holds: the service answers 304 when nothing changed', async () => {
    statusPolls.length = 0;
    await page.goto(new URL('/checks', up.baseUrl).href);
    await page
      .getByRole('status')
      .filter({ hasText: `${CHECKS} of ${CHECKS} checks` })
      .waitFor({ timeout: PAGE_TIMEOUT });
    // The whole list is read once the first checks are drawn; its next poll (every 10 s) names the ETag of
    // the list the page holds.
    await expect.poll(() => statusPolls.length, { timeout: 25_000, interval: 500 }).toBeGreaterThanOrEqual(2);
    const poll = statusPolls[1]!;
    expect(await poll.request().headerValue('if-none-match')).toMatch(/^W\/"/);
    expect(poll.status()).toBe(304);
  }, 40_000);
});
