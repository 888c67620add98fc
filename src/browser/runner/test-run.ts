/** Running the tests a TEST-shape script registered with the shim (test-api.ts), in order. */
import { takeSparePage } from './context.js';
import { addError, describeError, errorMessage } from './errors.js';
import { recordInstantStep, runStep, SkipSignal } from './steps.js';
import {
  type Hook,
  type Mode,
  type RunState,
  type Suite,
  type TestApi,
  type TestCase,
  testInfo,
} from './test-api.js';

/** The names a test function destructures from its first parameter (`async ({ page, request }) => …`), as Playwright reads them. */
export function fixtureNames(fn: Function): string[] {
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

/** Suites whose `beforeAll` hooks ran, in the order they ran. */
type Started = { set: Set<Suite>; order: Suite[] };

/** One test as a step of depth 0: its fixtures, `beforeEach`, the body, `afterEach` (all of them, whatever failed). */
async function runTest(api: TestApi, state: RunState, test: TestCase, chain: Suite[], info: unknown) {
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

/**
 * Runs the registered tests in order (`only` ones alone when there are any): `beforeAll` hooks
 * once per suite before its first test, fixtures, each test a step of depth 0, `afterAll` hooks
 * at the end in reverse order. Failures become errors of the run; nothing is thrown.
 */
export async function runTests(api: TestApi, state: RunState): Promise<void> {
  const root = api.root;
  const tests = collectTests(root, hasOnly(root), false);
  const started: Started = { set: new Set(), order: [] };
  const allFixtures = await fixturesFor([], state);
  for (const test of tests) {
    const chain: Suite[] = [];
    for (let s: Suite | null = test.suite; s !== null; s = s.parent) chain.unshift(s);
    const skipped = test.mode === 'skip' || test.mode === 'fixme' || modeOf(test.suite) !== 'normal';
    if (skipped) {
      recordInstantStep(test.title, 0, null);
      continue;
    }
    const info = testInfo(test);
    try {
      for (const s of chain) {
        if (started.set.has(s)) continue;
        started.set.add(s);
        started.order.push(s);
        await runHooks(s.beforeAll, allFixtures, info);
      }
    } catch (err) {
      addError(describeError(err));
      recordInstantStep(test.title, 0, errorMessage(err));
      continue;
    }
    await runTest(api, state, test, chain, info);
  }
  for (const s of started.order.reverse()) {
    try {
      await runHooks(s.afterAll, allFixtures, testInfo(null));
    } catch (err) {
      addError(describeError(err));
    }
  }
}
