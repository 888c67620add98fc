import { fireEvent, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import CheckFormPage from '../../../app/src/checks/form/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { choose, field, type } from '../forms.js';

// The check form in a real DOM against a loopback API: the type picker, required fields checked before
// sending, the request each type's form sends, the service's 400 shown at its field, and an edit that
// reads and writes the check at its encoded path.

const CHANNEL = {
  id: 7,
  type: 'EMAIL',
  config: { address: 'ops@example.com' },
  subscriptions: [],
  autoSubscribe: false,
  sendRecovery: true,
  sendFailure: true,
  sendDegraded: false,
  sslExpiry: false,
  sslExpiryThreshold: 30,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: null,
};

/** A check as the API answers it (the fields the form reads). */
function savedCheck(fields: Record<string, unknown>) {
  return {
    id: 'chk-1',
    checkType: 'URL',
    name: 'Home page',
    activated: true,
    muted: false,
    doubleCheck: false,
    shouldFail: false,
    locations: ['us-east-1'],
    privateLocations: [],
    tags: ['web'],
    frequency: 10,
    frequencyOffset: null,
    runParallel: false,
    groupId: null,
    groupOrder: null,
    runtimeId: null,
    description: null,
    alertChannelSubscriptions: [{ alertChannelId: 7, activated: true }],
    alertChannels: { email: [], webhook: [], slack: [], sms: [] },
    environmentVariables: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: null,
    degradedResponseTime: 3000,
    maxResponseTime: 5000,
    request: {
      url: 'https://example.com/',
      method: 'GET',
      followRedirects: true,
      skipSSL: false,
      ipFamily: 'IPv4',
      assertions: [],
    },
    ...fields,
  };
}

const api = serveApi(() => ({
  'GET /v1/check-groups': { status: 200, body: [{ id: 3, name: 'Shop' }] },
  'GET /v1/private-locations': { status: 200, body: [] },
  'GET /v1/runtimes': {
    status: 200,
    body: [{ name: '2026.04', stage: 'CURRENT', multiStepSupport: true, runtimeEndOfLife: '2027-01-01' }],
  },
  'GET /v1/alert-channels': { status: 200, body: [CHANNEL] },
  'GET /v1/snippets': { status: 200, body: [{ id: 11, name: 'Sign in' }] },
}));

/** Renders the form page at `path` (`/checks/new?type=URL`, `/checks/{id}/edit`). */
function renderAt(path: string, checkId?: string) {
  return renderRoute(path, <CheckFormPage {...(checkId ? { checkId } : {})} />);
}

describe('type picker', () => {
  it('offers every creatable type, each linking to its form', () => {
    renderAt('/checks/new');
    expect(screen.getByRole('heading', { name: 'New check' })).toBeTruthy();
    const links = screen
      .getAllByRole('link')
      .filter((a) => a.getAttribute('href')?.startsWith('/checks/new?'));
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      '/checks/new?type=API',
      '/checks/new?type=URL',
      '/checks/new?type=TCP',
      '/checks/new?type=DNS',
      '/checks/new?type=GRPC',
      '/checks/new?type=ICMP',
      '/checks/new?type=SSL',
      '/checks/new?type=TRACEROUTE',
      '/checks/new?type=BROWSER',
      '/checks/new?type=MULTI_STEP',
      '/checks/new?type=PLAYWRIGHT',
      '/checks/new?type=AGENTIC',
      '/checks/new?type=HEARTBEAT',
    ]);
  });

  it('says so for a type it does not know', () => {
    renderAt('/checks/new?type=telnet');
    expect(screen.getByRole('alert').textContent).toContain('There is no check type “telnet”');
  });
});

