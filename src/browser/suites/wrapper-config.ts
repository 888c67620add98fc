/**
 * The wrapper config of a Playwright check suite run: `outpost.config.mjs`, written at the project's
 * root beside the user's `playwright.config.*` and given to `playwright test --config`. It loads the
 * user's config inside the suite's own process (never the agent's: the config is user code), refuses
 * projects of other browsers, and overrides what the agent must control: the warm browser to connect
 * to, tracing, screenshots, the output folder, the reporters, workers and the time limits.
 */

/** The file name of the wrapper config, at the project's root; a project file of this name is refused. */
export const WRAPPER_CONFIG_NAME = 'outpost.config.mjs';

/** Playwright's own order of default config files: the first present at the project's root is the user's. */
export const USER_CONFIG_NAMES = [
  'playwright.config.ts',
  'playwright.config.js',
  'playwright.config.mts',
  'playwright.config.mjs',
  'playwright.config.cts',
  'playwright.config.cjs',
] as const;

/** Most Playwright workers of one suite run (the agent's host runs other checks too). */
export const MAX_SUITE_WORKERS = 2;

/** Playwright's default test timeout, used when the user's config sets none, milliseconds. */
const DEFAULT_TEST_TIMEOUT_MS = 30_000;

/** What the wrapper config is generated from. Paths are absolute. */
export type WrapperSettings = {
  /** The user's `playwright.config.*`. */
  userConfigPath: string;
  /**
   * True when the user's config is an ES module (`.mjs`/`.mts`, or `.ts`/`.js` in a package of
   * `"type": "module"`): it is imported; otherwise it is required (Playwright transpiles either).
   */
  userConfigIsModule: boolean;
  /** `ws://127.0.0.1:<port>/<path>` of the warm browser every test connects to. */
  wsEndpoint: string;
  /** Playwright's `outputDir` (traces, screenshots), for every project. */
  outputDir: string;
  /** Where the JSON reporter writes its report. */
  reportFile: string;
  /** Where the wrapper writes why it refused the config (the agent reads it back, bounded). */
  errorFile: string;
  /** The check's spec (`scriptPath`, or where the inline script was written). */
  entrySpecPath: string;
  /** True when `entrySpecPath` holds the inline script (for the refusal's advice). */
  entryIsInline: boolean;
  /**
   * When Playwright must stop (the run's limit less the agent's margin), epoch milliseconds. The
   * wrapper turns it into `globalTimeout` when it is loaded, so the time Node and the config took to
   * load counts against the run.
   */
  deadlineEpochMs: number;
};

/** The wrapper's first lines: its imports. */
const WRAPPER_IMPORTS = `// Written by the Outpost agent for this run: the project's own Playwright config with the agent's overrides.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

`;

/**
 * The wrapper after its settings: the time left, loading the user's config, refusing projects of
 * other browsers.
 */
const WRAPPER_LOAD = `// At least a second, so a run that started late still gets a report rather than none.
const globalTimeoutMs = Math.max(1000, Math.floor(settings.deadlineEpochMs - Date.now()));

function refuse(message) {
  try {
    writeFileSync(settings.errorFile, message);
  } catch {}
  throw new Error(message);
}

let loaded;
try {
  loaded = settings.userConfigIsModule
    ? await import(pathToFileURL(settings.userConfigPath).href)
    : createRequire(import.meta.url)(settings.userConfigPath);
} catch (error) {
  refuse('playwright.config could not be loaded: ' + String(error && error.stack ? error.stack : error).slice(0, 2000));
}
const user = loaded && typeof loaded === 'object' && 'default' in loaded ? loaded.default : loaded;
if (!user || typeof user !== 'object' || Array.isArray(user)) {
  refuse('playwright.config must export a configuration object (export default defineConfig({ ... }))');
}

const browserOf = (use) =>
  use && typeof use === 'object' ? (use.browserName ?? use.defaultBrowserType) : undefined;
const topBrowser = browserOf(user.use);
const projects = Array.isArray(user.projects) && user.projects.length > 0 ? user.projects : null;
if (projects) {
  for (const project of projects) {
    const browser = browserOf(project && project.use) ?? topBrowser ?? 'chromium';
    if (browser !== 'chromium') {
      refuse('project ' + JSON.stringify(String(project && project.name ? project.name : '')) + ' uses ' + String(browser) + ': only Chromium projects run on Outpost');
    }
  }
} else if (topBrowser !== undefined && topBrowser !== 'chromium') {
  refuse('the configuration uses ' + String(topBrowser) + ': only Chromium projects run on Outpost');
}

`;

