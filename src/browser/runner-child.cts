/**
 * The bootstrap of one browser runner process (docs/architecture.md, "Browser checks"), compiled
 * to `runner-child.cjs`.
 *
 * BrowserRunner starts it as `node --permission … runner-child.cjs <runtimeDir> <runtimeId>` with
 * its private temp dir as working directory. Warm, it loads the runtime's `playwright-core` and
 * `@playwright/test`, reads `web-vitals`, says `ready` on fd 3 and blocks reading one
 * RunnerPayload from stdin. Then it connects to the warm browser, makes a fresh traced context,
 * runs the check's script (TEST or PLAIN shape), reports on fd 3 (messages.ts) and exits. One
 * process runs one check.
 *
 * Scripts are JavaScript on Node 20; where Node has `module.stripTypeScriptTypes` (22.13 and
 * later) TypeScript types are stripped first.
 *
 * It must stay self-contained (no imports of our other modules): the permission model lets the
 * process read only this file, the runtime's node_modules and its temp dir.
 */
import fs = require('node:fs');
import path = require('node:path');
import asyncHooks = require('node:async_hooks');
import nodeConsole = require('node:console');
import nodeModule = require('node:module');
import os = require('node:os');
import url = require('node:url');
import util = require('node:util');
import vm = require('node:vm');
import type {
  BrowserPage,
  BrowserRunError,
  BrowserRunReport,
  BrowserStep,
  LogLevel,
  RunnerArtifact,
  RunnerMessage,
  RunnerPayload,
  ScriptLocation,
  ScriptShape,
  WebVitals,
} from './messages.js';

/** The runner → agent channel (messages.ts). */
const CHANNEL_FD = 3;
/** The name scripts carry in stack traces; line numbers are the script's own. */
const SCRIPT_FILENAME = 'script.js';
const SECRET_PREFIXES = ['SERVICE_SECRET_', 'OUTPOST_SECRET_'];
/** Longest secret sent, characters (the agent's scrubber withholds longer ones). */
const MAX_SECRET_LENGTH = 131_073;
/**
 * Longest line sent but `done`, bytes: under the agent's 256 KiB cap (runner-process.ts), which
 * kills a runner past it.
 */
const MAX_LINE_BYTES = 240 * 1024;
/** Longest `done` line, bytes: under the agent's 4 MiB cap. */
const MAX_DONE_BYTES = 3_800 * 1024;
/** Longest URL kept in errors and pages, characters (a data: URL can be megabytes). */
const MAX_URL_CHARS = 2_048;
/** Longest step title kept, characters. */
const MAX_STEP_NAME_CHARS = 1_024;
/** Longest error detail (stack, call log), characters. */
const MAX_DETAIL_CHARS = 4_096;
/** Longest error message, characters. */
const MAX_MESSAGE_CHARS = 2_048;
/** How long the failure screenshot and the deadline screenshot may take, ms. */
const SCREENSHOT_TIMEOUT_MS = 2_000;
/** How long stopping the trace may take, ms. */
const TRACE_TIMEOUT_MS = 3_000;
/** How long closing the context (and saving videos) may take, ms. */
const CLOSE_TIMEOUT_MS = 2_000;
/** How long connecting to the warm browser may take at most, ms. */
const CONNECT_TIMEOUT_MS = 15_000;
/** Most bytes read from stdin (a prepare line and the payload: script, files, variables). */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;
/** The name `@playwright/test` is imported by; `playwright/test` is the same module. */
const TEST_MODULES: ReadonlySet<string> = new Set(['@playwright/test', 'playwright/test']);

// Taken before the script runs, so a script that reassigns globals cannot break the report.
const stringify = JSON.stringify;
const bufferFrom = Buffer.from.bind(Buffer);
const writeSync = fs.writeSync;
const now = performance.now.bind(performance);
const realExit = process.exit.bind(process);
const pause = new Int32Array(new SharedArrayBuffer(4));

const runtimeDir = process.argv[2] ?? '';
const runtimeId = process.argv[3] ?? '';
const nodeModulesDir = path.join(runtimeDir, 'node_modules');
const workDir = process.cwd();

// biome-ignore lint/suspicious/noExplicitAny: Playwright's client objects are typed by the runtime, not here.
type Any = any;

let finished = false;

/**
 * Writes one message with blocking writes: a flooding script waits here while the agent reads.
 * When the agent is gone there is nobody to run for: exit at once.
 */
function send(message: RunnerMessage): void {
  const bytes = bufferFrom(`${stringify(message)}\n`);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(CHANNEL_FD, bytes, offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 1);
        continue;
      }
      finished = true;
      realExit(70);
    }
  }
}

const ESC = String.fromCharCode(27);
const ANSI = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');
const stripAnsi = (text: string) => text.replace(ANSI, '');
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * `text` cut so that its JSON string takes at most `maxBytes` (escapes of control characters
 * take up to 6 bytes a character, other characters up to 3).
 */
function fitJson(text: string, maxBytes: number): string {
  let fitted = text;
  for (let bytes = Buffer.byteLength(stringify(fitted)); bytes > maxBytes; ) {
    fitted = fitted.slice(0, Math.floor((fitted.length * maxBytes) / bytes / 1.05));
    bytes = Buffer.byteLength(stringify(fitted));
  }
  return fitted;
}

// ---------------------------------------------------------------------------------------------
// Output, environment, secrets

let maxLogChars = 65_536;
let maxEntries = 1_000;
let logCount = 0;

function emitLog(level: LogLevel, text: string): void {
  if (finished) return;
  if (++logCount > maxEntries) return;
  const line = text.endsWith('\n') ? text.slice(0, -1) : text;
  const msg = fitJson(line.length > maxLogChars ? line.slice(0, maxLogChars) : line, MAX_LINE_BYTES - 256);
  send({ t: 'log', level, msg, time: new Date().toISOString() });
}

const reportedSecrets = new Set<string>();

function reportSecret(secret: unknown): void {
  if (typeof secret !== 'string' || secret === '') return;
  // A secret too long for one line (escapes) is cut: the agent scrubs at least that much of it.
  const value = fitJson(secret.slice(0, MAX_SECRET_LENGTH), MAX_LINE_BYTES - 64);
  if (reportedSecrets.has(value)) return;
  reportedSecrets.add(value);
  send({ t: 'secret', value });
}

const secretKey = (key: string | symbol) =>
  typeof key === 'string' && SECRET_PREFIXES.some((prefix) => key.startsWith(prefix));

function sweepSecrets(env: unknown): void {
  if (env === null || typeof env !== 'object') return;
  try {
    for (const [key, value] of Object.entries(env)) if (secretKey(key)) reportSecret(value);
  } catch {
    // A hostile process.env replacement: what was reported as it was set stays reported.
  }
}

const realEnv = process.env;

/**
 * The environment becomes exactly `env`. Every way to put a value in it reports secret-named
 * values at once (set, defineProperty, a whole new process.env), so the agent knows them even
 * when the runner is then killed.
 */
