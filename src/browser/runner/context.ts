/**
 * The runtime's Playwright as a runner loads it, and the browser context of the run: connected to
 * the warm browser, traced, with the web-vitals binding, prepared ahead of the payload when the
 * agent names the browser early.
 */
import fs from 'node:fs';
import nodeModule from 'node:module';
import path from 'node:path';
import { recordVital, vitalsScript } from './pages.js';
import { type Any, nodeModulesDir, workDir } from './state.js';

/** How long connecting to the warm browser may take at most, ms. */
export const CONNECT_TIMEOUT_MS = 15_000;

/** What a warm runner loaded from its runtime. */
export type Loaded = {
  /** playwright-core. */
  pw: Any;
  /** @playwright/test (its `expect`). */
  playwrightTest: Any;
  /** playwright-core's version. */
  version: string;
  /** web-vitals' IIFE build, as text. */
  webVitals: string;
  /** Playwright's client classes by name (Page, Frame, Locator, ElementHandle, Keyboard). */
  client: Record<string, Any>;
};

/**
 * Loads the runtime's playwright-core and @playwright/test (through `createRequire`: never
 * bundled), reads web-vitals.
 *
 * @throws Error when the runtime is not installed or lacks one of them.
 */
export function load(): Loaded {
  const runtimeRequire = nodeModule.createRequire(path.join(nodeModulesDir, 'package.json'));
  const pw = runtimeRequire('playwright-core');
  const playwrightTest = runtimeRequire('@playwright/test');
  const coreDir = path.dirname(runtimeRequire.resolve('playwright-core/package.json'));
  const version = (
    JSON.parse(fs.readFileSync(path.join(coreDir, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const webVitals = fs.readFileSync(
    path.join(nodeModulesDir, 'web-vitals', 'dist', 'web-vitals.iife.js'),
    'utf8',
  );
  // The client classes, from the same files playwright-core loaded (one module instance).
  const client: Record<string, Any> = {};
  const classes: Array<[string, string]> = [
    ['page', 'Page'],
    ['frame', 'Frame'],
    ['locator', 'Locator'],
    ['elementHandle', 'ElementHandle'],
    ['input', 'Keyboard'],
  ];
  for (const [file, name] of classes) {
    try {
      client[name] = require(path.join(coreDir, 'lib', 'client', `${file}.js`))[name];
    } catch {
      // An older layout: that class stays unwrapped.
    }
  }
  return { pw, playwrightTest, version, webVitals, client };
}

/**
 * The run's fresh browser context: downloads accepted, video when asked, tracing on (screenshots and
 * snapshots), the web-vitals binding and init script, and one page opened (the page a browser check
 * uses first; a check without a page closes it).
 */
export async function prepareContext(browser: Any, loaded: Loaded, video: boolean): Promise<Any> {
  const context = await browser.newContext({
    acceptDownloads: true,
    ...(video ? { recordVideo: { dir: path.join(workDir, 'videos') } } : {}),
  });
  await context.tracing.start({ screenshots: true, snapshots: true, sources: false });
  await context.exposeBinding('__outpostVital', recordVital);
  await context.addInitScript({ content: vitalsScript(loaded.webVitals) });
  await context.newPage();
  return context;
}

/** The page prepareContext opened, until a script or the `page` fixture takes it. */
let sparePage: Any = null;

/** Sets the page prepareContext opened (null: none). */
export function setSparePage(page: Any): void {
  sparePage = page;
}

/** The prepared page, once (null when taken or closed). */
export function takeSparePage(): Any {
  const page = sparePage;
  sparePage = null;
  return page !== null && !page.isClosed() ? page : null;
}

/** A browser connection and context made while the runner waited for its payload. */
export type Prepared = { wsEndpoint: string; browser: Any; context: Any };

/** Connects to `wsEndpoint` and prepares a context ahead of the payload; null when that fails. */
export async function prepare(wsEndpoint: string, loaded: Loaded): Promise<Prepared | null> {
  try {
    const browser = await loaded.pw.chromium.connect(wsEndpoint, { timeout: CONNECT_TIMEOUT_MS });
    try {
      return { wsEndpoint, browser, context: await prepareContext(browser, loaded, false) };
    } catch {
      await browser.close().catch(() => {});
      return null;
    }
  } catch {
    return null;
  }
}
