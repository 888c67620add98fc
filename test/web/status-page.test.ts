import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumRequirement, missingRequirement } from '../helpers/requirements.js';
import { type TestService, testService } from '../helpers/service.js';
import {
  type ApiCall,
  expectedDay,
  type SeededStatusPage,
  type SeededService,
  seedStatusPage,
} from '../helpers/status-pages.js';
import { AXE_TAGS, describeViolations, launchChromium } from '../helpers/web.js';

// Public status pages in Chromium (docs/status-pages.md): a seeded page of 5 cards × 10 services with 90 days
// of incidents, served by one in-process service listening on 127.0.0.1, read by one Chromium. The page shows
// every service with its state in words and its 90-day strip (numbers checked against the seeded incidents),
// reads the same without JavaScript, passes axe (WCAG 2.2 AA) on every view, fits 360 px, is usable from the
// keyboard in document order with a visible focus, requests nothing from another origin, and a private page
// shows a visitor without a key only the 404 until the key form opens it (and again once the key is deleted).

const missing = missingRequirement([chromiumRequirement()]);

/** Screenshots of every view: `<os tmpdir>/outpost-status-screenshots/`. */
const SCREENSHOT_DIR = join(tmpdir(), 'outpost-status-screenshots');
const PAGE_TIMEOUT = 15_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY_MS = 86_400_000;

/** The state words of a service, by ServiceState (Statuspage's component statuses in words). */
const STATE_WORDS: Record<string, RegExp> = {
  operational: /\boperational\b/i,
  under_maintenance: /\b(under )?maintenance\b/i,
  degraded_performance: /\bdegraded( performance)?\b/i,
  partial_outage: /\bpartial outage\b/i,
  major_outage: /\bmajor outage\b/i,
};

/** Names planted on the private page: none may reach a visitor without its key. */
const PRIVATE = {
  name: 'Quokka Internal Status 7f3a',
  url: 'quokka-internal',
  service: 'Wombat ledger service 91c2',
  incident: 'Numbat replication stall 5d8e',
};

/** One strip day as the page shows it. */
type StripDay = { label: string; tabbable: boolean };
/** One service as the page shows it: its name, the text around it (strip left out) and its strip. */
type ShownService = { name: string; text: string; days: StripDay[] };

