/**
 * The `@playwright/test` shim: `test`, `test.describe`, hooks, `test.step`, `test.skip` and the
 * rest of Playwright's test API as far as one check in one context needs it. Tests are registered
 * here and run by test-run.ts.
 */
import path from 'node:path';
import { now } from '../../common/child/channel.js';
import type { RunnerPayload } from '../messages.js';
import { type Any, runState, workDir } from './state.js';
import { recordStep, runStep, SkipSignal, stepDepth } from './steps.js';

/** A test or hook body: `(fixtures, testInfo) => …`. */
export type TestFn = (fixtures: Record<string, unknown>, testInfo: unknown) => unknown;
/** How a test or suite was registered. */
export type Mode = 'normal' | 'skip' | 'only' | 'fixme';
/** A hook body. */
export type Hook = TestFn;
/** A `describe` block (the root one has an empty title and no parent). */
export type Suite = {
  title: string;
  mode: Mode;
  parent: Suite | null;
  entries: Array<{ suite: Suite } | { test: TestCase }>;
  beforeAll: Hook[];
  afterAll: Hook[];
  beforeEach: Hook[];
  afterEach: Hook[];
};
/** One registered test. */
export type TestCase = { title: string; fn: TestFn; mode: Mode; suite: Suite };

/** What the fixtures of a run are made from. */
export type RunState = {
  payload: RunnerPayload;
  pw: Any;
  browser: Any;
  context: Any;
  expect: Any;
};

/** The shim of one run: the `test` object, the root suite, and the test running now. */
export type TestApi = {
  test: Any;
  root: Suite;
  setRunning: (test: TestCase | null) => void;
  /** What `@playwright/test` exports besides `test` (set by the run). */
  exports?: Record<string, unknown>;
};

function newSuite(title: string, mode: Mode, parent: Suite | null): Suite {
  return { title, mode, parent, entries: [], beforeAll: [], afterAll: [], beforeEach: [], afterEach: [] };
}

/** `test.step(title, body)` (a step one deeper than the running one) and `test.step.skip(title)`. */
function createStepApi() {
  return Object.assign(
    (title: string, body: () => unknown) =>
      runStep(String(title), (stepDepth.getStore() ?? 0) + 1, async () => body()),
    {
      skip: async (title: string) => {
        const depth = (stepDepth.getStore() ?? 0) + 1;
        recordStep({
          name: String(title),
          depth,
          startMs: now() - runState.scriptStart,
          durationMs: 0,
          status: 'SKIPPED',
          error: null,
        });
      },
    },
  );
}

/**
 * The `test` object of the shim and the tests the script registers with it.
 *
 * @param state `expect` is the runtime's own.
 */
export function createTestApi(state: RunState): TestApi {
  const root = newSuite('', 'normal', null);
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
    const child = newSuite(typeof title === 'string' ? title : '', mode, suite);
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
    step: createStepApi(),
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
  return { test, root, setRunning };
}

/** The `testInfo` a test, hook or `test.info()` gets (null: outside any test). */
export function testInfo(test: TestCase | null): Record<string, unknown> {
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
