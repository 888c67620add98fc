/** The run of one check: its context, the script (TEST or PLAIN shape) within its deadline, the report. */
import os from 'node:os';
import vm from 'node:vm';
import { now } from '../../common/child/channel.js';
import { createScriptConsole, installScriptConsole } from '../../common/child/console.js';
import { guardGetBuiltinModule, lockDownProcess } from '../../common/child/lockdown.js';
import type { RunnerPayload, ScriptShape } from '../messages.js';
import { installScreenshotHooks } from './artifacts.js';
import { capture, finishWith } from './capture.js';
import {
  CONNECT_TIMEOUT_MS,
  type Loaded,
  type Prepared,
  prepareContext,
  setSparePage,
  takeSparePage,
} from './context.js';
import { addError, describeError, errorMessage, failing } from './errors.js';
import { installSecretMasking, setMaskedSecrets } from './masking.js';
import {
  createScriptRequire,
  denied,
  detectShape,
  loadModule,
  setDependencyFiles,
  stripTypes,
} from './modules.js';
import { emitLog, secrets } from './output.js';
import { currentVisit, flushPage, trackPage } from './pages.js';
import { type Any, artifacts, errors, pages, runState, SCRIPT_FILENAME, steps, workDir } from './state.js';
import { SkipSignal } from './steps.js';
import { createTestApi, type RunState, type TestApi } from './test-api.js';
import { runTests } from './test-run.js';

/**
 * The browser and context of the run: the ones prepared before the payload came when they are for
 * this payload's browser, without video, and still connected; else a new connection and context.
 * On failure the run finishes with `error` and null is returned.
 */
async function openContext(
  payload: RunnerPayload,
  loaded: Loaded,
  deadlineAt: number,
  prepared: Promise<Prepared | null> | null,
): Promise<{ browser: Any; context: Any } | null> {
  const ready = prepared === null ? null : await prepared;
  if (
    ready !== null &&
    ready.wsEndpoint === payload.wsEndpoint &&
    !payload.video &&
    ready.browser.isConnected()
  ) {
    return { browser: ready.browser, context: ready.context };
  }
  if (ready !== null) await ready.browser.close().catch(() => {});
  let browser: Any;
  try {
    browser = await loaded.pw.chromium.connect(payload.wsEndpoint, {
      timeout: Math.max(1, Math.min(CONNECT_TIMEOUT_MS, deadlineAt - now())),
    });
  } catch (err) {
    finishWith({ t: 'error', message: `could not connect to the browser: ${errorMessage(err)}` });
    return null;
  }
  try {
    return { browser, context: await prepareContext(browser, loaded, payload.video) };
  } catch (err) {
    finishWith({ t: 'error', message: `could not prepare the browser context: ${errorMessage(err)}` });
    return null;
  }
}

/** Tracks every page of `context`; the page prepareContext opened is the spare page (closed for a multi-step check). */
async function watchPages(context: Any, payload: RunnerPayload): Promise<void> {
  context.on('page', trackPage);
  // The page prepareContext opened: the check's first page, unless it wants none.
  for (const page of context.pages()) trackPage(page);
  setSparePage(context.pages()[0] ?? null);
  // A multi-step check gets a page only when its test asks for one.
  if (payload.checkType === 'MULTI_STEP')
    await takeSparePage()
      ?.close()
      .catch(() => {});
}

/** The shim with what `@playwright/test` exports; the global `require` of scripts. */
function createApi(state: RunState): TestApi {
  const { pw, expect } = state;
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
  return api;
}

/** Closes the process to the script, then gives it its environment, dependency files and console. */
function lockDown(payload: RunnerPayload, loaded: Loaded): void {
  // Playwright's client makes its trace stacks in os.tmpdir(), read from the environment each
  // call: it stays the temp dir whatever the script's environment says.
  os.tmpdir = () => workDir;
  lockDownProcess(denied);
  guardGetBuiltinModule(denied);
  installSecretMasking(loaded.client);
  installScreenshotHooks(loaded.client);
  secrets.installEnv(payload.env ?? {});
  setDependencyFiles(payload.files);
  installScriptConsole(createScriptConsole(emitLog));
}

