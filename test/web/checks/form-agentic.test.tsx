import { fireEvent, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import CheckFormPage from '../../../app/src/checks/form/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { field, fieldValue, type } from '../forms.js';

// The AGENTIC check's form in a real DOM against a loopback API: the prompt with its character counter, the
// repair mode and skills sent without any JSON, the prompt required, the service's 400 at its field, and an
// edit that never sends the stored script back (a run may have stored a newer one meanwhile).

const api = serveApi(() => ({
  'GET /v1/check-groups': { status: 200, body: [] },
  'GET /v1/private-locations': { status: 200, body: [] },
  'GET /v1/runtimes': { status: 200, body: [] },
  'GET /v1/alert-channels': { status: 200, body: [] },
  'GET /v1/snippets': { status: 200, body: [] },
}));

const created = { id: 'agentic-1', checkType: 'AGENTIC', name: 'Sign-in works' };
const PROMPT = 'Open {{BASE_URL}}, sign in as {{USER}} and check the dashboard says "Welcome".';

function renderNew() {
  return renderRoute('/checks/new?type=AGENTIC', <CheckFormPage />);
}

describe('new agentic check', () => {
  it('sends the prompt, the repair mode and the skills; the counter counts the prompt', async () => {
    api.route({ 'POST /v1/checks/agentic': { status: 201, body: created } });
    renderNew();
    await screen.findByRole('button', { name: 'Create check' });
    expect(screen.getByText('0 / 10,000 characters')).toBeTruthy();
    type(/^Name/, 'Sign-in works');
    type(/^Prompt/, PROMPT);
    expect(screen.getByText(`${PROMPT.length} / 10,000 characters`)).toBeTruthy();
    // The variables the prompt names are listed under it: the only ones a run gets.
    expect(screen.getByText(/Named: BASE_URL, USER\./)).toBeTruthy();
    fireEvent.click(screen.getByLabelText(/Review repairs first/));
    type(/^Skills/, 'http, files ,');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(api.requests('POST /v1/checks/agentic')).toHaveLength(1));
    const body = api.requests('POST /v1/checks/agentic')[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      name: 'Sign-in works',
      prompt: PROMPT,
      repairMode: 'REVIEW',
      agentRuntime: { skills: ['http', 'files'] },
      frequency: 30,
      timeoutSeconds: 600,
    });
    expect(body).not.toHaveProperty('script');
  });

  it('offers frequencies from 5 minutes only', async () => {
    renderNew();
    await screen.findByRole('button', { name: 'Create check' });
    const frequency = field(/^Frequency/) as unknown as HTMLSelectElement;
    const values = [...frequency.options].map((o) => o.value);
    expect(values).not.toContain('1');
    expect(values).not.toContain('2');
    expect(values).toContain('5');
    expect(frequency.value).toBe('30');
  });

  it('asks for the prompt before sending, says when it is too long, and shows the service’s 400 at it', async () => {
    api.route({
      'POST /v1/checks/agentic': validationError('body.prompt must be at most 10000 characters', 'prompt'),
    });
    renderNew();
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Too long');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(screen.getByText('Prompt is required.')).toBeTruthy());
    expect(api.requests('POST /v1/checks/agentic')).toHaveLength(0);

    type(/^Prompt/, 'x'.repeat(10_002));
    expect(screen.getByText('10,002 / 10,000 characters: 2 too many')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    const prompt = field(/^Prompt/);
    await waitFor(() => expect(prompt.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText(/must be at most 10000 characters/)).toBeTruthy();
  });
});

describe('editing an agentic check', () => {
  it('shows its prompt and mode, and saves without sending the stored script back', async () => {
    const stored = {
      ...created,
      activated: true,
      muted: false,
      doubleCheck: true,
      shouldFail: false,
      frequency: 60,
      frequencyOffset: null,
      locations: ['us-east-1'],
      privateLocations: [],
      runParallel: false,
      tags: [],
      groupId: null,
      groupOrder: null,
      runtimeId: null,
      description: null,
      alertChannelSubscriptions: [],
      environmentVariables: [],
      prompt: PROMPT,
      agentRuntime: { skills: ['http'] },
      repairMode: 'AUTO',
      script: 'await page.goto(process.env.BASE_URL);',
      scriptVersion: 3,
      timeoutSeconds: 300,
      created_at: '2026-11-01T00:00:00.000Z',
      updated_at: null,
    };
    api.route({
      'GET /v1/checks/agentic-1': { status: 200, body: stored },
      'PUT /v1/checks/agentic-1': { status: 200, body: stored },
    });
    renderRoute('/checks/agentic-1/edit', <CheckFormPage checkId="agentic-1" />);
    await screen.findByRole('button', { name: 'Save changes' });
    expect(fieldValue(/^Prompt/)).toBe(PROMPT);
    expect(fieldValue(/^Skills/)).toBe('http');
    expect((screen.getByLabelText(/Apply repairs automatically/) as HTMLInputElement).checked).toBe(true);
    // Advanced (JSON) holds neither the script nor its version.
    expect(fieldValue('Other fields (JSON)')).not.toContain('script');
    type(/^Prompt/, `${PROMPT} Also check the footer.`);
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(api.requests('PUT /v1/checks/agentic-1')).toHaveLength(1));
    const body = api.requests('PUT /v1/checks/agentic-1')[0]?.body as Record<string, unknown>;
    expect(body.prompt).toBe(`${PROMPT} Also check the footer.`);
    expect(body).not.toHaveProperty('script');
    expect(body).not.toHaveProperty('scriptVersion');
  });
});