describe.skipIf(missing !== null)('public status pages in Chromium', () => {
  let svc: TestService;
  let origin: string;
  let seeded: SeededStatusPage;
  let lightUrl: string;
  let darkUrl: string;
  let privatePage: { id: string; keyId: string; key: string };
  let browser: Browser;
  /** Every request any context of the browser made. */
  const requested: string[] = [];

  const api: ApiCall = async (method, path, body) => {
    const res = await svc.request(method, path, body);
    return { status: res.statusCode, json: res.body ? res.json() : null };
  };

  beforeAll(async () => {
    svc = await testService();
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(svc.app.server.address() as AddressInfo).port}`;
    // Logo and favicon on the service itself: the page's own badge.
    const badge = `${origin}/status/acme-cloud/badge.svg`;
    seeded = await seedStatusPage(api, {
      db: svc.context.db,
      page: { defaultTheme: 'AUTO', logo: badge, favicon: badge, redirectTo: 'https://acme.example.test/' },
    });
    // The same services on a LIGHT and a DARK page.
    for (const theme of ['LIGHT', 'DARK'] as const) {
      const res = await api('POST', '/v1/status-pages', {
        name: `Acme ${theme.toLowerCase()} status`,
        url: `acme-${theme.toLowerCase()}`,
        defaultTheme: theme,
        cards: seeded.cards
          .slice(0, 2)
          .map((c) => ({ name: c.name, services: c.services.map((s) => ({ id: s.id })) })),
      });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
    }
    // The keyboard walk: one card of the seeded page (10 services, 900 strip days), the same views around it.
    // The markup of a service does not change with their number; 4,500 Tab presses would take half a minute.
    const keyboardPage = await api('POST', '/v1/status-pages', {
      name: 'Acme keyboard status',
      url: 'acme-keyboard',
      cards: seeded.cards
        .slice(0, 1)
        .map((c) => ({ name: c.name, services: c.services.map((s) => ({ id: s.id })) })),
    });
    expect(keyboardPage.status, JSON.stringify(keyboardPage.json)).toBe(201);
    lightUrl = `${origin}/status/acme-light`;
    darkUrl = `${origin}/status/acme-dark`;
    // The private page, with planted names.
    const service = await api('POST', '/v1/status-pages/services', { name: PRIVATE.service });
    expect(service.status).toBe(201);
    const page = await api('POST', '/v1/status-pages', {
      name: PRIVATE.name,
      url: PRIVATE.url,
      isPrivate: true,
      description: `About ${PRIVATE.name}`,
      cards: [{ name: `${PRIVATE.service} card`, services: [{ id: service.json.id }] }],
    });
    expect(page.status, JSON.stringify(page.json)).toBe(201);
    const key = (page.json.keys as { id: string; key?: string }[]).find((k) => k.key);
    expect(key, 'a private page is made with a key shown once').toBeDefined();
    privatePage = { id: page.json.id, keyId: key!.id, key: key!.key! };
    const incident = await api('POST', '/v1/incidents', {
      name: PRIVATE.incident,
      impact: 'MAJOR',
      services: [{ id: service.json.id }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: `Looking into ${PRIVATE.incident}` }],
    });
    expect(incident.status).toBe(201);

    browser = await launchChromium();
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    console.log(`status page screenshots: ${SCREENSHOT_DIR}`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  /** A new context recording its requests. */
  async function newContext(options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    context.on('request', (r) => requested.push(r.url()));
    // A step that cannot happen fails with its own message, before the test's timeout.
    context.setDefaultTimeout(PAGE_TIMEOUT);
    return context;
  }

  /** Opens `path` (on the service) and expects a 200 with one h1. */
  async function open(page: Page, path: string): Promise<void> {
    const res = await page.goto(new URL(path, origin).href, { timeout: PAGE_TIMEOUT });
    expect(res?.status(), `${path} answered ${res?.status()}`).toBe(200);
    expect(await page.locator('h1').count(), `${path}: one h1`).toBe(1);
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  /** axe against WCAG 2.2 AA with a screenshot; expects no violation (printed when there are some). */
  async function auditPage(page: Page, name: string): Promise<void> {
    await screenshot(page, name);
    const { violations } = await new AxeBuilder({ page }).withTags([...AXE_TAGS]).analyze();
    console.log(describeViolations(name, violations));
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
  }

  /**
   * Reads every service off the page: a strip day is a focusable element whose label (`aria-label`, else
   * `title`, else its text) starts with a date such as "Nov 12:"; its service is the nearest container that
   * holds an element whose whole text is one of `names`. The service's text is the container's text with the
   * strip days left out.
   */
  function readServices(page: Page, names: string[]): Promise<ShownService[]> {
    return page.evaluate((names) => {
      const doc = (globalThis as any).document;
      const dayRe = /^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}: /;
      const label = (el: any): string =>
        (el.getAttribute('aria-label') ?? el.getAttribute('title') ?? el.textContent ?? '')
          .trim()
          .replace(/\s+/g, ' ');
      const wanted = new Set(names);
      const days = [...doc.querySelectorAll('body *')].filter(
        (el: any) => dayRe.test(label(el)) && (el.tabIndex >= 0 || el.hasAttribute('tabindex')),
      );
      const byContainer = new Map<any, { name: string; days: any[] }>();
      for (const day of days) {
        let box = day.parentElement;
        let name: string | null = null;
        while (box && box !== doc.body) {
          const found = new Set<string>();
          for (const el of box.querySelectorAll('*')) {
            const text = (el.textContent ?? '').trim().replace(/\s+/g, ' ');
            if (wanted.has(text)) found.add(text);
          }
          if (found.size > 0) {
            name = found.size === 1 ? [...found][0]! : `ambiguous: ${[...found].join(', ')}`;
            break;
          }
          box = box.parentElement;
        }
        if (!box || name === null) continue;
        const entry = byContainer.get(box) ?? { name, days: [] };
        entry.days.push(day);
        byContainer.set(box, entry);
      }
      return [...byContainer.entries()].map(([box, entry]) => {
        const clone = box.cloneNode(true);
        const cloneDays = [...clone.querySelectorAll('*')].filter(
          (el: any) => dayRe.test(label(el)) && (el.tabIndex >= 0 || el.hasAttribute('tabindex')),
        );
        for (const el of cloneDays) el.remove();
        // Text nodes joined with spaces: adjacent elements' words stay apart ("Operational" "90 days ago").
        const walker = doc.createTreeWalker(clone, 4);
        const words: string[] = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) words.push(node.nodeValue ?? '');
        return {
          name: entry.name,
          text: words.join(' ').replace(/\s+/g, ' ').trim(),
          days: entry.days.map((el: any) => ({ label: label(el), tabbable: el.tabIndex >= 0 })),
        };
      });
    }, names);
  }

  /** `Nov 12` of a UTC day `YYYY-MM-DD`. */
  const shortDate = (date: string) => `${MONTHS[Number(date.slice(5, 7)) - 1]} ${Number(date.slice(8, 10))}`;

  /** The 90 UTC days of a strip, oldest first, today last. */
  function stripDates(nowMs: number): string[] {
    const today = Date.UTC(
      new Date(nowMs).getUTCFullYear(),
      new Date(nowMs).getUTCMonth(),
      new Date(nowMs).getUTCDate(),
    );
    return Array.from({ length: 90 }, (_, i) =>
      new Date(today - (89 - i) * DAY_MS).toISOString().slice(0, 10),
    );
  }

  /** The state a seeded service must show: the worst impact of its open incidents. */
  function expectedState(service: SeededService): string {
    const open = seeded.incidents.filter((i) => i.stoppedAtMs === null && i.serviceIds.includes(service.id));
    if (open.some((i) => i.impact === 'MAJOR')) return 'major_outage';
    if (open.some((i) => i.impact === 'MINOR')) return 'partial_outage';
    if (open.some((i) => i.impact === 'MAINTENANCE')) return 'under_maintenance';
    return 'operational';
  }

  /**
   * Checks the services read off a page against the seed: every service once, its state in words, 90 strip
   * days with the right dates, and each finished day's uptime and incident count as UPTIME_RULE gives them.
   */
  function checkServices(shown: ShownService[], services: SeededService[], where: string): void {
    expect(shown.map((s) => s.name).sort(), `${where}: the services shown`).toEqual(
      services.map((s) => s.name).sort(),
    );
    const dates = stripDates(Date.now());
    let compared = 0;
    for (const service of services) {
      const row = shown.find((s) => s.name === service.name)!;
      const state = expectedState(service);
      expect
        .soft(row.text, `${where}: ${service.name} says its state (${state})`)
        .toMatch(STATE_WORDS[state]!);
      for (const [other, word] of Object.entries(STATE_WORDS)) {
        if (other !== state && !(state === 'under_maintenance' && other === 'operational'))
          expect.soft(row.text, `${where}: ${service.name} is not ${other}`).not.toMatch(word);
      }
      expect(row.days.length, `${where}: ${service.name} has 90 strip days`).toBe(90);
      for (const [i, day] of row.days.entries()) {
        const date = dates[i]!;
        expect
          .soft(day.label, `${where}: ${service.name} day ${i}`)
          .toMatch(new RegExp(`^${shortDate(date)}: `));
        const want = expectedDay(seeded, service.id, date);
        if (!want.exact || want.uptimePercent === null) continue;
        const uptime = /(\d+(?:\.(\d+))?)\s*%\s*uptime/i.exec(day.label);
        expect
          .soft(uptime, `${where}: ${service.name} ${date}: "${day.label}" has "… % uptime"`)
          .not.toBeNull();
        if (uptime) {
          const decimals = uptime[2]?.length ?? 0;
          // Half the last printed digit; a whole "100 %" must be 100 to two decimals.
          const tolerance = (decimals === 0 ? 0.005 : 0.5 * 10 ** -decimals) + 1e-9;
          expect
            .soft(
              Math.abs(Number(uptime[1]) - want.uptimePercent) <= tolerance,
              `${where}: ${service.name} ${date}: "${day.label}", expected ${want.uptimePercent.toFixed(4)} %`,
            )
            .toBe(true);
        }
        const count = /(\d+) incidents?\b/i.exec(day.label);
        const shownCount = count ? Number(count[1]) : /\bno incidents?\b/i.test(day.label) ? 0 : null;
        if (want.incidentCount > 0 || shownCount !== null)
          expect
            .soft(shownCount, `${where}: ${service.name} ${date}: "${day.label}"`)
            .toBe(want.incidentCount);
        compared++;
      }
    }
    expect(compared, `${where}: finished days compared`).toBeGreaterThan(services.length * 80);
  }

  it('shows the seeded page: the name as h1, every service with its state in words and its 90-day strip; light and dark', async () => {
    const context = await newContext({ colorScheme: 'light' });
    const page = await context.newPage();
    await open(page, `/status/${seeded.url}`);
    expect((await page.locator('h1').innerText()).trim()).toBe(seeded.name);
    const shown = await readServices(
      page,
      seeded.services.map((s) => s.name),
    );
    checkServices(shown, seeded.services, 'page');
    for (const s of shown)
      expect
        .soft(
          s.days.every((d) => d.tabbable),
          `${s.name}: strip days focusable`,
        )
        .toBe(true);
    // The open incidents are on the page, and the banner says there is an outage.
    const text = await page.locator('body').innerText();
    for (const incident of seeded.incidents.filter((i) => i.stoppedAtMs === null)) {
      expect.soft(text, 'an open incident is shown').toContain(incident.name);
    }
    expect.soft(text).not.toMatch(/all systems operational/i);
    await screenshot(page, 'page-auto-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'page-auto-dark');
    const background = async () =>
      page.evaluate(() => {
        const { document, getComputedStyle } = globalThis as any;
        // The body's background, or the root's when the body's is transparent.
        const body = getComputedStyle(document.body).backgroundColor as string;
        return body === 'rgba(0, 0, 0, 0)'
          ? (getComputedStyle(document.documentElement).backgroundColor as string)
          : body;
      });
    const darkBackground = await background();
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await background(), 'AUTO follows prefers-color-scheme').not.toBe(darkBackground);

    // LIGHT and DARK pages keep their theme whatever the visitor prefers.
    for (const [url, name] of [
      [lightUrl, 'light'],
      [darkUrl, 'dark'],
    ] as const) {
      const backgrounds: string[] = [];
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await open(page, url);
        backgrounds.push(await background());
        await screenshot(page, `page-${name}-prefers-${scheme}`);
      }
      expect(backgrounds[0], `the ${name} page ignores prefers-color-scheme`).toBe(backgrounds[1]);
      const shownThemed = await readServices(
        page,
        seeded.cards.slice(0, 2).flatMap((c) => c.services.map((s) => s.name)),
      );
      checkServices(
        shownThemed,
        seeded.cards.slice(0, 2).flatMap((c) => c.services),
        `${name} page`,
      );
    }
    await context.close();
  });

  it('reads the same with JavaScript disabled', async () => {
    const texts: string[] = [];
    for (const javaScriptEnabled of [true, false]) {
      const context = await newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await open(page, `/status/${seeded.url}`);
      texts.push(await page.locator('body').innerText());
      if (!javaScriptEnabled) {
        checkServices(
          await readServices(
            page,
            seeded.services.map((s) => s.name),
          ),
          seeded.services,
          'page without JavaScript',
        );
        await open(page, `/status/${seeded.url}/history`);
        const incident = seeded.incidents.at(-1)!;
        await open(page, `/status/${seeded.url}/incidents/${incident.id}`);
        expect(await page.locator('body').innerText()).toContain(incident.name);
      }
      await context.close();
    }
    expect(texts[1]).toBe(texts[0]);
  });

  it('passes axe (WCAG 2.2 AA) on the page in both themes, the history, an incident, the subscribe form and the key form', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const open_ = seeded.incidents.find((i) => i.stoppedAtMs === null && i.impact === 'MAJOR')!;
    const resolved = seeded.incidents.findLast((i) => i.stoppedAtMs !== null && i.updates.length === 4)!;
    const views: [string, string][] = [
      ['page', `/status/${seeded.url}`],
      ['history', `/status/${seeded.url}/history`],
      ['incident-open', `/status/${seeded.url}/incidents/${open_.id}`],
      ['incident-resolved', `/status/${seeded.url}/incidents/${resolved.id}`],
      ['subscribe', `/status/${seeded.url}/subscribe`],
      ['private-key-form', `/status/${PRIVATE.url}/access`],
      ['light-page', '/status/acme-light'],
      ['dark-page', '/status/acme-dark'],
    ];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [name, path] of views) {
        await open(page, path);
        await auditPage(page, `axe-${name}-${scheme}`);
      }
    }
    // The incident page names the incident, every update and the affected service.
    await open(page, `/status/${seeded.url}/incidents/${resolved.id}`);
    const text = await page.locator('body').innerText();
    expect(text).toContain(resolved.name);
    for (const u of resolved.updates) expect.soft(text).toContain(u.description);
    for (const id of resolved.serviceIds)
      expect.soft(text).toContain(seeded.services.find((s) => s.id === id)!.name);
    // The history lists the incidents of the last 90 days.
    await open(page, `/status/${seeded.url}/history`);
    const history = await page.locator('body').innerText();
    const recent = seeded.incidents.filter((i) => i.startedAtMs > Date.now() - 89 * DAY_MS);
    for (const i of recent) expect.soft(history, 'history lists every recent incident').toContain(i.name);
    await context.close();
  });

  it('does not scroll sideways at 360 px wide', async () => {
    const context = await newContext({ viewport: { width: 360, height: 740 } });
    const page = await context.newPage();
    const incident = seeded.incidents.at(-1)!;
    for (const [name, path] of [
      ['page', `/status/${seeded.url}`],
      ['history', `/status/${seeded.url}/history`],
      ['incident', `/status/${seeded.url}/incidents/${incident.id}`],
      ['subscribe', `/status/${seeded.url}/subscribe`],
      ['private-key-form', `/status/${PRIVATE.url}/access`],
    ]) {
      await open(page, path!);
      const width = await page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth as number,
      );
      expect.soft(width, `${name} at 360 px: scrollWidth`).toBeLessThanOrEqual(360);
      await screenshot(page, `narrow-${name}`);
    }
    await context.close();
  });

  it('is usable from the keyboard: Tab visits every link, strip day and control in document order, with a visible focus', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await open(page, '/status/acme-keyboard');
    // Number the tabbable elements in document order and log every focus (with whether it shows).
    const tabbable = await page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as any;
      const visible = (el: any) => {
        const style = getComputedStyle(el);
        return style.visibility !== 'hidden' && style.display !== 'none' && el.getClientRects().length > 0;
      };
      const all = [
        ...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]'),
      ].filter((el: any) => el.tabIndex >= 0 && !el.disabled && visible(el));
      const out: { label: string; tag: string }[] = [];
      all.forEach((el: any, i: number) => {
        el.setAttribute('data-tab-order', String(i));
        out.push({
          tag: el.tagName.toLowerCase(),
          label: (el.getAttribute('aria-label') ?? el.textContent ?? '')
            .trim()
            .replace(/\s+/g, ' ')
            .slice(0, 60),
        });
      });
      const log: { order: string | null; shown: boolean }[] = [];
      (globalThis as any).__focusLog = log;
      document.addEventListener('focusin', (event: any) => {
        const el = event.target;
        const style = getComputedStyle(el);
        const outline = style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) > 0;
        const shadow = style.boxShadow !== 'none' && style.boxShadow !== '';
        log.push({ order: el.getAttribute('data-tab-order'), shown: outline || shadow });
      });
      const marker = document.createElement('span');
      marker.setAttribute('tabindex', '-1');
      document.body.prepend(marker);
      marker.focus();
      return out;
    });
    expect(tabbable.length).toBeGreaterThan(10 * 90);
    for (let i = 0; i < tabbable.length; i++) await page.keyboard.press('Tab');
    const log = (await page.evaluate(() => (globalThis as any).__focusLog)) as {
      order: string | null;
      shown: boolean;
    }[];
    const visited = log.filter((l) => l.order !== null);
    const order = visited.map((l) => Number(l.order));
    // Every tabbable element, each once, in document order.
    expect(order.length, 'focus moves once per Tab').toBe(tabbable.length);
    const firstOutOfOrder = order.findIndex((n, i) => n !== i);
    expect(
      firstOutOfOrder,
      firstOutOfOrder < 0
        ? ''
        : `Tab ${firstOutOfOrder + 1} went to ${JSON.stringify(tabbable[order[firstOutOfOrder]!])} instead of ${JSON.stringify(tabbable[firstOutOfOrder])}`,
    ).toBe(-1);
    const hidden = visited.filter((l) => !l.shown).map((l) => tabbable[Number(l.order)]);
    expect(
      hidden.slice(0, 5),
      `${hidden.length} focused elements without a visible outline or shadow`,
    ).toEqual([]);
    // What was reached: the links (history, feeds), every strip day of the first service, the subscribe control.
    const labels = tabbable.map((t) => t.label);
    const first = seeded.cards[0]!.services[0]!;
    const shown = await readServices(
      page,
      seeded.cards[0]!.services.map((s) => s.name),
    );
    const firstStrip = shown.find((s) => s.name === first.name)!;
    expect(firstStrip.days.length).toBe(90);
    for (const day of firstStrip.days)
      expect.soft(labels, 'a strip day of the first service').toContain(day.label);
    // A focused strip day shows its text (not only to screen readers): the widest element holding exactly
    // the day's text is wider than a visually hidden one.
    const firstDay = firstStrip.days[0]!.label;
    const textWidth = await page.evaluate((label) => {
      const { document } = globalThis as any;
      const clean = (el: any) => (el.textContent ?? '').trim().replace(/\s+/g, ' ');
      const day = [...document.querySelectorAll('[data-tab-order]')].find(
        (el: any) => (el.getAttribute('aria-label') ?? clean(el)) === label,
      );
      const width = () =>
        Math.max(
          0,
          ...[day, ...day.querySelectorAll('*')]
            .filter((el: any) => clean(el) === label)
            .map((el: any) => el.getBoundingClientRect().width as number),
        );
      const before = width();
      day.focus();
      return { before, focused: width() };
    }, firstDay);
    expect(
      textWidth.focused,
      `the focused day "${firstDay}" shows its text (${JSON.stringify(textWidth)})`,
    ).toBeGreaterThan(40);
    expect(
      labels.some((l) => /subscribe/i.test(l)),
      'the subscribe control',
    ).toBe(true);
    expect(
      labels.some((l) => /history/i.test(l)),
      'the history link',
    ).toBe(true);
    expect(
      tabbable.some((t) => t.tag === 'a' && /rss|atom|feed/i.test(t.label)),
      'a feed link',
    ).toBe(true);
    await context.close();
  }, 180_000);

  it('requests nothing from another origin (every request, logo and favicon included, is to the service)', async () => {
    const before = requested.length;
    const context = await newContext();
    const page = await context.newPage();
    const incident = seeded.incidents.at(-1)!;
    for (const path of [
      `/status/${seeded.url}`,
      `/status/${seeded.url}/history`,
      `/status/${seeded.url}/incidents/${incident.id}`,
      `/status/${seeded.url}/subscribe`,
      `/status/${PRIVATE.url}/access`,
    ]) {
      await open(page, path);
      await page.waitForLoadState('networkidle');
    }
    await context.close();
    const mine = requested.slice(before);
    const foreign = [...requested].filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'));
    expect(foreign).toEqual([]);
    // The logo and the favicon were asked for (from the service), not left out.
    expect(mine.filter((u) => u.endsWith('/badge.svg')).length).toBeGreaterThan(0);
  });

  it('subscribes through the form, with and without JavaScript, from the keyboard: an address the service refuses is named next to the field, then "Check your inbox"', async () => {
    const service = seeded.cards[1]!.services[2]!;
    const emails: string[] = [];
    // Without JavaScript first; axe needs it, so the audits are of the second round.
    for (const javaScriptEnabled of [false, true]) {
      const context = await newContext({ javaScriptEnabled });
      const page = await context.newPage();
      const round = javaScriptEnabled ? 'js' : 'nojs';
      await open(page, `/status/${seeded.url}/subscribe`);
      const email = `Visitor.${round}.${Date.now()}@Example.test`;
      emails.push(email.toLowerCase());
      // An address the service refuses (the browser's own type=email check lets it through): the error is
      // tied to the field.
      await page.getByLabel('Email address').fill('visitor@localhost');
      await page.getByLabel('Email address').press('Enter');
      await page.waitForLoadState();
      const field = page.getByLabel('Email address');
      expect(await field.getAttribute('aria-invalid'), `${round}: the field is marked invalid`).toBe('true');
      const describedBy = ((await field.getAttribute('aria-describedby')) ?? '').split(' ')[0] ?? '';
      expect(describedBy, `${round}: the field names its error`).not.toBe('');
      expect((await page.locator(`[id="${describedBy}"]`).innerText()).trim()).not.toBe('');
      if (javaScriptEnabled) await auditPage(page, 'axe-subscribe-error');

      await page.getByLabel('Only the services chosen below').check();
      await page.getByLabel(service.name, { exact: true }).check();
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Email address').press('Enter');
      await page.waitForLoadState();
      expect(await page.locator('h1').innerText()).toMatch(/check your inbox/i);
      expect(await page.locator('body').innerText()).toContain(email.toLowerCase());
      if (javaScriptEnabled) await auditPage(page, 'axe-subscribe-done');
      await context.close();
    }
    // The service holds both addresses, unconfirmed, for the chosen service only.
    const list = await api('GET', `/v1/status-pages/${seeded.pageId}/subscribers?limit=100`);
    expect(list.status, JSON.stringify(list.json)).toBe(200);
    const entries = (Array.isArray(list.json) ? list.json : (list.json.entries ?? [])) as {
      email: string;
      services: string[] | null;
      confirmed: boolean;
    }[];
    for (const email of emails) {
      const row = entries.find((e) => e.email === email);
      expect(row, `${email} in ${JSON.stringify(list.json)}`).toMatchObject({
        services: [service.id],
        confirmed: false,
      });
    }
  });

  it('a private page: a browser without a key gets the 404 and nothing of the page; the key form opens it; deleting the key closes it', async () => {
    const plainGet = async (path: string) => {
      const res = await fetch(new URL(path, origin));
      return { status: res.status, body: await res.text() };
    };
    const unknown = await plainGet('/status/no-such-page-here');
    const hidden = await plainGet(`/status/${PRIVATE.url}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body, 'the same bytes as an unknown page').toBe(unknown.body);

    const context = await newContext();
    const page = await context.newPage();
    const check404 = async () => {
      const res = await page.goto(`${origin}/status/${PRIVATE.url}`);
      expect(res?.status()).toBe(404);
      const html = await page.content();
      for (const secret of Object.values(PRIVATE)) {
        if (secret === PRIVATE.url) continue;
        expect(html.toLowerCase()).not.toContain(secret.toLowerCase());
      }
    };
    await check404();
    await auditPage(page, 'axe-private-404');

    // A wrong key first, then the right one.
    await open(page, `/status/${PRIVATE.url}/access`);
    for (const secret of [PRIVATE.name, PRIVATE.service, PRIVATE.incident])
      expect(await page.content()).not.toContain(secret);
    await page.getByLabel('Access key').fill('not-the-key-0000000000000000');
    await page.getByRole('button').first().click();
    await page.waitForLoadState();
    expect(await page.locator('body').innerText()).toMatch(/does not open/i);
    await page.getByLabel('Access key').fill(privatePage.key);
    await Promise.all([
      page.waitForURL(`${origin}/status/${PRIVATE.url}`),
      page.getByRole('button').first().click(),
    ]);
    expect((await page.locator('h1').innerText()).trim()).toBe(PRIVATE.name);
    expect(await page.locator('body').innerText()).toContain(PRIVATE.service);
    await auditPage(page, 'axe-private-page-opened');

    const deleted = await api('DELETE', `/v1/status-pages/${privatePage.id}/keys/${privatePage.keyId}`);
    expect(deleted.status).toBe(204);
    await check404();
    await context.close();
  });
});
