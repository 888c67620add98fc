/**
 * The web app's tests in a real browser: Debian's Chromium driven by playwright-core, a real `outpost up`
 * (service + embedded agent, the app served at `/`), sign-in through the form, and axe audits with a
 * screenshot of every audited page.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Result as AxeViolation } from 'axe-core';
import { type Browser, chromium, type Page } from 'playwright-core';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { apiClient, type CliProcess, freePort, spawnCli, stopCli } from './cli.js';
import { CHROMIUM_PATH, chromiumRequirement, type Requirement } from './requirements.js';

/** The WCAG levels every page is audited against (WCAG 2.2 AA and what it includes). */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] as const;

/** Where `audit` saves its screenshots: `<os tmpdir>/outpost-web-screenshots/<name>.png`. */
export const SCREENSHOT_DIR = join(tmpdir(), 'outpost-web-screenshots');

/** The built web app (`npm run build` writes it; `npm test` builds first). Pass to `missingRequirement`. */
export function webAppRequirement(): Requirement {
  return {
    ok:
      existsSync(join(PACKAGE_ROOT, 'dist/app/index.html')) &&
      existsSync(join(PACKAGE_ROOT, 'dist/src/cli.js')),
    what: 'the built web app and CLI (dist/app, dist/src)',
    install: 'npm run build',
  };
}

/** What the web tests need: Chromium with its fonts and the build. Pass to `missingRequirement`. */
export function webRequirements(): Requirement[] {
  return [chromiumRequirement(), webAppRequirement()];
}

/** Debian's Chromium through playwright-core (no sandbox: the tests run as root). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
}

/** A running `outpost up` with its output split by stream. */
export type UpProcess = {
  process: CliProcess;
  /** `http://127.0.0.1:<port>`: the API and the web app. */
  baseUrl: string;
  api: ReturnType<typeof apiClient>;
  apiKey: string;
  dataDir: string;
  stdout(): string;
  stderr(): string;
  /** Stops `up` (its agent drains first) and removes the data folder. */
  stop(): Promise<void>;
};

/**
 * Starts `outpost up` on 127.0.0.1 with `apiKey` as the account's key, a fresh data folder and `env` on top;
 * resolves once it prints "is up".
 * @throws Error when it does not start within 30 s (with its output).
 */
export async function startUp(apiKey: string, env: Record<string, string> = {}): Promise<UpProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-web-'));
  const port = await freePort();
  const up = spawnCli(['up'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    OUTPOST_DATA_DIR: dataDir,
    OUTPOST_API_KEY: apiKey,
    AGENT_HEALTH_PORT: String(await freePort()),
    CHROMIUM_PATH,
    ...env,
  });
  let stdout = '';
  let stderr = '';
  up.child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  up.child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  try {
    await up.waitFor(/is up: http/);
  } catch (err) {
    await stopCli(up);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    process: up,
    baseUrl,
    api: apiClient(baseUrl, apiKey),
    apiKey,
    dataDir,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      await stopCli(up);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Signs in through the form: opens `/checks`, fills "API key", presses "Sign in" and waits for the checks
 * page's heading.
 * @throws when the form or the heading does not show (Playwright's timeout error).
 */
export async function signIn(page: Page, baseUrl: string, apiKey: string): Promise<void> {
  await page.goto(new URL('/checks', baseUrl).href);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: /^Checks\b/ }).waitFor({ timeout: 15_000 });
}

let screenshotFolderPrinted = false;

/**
 * Audits the page with axe against {@link AXE_TAGS} and saves a full-page screenshot as
 * `<SCREENSHOT_DIR>/<name>.png`. Call it once the page shows its content.
 * @returns the violations (a test expects `[]`; {@link describeViolations} prints them).
 */
export async function audit(page: Page, name: string): Promise<AxeViolation[]> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  if (!screenshotFolderPrinted) {
    screenshotFolderPrinted = true;
    console.log(`web app screenshots: ${SCREENSHOT_DIR}`);
  }
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  const results = await new AxeBuilder({ page }).withTags([...AXE_TAGS]).analyze();
  return results.violations;
}

/** One line per violation and node: rule id, help, impact and the target selectors. */
export function describeViolations(name: string, violations: AxeViolation[]): string {
  if (violations.length === 0) return `${name}: no violations`;
  return [
    `${name}: ${violations.length} axe violation(s)`,
    ...violations.flatMap((v) => [
      `  ${v.id} (${v.impact ?? 'n/a'}): ${v.help} ${v.helpUrl}`,
      ...v.nodes.map((n) => `    at ${n.target.join(' ')}: ${n.failureSummary?.replaceAll('\n', ' ') ?? ''}`),
    ]),
  ].join('\n');
}

