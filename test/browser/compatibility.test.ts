import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import {
  CHROMIUM_PATH,
  chromiumRequirement,
  missingRequirement,
  runtimeRequirement,
} from '../helpers/requirements.js';
import { coloursIn, decodePng, unzip } from './formats.js';

/**
 * Compatibility suite of runtime 2026.04: its pinned Playwright (resolved from the runtime's own
 * node_modules, never the root's) against the installed Chromium (CHROMIUM_PATH), on loopback
 * pages this file serves. Launch, launchServer + connect, fill/click/navigation, routes, tracing,
 * masked screenshots. Every test closes what it starts; afterEach checks no Chromium process is left.
 */
const RUNTIME_ID = '2026.04';
const RUNTIME_DIR = join(PACKAGE_ROOT, 'runtimes', RUNTIME_ID);
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement(RUNTIME_ID)]);

/**
 * Chromium refuses to run as root with its sandbox on (tests run as root here and in CI), so as root
 * it runs with `--no-sandbox` until the browser host starts it as an unprivileged user.
 */
const LAUNCH_ARGS = process.getuid?.() === 0 ? ['--no-sandbox'] : [];

/**
 * Processes of Chromium (its browser, zygotes, renderers, crashpad handler) that are running, or
 * zombies this process must reap. Zombies orphaned to another reaper (PID 1 here reaps them about
 * 2 s late) are that reaper's, not a leak of the test.
 */
function chromiumProcesses(): number {
  let count = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      continue; // exited while listing
    }
    const fields = /^\d+ \((chrom[^)]*)\) (\S) (\d+)/.exec(stat);
    if (fields && (fields[2] !== 'Z' || Number(fields[3]) === process.pid)) count++;
  }
  return count;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Pages of the suite: a form, the page it submits to, and a JSON endpoint the form page fetches. */
function servePages(hits: Map<string, number>): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    if (url.pathname === '/form') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>Form</title>
<style>body { margin: 20px; font: 16px "Liberation Sans" } input { display: block; margin: 8px 0; width: 300px; height: 30px; font-size: 20px }</style>
<form action="/done" method="get">
  <input id="name" name="name" autocomplete="off">
  <input id="token" name="token" autocomplete="off">
  <button id="submit" type="submit">Send</button>
</form>
<button id="load" type="button">Load</button><p id="data"></p>
<script>
  document.getElementById('load').onclick = async () => {
    const body = await (await fetch('/api/data')).json();
    document.getElementById('data').textContent = body.source;
  };
