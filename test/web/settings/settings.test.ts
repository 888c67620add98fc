import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../helpers/requirements.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';
import {
  audit,
  describeViolations,
  launchChromium,
  signIn,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// The Settings pages in Chromium against a real `outpost up`: variables, snippets, client certificates, API
// keys and the account's alert settings, each created, edited and deleted through its page (no JSON typed),
// each audited with axe (WCAG 2.2 AA). Planted secrets (a secret variable's value, a private key and its
// passphrase, a new API key once dismissed) must appear in no page and no API answer after the save.

const API_KEY = `op_set_${'s'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const SECRET_VALUE = `planted-secret-${Math.random().toString(36).slice(2, 12)}`;
const PASSPHRASE = `planted-pass-${Math.random().toString(36).slice(2, 12)}`;
const PAGE_TIMEOUT = 15_000;

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('the Settings pages in Chromium against outpost up', () => {
  let up: UpProcess;
  let browser: Browser;
  let page: Page;
  let ca: TestCa;

  beforeAll(async () => {
    up = await startUp(API_KEY);
    ca = createTestCa();
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: up.baseUrl });
    page = await context.newPage();
    await signIn(page, up.baseUrl, API_KEY);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
    ca?.destroy();
  });

  /** Opens `path` and waits for its h1 `heading` and the end of its first load. */
  async function show(path: string, heading: string): Promise<void> {
    await page.goto(new URL(path, up.baseUrl).href);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: PAGE_TIMEOUT });
    await expect.poll(() => page.locator('main .loading').count(), { timeout: PAGE_TIMEOUT }).toBe(0);
  }

  /** axe finds no violation on the page as it is (a screenshot is saved too). */
  async function expectAccessible(name: string): Promise<void> {
    const violations = await audit(page, `settings-${name}`);
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
  }

  /** The page's HTML and every API answer named, joined: where a planted secret must not be. */
  async function everythingShown(paths: string[]): Promise<string> {
    const answers = await Promise.all(paths.map(async (p) => JSON.stringify((await up.api('GET', p)).json)));
    return `${await page.content()}\n${answers.join('\n')}`;
  }

  it('/settings opens the variables, and the navigation has a Settings section with its tabs (OWNER, signed in with a key)', async () => {
    await page.goto(new URL('/settings', up.baseUrl).href);
    await page.waitForURL(/\/settings\/variables$/, { timeout: PAGE_TIMEOUT });
    const current = page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Settings' });
    expect(await current.getAttribute('aria-current')).toBe('page');
    const tabs = page.getByRole('navigation', { name: 'Settings' }).getByRole('link');
    // The audit log's tab shows once the session says the role (OWNER here) may read it.
    await expect
      .poll(() => tabs.allInnerTexts(), { timeout: PAGE_TIMEOUT })
      .toEqual([
        'Variables',
        'Snippets',
        'Maintenance windows',
        'Client certificates',
        'API keys',
        'Alert settings',
        // "My account" is a person's: a session opened with an API key has none.
        'People',
        'Single sign-on',
        'Audit log',
      ]);
  });

  it('variables: creates a plain and a secret one, edits, deletes; the secret value is never shown or answered', async () => {
    await show('/settings/variables', 'Environment variables');
    await page.getByRole('button', { name: 'New variable' }).click();
    let form = page.getByRole('form', { name: 'New variable' });
    await form.getByLabel('Key').fill('BASE_URL');
    await form.getByLabel('Value').fill('https://shop.example.com');
    await form.getByRole('button', { name: 'Create variable' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved BASE_URL.' }).waitFor();

    await page.getByRole('button', { name: 'New variable' }).click();
    form = page.getByRole('form', { name: 'New variable' });
    await form.getByLabel('Key').fill('SHOP_TOKEN');
    await form.getByLabel('Value').fill(SECRET_VALUE);
    await form.getByLabel('Secret').check();
    await form.getByRole('button', { name: 'Create variable' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved SHOP_TOKEN.' }).waitFor();
    const table = page.getByRole('table', { name: 'Environment variables' });
    await expect.poll(() => table.getByRole('row').count()).toBe(3);
    await expectAccessible('variables');

    // Edit the secret one: its value is not in the form; left empty, the stored value is kept.
    await table.getByRole('button', { name: 'Edit SHOP_TOKEN' }).click();
    form = page.getByRole('form', { name: 'Edit SHOP_TOKEN' });
    expect(await form.getByLabel('Value').inputValue()).toBe('');
    expect(await form.getByLabel('Secret').isDisabled()).toBe(true);
    await form.getByLabel('Locked').check();
    await expectAccessible('variables-edit');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved SHOP_TOKEN.' }).waitFor();
    expect(await everythingShown(['/v1/variables', '/v1/variables/SHOP_TOKEN'])).not.toContain(SECRET_VALUE);
    const stored = await up.api('GET', '/v1/variables/SHOP_TOKEN');
    expect(stored.json).toMatchObject({ value: '*****', secret: true, locked: true });

    // Edit the plain one's value, then delete it.
    await table.getByRole('button', { name: 'Edit BASE_URL' }).click();
    form = page.getByRole('form', { name: 'Edit BASE_URL' });
    await form.getByLabel('Value').fill('https://shop.example.org');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved BASE_URL.' }).waitFor();
    expect((await up.api('GET', '/v1/variables/BASE_URL')).json.value).toBe('https://shop.example.org');
    await table.getByRole('button', { name: 'Delete BASE_URL' }).click();
    await page.getByRole('button', { name: 'Delete variable' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted BASE_URL.' }).waitFor();
    expect((await up.api('GET', '/v1/variables/BASE_URL')).status).toBe(404);
  });

  it('snippets: creates, edits the script, deletes', async () => {
    await show('/settings/snippets', 'Snippets');
    await page.getByRole('button', { name: 'New snippet' }).click();
    let form = page.getByRole('form', { name: 'New snippet' });
    await form.getByLabel('Name').fill('Login');
    await form.getByLabel('Script').fill("const token = process.env.SHOP_TOKEN;\nconsole.log('ok');");
    await form.getByRole('button', { name: 'Create snippet' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved Login.' }).waitFor();
    const table = page.getByRole('table', { name: 'Snippets' });
    await table.getByRole('row', { name: /Login/ }).waitFor();
    await expectAccessible('snippets');

    await table.getByRole('button', { name: 'Edit Login' }).click();
    form = page.getByRole('form', { name: 'Edit Login' });
    expect(await form.getByLabel('Script').inputValue()).toContain('process.env.SHOP_TOKEN');
    await form.getByLabel('Script').fill('// v2');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved Login.' }).waitFor();
    const list = (await up.api('GET', '/v1/snippets')).json as { id: number; script: string }[];
    expect(list.map((s) => s.script)).toEqual(['// v2']);

    await table.getByRole('button', { name: 'Delete Login' }).click();
    await page.getByRole('button', { name: 'Delete snippet' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted Login.' }).waitFor();
    expect((await up.api('GET', '/v1/snippets')).json).toEqual([]);
  });

  it('client certificates: uploads one with an encrypted key, never shows the key or passphrase, deletes it', async () => {
    const pair = ca.issue({ commonName: 'outpost-client', extendedKeyUsage: 'clientAuth' });
    const { createPrivateKey } = await import('node:crypto');
    const encryptedKey = createPrivateKey(pair.key)
      .export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: PASSPHRASE })
      .toString();
    const keyBody = encryptedKey.split('\n')[1]!;

    await show('/settings/client-certificates', 'Client certificates');
    await page.getByRole('button', { name: 'Upload a certificate' }).click();
    const form = page.getByRole('form', { name: 'Upload a client certificate' });
    await form.getByLabel('Host').fill('api.example.com');
    // The certificate from a file, the rest typed.
    await form.getByLabel('Read the certificate from a file').setInputFiles({
      name: 'client.pem',
      mimeType: 'application/x-pem-file',
      buffer: Buffer.from(pair.cert),
    });
    await expect.poll(() => form.getByLabel('Certificate (PEM)').inputValue()).toContain('BEGIN CERTIFICATE');
    await form.getByLabel('Private key (PEM)').fill(encryptedKey);
    await form.getByLabel('Passphrase (optional)').fill(PASSPHRASE);
    await form.getByLabel('CA bundle (optional, PEM)').fill(ca.caCert);
    await expectAccessible('client-certificates-form');
    await form.getByRole('button', { name: 'Upload certificate' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Uploaded the certificate for api.example.com.' })
      .waitFor();
    const table = page.getByRole('table', { name: 'Client certificates' });
    await table.getByRole('row', { name: /api\.example\.com/ }).waitFor();
    await expectAccessible('client-certificates');
    const list = (await up.api('GET', '/v1/client-certificates')).json as { id: string }[];
    expect(list).toHaveLength(1);
    const shown = await everythingShown([
      '/v1/client-certificates',
      `/v1/client-certificates/${list[0]!.id}`,
    ]);
    expect(shown).not.toContain(PASSPHRASE);
    expect(shown).not.toContain(keyBody);

    await table.getByRole('button', { name: 'Delete the certificate for api.example.com' }).click();
    await page.getByRole('button', { name: 'Delete certificate' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted the certificate' }).waitFor();
    expect((await up.api('GET', '/v1/client-certificates')).json).toEqual([]);
  });

  it('API keys: creates one (shown once, with a copy button), it works, revoking it makes it 401; the session’s own key is refused', async () => {
    await show('/settings/api-keys', 'API keys');
    await page.getByRole('button', { name: 'New API key' }).click();
    const form = page.getByRole('form', { name: 'New API key' });
    await form.getByLabel('Name').fill('CI deploy');
    await form.getByRole('button', { name: 'Create API key' }).click();
    const secret = page.getByRole('textbox', { name: 'API key CI deploy', exact: true });
    await secret.waitFor({ timeout: PAGE_TIMEOUT });
    const rawKey = await secret.inputValue();
    expect(rawKey).toMatch(/^op_[0-9a-f]{64}$/);
    await expect.poll(() => page.getByText('it will not be shown again').count()).toBe(1);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(rawKey);
    await expectAccessible('api-keys-created');
    const answer = await fetch(`${up.baseUrl}/v1/checks`, { headers: { authorization: `Bearer ${rawKey}` } });
    expect(answer.status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    const table = page.getByRole('table', { name: 'API keys' });
    await table.getByRole('row', { name: /CI deploy/ }).waitFor();
    // Once dismissed, the key is nowhere: not in the page, not in the listing.
    expect(await everythingShown(['/v1/api-keys'])).not.toContain(rawKey);
    expect(await everythingShown(['/v1/api-keys'])).not.toContain(rawKey.slice(10));
    await expectAccessible('api-keys');

    // The key of this browser's session: marked, and its revocation refused with the API's reason.
    const own = table.getByRole('row', { name: /This session/ });
    await own.getByRole('button', { name: /^Revoke/ }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('alert').filter({ hasText: 'revoke it with another key' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();

    await table.getByRole('button', { name: 'Revoke CI deploy' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked CI deploy.' }).waitFor();
    const after = await fetch(`${up.baseUrl}/v1/checks`, { headers: { authorization: `Bearer ${rawKey}` } });
    expect(after.status).toBe(401);
    // The session still works: its key was not revoked.
    await show('/settings/api-keys', 'API keys');
    expect(await table.getByRole('row', { name: /CI deploy/ }).count()).toBe(0);
    // The key the session was opened with shows a last use (its expiry, none, says Never).
    const ownRow = table.getByRole('row', { name: /This session/ });
    expect(await ownRow.locator('td[data-label="Last used"]').innerText()).not.toContain('Never');
    expect(await ownRow.locator('td[data-label="Expires"]').innerText()).toBe('Never');
  });

  it('alert settings: a form of selects and a number with units; saving changes the account’s settings', async () => {
    await show('/settings/alert-settings', 'Alert settings');
    const form = page.getByRole('form', { name: 'Account alert settings' });
    await form.getByLabel('Escalation').selectOption('TIME_BASED');
    await form.getByLabel('Minutes failing before an alert').selectOption('10');
    await form.getByLabel('Reminders while a check keeps failing').selectOption('3');
    await form.getByLabel('Minutes between reminders').fill('15');
    await form.getByLabel('Alert only when a share of the locations fails').check();
    await form.getByLabel('Share of locations failing').selectOption('50');
    await expectAccessible('alert-settings');
    await form.getByRole('button', { name: 'Save alert settings' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await up.api('GET', '/v1/alert-settings')).json).toEqual({
      escalationType: 'TIME_BASED',
      runBasedEscalation: { failedRunThreshold: 1 },
      timeBasedEscalation: { minutesFailingThreshold: 10 },
      reminders: { amount: 3, interval: 15 },
      parallelRunFailureThreshold: { enabled: true, percentage: 50 },
    });
    // A value the API refuses is named at its control.
    await form.getByLabel('Minutes between reminders').fill('5000');
    await form.getByRole('button', { name: 'Save alert settings' }).click();
    await expect
      .poll(() => form.getByLabel('Minutes between reminders').getAttribute('aria-invalid'))
      .toBe('true');
  });

  it('audit log: the changes made above, newest first, none holding a planted secret; an entry opens its changes', async () => {
    await show('/settings/audit-log', 'Audit log');
    const table = page.getByRole('table', { name: 'Audit log' });
    await table.waitFor({ timeout: PAGE_TIMEOUT });
    const rows = await table.getByRole('row').allInnerTexts();
    expect(rows[1]).toContain('alert-settings.update');
    expect(rows.join('\n')).toContain('variable.create');
    expect(rows.join('\n')).toContain('client-certificate.create');
    expect(rows.join('\n')).toContain('api-key.create');
    await page.getByLabel('Resource').selectOption('variable');
    await expect
      .poll(async () =>
        (await table.getByRole('row').allInnerTexts()).slice(1).every((r) => r.includes('variable.')),
      )
      .toBe(true);
    await table
      .getByRole('button', { name: /^Open variable\.update/ })
      .first()
      .click();
    const entry = page.getByRole('region', { name: /variable\.update/ });
    await entry.getByRole('table', { name: 'Changes' }).waitFor();
    await expectAccessible('audit-log');
    const shown = await everythingShown(['/v1/audit-log?limit=100']);
    for (const planted of [SECRET_VALUE, PASSPHRASE]) expect(shown).not.toContain(planted);
  });
});
