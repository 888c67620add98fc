import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import { runSuite, type SuiteFile, type SuiteRunOptions } from '../../src/browser/suite-runner.js';
import { INLINE_SPEC_PATH } from '../../src/browser/suites/project.js';
import { parseSuiteReport } from '../../src/browser/suites/report.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import {
  CHROMIUM_PATH,
  chromiumRequirement,
  missingRequirement,
  runtimeRequirement,
} from '../helpers/requirements.js';

/**
 * Playwright check suites run with runtime 2026.04's own `playwright test` against a warm Chromium
 * this file serves with `launchServer` (as the browser host does), on loopback pages this file
 * serves. As root, suites run as an unprivileged uid, as on an agent. Every test checks that no
 * process of the suite (anything whose working directory is under the tests' temp root) is left.
 */
const RUNTIME_ID = '2026.04';
const RUNTIME_DIR = join(PACKAGE_ROOT, 'runtimes', RUNTIME_ID);
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement(RUNTIME_ID)]);
const IS_ROOT = process.getuid?.() === 0;
/** Chromium refuses root with its sandbox on; the browser host starts it unprivileged instead. */
const LAUNCH_ARGS = IS_ROOT ? ['--no-sandbox'] : [];
/** A uid of the sandbox's range, not used by its tests at the same time. */
const RUN_AS = { uid: 61_990, gid: 61_990 };
/** A variable of the agent's own environment that no suite may see. */
const PLANTED = 'OUTPOST_TEST_PLANTED_SECRET';

/** Processes whose working directory is under `root` (the suites' processes), zombies excluded. */
function processesUnder(root: string): number {
  let count = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1'))) continue;
      if (readlinkSync(`/proc/${pid}/cwd`).startsWith(root)) count++;
    } catch {
      // exited while listing, or not ours to read
    }
  }
  return count;
}

function servePages(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/shop') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>Shop</title><h1>Fresh Fruit</h1><button id="buy">Buy</button>');
    } else if (url.pathname === '/api/stock') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apples: 3, pears: 0 }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
}

const PACKAGE_JSON = JSON.stringify({
  name: 'shop-suite',
  private: true,
  dependencies: { lodash: '4.17.21' },
  devDependencies: { '@playwright/test': '1.58.2', '@types/node': '24.0.0' },
});

const CONFIG = `import { defineConfig, devices } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  workers: 4,
  use: { baseURL: process.env.SHOP_URL },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
});
`;

const HELPER = `import _ from 'lodash';
export const headingOf = (slug: string): string => _.startCase(slug);
`;

const SHOP_SPEC = `import { test, expect } from '@playwright/test';
import { headingOf } from './helpers/format';

test.describe('shop', () => {
  test('shows the heading', async ({ page }) => {
    await test.step('open the shop', async () => {
      await page.goto('/shop');
    });
    await test.step('check the heading', async () => {
      await expect(page.locator('h1')).toHaveText(headingOf('fresh-fruit'));
    });
  });
});

test('sees only its own environment', async () => {
  console.log('ENV ' + JSON.stringify({
    CI: process.env.CI ?? null,
    OUTPOST: process.env.OUTPOST ?? null,
    OUTPOST_RUN_SOURCE: process.env.OUTPOST_RUN_SOURCE ?? null,
    CHECKLY_RUN_SOURCE: process.env.CHECKLY_RUN_SOURCE ?? null,
    CHECK_VARIABLE: process.env.CHECK_VARIABLE ?? null,
    planted: process.env.${PLANTED} ?? null,
  }));
  expect(process.env.${PLANTED}).toBeUndefined();
});
`;

const API_SPEC = `import { test, expect } from '@playwright/test';

test('stock answers', async ({ request }) => {
  await test.step('read the stock', async () => {
    await test.step('GET /api/stock', async () => {
      const response = await request.get('/api/stock');
      expect(response.ok()).toBe(true);
      expect((await response.json()).apples).toBe(3);
    });
  });
});
`;

/** The inline script of the failing run: its `expect` on line 6. */
const FAILING_SCRIPT = `import { test, expect } from '@playwright/test';

test('pears are in stock', async ({ page }) => {
  await page.goto('/shop');
  const stock = await (await page.request.get('/api/stock')).json();
  expect(stock.pears, 'pears in stock').toBeGreaterThan(0);
});
`;

const project = (...extra: SuiteFile[]): SuiteFile[] => [
  { path: 'package.json', content: PACKAGE_JSON },
  { path: 'playwright.config.ts', content: CONFIG },
  { path: 'tests/helpers/format.ts', content: HELPER },
  { path: 'tests/shop.spec.ts', content: SHOP_SPEC },
  { path: 'tests/api.spec.ts', content: API_SPEC },
  ...extra,
];

