import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import { unzip } from './formats.js';
import {
  type Loopback,
  payloadFor,
  processesOf,
  RUN_AS,
  RUNTIME_ID,
  runCheck,
  serve,
  startBrowser,
  type WarmBrowser,
} from './runner-harness.js';

/**
 * The browser runner (runner/main.ts under BrowserRunner) against a warm Chromium on loopback:
 * both script shapes passing and failing, errors with their place in the script, steps, web
 * vitals, logs, and the deadline (a stuck page, a server that never answers, a script blocking
 * the runner itself). Each run is a fresh runner process, disposed after.
 */
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement(RUNTIME_ID)]);

/** What a request to a `/signal/…` path of the site does (a script telling the test where it is). */
const abortOnHit = new Map<string, () => void>();

/** The loopback site: a page, a slow API, a page that throws, and a path that never answers. */
function site(): Promise<Loopback> {
  return serve((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === '/') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>Home</title><h1 id="greeting">Hello runner</h1>
<p>Some text to paint, large enough to be the largest contentful paint.</p>`);
    } else if (path === '/throws') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(
        '<!doctype html><title>Throws</title><h1>Oops</h1><script>console.error("console says no"); setTimeout(() => { throw new Error("page broke"); }, 0);</script>',
      );
    } else if (path === '/stuck') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(
        '<!doctype html><title>Stuck</title><h1>Stuck</h1><button onclick="while (true) {}">spin</button>',
      );
    } else if (path.startsWith('/api/')) {
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ path }));
      }, 60);
    } else if (path.startsWith('/signal/')) {
      abortOnHit.get(path)?.();
      res.end();
    } else if (path === '/favicon.ico') {
      // Chromium asks for it now and then: a 404 would be a console error of whichever test ran.
      res.statusCode = 204;
      res.end();
    } else if (path === '/hang') {
      // Never answers: the connection stays open until the server closes.
    } else {
      res.statusCode = 404;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>Missing</title><h1>Not here</h1>');
    }
  });
}

describe.skipIf(skip)('browser runner', () => {
  let browser: WarmBrowser;
  let web: Loopback;

  beforeAll(async () => {
    [browser, web] = await Promise.all([startBrowser(), site()]);
  });

  afterAll(async () => {
    await web?.close();
    await browser?.close();
    // Every runner process (its uid's) is gone once its run is disposed (runCheck checks each group too).
    if (RUN_AS !== null) expect(processesOf(RUN_AS.uid)).toEqual([]);
  });

  it('runs a passing PLAIN script: logs, web vitals of the page, a trace that unzips', async () => {
    const code = [
      `await page.goto('${web.origin}/');`,
      `console.log('title is', await page.title());`,
      `console.warn('careful');`,
      `await expect(page.locator('#greeting')).toHaveText('Hello runner');`,
    ].join('\n');
    const { outcome, files } = await runCheck(payloadFor(browser.wsEndpoint, code));
    const report = outcome.report!;
    expect(outcome.failure).toBeNull();
    expect(report).toMatchObject({ status: 'PASSED', shape: 'PLAIN', errorMessage: null, timedOut: false });
    expect(report.versions.playwright).toBe('1.58.2');
    expect(outcome.logs.map((log) => [log.level, log.msg])).toEqual([
      ['INFO', 'title is Home'],
      ['WARN', 'careful'],
    ]);
    expect(report.pages).toHaveLength(1);
    const [visit] = report.pages;
    expect(visit?.url).toBe(`${web.origin}/`);
    for (const name of ['FCP', 'LCP', 'TTFB'] as const) {
      expect(visit?.webVitals[name], name).toEqual(expect.any(Number));
      expect(visit?.webVitals[name], name).toBeGreaterThanOrEqual(0);
    }
    expect(visit?.webVitals.CLS).toBe(0);
    expect(files.has('failure.png')).toBe(false);
    const trace = unzip(files.get('trace.zip')!);
    expect([...trace.keys()]).toContain('trace.trace');
    expect(trace.get('trace.trace')!.toString('utf8')).toContain('#greeting');
  });

  it.each([
    ['the browser of its payload', true],
    ["a browser that is gone (it connects to the payload's instead)", false],
  ])('runs on a context prepared before the payload, named %s', async (_name, sameBrowser) => {
    const code = [
      `await page.goto('${web.origin}/');`,
      `await expect(page.locator('#greeting')).toHaveText('Hello runner');`,
      `console.log('pages', context.pages().length);`,
    ].join('\n');
    const prepareWith = sameBrowser ? browser.wsEndpoint : 'ws://127.0.0.1:9/gone';
    const { outcome, files } = await runCheck(
      payloadFor(browser.wsEndpoint, code),
      undefined,
      undefined,
      prepareWith,
    );
    const report = outcome.report!;
    expect(report.status, JSON.stringify(report.errors)).toBe('PASSED');
    // The prepared page is the script's page: one page, its visit and vitals recorded, traced.
    expect(outcome.logs.map((log) => log.msg)).toEqual(['pages 1']);
    expect(report.pages.map((p) => p.url)).toEqual([`${web.origin}/`]);
    expect(report.pages[0]?.webVitals.TTFB).toEqual(expect.any(Number));
    expect(unzip(files.get('trace.zip')!).get('trace.trace')!.toString('utf8')).toContain('#greeting');
  });

  it('reports a failed expect of a PLAIN script as ASSERTION at its line, with a failure screenshot', async () => {
    const code = [
      `await page.goto('${web.origin}/');`,
      '',
      `await expect(page.locator('#greeting')).toHaveText('Goodbye', { timeout: 300 });`,
    ].join('\n');
    const { outcome, files } = await runCheck(payloadFor(browser.wsEndpoint, code));
    const report = outcome.report!;
    expect(report.status).toBe('FAILED');
    expect(report.errorMessage).toBe('expect(locator).toHaveText(expected) failed');
    expect(report.errors[0]).toMatchObject({ kind: 'ASSERTION', location: { line: 3, column: 41 } });
    expect(report.errors[0]?.detail).toContain('Received: "Hello runner"');
    expect(files.get('failure.png')?.subarray(1, 4).toString()).toBe('PNG');
    expect(report.artifacts.map((a) => a.name).sort()).toEqual(['failure.png', 'trace.zip']);
  });

  it('runs TEST scripts: a thrown error is SCRIPT at its line and column, tests and steps are timed', async () => {
    const code = [
      `import { test, expect } from '@playwright/test';`,
      `test.describe('site', () => {`,
      `  test.skip(({ browserName }) => browserName !== 'chromium', 'Chromium only');`,
      `  test('home', async ({ page }) => {`,
      `    await page.goto('${web.origin}/');`,
      `    await test.step('greets', async () => {`,
      `      await expect(page.locator('h1')).toHaveText('Hello runner');`,
      `    });`,
      `  });`,
      `  test('breaks', async () => {`,
      `    const value = 42;`,
      `    throw new Error('broke at ' + value);`,
      `  });`,
      `  test('skips itself', async () => {`,
      `    test.skip(true, 'not today');`,
      `    throw new Error('unreachable');`,
      `  });`,
      `  test.skip('later', async () => {});`,
      `});`,
    ].join('\n');
    const { outcome } = await runCheck(payloadFor(browser.wsEndpoint, code));
    const report = outcome.report!;
    expect(report).toMatchObject({ status: 'FAILED', shape: 'TEST', errorMessage: 'broke at 42' });
    expect(report.errors).toEqual([
      expect.objectContaining({ kind: 'SCRIPT', message: 'broke at 42', location: { line: 12, column: 11 } }),
    ]);
    expect(report.steps.map((s) => [s.name, s.depth, s.status])).toEqual([
      ['greets', 1, 'PASSED'],
      ['home', 0, 'PASSED'],
      ['breaks', 0, 'FAILED'],
      ['skips itself', 0, 'SKIPPED'],
      ['later', 0, 'SKIPPED'],
    ]);
    // Steps were sent as they ended, too.
    expect(outcome.steps).toEqual(report.steps);
    const [greets, home] = report.steps;
    expect(greets!.startMs).toBeGreaterThanOrEqual(home!.startMs);
    expect(greets!.startMs + greets!.durationMs).toBeLessThanOrEqual(home!.startMs + home!.durationMs + 1);
  });

  it('collects a page error without failing the run, and a navigation timeout as TIMEOUT at its line', async () => {
    // Two runners at once on the same warm browser.
    const [pageError, timeout] = await Promise.all([
      runCheck(
        payloadFor(
          browser.wsEndpoint,
          `const { test } = require('@playwright/test');\ntest('throws', async ({ page }) => {\n  await page.goto('${web.origin}/throws');\n  await page.waitForTimeout(200);\n  await page.goto('${web.origin}/missing');\n});`,
        ),
      ),
      runCheck(
        payloadFor(browser.wsEndpoint, `await page.goto('${web.origin}/hang', { timeout: 500 });`, {
          shape: 'PLAIN',
        }),
      ),
    ]);
    expect(pageError.outcome.report).toMatchObject({ status: 'PASSED', shape: 'TEST' });
    const collected = pageError.outcome.report!.errors;
    expect(collected).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'CONSOLE', message: 'console says no', url: `${web.origin}/throws` }),
        expect.objectContaining({ kind: 'PAGE', message: 'page broke', url: `${web.origin}/throws` }),
        expect.objectContaining({ kind: 'REQUEST', message: `GET ${web.origin}/missing answered 404` }),
      ]),
    );
    // Chromium's own console lines for 404s are collected too; none of them fails the run.
    expect(collected.filter((e) => !['PAGE', 'CONSOLE', 'REQUEST'].includes(e.kind))).toEqual([]);
    expect(pageError.outcome.report!.pages.map((visit) => visit.url)).toEqual([
      `${web.origin}/throws`,
      `${web.origin}/missing`,
    ]);

    const report = timeout.outcome.report!;
    expect(report).toMatchObject({ status: 'FAILED', timedOut: false });
    expect(report.errors[0]).toMatchObject({ kind: 'TIMEOUT', location: { line: 1, column: 12 } });
    expect(report.errorMessage).toMatch(/^TimeoutError: page.goto: Timeout 500ms exceeded/);
  });

  it("imports the check's dependency files by relative path, nested ones too; an unknown one fails by name", async () => {
    const files = [
      {
        path: 'helpers/login.js',
        content:
          "import { suffix } from '../lib/suffix.js';\nexport const greet = (n) => 'hello ' + n + suffix;",
      },
      {
        path: 'lib/suffix.js',
        content: "import lodash from 'lodash';\nexport const suffix = lodash.repeat('!', 2);",
      },
    ];
    const code = [
      `import { test, expect } from '@playwright/test';`,
      `import { greet } from './helpers/login';`,
      `test('uses a helper', async () => {`,
      `  console.log(greet('ada'));`,
      `  expect(greet('x')).toBe('hello x!!');`,
      `});`,
    ].join('\n');
    const { outcome } = await runCheck(
      payloadFor(browser.wsEndpoint, code, { checkType: 'MULTI_STEP', files }),
    );
    expect(outcome.report?.status, JSON.stringify(outcome.report?.errors)).toBe('PASSED');
    expect(outcome.logs.map((log) => log.msg)).toEqual(['hello ada!!']);

    const missing = await runCheck(
      payloadFor(
        browser.wsEndpoint,
        `import { x } from './nope';\nimport { test } from '@playwright/test';`,
        {
          checkType: 'MULTI_STEP',
          files,
        },
      ),
    );
    expect(missing.outcome.report?.status).toBe('FAILED');
    expect(missing.outcome.report?.errorMessage).toContain("Cannot find module './nope'");
  });

  it('times a multi-step check of requests and nested steps, without a page', async () => {
    const code = [
      `import { test, expect } from '@playwright/test';`,
      `import { faker } from '@faker-js/faker';`,
      `import lodash from 'lodash';`,
      `import { createHash } from 'node:crypto';`,
      `console.log(typeof faker.person.firstName(), lodash.chunk([1, 2, 3], 2).length, createHash('sha256').update('').digest('hex').slice(0, 8));`,
      `test('api', async ({ request }) => {`,
      `  await test.step('first', async () => {`,
      `    const response = await request.get('${web.origin}/api/one');`,
      `    expect(response.status()).toBe(200);`,
      `    await test.step('inner', async () => {`,
      `      expect(await (await request.get('${web.origin}/api/two')).json()).toEqual({ path: '/api/two' });`,
      `    });`,
      `  });`,
      `  await test.step('second', async () => {`,
      `    expect((await request.get('${web.origin}/api/three')).ok()).toBe(true);`,
      `  });`,
      `});`,
    ].join('\n');
    const { outcome } = await runCheck(payloadFor(browser.wsEndpoint, code, { checkType: 'MULTI_STEP' }));
    const report = outcome.report!;
    expect(report.status).toBe('PASSED');
    expect(outcome.logs.map((log) => log.msg)).toEqual(['string 2 e3b0c442']);
    expect(report.pages).toEqual([]);
    const steps = new Map(report.steps.map((s) => [s.name, s]));
    expect([...steps.keys()]).toEqual(['inner', 'first', 'second', 'api']);
    expect(report.steps.map((s) => s.depth)).toEqual([2, 1, 1, 0]);
    // Each request waits 60 ms at the server.
    expect(steps.get('inner')!.durationMs).toBeGreaterThanOrEqual(55);
    expect(steps.get('first')!.durationMs).toBeGreaterThanOrEqual(115);
    expect(steps.get('second')!.startMs).toBeGreaterThanOrEqual(
      steps.get('first')!.startMs + steps.get('first')!.durationMs,
    );
    expect(steps.get('api')!.durationMs).toBeGreaterThanOrEqual(175);
  });

  it.concurrent('stops at the deadline when the page is stuck in while (true) {}: done, timedOut, a trace that unzips', async () => {
    const code = `await page.goto('${web.origin}/stuck');\nconsole.log('spinning');\nawait page.click('button', { noWaitAfter: true });\nawait page.evaluate(() => 1);`;
    const started = Date.now();
    const { outcome, files } = await runCheck(
      payloadFor(browser.wsEndpoint, code, { timeoutMs: 7_000, captureMarginMs: 4_000 }),
    );
    expect(Date.now() - started).toBeLessThan(7_000 + 5_000);
    const report = outcome.report!;
    expect(outcome.killed).toBe(false);
    expect(report).toMatchObject({
      status: 'FAILED',
      timedOut: true,
      errorMessage: 'script timed out after 3000 ms',
    });
    expect(outcome.logs.map((log) => log.msg)).toEqual(['spinning']);
    expect(unzip(files.get('trace.zip')!).has('trace.trace')).toBe(true);
  });

  it.concurrent('stops at the deadline when a server never answers: done, timedOut, a trace that unzips', async () => {
    const code = `await page.goto('${web.origin}/hang', { timeout: 0 });`;
    const started = Date.now();
    const { outcome, files } = await runCheck(
      payloadFor(browser.wsEndpoint, code, { timeoutMs: 6_500, captureMarginMs: 4_000 }),
    );
    expect(Date.now() - started).toBeLessThan(6_500 + 5_000);
    const report = outcome.report!;
    expect(report).toMatchObject({
      status: 'FAILED',
      timedOut: true,
      errorMessage: 'script timed out after 2500 ms',
    });
    expect(report.errors).toContainEqual(expect.objectContaining({ kind: 'TIMEOUT', location: null }));
    expect(unzip(files.get('trace.zip')!).has('trace.trace')).toBe(true);
  });

  it.concurrent('kills a runner whose script blocks its event loop, keeping the steps it finished', async () => {
    const code = [
      `import { test } from '@playwright/test';`,
      `test('spins', async () => {`,
      `  await test.step('quick', async () => {});`,
      `  console.log('about to spin');`,
      `  while (true) {}`,
      `});`,
    ].join('\n');
    const started = Date.now();
    const { outcome } = await runCheck(
      payloadFor(browser.wsEndpoint, code, { timeoutMs: 2_000, captureMarginMs: 1_000 }),
      1_000,
    );
    expect(Date.now() - started).toBeLessThan(2_000 + 5_000);
    expect(outcome.report).toBeNull();
    expect(outcome).toMatchObject({
      killed: true,
      failure: 'the runner was killed at the deadline',
      exit: { signal: 'SIGKILL' },
    });
    expect(outcome.steps.map((s) => [s.name, s.status])).toEqual([['quick', 'PASSED']]);
    expect(outcome.logs.map((log) => log.msg)).toEqual(['about to spin']);
  });

  it.concurrent('kills a runner whose script writes past the channel caps, keeping what came before', async () => {
    const code = [
      `const fs = require('node:fs');`,
      `console.log('before the flood');`,
      `fs.writeSync(3, 'not a message\\n');`,
      `fs.writeSync(3, '{"t":"log","level":"INFO","msg":"' + 'x'.repeat(300 * 1024) + '"}\\n');`,
      `await new Promise(() => {});`,
    ].join('\n');
    const { outcome } = await runCheck(payloadFor(browser.wsEndpoint, code, { checkType: 'MULTI_STEP' }));
    expect(outcome).toMatchObject({
      report: null,
      killed: true,
      failure: 'the runner sent a message larger than 262144 bytes',
      exit: { signal: 'SIGKILL' },
    });
    expect(outcome.logs.map((log) => [log.msg, log.level])).toEqual([
      ['before the flood', 'INFO'],
      ['not a message', 'INFO'],
    ]);
  });

  it.concurrent('kills the runner when its run is aborted', async () => {
    const controller = new AbortController();
    // The script tells the site it is waiting; the site aborts the run.
    abortOnHit.set('/signal/abort', () => controller.abort());
    const code = [
      `console.log('waiting');`,
      `await request.get('${web.origin}/signal/abort').catch(() => {});`,
      'await new Promise(() => {});',
    ].join('\n');
    const { outcome } = await runCheck(
      payloadFor(browser.wsEndpoint, code, { checkType: 'MULTI_STEP' }),
      undefined,
      controller.signal,
    );
    expect(outcome).toMatchObject({ report: null, killed: true, failure: 'the run was aborted' });
    expect(outcome.logs.map((log) => log.msg)).toEqual(['waiting']);
  });

  it.concurrent('cuts a log line to fit the channel rather than overflow it', async () => {
    const code = [
      `console.log(String.fromCharCode(1).repeat(200_000));`,
      `console.error('é'.repeat(100_000));`,
      `test.step('x'.repeat(5_000), async () => {});`,
    ].join('\n');
    const { outcome } = await runCheck(
      payloadFor(browser.wsEndpoint, `const { test } = require('@playwright/test');\n${code}`, {
        checkType: 'MULTI_STEP',
        shape: 'PLAIN',
        maxLogChars: 1_000_000,
      }),
    );
    expect(outcome.failure).toBeNull();
    expect(outcome.report?.status).toBe('PASSED');
    const [control, accents] = outcome.logs;
    // Each control character takes 6 bytes as JSON: the line is cut to under 256 KiB.
    expect(control?.msg.length).toBeGreaterThan(30_000);
    expect(control?.msg.length).toBeLessThan(45_000);
    expect(accents).toMatchObject({ level: 'ERROR', msg: 'é'.repeat(100_000) });
    expect(outcome.steps[0]?.name.length).toBeLessThanOrEqual(1_025);
  });
});