/** The wrapper's refusal of a check's spec outside every project's `testDir`. */
const WRAPPER_SPEC_CHECK = `const rootDir = dirname(settings.userConfigPath);
{
  const testDirs = (projects ?? [{}]).map((project) => resolve(rootDir, project.testDir ?? user.testDir ?? '.'));
  const inside = (dir) => {
    const rel = relative(dir, settings.entrySpecPath);
    return rel !== '' && !rel.startsWith('..' + sep) && rel !== '..';
  };
  if (!testDirs.some(inside)) {
    refuse("the check's spec " + relative(rootDir, settings.entrySpecPath) + ' lies outside the testDir of every project (' + testDirs.map((dir) => relative(rootDir, dir) || '.').join(', ') + ')' + (settings.entryIsInline ? ': set testDir to "." or "tests", or give the spec as scriptPath' : ''));
  }
}

`;

/** The wrapper's overrides and its exported config. */
const WRAPPER_OVERRIDES = `const bounded = (timeout) => {
  const wanted = typeof timeout === 'number' && timeout >= 0 ? timeout : settings.defaultTestTimeoutMs;
  return wanted === 0 ? globalTimeoutMs : Math.min(wanted, globalTimeoutMs);
};
const forced = {
  connectOptions: { wsEndpoint: settings.wsEndpoint },
  trace: 'on',
  screenshot: 'only-on-failure',
};
const workersOf = (workers) => {
  let count = 1;
  if (typeof workers === 'number' && Number.isFinite(workers)) count = Math.floor(workers);
  else if (typeof workers === 'string' && /^\\d+(\\.\\d+)?%$/.test(workers))
    count = Math.floor((availableParallelism() * Number.parseFloat(workers)) / 100);
  return Math.min(Math.max(count, 1), settings.maxWorkers);
};
const topTimeout = bounded(user.timeout);

export default {
  ...user,
  use: { ...(user.use ?? {}), ...forced },
  projects: projects
    ? projects.map((project) => ({
        ...project,
        use: { ...(project.use ?? {}), ...forced },
        outputDir: settings.outputDir,
        timeout: project.timeout === undefined ? topTimeout : bounded(project.timeout),
      }))
    : undefined,
  outputDir: settings.outputDir,
  timeout: topTimeout,
  globalTimeout: globalTimeoutMs,
  workers: workersOf(user.workers),
  reporter: [['json', { outputFile: settings.reportFile }], ['line']],
  shard: undefined,
  reportSlowTests: null,
};
`;

/**
 * The text of `outpost.config.mjs` for one run. Settings are embedded as one JSON literal, so no
 * value (a path, the ws endpoint) can break out of it into code.
 *
 * What the wrapper does, in the suite's process:
 * - loads the user's config (import or require, as Playwright itself would: Playwright's loader
 *   hooks are installed before it loads the wrapper, so a TypeScript config is transpiled);
 * - refuses a project (or a config without projects) whose `use.browserName`, else
 *   `use.defaultBrowserType`, is not chromium, writing the reason to `errorFile` and throwing;
 * - refuses a check's spec outside every project's `testDir` (it would silently not run);
 * - sets, at the top level and in every project: `use.connectOptions = { wsEndpoint }`,
 *   `use.trace = 'on'`, `use.screenshot = 'only-on-failure'`, `outputDir`, and `timeout` as the
 *   user's (default 30 s; 0, none) bounded by the time left until `deadlineEpochMs`;
 * - sets `reporter` to the JSON report and the line reporter, `workers` to the user's capped at
 *   {@link MAX_SUITE_WORKERS} (default 1), `globalTimeout` to the time left until
 *   `deadlineEpochMs` (at least 1 s); keeps `retries` and the rest.
 *
 * @param settings absolute paths and limits of the run.
 * @returns the module's source text.
 */
export function wrapperConfigSource(settings: WrapperSettings): string {
  const embedded = JSON.stringify({
    ...settings,
    maxWorkers: MAX_SUITE_WORKERS,
    defaultTestTimeoutMs: DEFAULT_TEST_TIMEOUT_MS,
  });
  return `${WRAPPER_IMPORTS}const settings = ${embedded};
${WRAPPER_LOAD}${WRAPPER_SPEC_CHECK}${WRAPPER_OVERRIDES}`;
}