function installEnv(env: Record<string, string>): void {
  for (const key of Object.keys(realEnv)) delete realEnv[key];
  Object.assign(realEnv, env);
  const tracking: ProxyHandler<Record<string, unknown>> = {
    set(target, key, value) {
      const ok = Reflect.set(target, key, value);
      if (secretKey(key)) reportSecret(Reflect.get(target, key));
      return ok;
    },
    defineProperty(target, key, descriptor) {
      if (secretKey(key) && 'value' in descriptor) reportSecret(descriptor.value);
      const ok = Reflect.defineProperty(target, key, descriptor);
      if (secretKey(key)) reportSecret(Reflect.get(target, key));
      return ok;
    },
  };
  let current: unknown = new Proxy(realEnv, tracking);
  Object.defineProperty(process, 'env', {
    get: () => current,
    set: (value: unknown) => {
      sweepSecrets(value);
      current = value !== null && typeof value === 'object' ? new Proxy(value, tracking) : value;
    },
    enumerable: true,
    configurable: false,
  });
}

/** console.log/info → INFO, warn → WARN, error/trace/assert → ERROR, debug → DEBUG; stdout/stderr writes too. */
function installConsole(): void {
  const sink = (level: LogLevel) => ({
    write(chunk: unknown): boolean {
      emitLog(level, typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return true;
    },
  });
  const make = (stdout: LogLevel, stderr: LogLevel) =>
    new nodeConsole.Console({
      stdout: sink(stdout) as unknown as NodeJS.WritableStream,
      stderr: sink(stderr) as unknown as NodeJS.WritableStream,
      ignoreErrors: false,
      colorMode: false,
    });
  const scriptConsole = make('INFO', 'ERROR');
  scriptConsole.debug = make('DEBUG', 'DEBUG').log;
  scriptConsole.warn = make('WARN', 'WARN').warn;
  globalThis.console = scriptConsole;
  const streamWrite = (level: LogLevel) =>
    ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
      sink(level).write(chunk);
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = streamWrite('INFO');
  process.stderr.write = streamWrite('ERROR');
}

// ---------------------------------------------------------------------------------------------
// Errors

/** The first stack frame in the script, as the script's own 1-based line and column. */
function scriptLocation(error: unknown): ScriptLocation | null {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string') return null;
  const file = SCRIPT_FILENAME.replace('.', '\\.');
  const call = new RegExp(`(?:\\(|at |file://)${file}:(\\d+):(\\d+)`).exec(stack);
  if (call) return { line: Number(call[1]), column: Number(call[2]) };
  // A compile error starts `script.js:3` with a caret below.
  const frame = new RegExp(`^${file}:(\\d+)`, 'm').exec(stack);
  return frame ? { line: Number(frame[1]), column: 1 } : null;
}

function errorKind(error: unknown): 'ASSERTION' | 'TIMEOUT' | 'SCRIPT' {
  if (error !== null && typeof error === 'object') {
    if ('matcherResult' in error) return 'ASSERTION';
    if ((error as { name?: unknown }).name === 'TimeoutError') return 'TIMEOUT';
  }
  return 'SCRIPT';
}

function errorMessage(error: unknown): string {
  if (error instanceof Error || util.types.isNativeError(error)) {
    const message = stripAnsi(String(error.message ?? '')).trim();
    const first = message.split('\n')[0] ?? '';
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return cut(`${name}${first}` || 'Error', MAX_MESSAGE_CHARS);
  }
  const text = typeof error === 'string' ? error : util.inspect(error, { depth: 2, breakLength: Infinity });
  return cut(text, MAX_MESSAGE_CHARS);
}

function describeError(error: unknown): BrowserRunError {
  let detail: string | null = null;
  if (error instanceof Error || util.types.isNativeError(error)) {
    // A V8 stack starts with the name and whole message (Playwright's call log included).
    detail = cut(stripAnsi(String(error.stack ?? error.message ?? '')), MAX_DETAIL_CHARS);
  }
  return {
    kind: errorKind(error),
    message: errorMessage(error),
    detail,
    location: scriptLocation(error),
    url: null,
  };
}

const errors: BrowserRunError[] = [];
let droppedErrors = 0;

function addError(error: BrowserRunError): void {
  if (errors.length >= maxEntries) droppedErrors++;
  else errors.push(error);
}

const failing = (error: BrowserRunError) =>
  error.kind === 'ASSERTION' || error.kind === 'SCRIPT' || error.kind === 'TIMEOUT';

// ---------------------------------------------------------------------------------------------
// Steps

const steps: BrowserStep[] = [];
let scriptStart = 0;
const stepDepth = new asyncHooks.AsyncLocalStorage<number>();
/** A test that skipped itself (test.skip() inside it). */
class SkipSignal extends Error {}

function recordStep(given: BrowserStep): void {
  const step = { ...given, name: cut(given.name, MAX_STEP_NAME_CHARS) };
  if (steps.length < maxEntries) steps.push(step);
  send({ t: 'step', step });
}

async function runStep<T>(name: string, depth: number, body: () => Promise<T>): Promise<T> {
  const startMs = now() - scriptStart;
  try {
    const value = await stepDepth.run(depth, body);
    recordStep({
      name,
      depth,
      startMs,
      durationMs: now() - scriptStart - startMs,
      status: 'PASSED',
      error: null,
    });
    return value;
  } catch (err) {
    const skipped = err instanceof SkipSignal;
    recordStep({
      name,
      depth,
      startMs,
      durationMs: now() - scriptStart - startMs,
      status: skipped ? 'SKIPPED' : 'FAILED',
      error: skipped ? null : errorMessage(err),
    });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Pages: web vitals, page errors, secrets masked in pixels

const pages: BrowserPage[] = [];
const EMPTY_VITALS = (): WebVitals => ({ FCP: null, LCP: null, CLS: null, TBT: null, INP: null, TTFB: null });
type PageRecord = { url: string; webVitals: WebVitals; seen: boolean };
const currentVisit = new Map<Any, PageRecord>();
const openPages: Any[] = [];

function flushPage(page: Any): void {
  const record = currentVisit.get(page);
  currentVisit.delete(page);
  if (record === undefined || record.url === '' || record.url === 'about:blank') return;
  if (pages.length < maxEntries)
    pages.push({ url: cut(record.url, MAX_URL_CHARS), webVitals: record.webVitals });
}

/** Collects FCP, LCP, CLS, INP, TTFB (web-vitals, every change) and TBT (long tasks) of each main-frame document. */
function vitalsScript(webVitalsSource: string): string {
  return `(() => {
if (window !== window.top || typeof window.__outpostVital !== 'function') return;
const report = (name, value) => { try { window.__outpostVital(location.href, name, value); } catch {} };
${webVitalsSource}
const wv = typeof webVitals !== 'undefined' ? webVitals : window.webVitals;
if (wv) for (const name of ['FCP', 'LCP', 'CLS', 'INP', 'TTFB'])
  wv['on' + name]((metric) => report(name, metric.value), { reportAllChanges: true });
let tbt = 0;
try {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) tbt += Math.max(0, entry.duration - 50);
    report('TBT', tbt);
  }).observe({ type: 'longtask', buffered: true });
} catch {}
addEventListener('load', () => setTimeout(() => report('TBT', tbt), 0));
})();`;
}

/** Locators that received a secret, per page: masked in every screenshot the runner takes. */
const secretLocators: Any[] = [];
let secrets: string[] = [];

const holdsSecret = (value: unknown) =>
  typeof value === 'string' && secrets.some((secret) => secret !== '' && value.includes(secret));

/** Shows `target`'s text as discs (`-webkit-text-security`), waiting at most 1 s for it. */
async function hideText(target: Any): Promise<void> {
  try {
    // Locator.evaluate takes the timeout; ElementHandle.evaluate ignores it and does not wait.
    await target.evaluate(
      (el: Any) => el?.style?.setProperty('-webkit-text-security', 'disc', 'important'),
      undefined,
      { timeout: 1_000 },
    );
  } catch {
    // No such element (yet), or a detached one: nothing on screen to hide now.
  }
}

/**
 * Wraps the typing methods of Playwright's client classes so that an input about to receive a
 * secret gets `-webkit-text-security: disc` (screenshots, screencast frames and video show dots)
 * and joins the masks of the runner's screenshots.
 */
function installSecretMasking(client: Record<string, Any>): void {
  const wrap = (proto: Any, name: string, target: (self: Any, args: unknown[]) => Any, valueAt: number) => {
    const original = proto?.[name];
    if (typeof original !== 'function') return;
    proto[name] = async function (this: Any, ...args: unknown[]) {
      if (holdsSecret(args[valueAt])) {
        const locator = target(this, args);
        if (locator) {
          if (typeof locator.page === 'function') secretLocators.push(locator);
          await hideText(locator);
        }
      }
      return original.apply(this, args);
    };
  };
  const { Page, Frame, Locator, ElementHandle, Keyboard } = client;
  for (const name of ['fill', 'type']) {
    wrap(Page?.prototype, name, (self, args) => self.locator(args[0]), 1);
    wrap(Frame?.prototype, name, (self, args) => self.locator(args[0]), 1);
    wrap(Locator?.prototype, name, (self) => self, 0);
    wrap(ElementHandle?.prototype, name, (self) => self, 0);
  }
  wrap(Locator?.prototype, 'pressSequentially', (self) => self, 0);
  const active = (self: Any) => {
    const page = self._page;
    return page ? page.locator('*:focus') : null;
  };
  wrap(Keyboard?.prototype, 'type', active, 0);
  wrap(Keyboard?.prototype, 'insertText', active, 0);
}

function masksFor(page: Any): Any[] {
  return secretLocators.filter((locator) => {
    try {
      return locator.page() === page;
    } catch {
      return false;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Artifacts

const artifacts: RunnerArtifact[] = [];
const artifactNames = new Set<string>();

function announce(name: string, kind: RunnerArtifact['kind']): void {
  if (artifactNames.has(name)) return;
  let sizeBytes: number;
  try {
    sizeBytes = fs.statSync(path.join(workDir, name)).size;
  } catch {
    return;
  }
  artifactNames.add(name);
  const artifact = { name, kind, sizeBytes };
  artifacts.push(artifact);
  send({ t: 'artifact', artifact });
}

/** A file the script wrote with `screenshot({ path })`, moved to the temp dir's top level if needed, announced. */
function announceScriptFile(file: unknown, kind: RunnerArtifact['kind']): void {
  if (typeof file !== 'string') return;
  const full = path.resolve(workDir, file);
  if (!full.startsWith(`${workDir}${path.sep}`)) return;
  let name = path.relative(workDir, full);
  if (name.includes(path.sep)) {
    const flat = `script-${artifacts.length}-${path.basename(full)}`;
    try {
      fs.renameSync(full, path.join(workDir, flat));
    } catch {
      return;
    }
    name = flat;
  }
  announce(name, kind);
}

function installScreenshotHooks(client: Record<string, Any>): void {
  for (const cls of [client.Page, client.Locator, client.ElementHandle]) {
    const proto = cls?.prototype;
    const original = proto?.screenshot;
    if (typeof original !== 'function') continue;
    proto.screenshot = async function (this: Any, options?: Record<string, unknown>) {
      let page: Any = null;
      try {
        page = typeof this.page === 'function' ? this.page() : (this._page ?? this);
      } catch {
        page = null;
      }
      const masks = page ? masksFor(page) : [];
      const given = options ?? {};
      const withMasks =
        masks.length > 0 ? { ...given, mask: [...((given.mask as Any[]) ?? []), ...masks] } : given;
      const result = await original.call(this, withMasks);
      announceScriptFile(given.path, 'SCREENSHOT');
      return result;
    };
  }
}

/** A promise that settles within `ms` (its value or undefined); never rejects. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// The `@playwright/test` shim

type TestFn = (fixtures: Record<string, unknown>, testInfo: unknown) => unknown;
type Mode = 'normal' | 'skip' | 'only' | 'fixme';
type Hook = TestFn;
type Suite = {
  title: string;
  mode: Mode;
  parent: Suite | null;
  entries: Array<{ suite: Suite } | { test: TestCase }>;
  beforeAll: Hook[];
  afterAll: Hook[];
  beforeEach: Hook[];
  afterEach: Hook[];
};
type TestCase = { title: string; fn: TestFn; mode: Mode; suite: Suite };

/** The names a test function destructures from its first parameter (`async ({ page, request }) => …`), as Playwright reads them. */
function fixtureNames(fn: Function): string[] {
  const text = Function.prototype.toString.call(fn);
  // `async ({ page }) => …` or `async function ({ page }) …`: the parameter list opens with a brace.
  const open = text.indexOf('(');
  if (open === -1 || !/^\s*(?:async\s*)?(?:function\s*\*?\s*[\w$]*\s*)?$/.test(text.slice(0, open)))
    return [];
  if (!/^\s*\{/.test(text.slice(open + 1))) return [];
  const start = text.indexOf('{', open);
  let depth = 0;
  let end = start;
  for (; end < text.length; end++) {
    if (text[end] === '{') depth++;
    else if (text[end] === '}' && --depth === 0) break;
  }
  const inner = text.slice(start + 1, end);
  const names: string[] = [];
  let level = 0;
  let token = '';
  for (const char of `${inner},`) {
    if ('{[('.includes(char)) level++;
    else if ('}])'.includes(char)) level--;
    if (char === ',' && level === 0) {
      const name = /^\s*(?:\.\.\.)?\s*([A-Za-z_$][\w$]*)/.exec(token)?.[1];
      if (name) names.push(name);
      token = '';
    } else token += char;
  }
  return names;
}

type RunState = {
  payload: RunnerPayload;
  pw: Any;
  browser: Any;
  context: Any;
  expect: Any;
};

/** The `test` object of the shim and the tests the script registered with it. */
function createTestApi(state: RunState): Any {
  const root: Suite = {
    title: '',
    mode: 'normal',
    parent: null,
    entries: [],
    beforeAll: [],
    afterAll: [],
    beforeEach: [],
    afterEach: [],
  };
  let suite = root;
  let running: TestCase | null = null;
  const register = (mode: Mode) => (title: unknown, a?: unknown, b?: unknown) => {
    const fn = (typeof a === 'function' ? a : b) as TestFn | undefined;
    if (typeof title !== 'string' || typeof fn !== 'function') {
      throw new TypeError('test(title, fn) needs a title and a function');
    }
    suite.entries.push({ test: { title, fn, mode, suite } });
  };
  const describe = (mode: Mode) => (title: unknown, a?: unknown, b?: unknown) => {
    const fn = (typeof title === 'function' ? title : typeof a === 'function' ? a : b) as () => void;
    const child: Suite = {
      title: typeof title === 'string' ? title : '',
      mode,
      parent: suite,
      entries: [],
      beforeAll: [],
      afterAll: [],
      beforeEach: [],
      afterEach: [],
    };
    suite.entries.push({ suite: child });
    const outer = suite;
    suite = child;
    try {
      fn();
    } finally {
      suite = outer;
    }
  };
  /** test.skip()/test.fixme(): a test of that mode, a skipped suite, or a running test stopping. */
  const skipper =
    (mode: Mode) =>
    (...args: unknown[]) => {
      if (typeof args[0] === 'string' && typeof args[1] === 'function')
        return register(mode)(args[0], args[1]);
      // test.skip(({ browserName }) => …): a condition on the options, here always Chromium's.
      const given =
        typeof args[0] === 'function'
          ? (args[0] as (options: Record<string, unknown>) => unknown)({
              browserName: 'chromium',
              headless: true,
            })
          : args[0];
      const condition = args.length === 0 || typeof given === 'string' ? true : Boolean(given);
      if (!condition) return;
      if (running !== null) throw new SkipSignal('skipped');
      suite.mode = mode;
    };
  const hook = (kind: 'beforeAll' | 'afterAll' | 'beforeEach' | 'afterEach') => (a: unknown, b?: unknown) => {
    const fn = (typeof a === 'function' ? a : b) as Hook;
    if (typeof fn === 'function') suite[kind].push(fn);
  };
  const step = Object.assign(
    (title: string, body: () => unknown) =>
      runStep(String(title), (stepDepth.getStore() ?? 0) + 1, async () => body()),
    {
      skip: async (title: string) => {
        const depth = (stepDepth.getStore() ?? 0) + 1;
        recordStep({
          name: String(title),
          depth,
          startMs: now() - scriptStart,
          durationMs: 0,
          status: 'SKIPPED',
          error: null,
        });
      },
    },
  );
  const describeApi = Object.assign(describe('normal'), {
    only: describe('only'),
    skip: describe('skip'),
    fixme: describe('fixme'),
    serial: Object.assign(describe('normal'), { only: describe('only'), skip: describe('skip') }),
    parallel: Object.assign(describe('normal'), { only: describe('only'), skip: describe('skip') }),
    configure: () => {},
  });
  const test = Object.assign(register('normal'), {
    only: register('only'),
    skip: skipper('skip'),
    fixme: skipper('fixme'),
    fail: register('normal'),
    slow: () => {},
    describe: describeApi,
    beforeAll: hook('beforeAll'),
    afterAll: hook('afterAll'),
    beforeEach: hook('beforeEach'),
    afterEach: hook('afterEach'),
    step,
    expect: state.expect,
    setTimeout: () => {},
    // Context options are the runner's: one traced context per check.
    use: () => {},
    extend: () => test,
    info: () => testInfo(running),
  });
  const setRunning = (t: TestCase | null) => {
    running = t;
  };
  return { test, root, setRunning } as Any;
}

function testInfo(test: TestCase | null): Record<string, unknown> {
  return {
    title: test?.title ?? '',
    annotations: [],
    attachments: [],
    attach: async () => {},
    outputPath: (...parts: string[]) => path.join(workDir, ...parts),
    skip: () => {
      throw new SkipSignal('skipped');
    },
  };
}

/** Fixtures a test asked for, created now: `page` makes a new page in the run's context. */
async function fixturesFor(names: string[], state: RunState): Promise<Record<string, unknown>> {
  const fixtures: Record<string, unknown> = {
    context: state.context,
    request: state.context.request,
    browser: state.browser,
    browserName: 'chromium',
    playwright: state.pw,
  };
  if (names.includes('page')) fixtures.page = takeSparePage() ?? (await state.context.newPage());
  return fixtures;
}

function modeOf(suite: Suite | null): Mode {
  for (let s = suite; s !== null; s = s.parent) if (s.mode === 'skip' || s.mode === 'fixme') return s.mode;
  return 'normal';
}

function hasOnly(suite: Suite): boolean {
  return suite.entries.some((entry) =>
    'test' in entry ? entry.test.mode === 'only' : entry.suite.mode === 'only' || hasOnly(entry.suite),
  );
}

function collectTests(suite: Suite, onlyMode: boolean, inOnly: boolean): TestCase[] {
  const tests: TestCase[] = [];
  for (const entry of suite.entries) {
    if ('test' in entry) {
      if (!onlyMode || inOnly || entry.test.mode === 'only') tests.push(entry.test);
    } else tests.push(...collectTests(entry.suite, onlyMode, inOnly || entry.suite.mode === 'only'));
  }
  return tests;
}

async function runHooks(hooks: Hook[], fixtures: Record<string, unknown>, info: unknown): Promise<void> {
  for (const fn of hooks) await fn(fixtures, info);
}

/** Runs the registered tests in order: hooks, fixtures, each test a step of depth 0. */
async function runTests(api: Any, state: RunState): Promise<void> {
  const root: Suite = api.root;
  const tests = collectTests(root, hasOnly(root), false);
  const started = new Set<Suite>();
  const startedOrder: Suite[] = [];
  const allFixtures = await fixturesFor([], state);
  for (const test of tests) {
    const chain: Suite[] = [];
    for (let s: Suite | null = test.suite; s !== null; s = s.parent) chain.unshift(s);
    const skipped = test.mode === 'skip' || test.mode === 'fixme' || modeOf(test.suite) !== 'normal';
    if (skipped) {
      recordStep({
        name: test.title,
        depth: 0,
        startMs: now() - scriptStart,
        durationMs: 0,
        status: 'SKIPPED',
        error: null,
      });
      continue;
    }
    const info = testInfo(test);
    try {
      for (const s of chain) {
        if (started.has(s)) continue;
        started.add(s);
        startedOrder.push(s);
        await runHooks(s.beforeAll, allFixtures, info);
      }
    } catch (err) {
      addError(describeError(err));
      recordStep({
        name: test.title,
        depth: 0,
        startMs: now() - scriptStart,
        durationMs: 0,
        status: 'FAILED',
        error: errorMessage(err),
      });
      continue;
    }
    const names = new Set(fixtureNames(test.fn));
    for (const s of chain)
      for (const fn of [...s.beforeEach, ...s.afterEach]) for (const n of fixtureNames(fn)) names.add(n);
    api.setRunning(test);
    try {
      await runStep(test.title, 0, async () => {
        const fixtures = await fixturesFor([...names], state);
        let failure: unknown = null;
        try {
          for (const s of chain) await runHooks(s.beforeEach, fixtures, info);
          await test.fn(fixtures, info);
        } catch (err) {
          failure = err;
        }
        for (const s of [...chain].reverse()) {
          try {
            await runHooks(s.afterEach, fixtures, info);
          } catch (err) {
            failure ??= err;
          }
        }
        if (failure !== null) throw failure;
      });
    } catch (err) {
      if (!(err instanceof SkipSignal)) addError(describeError(err));
    } finally {
      api.setRunning(null);
    }
  }
  for (const s of startedOrder.reverse()) {
    try {
      await runHooks(s.afterAll, allFixtures, testInfo(null));
    } catch (err) {
      addError(describeError(err));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// What the permission model leaves open

/**
 * Built-ins the permission model does not guard well enough: node:sqlite opens files itself,
 * node:ffi (Node 26) calls native code, node:inspector would open this process's inspector.
 */
const DENIED_BUILTINS: ReadonlySet<string> = new Set(['sqlite', 'ffi', 'inspector', 'inspector/promises']);

/** An error shaped like the permission model's own. */
function denied(permission: string, resource: string): Error {
  return Object.assign(new Error(`Access to ${resource} is not allowed in checks`), {
    code: 'ERR_ACCESS_DENIED',
    permission,
    resource,
  });
}

/** Throws for a denied built-in (`node:inspector`); true for any other built-in. */
function allowedBuiltin(id: string): boolean {
  const bare = id.startsWith('node:') ? id.slice(5) : id;
  if (DENIED_BUILTINS.has(bare)) throw denied('Module', `node:${bare}`);
  return nodeModule.isBuiltin(id);
}

/** A pid argument converted once: an integer number or a string of digits, else null. */
function pidOf(value: unknown): number | null {
  let pid: number;
  if (typeof value === 'number') pid = value;
  else if (typeof value === 'string' && /^-?\d{1,10}$/.test(value)) pid = Number(value);
  else return null;
  return Number.isSafeInteger(pid) ? pid : null;
}

/** A signal argument converted once to its number (default SIGTERM), or null. */
function signalOf(value: unknown): number | null {
  if (value === undefined) return os.constants.signals.SIGTERM;
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 64 ? value : null;
  if (typeof value !== 'string') return null;
  const signals = os.constants.signals as Readonly<Record<string, number>>;
  return Object.hasOwn(signals, value) ? (signals[value] ?? null) : null;
}

const pidText = (value: unknown) =>
  typeof value === 'number' || typeof value === 'string' ? String(value).slice(0, 40) : typeof value;

/**
 * Closes what the permission model leaves open to a process of the agent's user (a runner runs
 * as the agent's user when the agent is not root): signals to other processes, the inspector,
 * raw bindings and other processes' priority. Only this process and its own group stay
 * reachable; each argument is converted once, so it cannot answer the check and the call
 * differently. As root the runner has a uid of its own, and the kernel refuses the rest.
 */
function lockDownProcess(): void {
  const ownPid = process.pid;
  const own = (pid: number) => pid === 0 || pid === ownPid || pid === -ownPid;
  const rawKill = (process as unknown as { _kill: (pid: number, signal: number) => number })._kill;
  const nodeKill = process.kill;
  const checked = (pid: unknown, signal: unknown): [number, number] => {
    const number = pidOf(pid);
    if (number === null || !own(number)) throw denied('Signal', `pid ${pidText(pid)}`);
    const sig = signalOf(signal);
    if (sig === null) {
      throw Object.assign(new TypeError(`Unknown signal: ${pidText(signal)}`), {
        code: 'ERR_UNKNOWN_SIGNAL',
      });
    }
    return [number, sig];
  };
  const lock = (name: string, value: unknown) =>
    Object.defineProperty(process, name, { value, writable: false, configurable: false });
  lock('_kill', (pid: unknown, signal: unknown) => rawKill.call(process, ...checked(pid, signal)));
  lock('kill', (pid: unknown, signal?: unknown) => nodeKill.call(process, ...checked(pid, signal)));
  for (const name of ['_debugProcess', '_debugEnd']) {
    lock(name, (pid: unknown) => {
      throw denied('Inspector', `pid ${pidText(pid)}`);
    });
  }
  for (const name of ['binding', '_linkedBinding']) {
    lock(name, () => {
      throw denied('Binding', `process.${name}`);
    });
  }
  const setPriority = os.setPriority.bind(os);
  os.setPriority = ((pidOrPriority: unknown, priority?: unknown) => {
    if (priority === undefined) return setPriority(pidOf(pidOrPriority) ?? Number.NaN);
    const pid = pidOf(pidOrPriority);
    if (pid === null || !own(pid)) throw denied('Signal', `pid ${pidText(pidOrPriority)}`);
    return setPriority(pid, pidOf(priority) ?? Number.NaN);
  }) as typeof os.setPriority;
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltin === 'function') {
    (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule = (id: string) => {
      allowedBuiltin(id);
      return getBuiltin(id);
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Loading the script

/** A require for scripts: the shim for `@playwright/test`, else built-ins and the runtime's packages. */
function createScriptRequire(testModule: () => Any): NodeJS.Require {
  const anchor = nodeModule.createRequire(path.join(nodeModulesDir, SCRIPT_FILENAME));
  const scriptRequire = ((id: string) => {
    if (typeof id !== 'string') throw new TypeError(`require needs a module name, got ${typeof id}`);
    if (TEST_MODULES.has(id)) return testModule();
    if (allowedBuiltin(id)) return require(id);
    return anchor(id);
  }) as NodeJS.Require;
  scriptRequire.resolve = anchor.resolve;
  scriptRequire.cache = anchor.cache;
  return scriptRequire;
}

/** A module of `exports` (a namespace or a CommonJS value) as a linked vm module. */
function syntheticModule(exports: Record<string, unknown>, identifier: string): Any {
  const keys = Object.keys(exports).filter((key) => key !== 'default');
  const VmSynthetic = (vm as Any).SyntheticModule;
  return new VmSynthetic(
    [...keys, 'default'],
    function (this: Any) {
      for (const key of keys) this.setExport(key, exports[key]);
      this.setExport('default', 'default' in exports ? exports.default : exports);
    },
    { identifier },
  );
}

/** The check's dependency files by normalised relative path (payload.files), set once the payload came. */
let dependencyFiles = new Map<string, string>();
/** Dependency modules made so far, by path: each file is one module, however often it is imported. */
const dependencyModules = new Map<string, Any>();
/** Extensions tried, in order, for a relative specifier without one (as bundlers and tsx do). */
const DEPENDENCY_EXTENSIONS = ['', '.ts', '.js', '.mjs', '.mts', '/index.ts', '/index.js'];

/**
 * A dependency file of the check imported with a relative specifier (`./helpers/login`) from the
 * script (at the project root) or from another dependency: an ES module compiled from the payload's
 * text (types stripped where Node can), linked by the same rules as the script. Never read from disk.
 * @throws Error naming the specifier when no dependency file matches.
 */
function dependencyModule(specifier: string, fromPath: string, testModule: () => Any): Any {
  const base = path.posix.dirname(fromPath);
  const wanted = path.posix.normalize(path.posix.join(base, specifier));
  const found = DEPENDENCY_EXTENSIONS.map((ext) => `${wanted}${ext}`).find((p) => dependencyFiles.has(p));
  if (found === undefined || wanted.startsWith('..')) {
    throw new Error(`Cannot find module '${specifier}': no dependency file of the check matches it`);
  }
  const cached = dependencyModules.get(found);
  if (cached !== undefined) return cached;
  const SourceTextModule = (vm as Any).SourceTextModule;
  const module: Any = new SourceTextModule(stripTypes(dependencyFiles.get(found) ?? ''), {
    identifier: found,
    importModuleDynamically: (inner: string) =>
      loadModule(inner, testModule, found).then(async (m: Any) => {
        if (m.status === 'unlinked') await m.link((s: string) => loadModule(s, testModule, found));
        if (m.status !== 'evaluated') await m.evaluate();
        return m;
      }),
  });
  dependencyModules.set(found, module);
  return module;
}

async function loadModule(
  specifier: string,
  testModule: () => Any,
  fromPath = SCRIPT_FILENAME,
): Promise<Any> {
  if (TEST_MODULES.has(specifier)) {
    return syntheticModule(testModule(), specifier);
  }
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    const module = dependencyModule(specifier, fromPath, testModule);
    if (module.status === 'unlinked') {
      const identifier = module.identifier as string;
      await module.link((inner: string) => loadModule(inner, testModule, identifier));
    }
    return module;
  }
  if (allowedBuiltin(specifier)) return syntheticModule(require(specifier), specifier);
  const anchor = nodeModule.createRequire(path.join(nodeModulesDir, SCRIPT_FILENAME));
  const resolved = anchor.resolve(specifier);
  const namespace = (await import(url.pathToFileURL(resolved).href)) as Record<string, unknown>;
  return syntheticModule({ ...namespace }, specifier);
}

function stripTypes(code: string): string {
  const strip = (nodeModule as unknown as { stripTypeScriptTypes?: (code: string) => string })
    .stripTypeScriptTypes;
  if (typeof strip !== 'function') return code;
  try {
    return strip(code);
  } catch {
    return code;
  }
}

function detectShape(code: string): ScriptShape {
  return /(?:from\s*|require\s*\(\s*|import\s*\(\s*)['"](?:@playwright\/test|playwright\/test)['"]/.test(code)
    ? 'TEST'
    : 'PLAIN';
}

// ---------------------------------------------------------------------------------------------
// The run

type Loaded = {
  pw: Any;
  playwrightTest: Any;
  version: string;
  webVitals: string;
  client: Record<string, Any>;
};

function load(): Loaded {
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

let deadlineHit = false;

/**
 * The run's fresh browser context: downloads accepted, video when asked, tracing on (screenshots and
 * snapshots), the web-vitals binding and init script, and one page opened (the page a browser check
 * uses first; a check without a page closes it).
 */
async function prepareContext(browser: Any, loaded: Loaded, video: boolean): Promise<Any> {
  const context = await browser.newContext({
    acceptDownloads: true,
    ...(video ? { recordVideo: { dir: path.join(workDir, 'videos') } } : {}),
  });
  await context.tracing.start({ screenshots: true, snapshots: true, sources: false });
  await context.exposeBinding(
    '__outpostVital',
    (source: Any, href: unknown, name: unknown, value: unknown) => {
      const record = currentVisit.get(source.page);
      if (!record || typeof name !== 'string' || typeof value !== 'number' || !Number.isFinite(value)) return;
      if (typeof href !== 'string') return;
      if (withoutHash(record.url) !== withoutHash(href)) {
        // A late value of the document before: it belongs to a visit already flushed.
        if (record.seen || (record.url !== '' && record.url !== 'about:blank')) return;
        record.url = href;
      }
      if (name in record.webVitals) (record.webVitals as Record<string, number | null>)[name] = value;
      record.seen = true;
    },
  );
  await context.addInitScript({ content: vitalsScript(loaded.webVitals) });
  await context.newPage();
  return context;
}

/** The page prepareContext opened, until a script or the `page` fixture takes it. */
let sparePage: Any = null;

/** The prepared page, once (null when taken or closed). */
function takeSparePage(): Any {
  const page = sparePage;
  sparePage = null;
  return page !== null && !page.isClosed() ? page : null;
}

/** A browser connection and context made while the runner waited for its payload. */
type Prepared = { wsEndpoint: string; browser: Any; context: Any };

/** Set when the agent named the warm browser before the payload (a `prepare` line on stdin). */
let prepared: Promise<Prepared | null> | null = null;

/** Connects to `wsEndpoint` and prepares a context ahead of the payload; null when that fails. */
async function prepare(wsEndpoint: string, loaded: Loaded): Promise<Prepared | null> {
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

async function run(payload: RunnerPayload, loaded: Loaded, arrivedAt: number): Promise<void> {
  if (Number.isSafeInteger(payload.maxLogChars) && payload.maxLogChars > 0) maxLogChars = payload.maxLogChars;
  if (Number.isSafeInteger(payload.maxEntries) && payload.maxEntries > 0) maxEntries = payload.maxEntries;
  secrets = Array.isArray(payload.secrets)
    ? payload.secrets.filter((s) => typeof s === 'string' && s !== '')
    : [];
  const shape: ScriptShape = payload.shape ?? detectShape(payload.code);
  const runMs = Math.max(0, payload.timeoutMs - payload.captureMarginMs);
  const deadlineAt = arrivedAt + runMs;
  const { pw } = loaded;

  let browser: Any;
  let context: Any;
  // A context prepared before the payload came (the pool named the browser early): used when it is
  // for this payload's browser and still connected; else connect now.
  const ready = prepared === null ? null : await prepared;
  if (
    ready !== null &&
    ready.wsEndpoint === payload.wsEndpoint &&
    !payload.video &&
    ready.browser.isConnected()
  ) {
    ({ browser, context } = ready);
  } else {
    if (ready !== null) await ready.browser.close().catch(() => {});
    try {
      browser = await pw.chromium.connect(payload.wsEndpoint, {
        timeout: Math.max(1, Math.min(CONNECT_TIMEOUT_MS, deadlineAt - now())),
      });
    } catch (err) {
      finishWith({ t: 'error', message: `could not connect to the browser: ${errorMessage(err)}` });
      return;
    }
    try {
      context = await prepareContext(browser, loaded, payload.video);
    } catch (err) {
      finishWith({ t: 'error', message: `could not prepare the browser context: ${errorMessage(err)}` });
      return;
    }
  }
  const track = (page: Any) => {
    openPages.push(page);
    currentVisit.set(page, { url: page.url(), webVitals: EMPTY_VITALS(), seen: false });
    page.on('framenavigated', (frame: Any) => {
      if (frame !== page.mainFrame()) return;
      flushPage(page);
      currentVisit.set(page, { url: frame.url(), webVitals: EMPTY_VITALS(), seen: false });
    });
    page.on('close', () => flushPage(page));
    page.on('pageerror', (error: Any) =>
      addError({
        kind: 'PAGE',
        message: errorMessage(error),
        detail: error?.stack ? cut(String(error.stack), MAX_DETAIL_CHARS) : null,
        location: null,
        url: safeUrl(page),
      }),
    );
    page.on('console', (message: Any) => {
      if (message.type() !== 'error') return;
      addError({
        kind: 'CONSOLE',
        message: cut(message.text(), MAX_MESSAGE_CHARS),
        detail: null,
        location: null,
        url: safeUrl(page),
      });
    });
    page.on('requestfailed', (request: Any) =>
      addError({
        kind: 'REQUEST',
        message: cut(
          `${request.method()} ${request.url()} failed: ${request.failure()?.errorText ?? 'no answer'}`,
          MAX_MESSAGE_CHARS,
        ),
        detail: null,
        location: null,
        url: safeUrl(page),
      }),
    );
    page.on('response', (response: Any) => {
      const request = response.request();
      if (response.status() < 400 || !request.isNavigationRequest() || request.frame() !== page.mainFrame())
        return;
      addError({
        kind: 'REQUEST',
        message: cut(
          `${request.method()} ${response.url()} answered ${response.status()}`,
          MAX_MESSAGE_CHARS,
        ),
        detail: null,
        location: null,
        url: cut(response.url(), MAX_URL_CHARS),
      });
    });
  };
  context.on('page', track);
  // The page prepareContext opened: the check's first page, unless it wants none.
  for (const page of context.pages()) track(page);
  sparePage = context.pages()[0] ?? null;
  // A multi-step check gets a page only when its test asks for one.
  if (payload.checkType === 'MULTI_STEP' && sparePage !== null)
    await takeSparePage()
      ?.close()
      .catch(() => {});

  const expect = loaded.playwrightTest.expect;
  const state: RunState = { payload, pw, browser, context, expect };
  const api = createTestApi(state);
  api.exports = {
    test: api.test,
    expect,
    devices: pw.devices,
    errors: pw.errors,
    chromium: pw.chromium,
    request: pw.request,
    selectors: pw.selectors,
    defineConfig: (config: unknown) => config,
  };
  const scriptRequire = createScriptRequire(() => ({
    ...api.exports,
    ...api.test,
    test: api.test,
    default: api.test,
  }));
  (globalThis as Record<string, unknown>).require = scriptRequire;

  // Playwright's client makes its trace stacks in os.tmpdir(), read from the environment each
  // call: it stays the temp dir whatever the script's environment says.
  os.tmpdir = () => workDir;
  lockDownProcess();
  installSecretMasking(loaded.client);
  installScreenshotHooks(loaded.client);
  installEnv(payload.env ?? {});
  dependencyFiles = new Map(
    (Array.isArray(payload.files) ? payload.files : [])
      .filter((f) => typeof f?.path === 'string' && typeof f?.content === 'string')
      .map((f) => [path.posix.normalize(f.path), f.content] as const),
  );
  installConsole();

  reportNow = (durationMs: number) => {
    for (const page of [...currentVisit.keys()]) flushPage(page);
    const failed = errors.some(failing) || deadlineHit;
    const first = errors.find(failing) ?? null;
    return {
      status: failed ? 'FAILED' : 'PASSED',
      shape,
      errorMessage: first ? first.message : null,
      errors,
      droppedErrors,
      steps,
      pages,
      timedOut: deadlineHit,
      startupMs,
      durationMs,
      versions: { playwright: loaded.version, browser: safeVersion(browser) },
      artifacts,
    };
  };
  const code = stripTypes(String(payload.code));
  const deadline = new Promise<'deadline'>((resolve) => {
    // Not unref'd: a script awaiting a promise that never settles still reaches its deadline.
    setTimeout(() => resolve('deadline'), Math.max(0, deadlineAt - now()));
  });
  const script = (async () => {
    if (shape === 'TEST') {
      const SourceTextModule = (vm as Any).SourceTextModule;
      if (typeof SourceTextModule !== 'function')
        throw new Error('vm modules are off (--experimental-vm-modules)');
      const testModule = () => ({ ...api.exports, default: api.test });
      const importer = (specifier: string) =>
        loadModule(specifier, testModule).then(async (m: Any) => {
          if (m.status === 'unlinked') await m.link(() => {});
          if (m.status !== 'evaluated') await m.evaluate();
          return m;
        });
      const module: Any = new SourceTextModule(code, {
        identifier: SCRIPT_FILENAME,
        importModuleDynamically: (specifier: string) => importer(specifier),
      });
      await module.link((specifier: string) => loadModule(specifier, testModule));
      scriptStart = now();
      startupMs = scriptStart - arrivedAt;
      await module.evaluate();
      await runTests(api, state);
    } else {
      const wanted = payload.checkType === 'BROWSER' || /\bpage\b/.test(code);
      const page = wanted ? (takeSparePage() ?? (await context.newPage())) : undefined;
      const fn = new vm.Script(`(async function (page, context, request, browser, expect) {\n${code}\n})`, {
        filename: SCRIPT_FILENAME,
        lineOffset: -1,
        importModuleDynamically: ((specifier: string) =>
          loadModule(specifier, () => ({ ...api.exports, default: api.test })).then(async (m: Any) => {
            await m.link(() => {});
            await m.evaluate();
            return m;
          })) as Any,
      }).runInThisContext() as (...args: unknown[]) => Promise<unknown>;
      scriptStart = now();
      startupMs = scriptStart - arrivedAt;
      await fn(page, context, context.request, browser, expect);
    }
  })();
  const outcome = await Promise.race([
    script.then(
      () => 'ok' as const,
      (err: unknown) => {
        if (scriptStart === 0) {
          scriptStart = now();
          startupMs = scriptStart - arrivedAt;
        }
        if (!(err instanceof SkipSignal)) addError(describeError(err));
        return 'failed' as const;
      },
    ),
    deadline,
  ]);
  if (scriptStart === 0) {
    scriptStart = now();
    startupMs = scriptStart - arrivedAt;
  }
  const durationMs = now() - scriptStart;
  if (outcome === 'deadline') {
    deadlineHit = true;
    addError({
      kind: 'TIMEOUT',
      message: `script timed out after ${Math.round(runMs)} ms`,
      detail: null,
      location: null,
      url: null,
    });
  }
  const failed = errors.some(failing) || deadlineHit;
  await capture(context, failed, arrivedAt + payload.timeoutMs);
  finishWith({ t: 'done', report: reportNow!(durationMs) });
}

let startupMs = 0;
/** The report as things stand, once a run has started (a script calling process.exit gets one too). */
let reportNow: ((durationMs: number) => BrowserRunReport) | null = null;

function withoutHash(href: string): string {
  const at = href.indexOf('#');
  return at === -1 ? href : href.slice(0, at);
}

function safeUrl(page: Any): string | null {
  try {
    return cut(String(page.url()), MAX_URL_CHARS);
  } catch {
    return null;
  }
}

function safeVersion(browser: Any): string {
  try {
    return String(browser.version());
  } catch {
    return '';
  }
}

/**
 * The failure (or deadline) screenshot, the trace, the context closed, videos saved. Each step
 * is bounded by its own cap and by what is left until `endAt` (the payload's `timeoutMs` from its
 * arrival, after which the agent may kill the runner), keeping time for the steps after it; a
 * file is announced only when it was written whole.
 */
async function capture(context: Any, failed: boolean, endAt: number): Promise<void> {
  const budget = (capMs: number, keepMs: number) => Math.max(0, Math.min(capMs, endAt - now() - keepMs));
  const whole = async (work: Promise<unknown>, ms: number): Promise<boolean> =>
    (await within(
      work.then(() => true),
      ms,
    )) === true;
  if (failed) {
    const page = [...openPages].reverse().find((p: Any) => !p.isClosed());
    const ms = budget(SCREENSHOT_TIMEOUT_MS, 1_500);
    if (page && ms > 0) {
      const shot = page.screenshot({
        path: path.join(workDir, 'failure.png'),
        fullPage: true,
        timeout: ms,
        mask: masksFor(page),
        animations: 'disabled',
      });
      if (await whole(shot, ms + 250)) announce('failure.png', 'SCREENSHOT');
    }
  } else {
    // Let vitals reported by pages arrive: a round trip to each open page (bounded).
    const open = openPages.filter((p: Any) => !p.isClosed());
    await within(Promise.all(open.map((p: Any) => p.evaluate(() => 0))), budget(500, 1_500));
  }
  const traced = context.tracing.stop({ path: path.join(workDir, 'trace.zip') });
  if (await whole(traced, budget(TRACE_TIMEOUT_MS, 300))) announce('trace.zip', 'TRACE');
  const videos = openPages.map((page: Any) => {
    try {
      return page.video();
    } catch {
      return null;
    }
  });
  await within(context.close(), budget(CLOSE_TIMEOUT_MS, 100));
  for (const [index, video] of videos.entries()) {
    if (!video) continue;
    const name = `video-${index + 1}.webm`;
    if (await whole(video.saveAs(path.join(workDir, name)), budget(CLOSE_TIMEOUT_MS, 100)))
      announce(name, 'VIDEO');
  }
}

/**
 * The report within MAX_DONE_BYTES: first without error details, then with at most 100
 * entries in each list (the steps were sent one by one already).
 */
function fitReport(report: BrowserRunReport): BrowserRunReport {
  const size = (r: BrowserRunReport) => Buffer.byteLength(stringify({ t: 'done', report: r }));
  if (size(report) <= MAX_DONE_BYTES) return report;
  const lean = { ...report, errors: report.errors.map((e) => ({ ...e, detail: null })) };
  if (size(lean) <= MAX_DONE_BYTES) return lean;
  const cutList = <T,>(list: T[]) => list.slice(0, 100);
  return {
    ...lean,
    errors: cutList(lean.errors),
    droppedErrors: lean.droppedErrors + Math.max(0, lean.errors.length - 100),
    steps: cutList(lean.steps),
    pages: cutList(lean.pages),
  };
}

/** Sends the last message and ends the process; later calls do nothing. */
function finishWith(message: RunnerMessage): void {
  if (finished) return;
  sweepSecrets(process.env);
  send(message.t === 'done' ? { t: 'done', report: fitReport(message.report) } : message);
  finished = true;
  realExit(0);
}

function main(): void {
  // Never run a script without the permission model (a wrong flag for this Node version).
  const permission = (process as { permission?: { has(scope: string, reference?: string): boolean } })
    .permission;
  if (
    !permission ||
    permission.has('child') ||
    permission.has('worker') ||
    permission.has('fs.write', '/proc')
  ) {
    process.stderr.write('the Node permission model is not active in this runner process\n');
    realExit(78);
  }
  Error.stackTraceLimit = 30;
  let loaded: Loaded;
  try {
    loaded = load();
  } catch (err) {
    send({ t: 'error', message: `runtime ${runtimeId} cannot be loaded: ${errorMessage(err)}` });
    realExit(0);
    return;
  }
  process.on('exit', (code) => {
    if (finished) return;
    // The script called process.exit: what ran so far is reported (no trace: exit is synchronous).
    if (reportNow !== null) {
      addError({
        kind: 'SCRIPT',
        message: `the script called process.exit(${code})`,
        detail: null,
        location: null,
        url: null,
      });
      const durationMs = scriptStart === 0 ? 0 : now() - scriptStart;
      finished = true;
      send({ t: 'done', report: fitReport(reportNow(durationMs)) });
    }
  });
  process.on('uncaughtException', (err) => {
    if (finished) return;
    addError(describeError(err));
  });
  process.on('unhandledRejection', (err) => {
    if (finished) return;
    emitLog('ERROR', `unhandled rejection: ${errorMessage(err)}`);
  });
  send({ t: 'ready', playwright: loaded.version });
  // stdin: an optional first line `{"t":"prepare","wsEndpoint":…}` (the pool names the warm browser
  // early: connect and prepare the context while waiting), then the payload, then end of file.
  const chunks: Buffer[] = [];
  let bytes = 0;
  let firstLineSeen = false;
  /** Where the payload starts: after the prepare line when there is one. */
  let payloadStart = 0;
  process.stdin.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes > MAX_PAYLOAD_BYTES) {
      finishWith({ t: 'error', message: `the payload is larger than ${MAX_PAYLOAD_BYTES} bytes` });
      return;
    }
    if (firstLineSeen) return;
    // Only the new chunk is searched; a prepare line is short, so a first line past 4 KiB is the payload's.
    const at = chunk.indexOf(10);
    if (at === -1) {
      if (bytes > 4_096) firstLineSeen = true;
      return;
    }
    firstLineSeen = true;
    const lineEnd = bytes - chunk.length + at;
    try {
      const line = JSON.parse(Buffer.concat(chunks).subarray(0, lineEnd).toString('utf8')) as {
        t?: unknown;
        wsEndpoint?: unknown;
      };
      if (line.t === 'prepare' && typeof line.wsEndpoint === 'string') {
        payloadStart = lineEnd + 1;
        prepared = prepare(line.wsEndpoint, loaded);
      }
    } catch {
      // Not a prepare line: the payload itself, read whole at the end.
    }
  });
  process.stdin.on('error', () => {});
  process.stdin.on('end', () => {
    const arrivedAt = now();
    const input = Buffer.concat(chunks).subarray(payloadStart).toString('utf8').trim();
    if (input === '') {
      // The agent closed (or died) before sending a payload: nothing to run.
      finished = true;
      realExit(0);
    }
    let payload: RunnerPayload;
    try {
      payload = JSON.parse(input) as RunnerPayload;
      if (typeof payload.wsEndpoint !== 'string' || typeof payload.code !== 'string')
        throw new Error('not a payload');
    } catch (err) {
      finishWith({ t: 'error', message: `bad payload: ${errorMessage(err)}` });
      return;
    }
    run(payload, loaded, arrivedAt).catch((err) => finishWith({ t: 'error', message: errorMessage(err) }));
  });
}

main();
