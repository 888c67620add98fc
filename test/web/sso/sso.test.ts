import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../../helpers/cli.js';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.js';
import { missingRequirement } from '../../helpers/requirements.js';
import {
  audit,
  describeViolations,
  launchChromium,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// Single sign-on in Chromium against a real `outpost up` and a real OpenID provider (oidc-provider on
// loopback, allowed by OUTPOST_OUTBOUND_ALLOW): "Sign in with single sign-on" on the sign-in page, the
// provider's own login and consent pages, and back to the app signed in as the person it created.

const API_KEY = `op_sso_${'s'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const CLIENT_SECRET = `sso-web-secret-${Math.random().toString(36).slice(2, 12)}`;
const PAGE_TIMEOUT = 15_000;
/** Where the screenshots of the pages this test walks are kept, at 1280 and 390 px. */
const SHOTS = '/tmp/shots-teams-sso';

const missing = missingRequirement(webRequirements());

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.skipIf(missing !== null)('single sign-on in Chromium against outpost up', () => {
  let up: UpProcess;
  let provider: TestProvider;
  let browser: Browser;
  /** The service's address (startUp's own `baseUrl` names the port it picked, not the PORT given here). */
  let appUrl: string;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    const port = await freePort();
    appUrl = `http://127.0.0.1:${port}`;
    api = apiClient(appUrl, API_KEY);
    provider = await startTestProvider({
      redirectUris: [`${appUrl}/auth/sso/callback`],
      clientSecret: CLIENT_SECRET,
    });
    provider.people.set('ann', {
      email: 'ann@example.com',
      email_verified: true,
      name: 'Ann Example',
      groups: ['sre'],
    });
    up = await startUp(API_KEY, {
      PORT: String(port),
      OUTPOST_APP_URL: appUrl,
      OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32',
    });
    const put = await api('PUT', '/v1/sso', {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: CLIENT_SECRET,
      defaultRole: 'READ_ONLY',
      groupsClaim: 'groups',
      groupRoles: { sre: 'ADMIN' },
      allowedDomains: ['example.com'],
      ssoOnly: false,
    });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    browser = await launchChromium();
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
    await provider?.close();
  });

  it('"Sign in with single sign-on" goes through the provider and back, signed in as the person', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(new URL('/checks', appUrl).href);
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await page.getByLabel('Work email').fill('ann@example.com');
    await page.screenshot({ path: `${SHOTS}/sign-in-sso-1280.png`, fullPage: true });
    const violations = await audit(page, 'sign-in-sso');
    expect.soft(violations, describeViolations('sign-in-sso', violations)).toEqual([]);
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click();

    // The provider's own pages: login (any password), then consent.
    await page.waitForURL((url) => url.href.startsWith(provider.issuer), { timeout: PAGE_TIMEOUT });
    await page.locator('input[name="login"]').fill('ann');
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.waitForURL((url) => url.href.startsWith(appUrl), { timeout: PAGE_TIMEOUT });
    await page.getByRole('heading', { level: 1, name: /^Checks\b/ }).waitFor({ timeout: PAGE_TIMEOUT });
    const account = page.locator('.account-name');
    expect(await account.getAttribute('title')).toBe('ann@example.com (ADMIN)');

    // The settings page, read by an ADMIN: the redirect URI to copy, the secret never shown.
    await page.goto(new URL('/settings/sso', appUrl).href);
    await page.getByRole('heading', { level: 1, name: 'Single sign-on' }).waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByText('Stored (never shown)').waitFor({ timeout: PAGE_TIMEOUT });
    expect(await page.getByLabel('Redirect URI to register at your provider').inputValue()).toBe(
      `${appUrl}/auth/sso/callback`,
    );
    expect(await page.content()).not.toContain(CLIENT_SECRET);
    await page.screenshot({ path: `${SHOTS}/settings-sso-admin-1280.png`, fullPage: true });
    const settingsViolations = await audit(page, 'settings-sso-admin');
    expect.soft(settingsViolations, describeViolations('settings-sso', settingsViolations)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/settings-sso-admin-390.png`, fullPage: true });
    await context.close();
  });

  it('an OWNER edits the settings; the sign-in page says when an email has no single sign-on', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(new URL('/checks', appUrl).href);
    await page.getByRole('button', { name: 'Sign in with an API key' }).click();
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: /^Checks\b/ }).waitFor({ timeout: PAGE_TIMEOUT });
    await page.goto(new URL('/settings/sso', appUrl).href);
    const form = page.getByRole('form', { name: 'Single sign-on settings' });
    await form.waitFor({ timeout: PAGE_TIMEOUT });
    expect(await form.getByLabel('Issuer URL').inputValue()).toBe(provider.issuer);
    expect(await form.getByLabel('Client secret').inputValue()).toBe('');
    await form.getByLabel('Allowed email domains').fill('example.com, example.org');
    await page.screenshot({ path: `${SHOTS}/settings-sso-owner-1280.png`, fullPage: true });
    const violations = await audit(page, 'settings-sso-owner');
    expect.soft(violations, describeViolations('settings-sso-owner', violations)).toEqual([]);
    await form.getByRole('button', { name: 'Save single sign-on' }).click();
    await page
      .getByText(`Saved: people sign in through ${provider.issuer}.`)
      .waitFor({ timeout: PAGE_TIMEOUT });
    expect((await api('GET', '/v1/sso')).json.allowedDomains).toEqual(['example.com', 'example.org']);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/settings-sso-owner-390.png`, fullPage: true });
    await context.close();

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const signedOut = await phone.newPage();
    await signedOut.goto(new URL('/checks', appUrl).href);
    await signedOut.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await signedOut.getByLabel('Work email').fill('someone@elsewhere.test');
    await signedOut.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await signedOut.getByText('Single sign-on is not set up for this email address.').waitFor({
      timeout: PAGE_TIMEOUT,
    });
    await signedOut.screenshot({ path: `${SHOTS}/sign-in-sso-unavailable-390.png`, fullPage: true });
    await phone.close();
  });
});
