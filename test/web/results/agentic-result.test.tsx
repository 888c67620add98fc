import type { ComponentProps } from 'preact';
import { fireEvent, render, screen, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { ResultView } from '../../../app/src/results/view.js';
// The harness unmounts what a test rendered after it.
import '../dom.js';

// The result view of AGENTIC checks in a real DOM, fed a stored result of the shape the agent reports
// (src/protocol/agentic-result.ts): summary, conditions, steps with tool calls folded, suggestions, errors,
// model usage, the script change with its diff, and the browser result of the script below it all.

type Result = ComponentProps<typeof ResultView>['result'];
type AgenticPart = NonNullable<Result['agenticCheckResult']>;
type BrowserPart = NonNullable<Result['browserCheckResult']>;

const AGENTIC: AgenticPart = {
  mode: 'REPAIR',
  summary: 'Signed in and saw the dashboard greet the user.',
  assertions: [
    { condition: 'the dashboard says "Welcome"', passed: true, actual: 'Welcome, Ada', expected: 'Welcome' },
    { condition: 'the footer shows the version', passed: false, actual: null, expected: 'v2' },
  ],
  steps: [
    {
      kind: 'TOOL_CALL',
      tool: 'browser_click',
      input: '{"selector":"text=Sign in"}',
      output: 'clicked',
      text: null,
      startedAt: '2026-03-01T10:00:00.100Z',
      durationMs: 42,
    },
    {
      kind: 'MESSAGE',
      tool: null,
      input: null,
      output: null,
      text: 'The greeting moved into a heading; patching the locator.',
      startedAt: '2026-03-01T10:00:01.000Z',
      durationMs: 900,
    },
  ],
  suggestions: ['Give the greeting a data-testid.'],
  errors: ['locator text=Welcome matched nothing'],
  modelUsage: { model: 'qwen3:8b', calls: 4, durationMs: 3250, promptTokens: 5120, completionTokens: 410 },
  scriptVersion: 2,
  scriptChange: {
    kind: 'REPAIRED',
    baseVersion: 2,
    script: "await expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();",
    diff: "--- v2\n+++ v3\n@@ -1 +1 @@\n-await expect(page.getByText('Welcome')).toBeVisible();\n+await expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();\n",
    reason: 'The greeting is now a heading.',
    verified: true,
  },
};

const BROWSER: BrowserPart = {
  scriptShape: 'PLAIN',
  runtimeId: '2026.04',
  playwrightVersion: '1.58.2',
  browserVersion: '146.0.0.0',
  steps: [],
  pages: [
    { url: 'http://127.0.0.1:8080/', webVitals: { FCP: 40, LCP: 41, CLS: 0, TBT: 0, INP: null, TTFB: 3 } },
  ],
  errors: [],
  droppedErrors: 0,
  timedOut: false,
  startupMs: 35,
  scrubbing: { secretValues: 1, credentialHeaders: 0, shortSecretsNotScrubbed: 0, artifactsWithheld: false },
  trimmed: [],
} as BrowserPart;

function result(fields: Partial<Result> = {}): Result {
  return {
    status: 'PASSED',
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    responseTime: 4100,
    startedAt: '2026-03-01T10:00:00.000Z',
    stoppedAt: '2026-03-01T10:00:04.100Z',
    runLocation: 'us-east-1',
    attempts: 1,
    resultType: 'FINAL',
    errorMessage: null,
    assertions: [],
    logs: [],
    artifacts: [],
    ...fields,
  };
}

const renderResult = (r: Result) =>
  render(<ResultView result={r} checkId="chk-1" resultId="res-1" level={2} />);

describe('an agentic result', () => {
  it('shows the summary, the judged conditions, errors, suggestions, usage and the repair with its diff', () => {
    renderResult(result({ agenticCheckResult: AGENTIC, browserCheckResult: BROWSER }));
    expect(screen.getByRole('heading', { name: 'Agentic run' })).toBeTruthy();
    expect(screen.getByText('Signed in and saw the dashboard greet the user.')).toBeTruthy();
    expect(screen.getByText('Repaired the stored script after it failed')).toBeTruthy();
    const conditions = screen.getByRole('table', { name: 'Conditions the run judged' });
    const rows = within(conditions).getAllByRole('row');
    expect(rows[1]?.textContent).toContain('the dashboard says "Welcome"');
    expect(rows[1]?.textContent).toContain('✓ Passed');
    expect(rows[1]?.textContent).toContain('Welcome, Ada');
    expect(rows[2]?.textContent).toContain('✕ Failed');
    expect(screen.getByText('locator text=Welcome matched nothing')).toBeTruthy();
    expect(screen.getByText('Give the greeting a data-testid.')).toBeTruthy();
    expect(screen.getByText('qwen3:8b')).toBeTruthy();
    expect(screen.getByText('5,120')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Script repaired' })).toBeTruthy();
    expect(screen.getByText('The greeting is now a heading.')).toBeTruthy();
    expect(screen.getByText('Yes: it passed when run')).toBeTruthy();
    const diff = screen.getByRole('group', { name: 'The script change as a diff' });
    expect(diff.querySelector('.diff-add')?.textContent).toContain("getByRole('heading'");
    expect(diff.querySelector('.diff-del')?.textContent).toContain("getByText('Welcome')");
  });

  it('folds tool calls (name and time shown, input and output inside) and shows model messages as text', () => {
    renderResult(result({ agenticCheckResult: AGENTIC }));
    const tool = screen.getByText('browser_click').closest('details') as HTMLDetailsElement;
    expect(tool.open).toBe(false);
    expect(tool.querySelector('summary')?.textContent).toContain('42');
    fireEvent.click(tool.querySelector('summary')!);
    expect(within(tool).getByText('{"selector":"text=Sign in"}')).toBeTruthy();
    expect(within(tool).getByText('clicked')).toBeTruthy();
    expect(screen.getByText('The greeting moved into a heading; patching the locator.')).toBeTruthy();
  });

  it('shows the browser result of the script below the agentic part', () => {
    const { container } = renderResult(result({ agenticCheckResult: AGENTIC, browserCheckResult: BROWSER }));
    const headings = [...container.querySelectorAll('h2')].map((h) => h.textContent);
    const agentic = headings.indexOf('Agentic run');
    expect(agentic).toBeGreaterThanOrEqual(0);
    expect(headings.indexOf('Browser run')).toBeGreaterThan(agentic);
  });

  it('says a replay made no model call, and an unverified change was kept in the result only', () => {
    renderResult(
      result({
        agenticCheckResult: {
          ...AGENTIC,
          mode: 'REPLAY',
          steps: [],
          errors: [],
          suggestions: [],
          modelUsage: { model: null, calls: 0, durationMs: 0, promptTokens: null, completionTokens: null },
          scriptChange: { ...AGENTIC.scriptChange!, verified: false },
        },
      }),
    );
    expect(screen.getByText('Replayed the stored script (no model call)')).toBeTruthy();
    expect(screen.getByText('No model steps: the stored script ran on its own.')).toBeTruthy();
    expect(screen.getByText('none called')).toBeTruthy();
    expect(screen.getAllByText('not reported')).toHaveLength(2);
    expect(screen.getByText('No: kept in this result only')).toBeTruthy();
  });
});
