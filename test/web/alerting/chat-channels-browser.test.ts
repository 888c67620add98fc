import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpPeer, startHttpPeer } from '../../helpers/alert-peers.js';
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
import { GOOD, telegram, type Verdict } from '../../service/alerting/channels/chat-receivers.js';

// A chat channel (Telegram) in Chromium against a real `outpost up`: created through the form, tested with
// the page's button (a real Bot API receiver on loopback checks the request), edited (the saved bot token
// kept while masked), deleted; axe finds no violation on the form, the channel's page and the list, and each
// fits a 390 px phone. The planted bot token appears in no page and no API answer. OUTPOST_SHOTS saves
// screenshots at 1280 px and 390×844.

const API_KEY = `op_chat_${'c'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;
const SHOTS = process.env.OUTPOST_SHOTS;

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('a chat channel in Chromium against outpost up', () => {
  let up: UpProcess;
  let browser: Browser;
  let page: Page;
  let receiver: HttpPeer;
  const verdicts: Verdict[] = [];

  beforeAll(async () => {
    receiver = await startHttpPeer((req) => {
      const verdict = telegram(req);
      verdicts.push(verdict);
      return verdict.answer;
    });
    // The receiver listens on loopback, which the outbound policy refuses unless allowed.
    up = await startUp(API_KEY, { OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32' });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(page, up.baseUrl, API_KEY);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
    await receiver?.close();
  });

  async function expectAccessible(name: string): Promise<void> {
    const violations = await audit(page, `chat-channel-${name}`);
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
  }

  /**
   * The page fits a phone (390×844: wide tables scroll in their own region, the page does not), and, when
   * OUTPOST_SHOTS names a folder, full-page screenshots at 1280 px and 390 px go there.
   */
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

  async function testSend(): Promise<void> {
    const before = verdicts.length;
    await page.getByRole('button', { name: 'Send test notification' }).click();
    await page.getByText('The test notification was delivered.').waitFor({ timeout: PAGE_TIMEOUT });
    expect(verdicts.length).toBe(before + 1);
    expect(verdicts.at(-1)!.problems).toEqual([]);
  }

  it('creates, tests, edits and deletes a Telegram channel; the bot token never shows', async () => {
    await page.goto(new URL('/alert-channels', up.baseUrl).href);
    await page.getByRole('heading', { level: 1, name: 'Alert channels' }).waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByRole('button', { name: 'New alert channel' }).click();
    await page.getByLabel('Type').selectOption({ label: 'Telegram' });
    await page.getByLabel(/^Name/).fill('Ops chat');
    await page.getByLabel(/^Bot token/).fill(GOOD.telegramToken);
    await page.getByLabel(/^Chat ID/).fill('-1001234567890');
    await page.getByLabel(/^Bot API URL/).fill(receiver.origin);
    await expect.poll(() => page.getByText('Every check created from now on alerts here').count()).toBe(1);
    await expectAccessible('form');
    await fitsPhone('telegram-form');

    await page.getByRole('button', { name: 'Create alert channel' }).click();
    await page.waitForURL(/\/alert-channels\/\d+$/, { timeout: PAGE_TIMEOUT });
    const id = Number(page.url().split('/').at(-1));
    await page.getByRole('heading', { name: 'Telegram settings' }).waitFor({ timeout: PAGE_TIMEOUT });
    await testSend();
    expect(JSON.parse(receiver.requests.at(-1)!.body).chat_id).toBe('-1001234567890');
    await expectAccessible('detail');
    await fitsPhone('telegram-detail');

    await page.getByRole('button', { name: 'Edit' }).click();
    const chat = page.getByLabel(/^Chat ID/);
    await chat.fill('@ops_channel');
    expect(await page.getByLabel(/^Bot token/).inputValue()).toBe('*****');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit' }).waitFor({ timeout: PAGE_TIMEOUT });
    const stored = await up.api('GET', `/v1/alert-channels/${id}`);
    expect(stored.json).toMatchObject({
      type: 'WEBHOOK',
      config: { webhookType: 'WEBHOOK_TELEGRAM', chatId: '@ops_channel', botToken: '*****' },
    });
    // The token kept while masked: the receiver accepts the next test only with it.
    await testSend();
    expect(JSON.parse(receiver.requests.at(-1)!.body).chat_id).toBe('@ops_channel');

    const list = await up.api('GET', '/v1/alert-channels');
    const log = await up.api('GET', `/v1/alert-notifications?alertChannelId=${id}`);
    const shown = `${await page.content()}\n${JSON.stringify(list.json)}\n${JSON.stringify(log.json)}`;
    expect(shown).not.toContain(GOOD.telegramToken);

    await page.goto(new URL('/alert-channels', up.baseUrl).href);
    await page.getByRole('link', { name: 'Ops chat' }).waitFor({ timeout: PAGE_TIMEOUT });
    await expectAccessible('list');
    await fitsPhone('channels-list');
    await page.getByRole('link', { name: 'Ops chat' }).click();
    await page.getByRole('button', { name: 'Delete channel' }).click();
    // The button asks first: the same label confirms.
    await page.getByRole('group').getByRole('button', { name: 'Delete channel' }).click();
    await page.waitForURL(/\/alert-channels$/, { timeout: PAGE_TIMEOUT });
    expect((await up.api('GET', `/v1/alert-channels/${id}`)).status).toBe(404);
  }, 90_000);
});