describe('new URL monitor', () => {
  it('loads its choices, then checks the required fields before sending anything', async () => {
    renderAt('/checks/new?type=URL');
    const create = await screen.findByRole('button', { name: 'Create check' });
    expect(api.requests('GET /v1/alert-channels')).toHaveLength(1);
    expect(screen.getByRole('option', { name: 'Shop' })).toBeTruthy();

    fireEvent.click(create);
    const name = field(/^Name/);
    await waitFor(() => expect(name.getAttribute('aria-invalid')).toBe('true'));
    expect(
      document.getElementById(name.getAttribute('aria-describedby')?.split(' ').at(-1) ?? '')?.textContent,
    ).toContain('Name is required.');
    await waitFor(() => expect(document.activeElement).toBe(name));

    type(/^Name/, 'Home page');
    fireEvent.click(create);
    const url = field(/^URL/);
    await waitFor(() => expect(url.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('URL is required.')).toBeTruthy();
    expect(api.received.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('sends the fields typed, the channels shown and the tags as a list, then opens the check', async () => {
    api.route({ 'POST /v1/checks/url': { status: 201, body: savedCheck({ id: 'new/1' }) } });
    renderAt('/checks/new?type=URL');
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Home page');
    type(/^URL/, 'https://example.com/');
    type(/^Tags/, 'web, prod, web,  ');
    choose(/^Group/, '3');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));

    await waitFor(() => expect(api.requests('POST /v1/checks/url')).toHaveLength(1));
    const [sent] = api.requests('POST /v1/checks/url');
    expect(sent?.query.get('autoAssignAlerts')).toBe('false');
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.body).toMatchObject({
      name: 'Home page',
      tags: ['web', 'prod'],
      groupId: 3,
      // A new uptime monitor runs every minute.
      frequency: 1,
      // No private location and no agent serving a data-center location: none chosen, the service decides.
      locations: [],
      privateLocations: [],
      alertChannelSubscriptions: [{ alertChannelId: 7, activated: true }],
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: { url: 'https://example.com/', followRedirects: true, skipSSL: false, ipFamily: 'IPv4' },
    });
    // The new check's page, its id encoded once.
    await waitFor(() => expect(window.location.pathname).toBe('/checks/new%2F1'));
  });

  it('shows the service’s 400 at the control of the field it names and focuses it', async () => {
    api.route({
      'POST /v1/checks/url': validationError('must match format "uri"', 'request.url'),
    });
    renderAt('/checks/new?type=URL');
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Home page');
    type(/^URL/, 'not a url');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    const url = field(/^URL/);
    await waitFor(() => expect(url.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('must match format "uri"')).toBeTruthy();
    await waitFor(() => expect(document.activeElement).toBe(url));
    expect(screen.getByRole('button', { name: 'Create check' })).toBeTruthy();
  });

  it('shows an error about a field without a control at the top, with the field’s name', async () => {
    api.route({
      'POST /v1/checks/url': validationError('unknown field', 'nonsense'),
    });
    renderAt('/checks/new?type=URL');
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'x');
    type(/^URL/, 'https://example.com/');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('nonsense: unknown field'));
  });

  it('refuses an advanced section that is not a JSON object, next to it', async () => {
    renderAt('/checks/new?type=URL');
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'x');
    type(/^URL/, 'https://example.com/');
    fireEvent.input(screen.getByLabelText('Other fields (JSON)'), { target: { value: '[1, 2]' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() =>
      expect(screen.getByLabelText('Other fields (JSON)').getAttribute('aria-invalid')).toBe('true'),
    );
    expect(screen.getByText('Must be a JSON object ({ "field": value, … }).')).toBeTruthy();
    expect(api.requests('POST /v1/checks/url')).toEqual([]);
  });
});

describe('new API check', () => {
  it('adds and removes header rows, requires a header’s name and drops blank rows', async () => {
    api.route({ 'POST /v1/checks/api': { status: 201, body: savedCheck({ checkType: 'API' }) } });
    renderAt('/checks/new?type=API');
    await screen.findByRole('button', { name: 'Create check' });
    expect(screen.getAllByRole('option', { name: 'Sign in' })).toHaveLength(2);
    type(/^Name/, 'Orders API');
    type(/^URL/, 'https://api.example.com/orders');

    fireEvent.click(screen.getByRole('button', { name: /Add header/ }));
    fireEvent.click(screen.getByRole('button', { name: /Add header/ }));
    fireEvent.click(screen.getByRole('button', { name: /Add header/ }));
    type('Header 1 value', 'no name');
    type('Header 2 name', 'Accept');
    type('Header 2 value', 'application/json');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(field('Header 1 name').getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('Header 1 name is required.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Remove header 1' }));
    expect(field('Header 1 name').value).toBe('Accept');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(api.requests('POST /v1/checks/api')).toHaveLength(1));
    const body = api.requests('POST /v1/checks/api')[0]?.body as { request: { headers: unknown[] } };
    // The blank third row is not sent.
    expect(body.request.headers).toEqual([{ key: 'Accept', value: 'application/json' }]);
  });

  it('sends basic authentication only when a username or password is given', async () => {
    api.route({ 'POST /v1/checks/api': { status: 201, body: savedCheck({ checkType: 'API' }) } });
    renderAt('/checks/new?type=API');
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Orders API');
    type(/^URL/, 'https://api.example.com/orders');
    type(/^Username/, 'robot');
    choose(/^Setup snippet/, '11');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(api.requests('POST /v1/checks/api')).toHaveLength(1));
    expect(api.requests('POST /v1/checks/api')[0]?.body).toMatchObject({
      setupSnippetId: 11,
      request: { basicAuth: { username: 'robot', password: '' }, method: 'GET' },
    });
  });
});