/** The little of the DOM the page functions below use (this project's TypeScript has no DOM library). */
export type BrowserElement = {
  tagName: string;
  focus(): void;
  remove(): void;
  setAttribute(name: string, value: string): void;
  prepend(node: BrowserElement): void;
  id: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  closest(selector: string): BrowserElement | null;
  blur?: () => void;
};

/** Globals of a page, as seen by functions passed to `page.evaluate`. */
export type BrowserGlobals = {
  document: {
    activeElement: BrowserElement | null;
    body: BrowserElement;
    documentElement: { scrollWidth: number; clientWidth: number };
    cookie: string;
    createElement(tag: string): BrowserElement & { id: string };
    getElementById(id: string): BrowserElement | null;
  };
  scrollTo(x: number, y: number): void;
  matchMedia(query: string): { matches: boolean };
  localStorage: BrowserStorage;
  sessionStorage: BrowserStorage;
  [name: string]: unknown;
};

/** `localStorage` / `sessionStorage`. */
export type BrowserStorage = {
  length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
};

/** Where keyboard focus went while tabbing from the top of a page. */
export type TabWalk = {
  /** Focus reached a link of the main navigation (`nav`). */
  reachedNavigation: boolean;
  /** Focus reached a control inside `<main>`. */
  reachedMain: boolean;
  /** Tab presses until focus was inside `<main>` (or the presses made, when it never was). */
  presses: number;
  /** A short description of each focused element, in order (for failure messages). */
  path: string[];
};

/**
 * Tabs from the top of the page (focus reset to the document) up to `maxPresses` times, and reports whether
 * focus passed through the main navigation and reached a control inside `<main>` (a light keyboard check:
 * every page must be usable without a pointer).
 */
export async function tabFromTop(page: Page, maxPresses = 40): Promise<TabWalk> {
  // Chromium tabs on from the last focused or clicked node: start from a marker at the top of <body>.
  await page.evaluate(() => {
    const { document, scrollTo } = globalThis as unknown as BrowserGlobals;
    const marker = document.createElement('span');
    marker.id = 'outpost-test-tab-start';
    marker.setAttribute('tabindex', '-1');
    document.body.prepend(marker);
    marker.focus();
    scrollTo(0, 0);
  });
  const walk: TabWalk = { reachedNavigation: false, reachedMain: false, presses: 0, path: [] };
  for (let i = 0; i < maxPresses; i++) {
    await page.keyboard.press('Tab');
    walk.presses = i + 1;
    const where = await page.evaluate(() => {
      const { document } = globalThis as unknown as BrowserGlobals;
      const el = document.activeElement;
      if (!el || el === document.body) return { label: 'body', nav: false, main: false };
      const text = (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 30);
      const main = el.closest('main');
      return {
        label: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${text}"`,
        nav: Boolean(el.closest('nav')),
        // `<main>` itself is focusable (tabindex -1, the skip link's target) but is not a control.
        main: Boolean(main) && el !== main,
      };
    });
    walk.path.push(where.label);
    if (i === 0) {
      await page.evaluate(() =>
        (globalThis as unknown as BrowserGlobals).document.getElementById('outpost-test-tab-start')?.remove(),
      );
    }
    if (where.nav) walk.reachedNavigation = true;
    if (where.main) {
      walk.reachedMain = true;
      break;
    }
  }
  return walk;
}

/** A loopback HTTP server of a test, answering with `handler`. */
export type LoopbackServer = {
  server: Server;
  port: number;
  /** `http://<host>:<port>` with the host it was asked for. */
  url: string;
  /** Request lines seen (`GET /path`), in order. */
  requests: string[];
  close(): Promise<void>;
};

/**
 * Starts an HTTP server on 127.0.0.1 answering with `handler`. `host` is the name its URL carries:
 * `127.0.0.1`, or `localhost` for a page of another site than the app's 127.0.0.1 (Chromium resolves
 * `localhost` to loopback itself and falls back to 127.0.0.1 when ::1 refuses).
 */
export async function startLoopbackServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host: '127.0.0.1' | 'localhost' = '127.0.0.1',
): Promise<LoopbackServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://${host}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
