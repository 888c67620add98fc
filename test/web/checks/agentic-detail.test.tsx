import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { AgenticRepairs, AgenticScriptPanel } from '../../../app/src/checks/detail/agentic.js';
import type { AgenticRepair, Check } from '../../../app/src/api/schemas.js';
import { serveApi } from '../dom.js';
import { type } from '../forms.js';

// The check page's parts of an AGENTIC check in a real DOM against a loopback API: the stored script shown
// read-only with an Edit that PUTs the new script alone, and the script changes with their reason and diff,
// Apply and Reject on the pending ones (and the service's 409 shown when one cannot be applied).

const api = serveApi();

const CHECK = {
  id: 'agentic-1',
  checkType: 'AGENTIC',
  name: 'Sign-in works',
  prompt: 'Open {{BASE_URL}} and check the dashboard says "Welcome".',
  repairMode: 'REVIEW',
  script: "await page.goto(process.env.BASE_URL);\nawait expect(page.getByText('Welcome')).toBeVisible();",
  scriptVersion: 2,
} as unknown as Check;

function repair(over: Partial<AgenticRepair>): AgenticRepair {
  return {
    id: 'r-1',
    checkId: 'agentic-1',
    kind: 'REPAIRED',
    status: 'PENDING',
    baseVersion: 2,
    newVersion: null,
    reason: 'The greeting is now a heading.',
    diff: "--- v2\n+++ v3\n@@ -2 +2 @@\n-await expect(page.getByText('Welcome')).toBeVisible();\n+await expect(page.getByRole('heading')).toBeVisible();\n",
    script: "await page.goto(process.env.BASE_URL);\nawait expect(page.getByRole('heading')).toBeVisible();",
    resultId: 'res-9',
    agentId: 'agent-1',
    createdAt: '2026-11-20T10:00:00.000Z',
    decidedAt: null,
    decidedBy: null,
    ...over,
  };
}

describe('the script panel', () => {
  it('shows the prompt and the script with its version, and saves an edit as the script alone', async () => {
    api.route({ 'PUT /v1/checks/agentic-1': { status: 200, body: { ...CHECK, scriptVersion: 3 } } });
    let saved = 0;
    render(<AgenticScriptPanel check={CHECK} canWrite onSaved={() => saved++} />);
    expect(screen.getByText(/dashboard says "Welcome"/)).toBeTruthy();
    expect(screen.getByText(/version 2/)).toBeTruthy();
    expect(screen.getByText(/repairs reviewed first/)).toBeTruthy();
    expect(screen.getByRole('group', { name: 'Script, version 2' }).textContent).toContain(
      "getByText('Welcome')",
    );
    fireEvent.click(screen.getByRole('button', { name: 'Edit script' }));
    type(/^Script/, 'await page.goto("https://example.com");');
    fireEvent.click(screen.getByRole('button', { name: 'Save script' }));
    await waitFor(() => expect(saved).toBe(1));
    expect(api.requests('PUT /v1/checks/agentic-1')[0]?.body).toEqual({
      script: 'await page.goto("https://example.com");',
    });
  });

  it('says when there is no script yet, and offers no Edit to a role that may not write', () => {
    render(
      <AgenticScriptPanel
        check={{ ...CHECK, script: null, scriptVersion: 0 }}
        canWrite={false}
        onSaved={() => {}}
      />,
    );
    expect(screen.getByText('No script yet: the next run writes one from the prompt.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Edit script' })).toBeNull();
  });

  it('shows the service’s 409 at the editor when the script moved meanwhile', async () => {
    api.route({
      'PUT /v1/checks/agentic-1': {
        status: 409,
        body: {
          statusCode: 409,
          error: 'Conflict',
          message: 'check agentic-1: its script changed to version 3 while this update was made',
          attributes: { code: 'OUTPOST_ERR_SCRIPT_MOVED' },
        },
      },
    });
    render(<AgenticScriptPanel check={CHECK} canWrite onSaved={() => {}} />);
    fireEvent.click(screen.getByRole('button', { name: 'Edit script' }));
    fireEvent.click(screen.getByRole('button', { name: 'Save script' }));
    await waitFor(() => expect(screen.getByText(/its script changed to version 3/)).toBeTruthy());
  });
});

