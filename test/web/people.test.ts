import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpPeer, startSmtpPeer } from '../helpers/alert-peers.js';
import { missingRequirement } from '../helpers/requirements.js';
import {
  audit,
  type BrowserGlobals,
  describeViolations,
  launchChromium,
  signIn,
  startUp,
  type UpProcess,
  webRequirements,
} from '../helpers/web.js';

// People in Chromium against a real `outpost up` and a real SMTP server on loopback: an owner (signed in with
// the account's API key) invites a person from Settings → People; the person opens the emailed link, sets a
// password, turns two-factor on (the code computed from the secret the page shows), signs out and signs in
// again with the password and a code; then forgets the password, resets it through the emailed link and
// signs in with the new one. Each page is audited with axe. No password, secret or token may be left in
// the browser's storage or in an address.

const API_KEY = `op_ppl_${'p'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const EMAIL = 'grace@example.com';
const PASSWORD = `first passphrase ${Math.random().toString(36).slice(2, 10)}`;
const NEW_PASSWORD = `second passphrase ${Math.random().toString(36).slice(2, 10)}`;
const PAGE_TIMEOUT = 15_000;

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('people in Chromium against outpost up and an SMTP server', () => {
  let up: UpProcess;
  let smtp: SmtpPeer;
  let browser: Browser;
  let person: BrowserContext;
  let page: Page;
  let secret = '';
  /** Every address the person's browser requested (a fragment is never part of a request). */
  const urls: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpPeer();
    up = await startUp(API_KEY, { OUTPOST_SMTP_URL: smtp.url, OUTPOST_SMTP_FROM: 'outpost@example.com' });
    browser = await launchChromium();
    person = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    person.on('request', (r) => urls.push(r.url()));
    page = await person.newPage();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
    await smtp?.close();
  });

  /** axe finds no violation on the page as it is (a screenshot is saved too). */
  async function expectAccessible(p: Page, name: string): Promise<void> {
    const violations = await audit(p, `people-${name}`);
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
  }

  /** The link of the newest mail to `to` whose text has `path`, opened on the service's own address. */
  async function linkOfMail(to: string, path: string, after: number): Promise<string> {
    await expect
      .poll(() => smtp.mails.slice(after).filter((m) => m.to.includes(to)).length, { timeout: PAGE_TIMEOUT })
      .toBeGreaterThan(0);
    const mail = smtp.mails
      .slice(after)
      .filter((m) => m.to.includes(to))
      .at(-1)!;
    const match = new RegExp(`https?://[^\\s/]+(${path}#token=[A-Za-z0-9_-]+)`).exec(mail.text ?? '');
    expect(match, mail.text ?? mail.raw).not.toBeNull();
    return new URL(match![1]!, up.baseUrl).href;
  }

  /** The current TOTP code of the secret the page showed. */
  /** A 6-digit code that is none of the codes the service would take now. */
  function wrongCode(): string {
    const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });
    const near = [-1, 0, 1].map((d) => totp.generate({ timestamp: Date.now() + d * 30_000 }));
    return ['000000', '111111', '222222', '333333'].find((c) => !near.includes(c))!;
  }

  /** The last TOTP step a code was made for: the service takes each code once (a replay is refused). */
  let lastStep = -1;
  /**
   * A code the service has not seen: the step before this one's (while more than 10 s of this step remain, so
   * the code is still in the window when the form is sent), this step's, or the next one's (the service
   * accepts one step either side); when all were used, it waits for the next step to begin.
   */
  async function code(): Promise<string> {
    const now = () => Math.floor(Date.now() / 30_000);
    const earliest = Date.now() % 30_000 < 20_000 ? now() - 1 : now();
    const step = Math.max(earliest, lastStep + 1);
    while (step > now() + 1) await new Promise((resolve) => setTimeout(resolve, 250));
    lastStep = step;
    return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({
      timestamp: step * 30_000,
    });
  }

  /** localStorage, sessionStorage and the cookies scripts can read, as one text. */
  async function browserStorage(p: Page): Promise<string> {
    return p.evaluate(() => {
      const { localStorage, sessionStorage, document } = globalThis as unknown as BrowserGlobals;
      const dump = (s: BrowserGlobals['localStorage']) =>
        Array.from({ length: s.length }, (_, i) => `${s.key(i)}=${s.getItem(s.key(i) ?? '')}`).join('\n');
      return `${dump(localStorage)}\n${dump(sessionStorage)}\n${document.cookie}`;
    });
  }

  /** Signs in with the email and password, then the authenticator's code; waits for the checks page. */
  async function signInWithCode(password: string): Promise<void> {
    await page.goto(new URL('/checks', up.baseUrl).href);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('6-digit code').waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByLabel('6-digit code').fill(await code());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { level: 1, name: /^Checks\b/ }).waitFor({ timeout: PAGE_TIMEOUT });
  }

  it('an owner invites a person from Settings → People; the invitation is emailed', async () => {
    const owner = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await owner.newPage();
      await signIn(p, up.baseUrl, API_KEY);
      await p.goto(new URL('/settings/people', up.baseUrl).href);
      await p.getByRole('heading', { level: 1, name: 'People' }).waitFor({ timeout: PAGE_TIMEOUT });
      await p.getByRole('button', { name: 'Invite someone' }).click();
      const form = p.getByRole('form', { name: 'Invite someone' });
      await form.getByLabel('Email').fill(EMAIL);
      await form.getByLabel('Role').selectOption('ADMIN');
      await expectAccessible(p, 'invite');
      await form.getByRole('button', { name: 'Send invitation' }).click();
      await p
        .getByRole('status')
        .filter({ hasText: `Invited ${EMAIL}: the invitation is emailed.` })
        .waitFor();
      const row = p.getByRole('table', { name: 'People' }).getByRole('row').filter({ hasText: EMAIL });
      await expect.poll(() => row.innerText()).toContain('Invited');
      await expectAccessible(p, 'list');
    } finally {
      await owner.close();
    }
    const mail = smtp.mails.find((m) => m.to.includes(EMAIL));
    expect(mail?.subject).toMatch(/invited/i);
  });

  it('the person accepts through the emailed link: the token leaves the address bar, the password signs in', async () => {
    const link = await linkOfMail(EMAIL, '/accept-invitation', 0);
    await page.goto(link);
    const form = page.getByRole('form', { name: 'Join the account' });
    await form.waitFor({ timeout: PAGE_TIMEOUT });
    expect(page.url()).toBe(new URL('/accept-invitation', up.baseUrl).href);
    expect(await form.innerText()).toContain(EMAIL);
    await expectAccessible(page, 'accept-invitation');

    await form.getByLabel('Your name').fill('Grace Hopper');
    await form.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await form.getByLabel('Confirm the password').fill(`${PASSWORD}x`);
    await form.getByRole('button', { name: 'Join the account' }).click();
    await form.getByText('The two passwords are not the same.').waitFor();
    await form.getByLabel('Confirm the password').fill(PASSWORD);
    await form.getByRole('button', { name: 'Join the account' }).click();
    await page.getByRole('heading', { level: 1, name: /^Checks\b/ }).waitFor({ timeout: PAGE_TIMEOUT });

    // The link works once.
    await page.goto(link);
    await page.getByText('This invitation does not work any more').waitFor({ timeout: PAGE_TIMEOUT });
  });

  it('turns two-factor on from My account with a code computed from the secret shown; recovery codes once', async () => {
    await page.goto(new URL('/settings/account', up.baseUrl).href);
    await page.getByRole('heading', { level: 1, name: 'My account' }).waitFor({ timeout: PAGE_TIMEOUT });
    expect(await page.getByText(/Signed in as/).innerText()).toContain('Grace Hopper');
    await page.getByRole('table', { name: 'Your sessions' }).getByText('This browser').waitFor();
    await expectAccessible(page, 'account');

    await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
    await page
      .getByRole('img', { name: /QR code of the two-factor secret/ })
      .waitFor({ timeout: PAGE_TIMEOUT });
    secret = (await page.locator('.st-secret').innerText()).replace(/\s+/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await expectAccessible(page, 'two-factor-enrol');

    await page.getByLabel('The 6-digit code the app shows').fill(wrongCode());
    await page.getByRole('button', { name: 'Turn on', exact: true }).click();
    await page.getByText('This code is not right.').waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByLabel('The 6-digit code the app shows').fill(await code());
    await page.getByRole('button', { name: 'Turn on', exact: true }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await expect.poll(() => codes.count(), { timeout: PAGE_TIMEOUT }).toBe(10);
    const recovery = await codes.allInnerTexts();
    await expectAccessible(page, 'recovery-codes');
    await page.getByRole('button', { name: 'Done, I saved them' }).click();
    await page.getByRole('button', { name: 'Turn off two-factor authentication' }).waitFor();
    const content = await page.content();
    expect(content).not.toContain(recovery[0]);
    expect(content).not.toContain(secret);

    const me = await page.evaluate(async () => (await fetch('/v1/users/me')).json());
    expect(me).toMatchObject({ email: EMAIL, twoFactorEnabled: true, role: 'ADMIN' });
  });

  it('signs out, then signs in with the password and the authenticator code', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Wrong email or password.').waitFor({ timeout: PAGE_TIMEOUT });
    await expectAccessible(page, 'sign-in');

    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('6-digit code').waitFor({ timeout: PAGE_TIMEOUT });
    await expectAccessible(page, 'sign-in-two-factor');
    await page.getByLabel('6-digit code').fill(await code());
    await page.getByRole('button', { name: 'Verify' }).click();
    // Signed out on My account, signed in on it again: the address was kept.
    await page.getByRole('heading', { level: 1, name: 'My account' }).waitFor({ timeout: PAGE_TIMEOUT });
    const session = await page.evaluate(async () => (await fetch('/auth/session')).json());
    expect(session).toMatchObject({
      user: { email: EMAIL, name: 'Grace Hopper' },
      role: 'ADMIN',
      keyPrefix: null,
    });
  });

  it('resets a forgotten password through the emailed link; the same words for an unknown email', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page
      .getByRole('heading', { level: 1, name: 'Reset your password' })
      .waitFor({ timeout: PAGE_TIMEOUT });
    expect(page.url()).toBe(new URL('/forgot-password', up.baseUrl).href);
    await expectAccessible(page, 'forgot-password');

    const before = smtp.mails.length;
    await page.getByLabel('Email').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Email me a link' }).click();
    const unknown = await page.getByRole('status').filter({ hasText: 'Check your email' }).innerText();
    await page.goto(new URL('/forgot-password', up.baseUrl).href);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByRole('button', { name: 'Email me a link' }).click();
    const known = await page.getByRole('status').filter({ hasText: 'Check your email' }).innerText();
    expect(known.replace(EMAIL, '…')).toBe(unknown.replace('nobody@example.com', '…'));
    await expectAccessible(page, 'check-your-email');

    const link = await linkOfMail(EMAIL, '/reset-password', before);
    expect(smtp.mails.slice(before).some((m) => m.to.includes('nobody@example.com'))).toBe(false);
    await page.goto(link);
    const form = page.getByRole('main');
    await form.getByLabel('New password').waitFor({ timeout: PAGE_TIMEOUT });
    expect(page.url()).toBe(new URL('/reset-password', up.baseUrl).href);
    await expectAccessible(page, 'reset-password');
    await form.getByLabel('New password').fill('too short');
    await form.getByLabel('Confirm the password').fill('too short');
    await form.getByRole('button', { name: 'Set the password' }).click();
    await form.getByText('Use at least 12 characters.').waitFor();
    await form.getByLabel('New password').fill(NEW_PASSWORD);
    await form.getByLabel('Confirm the password').fill(NEW_PASSWORD);
    await form.getByRole('button', { name: 'Set the password' }).click();
    await page.getByText('Your password is changed').waitFor({ timeout: PAGE_TIMEOUT });

    // The old password no longer signs in; the new one does, with the code.
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Wrong email or password.').waitFor({ timeout: PAGE_TIMEOUT });
    await signInWithCode(NEW_PASSWORD);
  });

  it('kept every password, secret and token out of the browser storage and the addresses', async () => {
    const stored = await browserStorage(page);
    const addresses = urls.filter((u) => !u.startsWith('data:')).join('\n');
    for (const planted of [PASSWORD, NEW_PASSWORD, secret]) {
      expect(stored).not.toContain(planted);
      expect(addresses).not.toContain(planted);
    }
    expect(addresses).not.toContain('token=');
    expect(up.stdout() + up.stderr()).not.toContain(PASSWORD);
    expect(up.stdout() + up.stderr()).not.toContain(secret);
  });
});