describe('new heartbeat monitor', () => {
  it('switches between a period and a cron schedule, and shows the ping URL once created', async () => {
    api.route({
      'POST /v1/checks/heartbeat': {
        status: 201,
        body: savedCheck({ id: 'hb1', checkType: 'HEARTBEAT', name: 'Backup', pingUrl: 'http://x/ping/abc' }),
      },
    });
    renderAt('/checks/new?type=HEARTBEAT');
    await screen.findByRole('button', { name: 'Create check' });
    expect(screen.queryByText('Schedule and locations')).toBeNull();
    type(/^Name/, 'Backup');
    fireEvent.click(screen.getByLabelText('On a cron schedule'));
    type(/^Cron schedule/, '0 3 * * *');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await screen.findByRole('heading', { name: /Heartbeat monitor “Backup” created/ });
    expect((screen.getByLabelText('Ping URL') as HTMLInputElement).value).toBe('http://x/ping/abc');
    const body = api.requests('POST /v1/checks/heartbeat')[0]?.body as { heartbeat: Record<string, unknown> };
    expect(body.heartbeat).toMatchObject({ schedule: '0 3 * * *', grace: 10, graceUnit: 'minutes' });
    expect(body.heartbeat.period).toBeUndefined();
  });
});

describe('editing a check', () => {
  it('reads and writes the check at its encoded path, sending back what the form does not show', async () => {
    const id = 'a b/c';
    api.route({
      'GET /v1/checks/a%20b%2Fc': {
        status: 200,
        body: savedCheck({ id, alertSettings: { escalationType: 'RUN_BASED' }, pingUrl: 'ignored' }),
      },
      'PUT /v1/checks/a%20b%2Fc': { status: 200, body: savedCheck({ id }) },
    });
    renderAt(`/checks/${encodeURIComponent(id)}/edit`, id);
    await screen.findByRole('button', { name: 'Save changes' });
    expect(screen.getByRole('heading', { name: 'Edit Home page' })).toBeTruthy();
    expect(field(/^URL/).value).toBe('https://example.com/');
    expect(field(/^Tags/).value).toBe('web');
    type(/^Name/, 'Home page (renamed)');
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(api.requests('PUT /v1/checks/a%20b%2Fc')).toHaveLength(1));
    const body = api.requests('PUT /v1/checks/a%20b%2Fc')[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      name: 'Home page (renamed)',
      alertSettings: { escalationType: 'RUN_BASED' },
      heartbeat: {},
      script: null,
    });
    // Read-only fields of the answer are not sent back.
    expect(body).not.toHaveProperty('id');
    expect(body).not.toHaveProperty('pingUrl');
    expect(body).not.toHaveProperty('created_at');
    await waitFor(() => expect(window.location.pathname).toBe('/checks/a%20b%2Fc'));
  });

  it('shows the error of a check that cannot be read', async () => {
    renderAt('/checks/missing/edit', 'missing');
    await screen.findByText('Nothing with this id exists in your account.');
  });
});