</script>`);
    } else if (url.pathname === '/done') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(
        `<!doctype html><title>Done</title><h1 id="greeting">Hello ${escapeHtml(url.searchParams.get('name') ?? '')}</h1>`,
      );
    } else if (url.pathname === '/api/data') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ source: 'server' }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
}

describe.skipIf(skip)(`runtime ${RUNTIME_ID}: Playwright against ${CHROMIUM_PATH}`, () => {
  const runtimeRequire = createRequire(join(RUNTIME_DIR, 'package.json'));
  let chromium: PlaywrightCore.BrowserType;
  let server: Server;
  let origin: string;
  const hits = new Map<string, number>();
  let baseline: number;
  let dir: string;

  beforeAll(async () => {
    chromium = (runtimeRequire('playwright-core') as typeof PlaywrightCore).chromium;
    server = servePages(hits);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    baseline = chromiumProcesses();
    dir = mkdtempSync(join(tmpdir(), 'outpost-browser-'));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    // Closing waits for the browser process; its helpers exit a moment later.
    const deadline = Date.now() + 5_000;
    while (chromiumProcesses() > baseline && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(chromiumProcesses(), 'Chromium processes left behind').toBe(baseline);
  });

  /** Runs `use` with a browser launched from CHROMIUM_PATH, closed afterwards whatever happens. */
  async function withBrowser<T>(use: (browser: PlaywrightCore.Browser) => Promise<T>): Promise<T> {
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: LAUNCH_ARGS });
    try {
      return await use(browser);
    } finally {
      await browser.close();
    }
  }

  it("launches Chromium from CHROMIUM_PATH with the runtime's pinned Playwright and reports both versions", async () => {
    const playwright = runtimeRequire('playwright-core/package.json') as { version: string };
    const playwrightTest = runtimeRequire('@playwright/test/package.json') as { version: string };
    const pins = JSON.parse(readFileSync(join(RUNTIME_DIR, 'runtime.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(playwright.version).toBe(pins.dependencies['@playwright/test']);
    expect(playwrightTest.version).toBe(playwright.version);
    const installed = execFileSync(CHROMIUM_PATH, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const chromiumVersion = await withBrowser(async (browser) => browser.version());
    expect(installed).toContain(chromiumVersion);
    console.info(`runtime ${RUNTIME_ID}: Playwright ${playwright.version}, Chromium ${chromiumVersion}`);
  });

  it('serves the browser on loopback with launchServer under an unguessable path and connects over its ws endpoint', async () => {
    const wsPath = `/${randomUUID()}`;
    const browserServer = await chromium.launchServer({
      executablePath: CHROMIUM_PATH,
      args: LAUNCH_ARGS,
      host: '127.0.0.1',
      wsPath,
    });
    try {
      const endpoint = new URL(browserServer.wsEndpoint());
      expect(endpoint.hostname).toBe('127.0.0.1');
      expect(endpoint.pathname).toBe(wsPath);
      const browser = await chromium.connect(browserServer.wsEndpoint());
      try {
        const page = await browser.newPage();
        await page.goto(`${origin}/form`);
        expect(await page.title()).toBe('Form');
      } finally {
        await browser.close();
      }
    } finally {
      await browserServer.close();
    }
  });

  it('fills and clicks a form and follows the navigation it starts', async () => {
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      await page.goto(`${origin}/form`);
      await page.fill('#name', 'Ada <Lovelace>');
      await Promise.all([page.waitForURL(`${origin}/done?**`), page.click('#submit')]);
      expect(new URL(page.url()).searchParams.get('name')).toBe('Ada <Lovelace>');
      expect(await page.textContent('#greeting')).toBe('Hello Ada <Lovelace>');
    });
  });

  it('intercepts requests with page.route: the page gets the routed answer and the server no request', async () => {
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      await page.route('**/api/data', (route) => route.fulfill({ json: { source: 'route' } }));
      await page.goto(`${origin}/form`);
      const before = hits.get('/api/data') ?? 0;
      await page.click('#load');
      await expect.poll(() => page.textContent('#data')).toBe('route');
      expect(hits.get('/api/data') ?? 0).toBe(before);
    });
  });

  it('records a trace.zip that unzips into the trace files with every action', async () => {
    const path = join(dir, 'trace.zip');
    await withBrowser(async (browser) => {
      const context = await browser.newContext();
      await context.tracing.start({ screenshots: true, snapshots: true });
      const page = await context.newPage();
      await page.goto(`${origin}/form`);
      await page.fill('#name', 'Grace');
      await Promise.all([page.waitForURL(`${origin}/done?**`), page.click('#submit')]);
      await context.tracing.stop({ path });
      await context.close();
    });
    const files = unzip(readFileSync(path));
    expect([...files.keys()]).toEqual(expect.arrayContaining(['trace.trace', 'trace.network']));
    const events = files
      .get('trace.trace')!
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string; method?: string });
    const actions = events.filter((e) => e.type === 'before').map((e) => e.method);
    expect(actions).toEqual(expect.arrayContaining(['goto', 'fill', 'click']));
    expect(events.some((e) => e.type === 'frame-snapshot')).toBe(true);
    const network = files.get('trace.network')!.toString('utf8');
    expect(network).toContain(`${origin}/form`);
    expect([...files.keys()].some((name) => name.startsWith('resources/'))).toBe(true);
  });

  it('paints a masked input holding a planted value in one colour in a screenshot', async () => {
    const planted = `PLANTED-${randomUUID()}`;
    await withBrowser(async (browser) => {
      const page = await browser.newPage({ viewport: { width: 640, height: 360 }, deviceScaleFactor: 1 });
      await page.goto(`${origin}/form`);
      const token = page.locator('#token');
      await token.fill(planted);
      expect(await token.inputValue()).toBe(planted);
      const box = (await token.boundingBox())!;
      // The input's inside, 2 px in from its edges (anti-aliased borders), in screenshot pixels.
      const inside = {
        x: Math.ceil(box.x) + 2,
        y: Math.ceil(box.y) + 2,
        width: Math.floor(box.width) - 4,
        height: Math.floor(box.height) - 4,
      };
      const plain = decodePng(await page.screenshot());
      expect(coloursIn(plain, inside).size, 'the planted text is drawn without a mask').toBeGreaterThan(1);
      const masked = decodePng(await page.screenshot({ mask: [token], maskColor: '#FF00FF' }));
      expect([...coloursIn(masked, inside)]).toEqual(['#ff00ffff']);
      expect(
        coloursIn(masked, { x: 0, y: 0, width: masked.width, height: masked.height }).size,
      ).toBeGreaterThan(1);
    });
  });
});