const envLine = (logs: { msg: string }[]) => {
  const line = logs.find((l) => l.msg.startsWith('ENV '));
  return line ? (JSON.parse(line.msg.slice(4)) as Record<string, string | null>) : null;
};

describe.skipIf(skip)(`Playwright check suites on runtime ${RUNTIME_ID}`, () => {
  let browserServer: PlaywrightCore.BrowserServer;
  let server: Server;
  let origin: string;
  let tmpRoot: string;

  beforeAll(async () => {
    const runtimeRequire = createRequire(join(RUNTIME_DIR, 'package.json'));
    const { chromium } = runtimeRequire('playwright-core') as typeof PlaywrightCore;
    browserServer = await chromium.launchServer({
      executablePath: CHROMIUM_PATH,
      args: LAUNCH_ARGS,
      host: '127.0.0.1',
      port: 0,
    });
    server = servePages();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    tmpRoot = mkdtempSync(join(tmpdir(), 'outpost-suite-test-'));
    // The suite's uid must reach its private dir inside.
    chmodSync(tmpRoot, 0o755);
    process.env[PLANTED] = 'agent-only';
  });

  afterAll(async () => {
    delete process.env[PLANTED];
    await browserServer?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    if (tmpRoot) rmSync(tmpRoot, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(processesUnder(tmpRoot), 'processes of a suite left behind').toBe(0);
  });

  const options = (overrides: Partial<SuiteRunOptions>): SuiteRunOptions => ({
    runtimeDir: RUNTIME_DIR,
    runtimeId: RUNTIME_ID,
    wsEndpoint: browserServer.wsEndpoint(),
    files: project(),
    script: null,
    scriptPath: 'tests/shop.spec.ts',
    env: { SHOP_URL: origin, CHECK_VARIABLE: 'from the check' },
    runSource: 'SCHEDULER',
    testSession: false,
    timeoutMs: 60_000,
    tmpRoot,
    runAs: RUN_AS,
    ...overrides,
  });

  it('runs a two-spec project with a helper importing lodash: passes, a step per test and per test.step, traces and the report', async () => {
    const started = Date.now();
    const outcome = await runSuite(options({ testSession: true, runSource: 'TEST_RECORD' }));
    try {
      const { report } = outcome;
      expect(report.errors).toEqual([]);
      expect(report.status).toBe('PASSED');
      expect(report.shape).toBe('TEST');
      expect(report.timedOut).toBe(false);
      expect(report.versions.playwright).toBe('1.58.2');
      const steps = report.steps.map((s) => [s.depth, s.name, s.status]);
      expect(steps).toEqual(
        expect.arrayContaining([
          [0, 'shop.spec.ts › shop › shows the heading', 'PASSED'],
          [1, 'open the shop', 'PASSED'],
          [1, 'check the heading', 'PASSED'],
          [0, 'shop.spec.ts › sees only its own environment', 'PASSED'],
          [0, 'api.spec.ts › stock answers', 'PASSED'],
          [1, 'read the stock', 'PASSED'],
          [2, 'GET /api/stock', 'PASSED'],
        ]),
      );
      expect(report.steps).toHaveLength(7);
      const nested = report.steps.find((s) => s.name === 'GET /api/stock');
      const parent = report.steps.find((s) => s.name === 'read the stock');
      expect(nested!.startMs).toBeGreaterThanOrEqual(parent!.startMs);
      // A test session: CI=1, the run source under both names, the check's variable, nothing of the agent.
      expect(envLine(outcome.logs)).toEqual({
        CI: '1',
        OUTPOST: '1',
        OUTPOST_RUN_SOURCE: 'TEST_RECORD',
        CHECKLY_RUN_SOURCE: 'TEST_RECORD',
        CHECK_VARIABLE: 'from the check',
        planted: null,
      });
      const traces = outcome.artifacts.filter((a) => a.kind === 'TRACE');
      expect(traces).toHaveLength(3);
      for (const trace of traces) {
        expect(trace.failed).toBe(false);
        expect(trace.sizeBytes).toBeGreaterThan(0);
        expect(trace.path.startsWith(outcome.dir)).toBe(true);
        expect(readFileSync(trace.path).subarray(0, 2).toString('latin1')).toBe('PK');
      }
      expect(report.artifacts.map((a) => a.kind)).toEqual(['TRACE', 'TRACE', 'TRACE']);
      const json = outcome.artifacts.find((a) => a.kind === 'REPORT');
      expect(JSON.parse(readFileSync(json!.path, 'utf8')).stats.expected).toBe(3);
    } finally {
      await outcome.dispose();
    }
    console.info(`passing suite: ${Date.now() - started} ms`);
  });

  it('reports a failing expect of the inline script as FAILED with the error at the script’s own line, its trace and screenshot first', async () => {
    const outcome = await runSuite(
      options({ script: FAILING_SCRIPT, scriptPath: null, runSource: 'SCHEDULER', testSession: false }),
    );
    try {
      const { report } = outcome;
      expect(report.status).toBe('FAILED');
      expect(report.timedOut).toBe(false);
      const failing = report.steps.find((s) => s.name === 'check.spec.ts › pears are in stock');
      expect(failing?.status).toBe('FAILED');
      expect(report.steps.filter((s) => s.depth === 0 && s.status === 'PASSED')).toHaveLength(3);
      expect(report.errors).toHaveLength(1);
      const [error] = report.errors;
      expect(error!.kind).toBe('ASSERTION');
      expect(error!.message).toContain('pears in stock');
      expect(error!.location).toEqual({ line: 6, column: expect.any(Number) });
      expect(error!.detail).toMatch(new RegExp(`^at ${INLINE_SPEC_PATH}:6:`));
      expect(report.errorMessage).toBe(error!.message);
      // Not a test session: no CI; the run source is the scheduler's.
      expect(envLine(outcome.logs)).toMatchObject({
        CI: null,
        OUTPOST_RUN_SOURCE: 'SCHEDULER',
        planted: null,
      });
      const [first, second] = outcome.artifacts;
      expect(
        outcome.artifacts
          .filter((a) => a.failed)
          .map((a) => a.kind)
          .sort(),
      ).toEqual(['SCREENSHOT', 'TRACE']);
      expect([first!.failed, second!.failed]).toEqual([true, true]);
    } finally {
      await outcome.dispose();
    }
  });

  it('refuses a webkit project with a clear error, before any test runs', async () => {
    const config = `import { defineConfig, devices } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  projects: [
    { name: 'chromium', use: { ...devices['Desktop Chrome'] } },
    { name: 'webkit', use: { ...devices['Desktop Safari'] } },
  ],
});
`;
    const files = project().map((f) => (f.path === 'playwright.config.ts' ? { ...f, content: config } : f));
    const outcome = await runSuite(options({ files }));
    try {
      expect(outcome.report.status).toBe('FAILED');
      expect(outcome.report.errorMessage).toBe(
        'project "webkit" uses webkit: only Chromium projects run on Outpost',
      );
      expect(outcome.report.steps).toEqual([]);
    } finally {
      await outcome.dispose();
    }
  });

  it('refuses a check spec that no project would run (outside every testDir) rather than passing without it', async () => {
    // Quotes, a backtick and a dollar brace: the wrapper embeds paths as data, never as code.
    const odd = ['e2e/it', "'s `$", '{x}`.spec.ts'].join('');
    const outcome = await runSuite(
      options({ files: project({ path: odd, content: SHOP_SPEC }), scriptPath: odd }),
    );
    try {
      expect(outcome.report.status).toBe('FAILED');
      expect(outcome.report.errorMessage).toBe(
        `the check's spec ${odd} lies outside the testDir of every project (tests)`,
      );
    } finally {
      await outcome.dispose();
    }
  });

  it('stops a suite whose test spins at its limit (less the margin), reports it timed out, and leaves no process behind', async () => {
    const hang = `import { test } from '@playwright/test';
test('spins', async () => {
  while (true) {}
});
`;
    const timeoutMs = 8_000;
    const started = Date.now();
    const outcome = await runSuite(
      options({
        files: project({ path: 'tests/hang.spec.ts', content: hang }),
        scriptPath: 'tests/hang.spec.ts',
        timeoutMs,
      }),
    );
    const elapsed = Date.now() - started;
    try {
      expect(outcome.report.status).toBe('FAILED');
      expect(outcome.report.timedOut).toBe(true);
      expect(outcome.report.errors[0]?.kind).toBe('TIMEOUT');
      // FAILED once it started; on a loaded host the deadline may come before the worker starts it
      // (SKIPPED: did not run). The mapping of both is checked exactly below, on a report of 1.58.
      const spins = outcome.report.steps.find((s) => s.name === 'hang.spec.ts › spins');
      expect(['FAILED', 'SKIPPED']).toContain(spins?.status);
      expect(elapsed).toBeLessThan(timeoutMs + 6_000);
      expect(processesUnder(tmpRoot)).toBe(0);
    } finally {
      await outcome.dispose();
    }
    console.info(`hanging suite stopped after ${elapsed} ms: ${outcome.report.errorMessage}`);
  });

  it('kills a suite when its signal aborts and reports it cancelled, not timed out', async () => {
    const spin = `import { test } from '@playwright/test';
test('spins', async () => {
  while (true) {}
});
`;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 2_000);
    const started = Date.now();
    const outcome = await runSuite(
      options({
        files: project({ path: 'tests/spin.spec.ts', content: spin }),
        scriptPath: 'tests/spin.spec.ts',
        signal: controller.signal,
      }),
    );
    clearTimeout(timer);
    const elapsed = Date.now() - started;
    try {
      expect(outcome.report.status).toBe('FAILED');
      expect(outcome.report.errorMessage).toBe('the run was cancelled');
      expect(outcome.report.timedOut).toBe(false);
      expect(elapsed).toBeLessThan(6_000);
      expect(processesUnder(tmpRoot)).toBe(0);
    } finally {
      await outcome.dispose();
    }
  });

  it('SIGKILLs a suite whose config never returns at its limit plus the grace, with a process it started in a session of its own', async () => {
    // The config leaves a `sleep` behind in a new session (out of the process group), then spins:
    // Playwright never starts, so only the agent's kill can end it.
    // Not root: no uid of its own, so nothing would find an escaped process; the config only spins.
    const leaveSleep = `const { spawn } = require('node:child_process');
spawn('sleep', ['600'], { detached: true, stdio: 'ignore' }).unref();
`;
    // Then floods stdout: 5000 short lines and a line of 1.2 MB, past both caps of the output.
    const flood = `process.stdout.write(Array.from({ length: 5000 }, (_, i) => 'line ' + i).join('\\n') + '\\n');
process.stdout.write('flood '.repeat(200000) + '\\n');
`;
    const config = `${RUN_AS === null ? '' : leaveSleep}${flood}while (true) {}
`;
    const files = project().map((f) =>
      f.path === 'playwright.config.ts' ? { path: 'playwright.config.cjs', content: config } : f,
    );
    const timeoutMs = 5_000;
    const started = Date.now();
    const maxOutputBytes = 65_536;
    const outcome = await runSuite(options({ files, timeoutMs, maxOutputBytes }));
    const elapsed = Date.now() - started;
    try {
      expect(outcome.report.status).toBe('FAILED');
      expect(outcome.report.timedOut).toBe(true);
      expect(outcome.report.errorMessage).toBe(
        `the suite ran past its limit of ${timeoutMs} ms and was stopped`,
      );
      expect(outcome.report.errors[0]?.kind).toBe('TIMEOUT');
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs);
      const kept = outcome.logs.filter((l) => /^line \d+$/.test(l.msg));
      expect(kept).toHaveLength(2_000);
      expect(outcome.logs.map((l) => l.msg)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^\d+ lines of output beyond 2000 were dropped$/),
          expect.stringMatching(/^\d+ bytes of output beyond 65536 were dropped$/),
        ]),
      );
      expect(outcome.logs.every((l) => l.msg.length <= 4_096)).toBe(true);
      expect(elapsed).toBeLessThan(timeoutMs + 5_000);
      expect(processesUnder(tmpRoot)).toBe(0);
    } finally {
      await outcome.dispose();
    }
  });

  it('refuses a path leaving the project and a package the runtime lacks, naming them, without starting anything', async () => {
    const outside = await runSuite(options({ files: project({ path: '../outside.ts', content: 'x' }) }));
    await outside.dispose();
    expect(outside.report.status).toBe('FAILED');
    expect(outside.report.errorMessage).toContain('"../outside.ts" leaves the project');
    const manifest = JSON.stringify({ name: 'x', dependencies: { lodash: '4', 'left-pad': '1.3.0' } });
    const files = project().map((f) => (f.path === 'package.json' ? { ...f, content: manifest } : f));
    const missing = await runSuite(options({ files }));
    await missing.dispose();
    expect(missing.report.errorMessage).toBe(
      `package.json depends on "left-pad", which runtime ${RUNTIME_ID} does not provide (suites run with the runtime's packages; there is no install)`,
    );
    expect(missing.logs).toEqual([]);
  });
});