/** Sets `reportNow`: the report as things stand, from the run's errors, steps, pages and artifacts. */
function setReportNow(shape: ScriptShape, loaded: Loaded, browser: Any): void {
  runState.reportNow = (durationMs: number) => {
    for (const page of [...currentVisit.keys()]) flushPage(page);
    const failed = errors.some(failing) || runState.deadlineHit;
    const first = errors.find(failing) ?? null;
    return {
      status: failed ? 'FAILED' : 'PASSED',
      shape,
      errorMessage: first ? first.message : null,
      errors,
      droppedErrors: runState.droppedErrors,
      steps,
      pages,
      timedOut: runState.deadlineHit,
      startupMs: runState.startupMs,
      durationMs,
      versions: { playwright: loaded.version, browser: safeVersion(browser) },
      artifacts,
    };
  };
}

function safeVersion(browser: Any): string {
  try {
    return String(browser.version());
  } catch {
    return '';
  }
}

/** The script starts now: `scriptStart`, and `startupMs` from the payload's arrival. */
function markScriptStart(arrivedAt: number): void {
  runState.scriptStart = now();
  runState.startupMs = runState.scriptStart - arrivedAt;
}

/** A TEST script: an ES module importing the shim, evaluated, then its registered tests run. */
async function runTestShape(code: string, api: TestApi, state: RunState, arrivedAt: number): Promise<void> {
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
  markScriptStart(arrivedAt);
  await module.evaluate();
  await runTests(api, state);
}

/** A PLAIN script: the body of `async (page, context, request, browser, expect) => …`. */
async function runPlainShape(code: string, api: TestApi, state: RunState, arrivedAt: number): Promise<void> {
  const { payload, context, browser, expect } = state;
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
  markScriptStart(arrivedAt);
  await fn(page, context, context.request, browser, expect);
}

/**
 * Runs the check of `payload` and finishes with `done` (or `error` when the browser cannot be
 * reached): the script until its deadline (`timeoutMs - captureMarginMs` from `arrivedAt`), then
 * the capture (screenshot, trace, videos) until `timeoutMs`.
 *
 * @param arrivedAt when the payload arrived, `performance.now()` ms.
 * @param prepared the context prepared ahead of the payload, if the agent named the browser early.
 */
export async function run(
  payload: RunnerPayload,
  loaded: Loaded,
  arrivedAt: number,
  prepared: Promise<Prepared | null> | null,
): Promise<void> {
  if (Number.isSafeInteger(payload.maxLogChars) && payload.maxLogChars > 0)
    runState.maxLogChars = payload.maxLogChars;
  if (Number.isSafeInteger(payload.maxEntries) && payload.maxEntries > 0)
    runState.maxEntries = payload.maxEntries;
  setMaskedSecrets(
    Array.isArray(payload.secrets) ? payload.secrets.filter((s) => typeof s === 'string' && s !== '') : [],
  );
  const shape: ScriptShape = payload.shape ?? detectShape(payload.code);
  const runMs = Math.max(0, payload.timeoutMs - payload.captureMarginMs);
  const deadlineAt = arrivedAt + runMs;
  const opened = await openContext(payload, loaded, deadlineAt, prepared);
  if (opened === null) return;
  const { browser, context } = opened;
  await watchPages(context, payload);
  const state: RunState = { payload, pw: loaded.pw, browser, context, expect: loaded.playwrightTest.expect };
  const api = createApi(state);
  lockDown(payload, loaded);
  setReportNow(shape, loaded, browser);
  const code = stripTypes(String(payload.code));
  const deadline = new Promise<'deadline'>((resolve) => {
    // Not unref'd: a script awaiting a promise that never settles still reaches its deadline.
    setTimeout(() => resolve('deadline'), Math.max(0, deadlineAt - now()));
  });
  const script =
    shape === 'TEST' ? runTestShape(code, api, state, arrivedAt) : runPlainShape(code, api, state, arrivedAt);
  const outcome = await Promise.race([
    script.then(
      () => 'ok' as const,
      (err: unknown) => {
        if (runState.scriptStart === 0) markScriptStart(arrivedAt);
        if (!(err instanceof SkipSignal)) addError(describeError(err));
        return 'failed' as const;
      },
    ),
    deadline,
  ]);
  if (runState.scriptStart === 0) markScriptStart(arrivedAt);
  const durationMs = now() - runState.scriptStart;
  if (outcome === 'deadline') {
    runState.deadlineHit = true;
    addError({
      kind: 'TIMEOUT',
      message: `script timed out after ${Math.round(runMs)} ms`,
      detail: null,
      location: null,
      url: null,
    });
  }
  const failed = errors.some(failing) || runState.deadlineHit;
  await capture(context, failed, arrivedAt + payload.timeoutMs);
  finishWith({ t: 'done', report: runState.reportNow!(durationMs) });
}
