import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../helpers/requirements.js';
import {
  audit,
  describeViolations,
  launchChromium,
  signIn,
  startUp,
  type UpProcess,
  webRequirements,
} from '../helpers/web.js';

// Roles in Chromium against a real `outpost up`: an OWNER key makes a READ_ONLY key through the API; signed
// in with it, the checks page and a check's page show no control that changes anything, the new-check page
// says why instead of its form, the API keys tab is not offered, and a write sent with the session itself is
// refused by the service (403 OUTPOST_ERR_FORBIDDEN). Signed in with the OWNER key, the same pages have
// their controls: what the READ_ONLY session misses is its role's doing.

const OWNER_KEY = `op_rol_${'r'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('roles in Chromium against outpost up', () => {
  let up: UpProcess;
  let browser: Browser;
  let contexts: BrowserContext[] = [];
  let readOnly: Page;
  let owner: Page;
  let checkId: string;

  /** A page of a fresh browser context (its own cookies, in `timezoneId`) signed in with `apiKey`. */
  async function signedIn(apiKey: string, timezoneId = 'UTC'): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
      timezoneId,
    });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, up.baseUrl, apiKey);
    return page;
  }

  beforeAll(async () => {
    up = await startUp(OWNER_KEY);
    const made = await up.api('POST', '/v1/checks/url', {
      name: 'Shop home page',
      activated: false,
      request: { url: 'https://shop.example.test/', assertions: [] },
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    checkId = made.json.id as string;
    const key = await up.api('POST', '/v1/api-keys', { name: 'Viewer', role: 'READ_ONLY' });
    expect(key.status, JSON.stringify(key.json)).toBe(201);
    expect(key.json.role).toBe('READ_ONLY');
    browser = await launchChromium();
    readOnly = await signedIn(key.json.rawKey as string);
    // Berlin: an expiry date ends at midnight there, an hour before midnight UTC in winter.
    owner = await signedIn(OWNER_KEY, 'Europe/Berlin');
  }, 90_000);

  afterAll(async () => {
    for (const context of contexts) await context.close();
    contexts = [];
    await browser?.close();
    await up?.stop();
  });

  /** Opens `path` on `page` and waits for its h1 `heading` and the end of its loads. */
  async function show(page: Page, path: string, heading: string | RegExp): Promise<void> {
    await page.goto(new URL(path, up.baseUrl).href);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: PAGE_TIMEOUT });
    await expect.poll(() => page.locator('main .loading').count(), { timeout: PAGE_TIMEOUT }).toBe(0);
  }

  async function expectAccessible(page: Page, name: string): Promise<void> {
    const violations = await audit(page, `roles-${name}`);
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
  }

  /** The controls of the check pages that change something, as the page shows them: name → count. */
  async function writeControls(page: Page): Promise<Record<string, number>> {
    const main = page.getByRole('main');
    const counts: Record<string, number> = {};
    for (const name of ['Run now', 'Pause', 'Mute', 'Delete']) {
      counts[name] = await main.getByRole('button', { name, exact: true }).count();
    }
    counts.Edit = await main.getByRole('link', { name: 'Edit', exact: true }).count();
    counts['New check'] = await main.locator('summary', { hasText: 'New check' }).count();
    return counts;
  }

  it('the session says its role', async () => {
    const role = (page: Page) =>
      page.evaluate(async () => ((await (await fetch('/auth/session')).json()) as { role: string }).role);
    expect(await role(readOnly)).toBe('READ_ONLY');
    expect(await role(owner)).toBe('OWNER');
  });

  it('the checks page: READ_ONLY lists the check without New check; OWNER has it', async () => {
    await show(readOnly, '/checks', 'Checks');
    await readOnly.getByRole('link', { name: 'Shop home page' }).waitFor();
    expect(await writeControls(readOnly)).toMatchObject({ 'New check': 0 });
    await expectAccessible(readOnly, 'checks-read-only');

    await show(owner, '/checks', 'Checks');
    await owner.getByRole('link', { name: 'Shop home page' }).waitFor();
    expect(await writeControls(owner)).toMatchObject({ 'New check': 1 });
  });

  it('a check’s page: READ_ONLY has no run, pause, mute, edit or delete; OWNER has them all', async () => {
    await show(readOnly, `/checks/${checkId}`, 'Shop home page');
    expect(await writeControls(readOnly)).toEqual({
      'Run now': 0,
      Pause: 0,
      Mute: 0,
      Delete: 0,
      Edit: 0,
      'New check': 0,
    });
    // What it may read is there: the results and the performance; nothing tells it to press Run now.
    await readOnly.getByRole('heading', { level: 2, name: 'Recent results' }).waitFor();
    await readOnly.getByText('No results yet').waitFor();
    expect(await readOnly.getByRole('main').innerText()).not.toContain('Run now');
    await expectAccessible(readOnly, 'check-read-only');

    await show(owner, `/checks/${checkId}`, 'Shop home page');
    expect(await writeControls(owner)).toEqual({
      'Run now': 1,
      // The check was made paused: Resume instead of Pause.
      Pause: 0,
      Mute: 1,
      Delete: 1,
      Edit: 1,
      'New check': 0,
    });
  });

  it('the new-check and edit pages opened by their address: the role’s message instead of the form', async () => {
    for (const [path, heading] of [
      ['/checks/new?type=URL', 'New check'],
      [`/checks/${checkId}/edit`, 'Edit check'],
    ] as const) {
      await show(readOnly, path, heading);
      const note = readOnly.getByRole('note', { name: 'Not allowed for your role' });
      expect(await note.innerText()).toContain('Your role (READ_ONLY) cannot change this; ask an admin.');
      expect(await readOnly.locator('main form').count()).toBe(0);
      expect(await readOnly.locator('main input, main textarea, main select').count()).toBe(0);
    }
    await expectAccessible(readOnly, 'check-edit-read-only');

    await show(owner, '/checks/new?type=URL', /^New /);
    await owner.locator('main form').first().waitFor({ timeout: PAGE_TIMEOUT });
    expect(await owner.getByRole('note', { name: 'Not allowed for your role' }).count()).toBe(0);
  });

  it('Settings: READ_ONLY is not offered the API keys, and their address says why', async () => {
    await show(readOnly, '/settings/variables', 'Environment variables');
    const tabs = readOnly.getByRole('navigation', { name: 'Settings' }).getByRole('link');
    expect(await tabs.allInnerTexts()).not.toContain('API keys');
    expect(await readOnly.getByRole('button', { name: 'New variable' }).count()).toBe(0);
    await show(readOnly, '/settings/api-keys', 'API keys');
    expect(await readOnly.getByRole('note', { name: 'Not allowed for your role' }).innerText()).toContain(
      'Your role (READ_ONLY) cannot change this; ask an admin.',
    );
    expect(await readOnly.getByRole('table', { name: 'API keys' }).count()).toBe(0);

    await show(owner, '/settings/api-keys', 'API keys');
    const table = owner.getByRole('table', { name: 'API keys' });
    const viewer = table.getByRole('row', { name: /Viewer/ });
    await viewer.waitFor();
    expect(await viewer.innerText()).toContain('READ_ONLY');
  });

  it('API keys: the OWNER makes a READ_WRITE key expiring at the end of a day in its time zone', async () => {
    await show(owner, '/settings/api-keys', 'API keys');
    await owner.getByRole('button', { name: 'New API key' }).click();
    const form = owner.getByRole('form', { name: 'New API key' });
    expect(await form.getByLabel('Role').inputValue()).toBe('OWNER');
    await form.getByLabel('Name').fill('CI deploy');
    await form.getByLabel('Role').selectOption('READ_WRITE');
    await form.getByLabel('Expires on (optional)').fill('2030-01-15');
    await form.getByRole('button', { name: 'Create API key' }).click();
    await owner
      .getByRole('textbox', { name: 'API key CI deploy', exact: true })
      .waitFor({ timeout: PAGE_TIMEOUT });
    await expectAccessible(owner, 'api-keys-created');
    await owner.getByRole('button', { name: 'Done' }).click();
    const listed = (await up.api('GET', '/v1/api-keys')).json as {
      name: string;
      role: string;
      expiresAt: string;
    }[];
    expect(listed.find((k) => k.name === 'CI deploy')).toMatchObject({
      role: 'READ_WRITE',
      // The end of 15 January 2030 in Berlin (UTC+1), not in UTC.
      expiresAt: '2030-01-15T22:59:59.999Z',
    });
    const row = owner.getByRole('table', { name: 'API keys' }).getByRole('row', { name: /CI deploy/ });
    expect(await row.innerText()).toContain('READ_WRITE');
    expect(await row.innerText()).toMatch(/Jan 15, 2030/);
    await expectAccessible(owner, 'api-keys');
  });

  it('the service refuses a write made with the READ_ONLY session: 403 OUTPOST_ERR_FORBIDDEN', async () => {
    await show(readOnly, '/checks', 'Checks');
    const write = (page: Page, id: string) =>
      page.evaluate(async (checkIdInPage) => {
        const session = (await (await fetch('/auth/session')).json()) as { csrfToken: string };
        const res = await fetch(`/v1/checks/${encodeURIComponent(checkIdInPage)}`, {
          method: 'DELETE',
          headers: { 'x-csrf-token': session.csrfToken },
        });
        return { status: res.status, body: (await res.json()) as { attributes?: Record<string, unknown> } };
      }, id);
    const refused = await write(readOnly, checkId);
    expect(refused.status).toBe(403);
    expect(refused.body.attributes).toMatchObject({
      code: 'OUTPOST_ERR_FORBIDDEN',
      permission: 'write',
      role: 'READ_WRITE',
    });
    // The check is still there.
    expect((await up.api('GET', `/v1/checks/${checkId}`)).status).toBe(200);
  });
});