describe('the JSON report of a suite, read in a worker', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-suite-report-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A report as Playwright 1.58 writes it when its global timeout stops a run (fields trimmed). */
  const interruptedRun = (project: string) => ({
    suites: [
      {
        title: 'x.spec.ts',
        file: 'x.spec.ts',
        specs: [
          {
            title: 'running',
            tests: [
              {
                annotations: [],
                projectName: '',
                status: 'skipped',
                results: [
                  {
                    status: 'skipped',
                    duration: 0,
                    startTime: '2026-11-24T01:46:31.317Z',
                    errors: [],
                    annotations: [],
                    attachments: [],
                  },
                ],
              },
            ],
          },
          {
            title: 'skipped on purpose',
            tests: [
              {
                annotations: [{ type: 'skip' }],
                projectName: '',
                status: 'skipped',
                results: [
                  {
                    status: 'skipped',
                    duration: 0,
                    startTime: '2026-11-24T01:46:31.320Z',
                    errors: [],
                    annotations: [{ type: 'skip' }],
                    attachments: [],
                  },
                ],
              },
            ],
          },
          {
            title: 'never started',
            tests: [{ annotations: [], projectName: '', status: 'skipped', results: [] }],
          },
          {
            title: 'failed first',
            tests: [
              {
                projectName: '',
                status: 'unexpected',
                results: [
                  {
                    status: 'failed',
                    duration: 12,
                    startTime: '2026-11-24T01:46:30.500Z',
                    errors: [
                      {
                        message: 'Error: \u001b[2mexpect(\u001b[22mreceived).toBe(expected)\n\nExpected: 1',
                        location: { file: `${project}/tests/x.spec.ts`, line: 9, column: 5 },
                      },
                    ],
                    steps: [
                      { title: 'outer', duration: 5, steps: [{ title: 'inner', duration: 2 }] },
                      { title: 'after', duration: 3, error: { message: 'Error: boom' } },
                    ],
                    attachments: [{ name: 'trace', path: `${project}/../output/x-failed-first/trace.zip` }],
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
    errors: [{ message: '\u001b[31mTimed out waiting 4.648s for the test suite to run\u001b[39m' }],
    stats: {
      startTime: '2026-11-24T01:46:30.000Z',
      duration: 4652,
      expected: 0,
      skipped: 3,
      unexpected: 1,
      flaky: 0,
    },
  });

  const request = (reportPath: string) => ({
    reportPath,
    maxReportBytes: 1_048_576,
    projectDir: join(dir, 'project'),
    maxSteps: 100,
    maxErrors: 10,
  });

  it('maps an interrupted run: the running test FAILED, a skipped and a never-started test SKIPPED, errors with kinds, locations and nested steps', async () => {
    const file = join(dir, 'interrupted.json');
    writeFileSync(file, JSON.stringify(interruptedRun(join(dir, 'project'))));
    const result = await parseSuiteReport(request(file));
    if (!result.ok) throw new Error(result.message);
    expect(result.steps.map((s) => [s.depth, s.name, s.status, s.startMs])).toEqual([
      [0, 'x.spec.ts › running', 'FAILED', 1317],
      [0, 'x.spec.ts › skipped on purpose', 'SKIPPED', 1320],
      [0, 'x.spec.ts › never started', 'SKIPPED', 0],
      [0, 'x.spec.ts › failed first', 'FAILED', 500],
      [1, 'outer', 'PASSED', 500],
      [2, 'inner', 'PASSED', 500],
      [1, 'after', 'FAILED', 505],
    ]);
    expect(result.steps[0]!.error).toBe('interrupted at the run’s time limit');
    expect(result.errors.map((e) => [e.kind, e.message, e.location])).toEqual([
      ['ASSERTION', 'expect(received).toBe(expected)', { line: 9, column: 5 }],
      ['TIMEOUT', 'Timed out waiting 4.648s for the test suite to run', null],
    ]);
    expect(result.errors[0]!.detail).toMatch(/^at tests\/x\.spec\.ts:9:5\n/);
    expect(result.failedAttachments).toEqual([`${join(dir, 'project')}/../output/x-failed-first/trace.zip`]);
  });

  it('refuses a report that is too large, not JSON, or a link, without reading through it', async () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, JSON.stringify({ pad: 'x'.repeat(2_000_000) }));
    expect(await parseSuiteReport(request(big))).toEqual({
      ok: false,
      message: 'the JSON report is larger than 1048576 bytes',
    });
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"suites": [');
    expect(await parseSuiteReport(request(bad))).toEqual({
      ok: false,
      message: 'the JSON report is not valid JSON',
    });
    const link = join(dir, 'link.json');
    symlinkSync(bad, link);
    const linked = await parseSuiteReport(request(link));
    expect(linked.ok).toBe(false);
    expect(await parseSuiteReport(request(join(dir, 'missing.json')))).toEqual({
      ok: false,
      message: 'no JSON report was written',
    });
  });
});