describe('the script changes', () => {
  it('lists them with reason, versions and diff; Apply and Reject only on a pending one', async () => {
    api.route({
      'GET /v1/checks/agentic-1/agentic-repairs': {
        status: 200,
        body: [
          repair({}),
          repair({
            id: 'r-0',
            kind: 'GENERATED',
            status: 'APPLIED',
            baseVersion: 0,
            newVersion: 1,
            reason: 'Wrote the first script.',
            decidedAt: '2026-11-19T10:00:00.000Z',
          }),
        ],
      },
      'POST /v1/checks/agentic-1/agentic-repairs/r-1/apply': {
        status: 200,
        body: repair({ status: 'APPLIED', newVersion: 3 }),
      },
    });
    let decided = 0;
    render(<AgenticRepairs checkId="agentic-1" canWrite reloadKey={0} onDecided={() => decided++} />);
    const items = await screen.findAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0]?.textContent).toContain('Waiting for review');
    expect(items[0]?.textContent).toContain('over v2');
    expect(items[0]?.textContent).toContain('The greeting is now a heading.');
    expect(items[1]?.textContent).toContain('Applied');
    expect(items[1]?.textContent).toContain('over no script → v1');
    expect(items[1]?.textContent).toContain('Applied by the check’s repair mode');
    expect(within(items[1]!).queryByRole('button', { name: /Apply/ })).toBeNull();
    const diff = within(items[0]!).getByRole('group', { name: 'Diff of the repair' });
    expect(diff.querySelector('.diff-add')?.textContent).toContain("getByRole('heading')");
    fireEvent.click(within(items[0]!).getByRole('button', { name: 'Apply this repair' }));
    await waitFor(() => expect(decided).toBe(1));
    expect(api.requests('POST /v1/checks/agentic-1/agentic-repairs/r-1/apply')).toHaveLength(1);
    expect(screen.getByRole('status').textContent).toContain('Applied: the script is now version 3.');
  });

  it('rejects one, and shows the 409 of one that can no longer be applied', async () => {
    api.route({
      'GET /v1/checks/agentic-1/agentic-repairs': { status: 200, body: [repair({})] },
      'POST /v1/checks/agentic-1/agentic-repairs/r-1/reject': {
        status: 200,
        body: repair({ status: 'REJECTED' }),
      },
      'POST /v1/checks/agentic-1/agentic-repairs/r-1/apply': {
        status: 409,
        body: {
          statusCode: 409,
          error: 'Conflict',
          message: 'agentic repair r-1 is STALE',
          attributes: { code: 'OUTPOST_ERR_REPAIR_NOT_PENDING', status: 'STALE' },
        },
      },
    });
    render(<AgenticRepairs checkId="agentic-1" canWrite reloadKey={0} onDecided={() => {}} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Apply this repair' }));
    await waitFor(() =>
      expect(screen.getByRole('status').textContent).toContain('agentic repair r-1 is STALE'),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Reject this repair' }));
    await waitFor(() =>
      expect(api.requests('POST /v1/checks/agentic-1/agentic-repairs/r-1/reject')).toHaveLength(1),
    );
  });

  it('says when there is none, and shows no buttons to a role that may not write', async () => {
    api.route({ 'GET /v1/checks/agentic-1/agentic-repairs': { status: 200, body: [] } });
    render(<AgenticRepairs checkId="agentic-1" canWrite={false} reloadKey={0} onDecided={() => {}} />);
    expect(await screen.findByText(/No script change yet/)).toBeTruthy();
  });
});
