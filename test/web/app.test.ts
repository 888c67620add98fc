import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitSession } from '../helpers/cli.js';
import { missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import {
  audit,
  type BrowserGlobals,
  type BrowserStorage,
  describeViolations,
  type LoopbackServer,
  launchChromium,
  SCREENSHOT_DIR,
  signIn,
  startLoopbackServer,
  startUp,
  tabFromTop,
  type UpProcess,
  webRequirements,
} from '../helpers/web.js';

// The web app in Chromium against a real `outpost up` (service + embedded agent): signing in keeps the API
// key out of the browser and the logs, a URL check made through the form runs live, validation messages
// sit next to their field, every page passes an axe audit (WCAG 2.2 AA) and can be used from the keyboard,
// a cross-site form post is refused, a signed-out browser sees nothing of the account, and a browser check's
// trace opens in the trace viewer the service serves. One `outpost up` and one browser for the whole file.

const API_KEY = `op_web_${'w'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'q'.repeat(20)}`;
const CHECK_NAME = `Web e2e loopback ${Math.random().toString(36).slice(2, 8)}`;

const missing = missingRequirement(webRequirements());
const runtimeMissing = missing ?? missingRequirement([runtimeRequirement('2026.04')]);

/** How long a page may take to show its content after navigation, ms. */
const PAGE_TIMEOUT = 15_000;

describe.skipIf(missing !== null)('web app in Chromium against outpost up', () => {
  let up: UpProcess;
  let site: LoopbackServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** The browser check's run, started in beforeAll (when the runtime is installed). */
  let browserRun: ReturnType<typeof runBrowserCheck> | undefined;
  /** Every URL the signed-in context navigated to or requested. */
  const urlsSeen: string[] = [];
  /** Ids made along the way, for the later tests (the audits of every page). */
  const made: {
    checkId?: string;
    resultPath?: string;
    sessionPath?: string;
  } = {};

  beforeAll(async () => {
    site = await startLoopbackServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html lang="en"><title>Web e2e target</title><h1>Target</h1><p>hello</p></html>',
      );
    });
    // The page's webhook channel points at the loopback site: the outbound policy must allow it.
    up = await startUp(API_KEY, { OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32' });
    if (!runtimeMissing) {
      browserRun = runBrowserCheck();
      // Awaited by its test; a rejection is reported there.
      browserRun.catch(() => undefined);
    }
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.on('request', (r) => urlsSeen.push(r.url()));
    context.on('page', (p) =>
      p.on('framenavigated', (f) => {
        urlsSeen.push(f.url());
      }),
    );
    page = await context.newPage();
    page.on('framenavigated', (f) => {
      urlsSeen.push(f.url());
    });
  }, 90_000);

  /**
   * Creates a browser check against the loopback site and runs it now; resolves with its final session. Started
   * in beforeAll so the agent's browser run overlaps the other tests.
   */
  async function runBrowserCheck(): Promise<{ checkId: string; session: { status: string } }> {
    const script = [
      "import { test, expect } from '@playwright/test';",
      "test('target page', async ({ page }) => {",
      '  await page.goto(process.env.SITE_URL);',
      "  await expect(page).toHaveTitle('Web e2e target');",
      '});',
    ].join('\n');
    const created = await up.api('POST', '/v1/checks/browser', {
      name: 'Web e2e browser',
      activated: false,
      script,
      timeoutSeconds: 60,
      environmentVariables: [{ key: 'SITE_URL', value: `${site.url}/` }],
    });
    if (created.status !== 201)
      throw new Error(`browser check: ${created.status} ${JSON.stringify(created.json)}`);
    const checkId = created.json.id as string;
    const started = await up.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    if (started.status !== 201) throw new Error(`trigger: ${started.status} ${JSON.stringify(started.json)}`);
    return { checkId, session: await awaitSession(up.api, started.json.sessions[0].checkSessionId, 150_000) };
  }

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
    await site?.close();
  });

  /** Opens `path` and waits for its h1 and for its first load to end (no "Loading…", no error notice). */
  async function show(path: string, p: Page = page): Promise<void> {
    await p.goto(new URL(path, up.baseUrl).href);
    await settle(p);
  }

  /**
   * Waits for the page's h1 and for its loads to end; fails on an error notice or the not-found page. After
   * an in-app navigation, pass the previous page's h1: the router keeps the previous page on screen while
   * the next one's chunk loads.
   */
  async function settle(p: Page = page, previousHeading?: string): Promise<void> {
    if (previousHeading !== undefined) {
      await expect
        .poll(
          () =>
            p
              .locator('main h1')
              .first()
              .innerText()
              .catch(() => previousHeading),
          {
            timeout: PAGE_TIMEOUT,
            message: `${p.url()} still shows the previous page`,
          },
        )
        .not.toBe(previousHeading);
    }
    await p
      .locator('main h1')
      .first()
      .waitFor({ timeout: PAGE_TIMEOUT })
      .catch((err: Error) => {
        throw new Error(`${p.url()}: no h1 in <main>: ${err.message}`);
      });
    // Its loads are over: no "Loading…" (the Loading component, or a page's own status line).
    await expect
      .poll(
        async () =>
          (await p.locator('main .loading').count()) +
          (await p
            .locator('main [role="status"]')
            .filter({ hasText: /^\s*Loading\b/ })
            .count()),
        { timeout: PAGE_TIMEOUT, message: `${p.url()} still loading` },
      )
      .toBe(0);
    const h1 = await p.locator('main h1').first().innerText();
    expect(h1, `${p.url()} is the not-found page`).not.toBe('Page not found');
    const errors = await p.locator('main .notice-error').allInnerTexts();
    expect(errors, `${p.url()} shows an error`).toEqual([]);
  }

  /** axe audit (no violation) and keyboard reach (navigation, then a control in <main>) of the shown page. */
  async function auditShown(name: string, options: { signedIn?: boolean } = {}): Promise<void> {
    const violations = await audit(page, name);
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
    const walk = await tabFromTop(page);
    expect.soft(walk.reachedMain, `${name}: Tab never reached <main>: ${walk.path.join(' → ')}`).toBe(true);
    if (options.signedIn !== false) {
      expect
        .soft(walk.reachedNavigation, `${name}: Tab never reached the navigation: ${walk.path.join(' → ')}`)
        .toBe(true);
    }
  }

  /** What the browser keeps: localStorage, sessionStorage and the cookies scripts can read. */
  function browserStorage(p: Page): Promise<string> {
    return p.evaluate(() => {
      const { localStorage, sessionStorage, document } = globalThis as unknown as BrowserGlobals;
      const dump = (s: BrowserStorage) =>
        Array.from({ length: s.length }, (_, i) => {
          const key = s.key(i) ?? '';
          return `${key}=${s.getItem(key)}`;
        }).join('\n');
      return `${dump(localStorage)}\n${dump(sessionStorage)}\n${document.cookie}`;
    });
  }

  it('signs in through the form: the key is kept nowhere, the session cookie is HttpOnly and SameSite=Strict', async () => {
    await page.goto(new URL('/checks', up.baseUrl).href);
    await page.getByLabel('API key').waitFor({ timeout: PAGE_TIMEOUT });
    const violations = await audit(page, 'sign-in');
    expect.soft(violations, describeViolations('sign-in', violations)).toEqual([]);
    const walk = await tabFromTop(page);
    expect.soft(walk.reachedMain, `sign-in: ${walk.path.join(' → ')}`).toBe(true);

    // A wrong key first: the message is next to the field, the field invalid.
    await page.getByLabel('API key').fill(`op_wrong_${'x'.repeat(40)}`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toMatch(/not valid/i);
    expect(await page.getByLabel('API key').getAttribute('aria-invalid')).toBe('true');

    await signIn(page, up.baseUrl, API_KEY);
    expect(await page.getByLabel('API key').count()).toBe(0);
    expect(await browserStorage(page)).not.toContain(API_KEY);
    // The session: an httpOnly, SameSite=Strict cookie scripts cannot read, which is not the key.
    const cookies = await context.cookies(up.baseUrl);
    const session = cookies.find((c) => c.name === 'outpost_session');
    expect(session, JSON.stringify(cookies)).toBeDefined();
    expect(session!.httpOnly).toBe(true);
    expect(session!.sameSite).toBe('Strict');
    expect(session!.path).toBe('/');
    expect(session!.value).not.toContain(API_KEY);
    expect(
      await page.evaluate(() => (globalThis as unknown as BrowserGlobals).document.cookie),
    ).not.toContain('outpost_session');
    // A reload keeps the session (the cookie, not anything the page stored).
    await page.reload();
    await page.getByRole('heading', { level: 1, name: /^Checks\b/ }).waitFor({ timeout: PAGE_TIMEOUT });
  });

  it('creates a URL check through the form, runs it now, shows its result live with the waterfall, and its session page', async () => {
    await show('/checks/new?type=URL');
    await auditShown('check-form-new-url');
    await page.getByLabel(/^Name\b/).fill(CHECK_NAME);
    await page.getByLabel(/^URL\b/).fill(`${site.url}/`);
    const formHeading = await page.locator('main h1').innerText();
    await page.getByRole('button', { name: /^(Create|Save)/ }).click();
    await page.waitForURL((u) => /^\/checks\/(?!new$)[^/]+$/.test(u.pathname), { timeout: PAGE_TIMEOUT });
    const checkId = new URL(page.url()).pathname.split('/')[2]!;
    expect(checkId).not.toBe('new');
    made.checkId = checkId;
    const stored = await up.api('GET', `/v1/checks/${checkId}`);
    expect(stored.status).toBe(200);
    expect(stored.json).toMatchObject({
      name: CHECK_NAME,
      checkType: 'URL',
      request: { url: `${site.url}/` },
    });
    await settle(page, formHeading);
    await expect.poll(() => page.locator('main h1').innerText()).toContain(CHECK_NAME);

    // A new check's first scheduled run starts at once: its result comes first, so what follows is the button's.
    const resultLinks = page.locator(`main a[href^="/checks/${checkId}/results/"]`);
    await resultLinks.first().waitFor({ timeout: 60_000 });
    const hrefs = () => resultLinks.evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    const shownBefore = new Set(await hrefs());
    const requestsBefore = site.requests.length;
    await page.getByRole('button', { name: 'Run now' }).click();
    // The session's result appears without a reload: a link to the result page and one to the session page.
    await expect
      .poll(async () => (await hrefs()).some((href) => !shownBefore.has(href)), { timeout: 60_000 })
      .toBe(true);
    const resultLink = resultLinks.first();
    expect(site.requests.length).toBeGreaterThan(requestsBefore);
    const sessionLink = page.locator('main a[href*="/check-sessions/"]').first();
    await sessionLink.waitFor({ timeout: PAGE_TIMEOUT });
    await expect.poll(() => page.locator('main').innerText()).toMatch(/Passed/);
    made.sessionPath = (await sessionLink.getAttribute('href'))!;
    expect(made.sessionPath).toMatch(new RegExp(`^/accounts/[^/]+/checks/${checkId}/check-sessions/[^/]+$`));
    await auditShown('check-detail-after-run');

    const checkHeading = await page.locator('main h1').innerText();
    await resultLink.click();
    await page.waitForURL(/\/results\//, { timeout: PAGE_TIMEOUT });
    made.resultPath = new URL(page.url()).pathname;
    await settle(page, checkHeading);
    // The HTTP timing waterfall: a table of the phases, each named with its duration.
    const timing = page.getByRole('table', { name: /timing/i });
    await timing.waitFor({ timeout: PAGE_TIMEOUT });
    for (const phase of [/DNS/i, /TCP/i, /first byte/i, /download/i]) {
      const row = timing.getByRole('row').filter({ hasText: phase });
      expect(await row.count(), `waterfall phase ${phase}`).toBe(1);
      expect(await row.innerText(), `waterfall phase ${phase}`).toMatch(/\d+(\.\d+)?\s*(µs|ms|s)\b/);
    }
    await auditShown('result-url');

    await show(made.sessionPath);
    await expect.poll(() => page.locator('main').innerText()).toMatch(/Passed/);
    expect(await page.locator(`main a[href^="/checks/${checkId}/results/"]`).count()).toBeGreaterThan(0);
    await auditShown('check-session');
  }, 120_000);

  it("shows the API's validation message next to the field it names when editing", async () => {
    const checkId = made.checkId;
    expect(checkId, 'the check of the previous test').toBeDefined();
    // A URL scheme the browser's URL field accepts but the API refuses: what the API answers is the reference.
    const bad = 'ftp://127.0.0.1/file';
    const stored = (await up.api('GET', `/v1/checks/${checkId}`)).json;
    const refused = await up.api('PUT', `/v1/checks/${checkId}`, {
      name: stored.name,
      request: { ...stored.request, url: bad },
      heartbeat: {},
      script: '',
    });
    expect(refused.status).toBe(400);
    expect(refused.json.attributes?.field).toBe('request.url');
    const message: string = refused.json.message;

    await show(`/checks/${checkId}/edit`);
    await auditShown('check-form-edit-url');
    const url = page.getByLabel(/^URL\b/);
    await url.fill(bad);
    await page.getByRole('button', { name: /^(Save|Update)/ }).click();
    await expect.poll(() => url.getAttribute('aria-invalid'), { timeout: PAGE_TIMEOUT }).toBe('true');
    // The invalid control has the focus, so a keyboard or screen-reader user lands on it (the form moves it there
    // after the render that marks the field, so it is waited for as aria-invalid is).
    await expect
      .poll(
        () => url.evaluate((el) => el === (globalThis as unknown as BrowserGlobals).document.activeElement),
        {
          timeout: PAGE_TIMEOUT,
        },
      )
      .toBe(true);
    const field = url.locator(
      'xpath=ancestor::*[contains(concat(" ", normalize-space(@class), " "), " field ")][1]',
    );
    const fieldText = await field.innerText();
    // The message sits inside the field's own container (not only in a notice at the top of the form).
    expect(fieldText).toContain(messageCore(message));
    // The control points at it.
    const describedBy = (await url.getAttribute('aria-describedby')) ?? '';
    const described = await Promise.all(
      describedBy
        .split(/\s+/)
        .filter(Boolean)
        .map((id) => page.locator(`[id="${id}"]`).innerText()),
    );
    expect(described.join('\n')).toContain(messageCore(message));
    // Nothing was saved.
    expect((await up.api('GET', `/v1/checks/${checkId}`)).json.request.url).toBe(`${site.url}/`);
    await auditShown('check-form-edit-invalid');
  });

  it('lists the check with its status text, and shows a new last result without a reload', async () => {
    const checkId = made.checkId!;
    await show('/checks');
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: CHECK_NAME, exact: true }) });
    await row.waitFor({ timeout: PAGE_TIMEOUT });
    expect(await row.innerText()).toMatch(/Passing/);
    await auditShown('checks');

    const resultLink = row.locator(`a[href^="/checks/${checkId}/results/"]`);
    const before = await resultLink.getAttribute('href');
    await page.evaluate(() => {
      (globalThis as unknown as BrowserGlobals).outpostNoReload = true;
    });
    const started = await up.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(started.status).toBe(201);
    const session = await awaitSession(up.api, started.json.sessions[0].checkSessionId);
    expect(session.status).toBe('PASSED');
    // The row's last result moves on to the newest final result the API knows (this run, or a scheduled
    // run that came after it) without a reload: the statuses are polled every 10 s.
    let shown: string | null = null;
    let newest: string | undefined;
    await expect
      .poll(
        async () => {
          shown = await resultLink.getAttribute('href');
          newest = (await up.api('GET', `/v1/check-statuses/${checkId}`)).json?.lastResultId;
          return shown !== before && shown === `/checks/${checkId}/results/${newest}`;
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBe(true)
      .catch(async (err: Error) => {
        throw new Error(
          `the row still shows ${shown} (before the run: ${before}; the API's last result: ${newest}); ` +
            `row: ${JSON.stringify(await row.innerText())}: ${err.message}`,
        );
      });
    expect(await page.evaluate(() => (globalThis as unknown as BrowserGlobals).outpostNoReload)).toBe(true);
  }, 60_000);

  it('every other page passes an axe audit and is reachable from the keyboard', async () => {
    // Things to show, made through the API.
    const location = await up.api('POST', '/v1/private-locations', {
      name: 'Web basement',
      slugName: 'web-basement',
    });
    expect(location.status, JSON.stringify(location.json)).toBe(201);
    const channel = await up.api('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'Web e2e hook', url: `${site.url}/hook` },
    });
    expect(channel.status, JSON.stringify(channel.json)).toBe(201);
    const group = await up.api('POST', '/v1/check-groups', {
      name: 'Web e2e group',
      activated: true,
      apiCheckDefaults: {},
    });
    expect(group.status, JSON.stringify(group.json)).toBe(201);
    const service = await up.api('POST', '/v1/status-pages/services', { name: 'Web e2e API' });
    expect(service.status, JSON.stringify(service.json)).toBe(201);
    const incident = await up.api('POST', '/v1/incidents', {
      name: 'Web e2e outage',
      impact: 'MINOR',
      services: [{ id: service.json.id }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking into it' }],
    });
    expect(incident.status, JSON.stringify(incident.json)).toBe(201);
    const statusPage = await up.api('POST', '/v1/status-pages', {
      name: 'Web e2e status',
      url: 'web-e2e-status',
      cards: [{ name: 'Core', services: [{ id: service.json.id }] }],
    });
    expect(statusPage.status, JSON.stringify(statusPage.json)).toBe(201);
    const agents = (await up.api('GET', '/v1/agents')).json;
    const agentList: { id: string }[] = Array.isArray(agents) ? agents : (agents?.entries ?? []);
    expect(agentList.length, 'the embedded agent of outpost up').toBeGreaterThan(0);

    const pages: [name: string, path: string][] = [
      ['private-locations', '/private-locations'],
      ['private-location', `/private-locations/${location.json.id}`],
      ['agent', `/agents/${agentList[0]!.id}`],
      ['alert-channels', '/alert-channels'],
      ['alert-channel', `/alert-channels/${channel.json.id}`],
      ['check-groups', '/check-groups'],
      ['check-group', `/check-groups/${group.json.id}`],
      ['incidents', '/incidents'],
      ['incident', `/incidents/${incident.json.id}`],
      ['status-pages', '/status-pages'],
      ['check-detail', `/checks/${made.checkId}`],
      ['check-form-new-api', '/checks/new?type=API'],
    ];
    for (const [name, path] of pages) {
      await show(path);
      await auditShown(name);
    }
  }, 120_000);

  it('the dark colour scheme passes the audit too (its own tokens: contrast is checked again)', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      const dark: [name: string, path: string | undefined][] = [
        ['dark-checks', '/checks'],
        ['dark-check-detail', `/checks/${made.checkId}`],
        ['dark-result-url', made.resultPath],
        ['dark-check-session', made.sessionPath],
        ['dark-check-form-edit-url', `/checks/${made.checkId}/edit`],
        ['dark-alert-channels', '/alert-channels'],
      ];
      for (const [name, path] of dark) {
        expect(path, `${name}: the page of an earlier test`).toBeDefined();
        await show(path!);
        expect(
          await page.evaluate(
            () =>
              (globalThis as unknown as BrowserGlobals).matchMedia('(prefers-color-scheme: dark)').matches,
          ),
        ).toBe(true);
        const violations = await audit(page, name);
        expect.soft(violations, describeViolations(name, violations)).toEqual([]);
      }
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  }, 60_000);

  it('reflows at 320 CSS pixels wide: no page scrolls sideways (WCAG 1.4.10; wide tables scroll in their own box)', async () => {
    await page.setViewportSize({ width: 320, height: 640 });
    try {
      const narrow: [name: string, path: string | undefined][] = [
        ['narrow-checks', '/checks'],
        ['narrow-check-detail', `/checks/${made.checkId}`],
        ['narrow-result-url', made.resultPath],
        ['narrow-check-form-edit-url', `/checks/${made.checkId}/edit`],
        ['narrow-private-locations', '/private-locations'],
      ];
      for (const [name, path] of narrow) {
        expect(path, `${name}: the page of an earlier test`).toBeDefined();
        await show(path!);
        await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
        const overflow = await page.evaluate(() => {
          const { document } = globalThis as unknown as BrowserGlobals;
          return document.documentElement.scrollWidth - document.documentElement.clientWidth;
        });
        expect
          .soft(overflow, `${name}: the page is ${overflow} px wider than the window`)
          .toBeLessThanOrEqual(1);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('refuses a form posted from another site or origin, and creates nothing', async () => {
    // text/plain smuggles a JSON-looking body: `{"name":"…","request":{…},"pad":"="}`.
    const form = (action: string) =>
      '<!doctype html><html lang="en"><title>Win a prize</title><body>' +
      `<form id="f" method="post" action="${action}" enctype="text/plain">` +
      `<input type="hidden" name='{"name":"csrf made","activated":false,"request":{"url":"http://127.0.0.1/"},"pad":"' value='"}'>` +
      '</form><script>document.getElementById("f").submit()</script></body></html>';
    const target = `${up.baseUrl}/v1/checks/url`;
    const serve = (host: '127.0.0.1' | 'localhost') =>
      startLoopbackServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(form(target));
      }, host);
    // Another site (localhost vs the app's 127.0.0.1: the cookie is not even sent) and the same site on
    // another port (the cookie is sent: the CSRF token and the Origin check must refuse it).
    for (const attacker of [await serve('localhost'), await serve('127.0.0.1')]) {
      const evil = await context.newPage();
      try {
        const answered = evil.waitForResponse((r: Response) => r.url() === target, { timeout: PAGE_TIMEOUT });
        await evil.goto(`${attacker.url}/`);
        const response = await answered;
        expect([401, 403, 415], `${attacker.url} → ${response.status()}`).toContain(response.status());
      } finally {
        await evil.close();
        await attacker.close();
      }
    }
    const checks = (await up.api('GET', '/v1/checks')).json as { name: string }[];
    expect(checks.map((c) => c.name)).not.toContain('csrf made');
    // The signed-in page still works (the session was not ended by the refused posts).
    await show('/checks');
  });

  it('a signed-out browser sees the sign-in form and nothing of the account', async () => {
    const stranger = await browser.newContext();
    try {
      const p = await stranger.newPage();
      const bodies: Promise<string>[] = [];
      p.on('response', (r) => {
        bodies.push(r.text().catch(() => ''));
      });
      for (const path of ['/checks', `/checks/${made.checkId}`]) {
        await p.goto(new URL(path, up.baseUrl).href);
        await p.getByLabel('API key').waitFor({ timeout: PAGE_TIMEOUT });
        expect(await p.content()).not.toContain(CHECK_NAME);
      }
      const all = await Promise.all(bodies);
      expect(all.length).toBeGreaterThan(0);
      for (const body of all) expect(body).not.toContain(CHECK_NAME);
    } finally {
      await stranger.close();
    }
  });

  it('opens a browser check trace in the trace viewer', async ({ skip }) => {
    if (runtimeMissing) skip(runtimeMissing);
    const { checkId, session: done } = await browserRun!;
    const [listed] = (await up.api('GET', `/v1/check-results/${checkId}?limit=1`)).json;
    const result = (await up.api('GET', `/v1/check-results/${checkId}/${listed.id}`)).json;
    expect(done.status, JSON.stringify(result.errorMessage)).toBe('PASSED');
    const trace = (result.artifacts as { name: string }[]).find((a) => /trace.*\.zip$/.test(a.name));
    expect(trace, JSON.stringify(result.artifacts)).toBeDefined();

    await show(`/checks/${checkId}/results/${listed.id}`);
    await auditShown('result-browser');
    const link = page.getByRole('link', { name: 'Open trace in the trace viewer' }).first();
    const href = (await link.getAttribute('href'))!;
    expect(href).toMatch(/^\/trace-viewer\/index\.html\?trace=/);
    expect(decodeURIComponent(href.split('trace=')[1]!)).toBe(
      `/v1/check-results/${checkId}/${listed.id}/artifacts/${encodeURIComponent(trace!.name)}`,
    );
    const [viewer] = await Promise.all([
      context.waitForEvent('page', { timeout: PAGE_TIMEOUT }),
      link.click(),
    ]);
    const foreign: string[] = [];
    viewer.on('request', (r) => {
      if (!r.url().startsWith(up.baseUrl) && !/^(data|blob):/.test(r.url())) foreign.push(r.url());
    });
    await viewer.waitForLoadState();
    // The action list shows what the check did: the navigation to the site (its address), the expect.
    try {
      await viewer.getByText('Navigate', { exact: true }).first().waitFor({ timeout: 30_000 });
      await viewer
        .getByText(`127.0.0.1:${site.port}/`, { exact: true })
        .first()
        .waitFor({ timeout: PAGE_TIMEOUT });
      await viewer
        .getByText(/to\.have\.title/)
        .first()
        .waitFor({ timeout: PAGE_TIMEOUT });
    } finally {
      await viewer.screenshot({ path: join(SCREENSHOT_DIR, 'trace-viewer.png') }).catch(() => undefined);
    }
    expect(foreign).toEqual([]);
    await viewer.close();
  }, 180_000);

  it('kept the API key out of every URL, the browser storage and the service output', async () => {
    expect(urlsSeen.length).toBeGreaterThan(10);
    for (const url of urlsSeen) expect(url).not.toContain(API_KEY);
    expect(await browserStorage(page)).not.toContain(API_KEY);
    expect(up.stdout()).not.toContain(API_KEY);
    expect(up.stderr()).not.toContain(API_KEY);
    const logFile = join(up.dataDir, 'outpost-up.log');
    if (existsSync(logFile)) expect(readFileSync(logFile, 'utf8')).not.toContain(API_KEY);
  });
});

/** The message without a leading field path the page may show separately ("request.url must …" → "must …"). */
function messageCore(message: string): string {
  return message.replace(/^[\w.[\]]+ (?=must|is|should)/, '');
}
