import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { missingRequirement } from '../../helpers/requirements.js';
import {
  audit,
  describeViolations,
  launchChromium,
  SCREENSHOT_DIR,
  signIn,
  startUp,
  type UpProcess,
  webRequirements,
} from '../../helpers/web.js';

// The pages of an AGENTIC check in Chromium against a real `outpost up`, at 1280 px and at a phone's 390 px:
// the form (no JSON needed), the check page with its script and a repair waiting for review (applied from
// the page), and a result's agentic part above its browser result. The runs are posted through the agent
// protocol by the test itself, as an agent that ran the check would post them; axe finds no violation on
// any page and none scrolls sideways at the phone's width.

const API_KEY = `op_agt_${'a'.repeat(12)}${Math.random().toString(36).slice(2, 14)}${'k'.repeat(20)}`;
const PAGE_TIMEOUT = 15_000;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const AGENT = { 'x-agent-id': randomUUID() };
const SCRIPT_1 =
  "await page.goto(process.env.BASE_URL);\nawait expect(page.getByText('Welcome')).toBeVisible();\n";
const SCRIPT_2 =
  "await page.goto(process.env.BASE_URL);\nawait expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();\n";

const missing = missingRequirement(webRequirements());

describe.skipIf(missing !== null)('AGENTIC check pages in Chromium against outpost up', () => {
  let up: UpProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    up = await startUp(API_KEY);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light' });
    page = await context.newPage();
    await signIn(page, up.baseUrl, API_KEY);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await up?.stop();
  });

  /** Opens `path` and waits for its h1 and for "Loading…" to go. */
  async function show(path: string): Promise<void> {
    await page.goto(new URL(path, up.baseUrl).href);
    await page.locator('main h1').first().waitFor({ timeout: PAGE_TIMEOUT });
    await expect.poll(() => page.locator('main .loading').count(), { timeout: PAGE_TIMEOUT }).toBe(0);
  }

  /** Audits the page at 1280 px (`name`) and at 390 px (`name-phone`): no violation, no sideways scroll. */
  async function auditBothWidths(name: string): Promise<void> {
    const violations = await audit(page, name);
    expect.soft(violations, describeViolations(name, violations)).toEqual([]);
    await page.setViewportSize(PHONE);
    try {
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-phone.png`), fullPage: true });
      const overflow = await page.evaluate(() => {
        const { document } = globalThis as unknown as {
          document: { documentElement: { scrollWidth: number; clientWidth: number } };
        };
        return document.documentElement.scrollWidth - document.documentElement.clientWidth;
      });
      expect.soft(overflow, `${name}: ${overflow} px wider than a phone`).toBeLessThanOrEqual(1);
      const phone = await audit(page, `${name}-phone`);
      expect.soft(phone, describeViolations(`${name}-phone`, phone)).toEqual([]);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  }

  /** Runs the check once as an agent would: triggers it, claims its job, posts a result with `part`. */
  async function runAsAgent(checkId: string, part: Record<string, unknown>): Promise<void> {
    const started = await up.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(started.status).toBe(201);
    const claim = await fetch(new URL('/v1/agent/jobs/claim', up.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...AGENT },
      body: JSON.stringify({
        agentVersion: 'test',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['AGENTIC'],
        runtimes: ['2026.04'],
        freeSlots: { uptime: 0, main: 1 },
        waitSeconds: 0,
      }),
    });
    const { jobs } = (await claim.json()) as { jobs: { jobId: string; runLocation: string }[] };
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    const now = new Date().toISOString();
    const posted = await fetch(new URL(`/v1/agent/jobs/${job.jobId}/result`, up.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...AGENT },
      body: JSON.stringify({
        status: 'PASSED',
        hasFailures: false,
        hasErrors: false,
        isDegraded: false,
        overMaxResponseTime: false,
        responseTime: 4100,
        startedAt: now,
        stoppedAt: now,
        errorMessage: null,
        assertions: [],
        logs: [{ time: now, level: 'INFO', msg: 'replayed the stored script' }],
        runLocation: job.runLocation,
        attempts: 1,
        resultType: 'FINAL',
        artifacts: [],
        agenticCheckResult: part,
        browserCheckResult: {
          scriptShape: 'PLAIN',
          runtimeId: '2026.04',
          playwrightVersion: '1.58.2',
          browserVersion: '146.0.0.0',
          steps: [],
          pages: [
            {
              url: 'http://127.0.0.1:9/',
              webVitals: { FCP: 40, LCP: 41, CLS: 0, TBT: 0, INP: null, TTFB: 3 },
            },
          ],
          errors: [],
          droppedErrors: 0,
          timedOut: false,
          startupMs: 35,
          scrubbing: {
            secretValues: 1,
            credentialHeaders: 0,
            shortSecretsNotScrubbed: 0,
            artifactsWithheld: false,
          },
          trimmed: [],
        },
      }),
    });
    expect(posted.status, await posted.text()).toBeLessThan(300);
  }

  /** The agentic part of a run that made `change`. */
  function partWith(change: Record<string, unknown>, mode: string) {
    return {
      mode,
      summary:
        mode === 'GENERATE'
          ? 'Explored the sign-in page, signed in and saw the dashboard greet the user; wrote a script that checks it.'
          : 'The greeting moved into a heading; repaired the locator and verified the script passes.',
      assertions: [
        {
          condition: 'the dashboard says "Welcome"',
          passed: true,
          actual: 'Welcome, Ada',
          expected: 'Welcome',
        },
      ],
      steps: [
        {
          kind: 'TOOL_CALL',
          tool: 'browser_navigate',
          input: '{"url":"http://127.0.0.1:9/"}',
          output: 'page loaded: Sign in',
          text: null,
          startedAt: new Date().toISOString(),
          durationMs: 640,
        },
        {
          kind: 'TOOL_CALL',
          tool: 'browser_fill',
          input: '{"selector":"#password","value":"*****"}',
          output: 'filled',
          text: null,
          startedAt: new Date().toISOString(),
          durationMs: 35,
        },
        {
          kind: 'MESSAGE',
          tool: null,
          input: null,
          output: null,
          text: 'Signed in; the dashboard heading says "Welcome, Ada". Writing the script.',
          startedAt: new Date().toISOString(),
          durationMs: 2100,
        },
      ],
      suggestions: ['Give the greeting a data-testid so the script needs no text match.'],
      errors: [],
      modelUsage: {
        model: 'qwen3:8b',
        calls: 5,
        durationMs: 8400,
        promptTokens: 12_400,
        completionTokens: 960,
      },
      scriptVersion: change.baseVersion,
      scriptChange: change,
    };
  }

  it('creates one from the form with no JSON: prompt with its counter, repair mode, skills', async () => {
    await show('/checks/new?type=AGENTIC');
    await page.getByLabel(/^Name\b/).fill('Sign-in reaches the dashboard');
    await page
      .getByLabel(/^Prompt\b/)
      .fill(
        'Open {{BASE_URL}}, sign in as {{LOGIN_USER}} with {{LOGIN_PASSWORD}} and check the dashboard greets the user by name.',
      );
    await page.getByLabel(/Review repairs first/).check();
    await page.getByLabel(/^Skills\b/).fill('http');
    expect(await page.locator('main').innerText()).toContain('/ 10,000 characters');
    await auditBothWidths('agentic-form');
    await page.getByRole('button', { name: 'Create check' }).click();
    await page.waitForURL((u) => /^\/checks\/(?!new$)[^/]+$/.test(u.pathname), { timeout: PAGE_TIMEOUT });
    const checkId = new URL(page.url()).pathname.split('/')[2]!;
    const stored = (await up.api('GET', `/v1/checks/${checkId}`)).json;
    expect(stored).toMatchObject({
      checkType: 'AGENTIC',
      repairMode: 'REVIEW',
      agentRuntime: { skills: ['http'] },
      frequency: 30,
      script: null,
      scriptVersion: 0,
    });
    await up.api('DELETE', `/v1/checks/${checkId}`);
  }, 90_000);

  it('shows the script and a repair waiting for review, applies it from the page, and shows a run', async () => {
    // In a location the embedded agent does not serve: only this test's posts run it.
    const created = await up.api('POST', '/v1/checks/agentic', {
      name: 'Dashboard greets the user',
      activated: false,
      locations: ['eu-west-1'],
      prompt: 'Open {{BASE_URL}}, sign in and check the dashboard says "Welcome".',
      repairMode: 'REVIEW',
    });
    expect(created.status).toBe(201);
    const checkId = created.json.id as string;
    await runAsAgent(
      checkId,
      partWith(
        {
          kind: 'GENERATED',
          baseVersion: 0,
          script: SCRIPT_1,
          diff: `--- /dev/null\n+++ v1\n@@ -0,0 +1,2 @@\n${SCRIPT_1.trimEnd()
            .split('\n')
            .map((l) => `+${l}`)
            .join('\n')}\n`,
          reason: 'First script: signs in and checks the greeting.',
          verified: true,
        },
        'GENERATE',
      ),
    );
    await runAsAgent(
      checkId,
      partWith(
        {
          kind: 'REPAIRED',
          baseVersion: 1,
          script: SCRIPT_2,
          diff: "--- v1\n+++ v2\n@@ -1,2 +1,2 @@\n await page.goto(process.env.BASE_URL);\n-await expect(page.getByText('Welcome')).toBeVisible();\n+await expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();\n",
          reason: 'The greeting is now a heading: the text locator matched two elements.',
          verified: true,
        },
        'REPAIR',
      ),
    );
    expect((await up.api('GET', `/v1/checks/${checkId}`)).json).toMatchObject({
      scriptVersion: 1,
      script: SCRIPT_1,
    });

    await show(`/checks/${checkId}`);
    await page.getByRole('heading', { name: 'Script changes' }).waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByText('Waiting for review').waitFor({ timeout: PAGE_TIMEOUT });
    expect(await page.locator('main').innerText()).toContain('version 1');
    await page.locator('details.agentic-diff summary').first().click();
    await auditBothWidths('agentic-check-page');

    await page.getByRole('button', { name: 'Apply this repair' }).click();
    await expect
      .poll(() => page.getByRole('status').allInnerTexts(), { timeout: PAGE_TIMEOUT })
      .toContainEqual(expect.stringContaining('Applied: the script is now version 2.'));
    expect((await up.api('GET', `/v1/checks/${checkId}`)).json).toMatchObject({
      scriptVersion: 2,
      script: SCRIPT_2,
    });

    const results = (await up.api('GET', `/v1/check-results/${checkId}`)).json as { id: string }[];
    expect(results).toHaveLength(2);
    await show(`/checks/${checkId}/results/${results[0]!.id}`);
    await page.getByRole('heading', { name: 'Agentic run' }).waitFor({ timeout: PAGE_TIMEOUT });
    await page.getByRole('heading', { name: 'Browser run' }).waitFor({ timeout: PAGE_TIMEOUT });
    await page.locator('details.agentic-tool summary').first().click();
    await auditBothWidths('agentic-result');
  }, 120_000);
});
