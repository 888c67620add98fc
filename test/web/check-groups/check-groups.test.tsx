import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import CheckGroupsPage from '../../../app/src/check-groups/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { type } from '../forms.js';

// The check-group pages in a real DOM against a loopback API: the list with each group's number of checks,
// the group form (create and edit: tags as a list, public and private locations, concurrency, switches, the
// service's 400 at its field) and one group's page with its checks.

function group(fields: Record<string, unknown> = {}) {
  return {
    id: 3,
    name: 'Shop',
    activated: true,
    muted: false,
    tags: ['shop', 'prod'],
    locations: ['us-east-1'],
    privateLocations: ['berlin-office'],
    concurrency: 3,
    apiCheckDefaults: { url: 'https://shop.example.com' },
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: null,
    ...fields,
  };
}

function check(fields: Record<string, unknown> = {}) {
  return {
    id: 'chk-1',
    name: 'Cart API',
    checkType: 'API',
    activated: true,
    muted: false,
    groupId: 3,
    frequency: 5,
    frequencyOffset: null,
    tags: [],
    locations: ['us-east-1'],
    privateLocations: [],
    updated_at: null,
    ...fields,
  };
}

/** The alert settings the form sends for a group that has none of its own: the API's defaults. */
const DEFAULT_ALERT_SETTINGS = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  timeBasedEscalation: { minutesFailingThreshold: 5 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
};

const PRIVATE_LOCATIONS = [
  {
    id: 'loc-1',
    name: 'Berlin office',
    slugName: 'berlin-office',
    icon: 'location',
    keys: [],
    agentCount: 0,
  },
  { id: 'loc-2', name: 'Hamburg DC', slugName: 'hamburg-dc', icon: 'location', keys: [], agentCount: 0 },
];

const api = serveApi(() => ({
  'GET /v1/check-groups': {
    status: 200,
    body: [group(), group({ id: 4, name: 'Blog', tags: [], privateLocations: [] })],
  },
  'GET /v1/check-groups/3': { status: 200, body: group() },
  'GET /v1/checks': {
    status: 200,
    body: [
      check(),
      check({ id: 'chk-2', name: 'Checkout page', checkType: 'BROWSER' }),
      check({ id: 'chk-3', groupId: null }),
    ],
  },
  'GET /v1/check-statuses': {
    status: 200,
    body: [{ checkId: 'chk-1', hasFailures: true, hasErrors: false, isDegraded: false, lastRunAt: null }],
  },
  'GET /v1/private-locations': { status: 200, body: PRIVATE_LOCATIONS },
  'GET /v1/snippets': {
    status: 200,
    body: [{ id: 7, name: 'Login', script: 'x', created_at: '2026-01-01T00:00:00.000Z', updated_at: null }],
  },
}));

function renderAt(path: string, groupId?: string) {
  return renderRoute(path, <CheckGroupsPage {...(groupId ? { groupId } : {})} />);
}

describe('the list', () => {
  it('shows each group with its number of checks, state, tags and locations', async () => {
    renderAt('/check-groups');
    const table = await screen.findByRole('table', { name: 'Check groups' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByRole('link', { name: 'Shop' }).getAttribute('href')).toBe('/check-groups/3');
    expect(within(rows[0]!).getAllByRole('cell')[0]!.textContent).toBe('2');
    expect(within(rows[0]!).getByRole('list', { name: 'Tags of Shop' }).textContent).toBe('shopprod');
    expect(within(rows[0]!).getByRole('list', { name: 'Locations of Shop' }).textContent).toBe(
      'us-east-1berlin-office',
    );
    expect(within(rows[1]!).getAllByRole('cell')[0]!.textContent).toBe('0');
  });

  it('says how to start when there is no group', async () => {
    api.route({ 'GET /v1/check-groups': { status: 200, body: [] } });
    renderAt('/check-groups');
    await screen.findByText(/No check group yet/);
  });
});

describe('the group form', () => {
  it('creates a group from what was typed and ticked, then opens its page', async () => {
    api.route({ 'POST /v1/check-groups': { status: 201, body: group({ id: 9, name: 'API' }) } });
    renderAt('/check-groups');
    fireEvent.click(await screen.findByRole('button', { name: 'New check group' }));
    const form = screen.getByRole('form', { name: 'New check group' });
    type(/^Name/, '  API ');
    type(/^Tags/, 'api, , prod ,');
    fireEvent.click(within(form).getByLabelText('eu-west-1'));
    fireEvent.click(within(form).getByLabelText('us-east-1'));
    fireEvent.click(await within(form).findByLabelText('Hamburg DC (hamburg-dc)'));
    type(/^Concurrency/, '5');
    fireEvent.click(within(form).getByLabelText(/^Muted/));
    fireEvent.click(within(form).getByRole('button', { name: 'Create check group' }));
    await waitFor(() => expect(api.requests('POST /v1/check-groups')).toHaveLength(1));
    expect(api.requests('POST /v1/check-groups')[0]?.body).toEqual({
      name: 'API',
      tags: ['api', 'prod'],
      // In the order of the locations, not of the clicks.
      locations: ['us-east-1', 'eu-west-1'],
      privateLocations: ['hamburg-dc'],
      concurrency: 5,
      activated: true,
      muted: true,
      useGlobalAlertSettings: true,
      alertSettings: DEFAULT_ALERT_SETTINGS,
      apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: null },
      setupSnippetId: null,
      localSetupScript: null,
      tearDownSnippetId: null,
      localTearDownScript: null,
      environmentVariables: null,
    });
    await waitFor(() => expect(window.location.pathname).toBe('/check-groups/9'));
  });

  it('shows the service’s 400 under the locations it names', async () => {
    api.route({
      'POST /v1/check-groups': validationError('name at least one location', 'locations'),
    });
    renderAt('/check-groups');
    fireEvent.click(await screen.findByRole('button', { name: 'New check group' }));
    type(/^Name/, 'Empty');
    fireEvent.click(screen.getByRole('button', { name: 'Create check group' }));
    const message = await screen.findByText('name at least one location');
    expect(message.closest('fieldset')?.querySelector('legend')?.textContent).toBe('Locations');
    expect(window.location.pathname).toBe('/check-groups');
  });

  it('keeps a private location the group names that the account no longer has, to untick', async () => {
    api.route({
      'GET /v1/check-groups/3': {
        status: 200,
        body: group({ privateLocations: ['gone-dc', 'berlin-office'] }),
      },
      'PUT /v1/check-groups/3': { status: 200, body: group() },
    });
    renderAt('/check-groups/3', '3');
    fireEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit the group' });
    const berlin = (await within(form).findByLabelText('Berlin office (berlin-office)')) as HTMLInputElement;
    expect(berlin.checked).toBe(true);
    const gone = within(form).getByLabelText('gone-dc (no such private location)') as HTMLInputElement;
    expect(gone.checked).toBe(true);
    fireEvent.click(gone);
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.requests('PUT /v1/check-groups/3')).toHaveLength(1));
    expect(api.requests('PUT /v1/check-groups/3')[0]?.body).toEqual({
      name: 'Shop',
      tags: ['shop', 'prod'],
      locations: ['us-east-1'],
      privateLocations: ['berlin-office'],
      concurrency: 3,
      activated: true,
      muted: false,
      useGlobalAlertSettings: true,
      alertSettings: DEFAULT_ALERT_SETTINGS,
      apiCheckDefaults: {
        url: 'https://shop.example.com',
        headers: [],
        queryParameters: [],
        assertions: [],
        basicAuth: null,
      },
      setupSnippetId: null,
      localSetupScript: null,
      tearDownSnippetId: null,
      localTearDownScript: null,
      environmentVariables: null,
    });
    await screen.findByText('Saved.');
    expect(screen.queryByRole('form', { name: 'Edit the group' })).toBeNull();
  });

  it('edits the group’s alert settings, API-check defaults, scripts and variables, and keeps a secret as its mask', async () => {
    api.route({
      'GET /v1/check-groups/3': {
        status: 200,
        body: group({
          apiCheckDefaults: {
            url: 'https://shop.example.com',
            headers: [{ key: 'X-Env', value: 'prod' }],
            queryParameters: [],
            assertions: [],
            basicAuth: { username: 'shop', password: '*****' },
          },
          useGlobalAlertSettings: true,
          alertSettings: DEFAULT_ALERT_SETTINGS,
          environmentVariables: [{ key: 'TOKEN', value: '*****', locked: false, secret: true }],
          setupSnippetId: null,
          localSetupScript: null,
          tearDownSnippetId: null,
          localTearDownScript: 'console.log(1)',
        }),
      },
      'PUT /v1/check-groups/3': { status: 200, body: group() },
    });
    renderAt('/check-groups/3', '3');
    fireEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit the group' });
    // The account's settings apply: the group's own controls are hidden until unticked.
    expect(within(form).queryByLabelText('Escalation')).toBeNull();
    fireEvent.click(within(form).getByLabelText("Use the account's alert settings"));
    fireEvent.change(within(form).getByLabelText('Escalation'), { target: { value: 'TIME_BASED' } });
    fireEvent.change(within(form).getByLabelText('Minutes failing before an alert'), {
      target: { value: '15' },
    });
    fireEvent.change(within(form).getByLabelText('Reminders while a check keeps failing'), {
      target: { value: '100000' },
    });
    type('Minutes between reminders', '30');
    // A header added to the one there, an assertion.
    fireEvent.click(within(form).getByRole('button', { name: 'Add a row to headers' }));
    type('Name 2', 'Accept');
    type('Value 2', 'application/json');
    fireEvent.click(within(form).getByRole('button', { name: 'Add an assertion' }));
    // The setup script is a snippet; the teardown script of the group's own stays.
    const setup = within(form).getByRole('group', { name: 'Setup script' });
    fireEvent.change(within(setup).getByLabelText('Script'), { target: { value: 'snippet' } });
    const snippet = (await within(setup).findByRole('option', { name: 'Login' })).closest('select')!;
    fireEvent.change(snippet, { target: { value: '7' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.requests('PUT /v1/check-groups/3')).toHaveLength(1));
    const body = api.requests('PUT /v1/check-groups/3')[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      useGlobalAlertSettings: false,
      alertSettings: {
        escalationType: 'TIME_BASED',
        timeBasedEscalation: { minutesFailingThreshold: 15 },
        reminders: { amount: 100000, interval: 30 },
      },
      apiCheckDefaults: {
        url: 'https://shop.example.com',
        headers: [
          { key: 'X-Env', value: 'prod' },
          { key: 'Accept', value: 'application/json' },
        ],
        queryParameters: [],
        assertions: [{ source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200' }],
        // The masks go back as they came: the service keeps the stored secrets for them.
        basicAuth: { username: 'shop', password: '*****' },
      },
      setupSnippetId: 7,
      localSetupScript: null,
      tearDownSnippetId: null,
      localTearDownScript: 'console.log(1)',
      environmentVariables: [{ key: 'TOKEN', value: '*****', locked: false, secret: true }],
    });
  });

  it('shows the service’s 400 about the group’s alert settings next to their control', async () => {
    api.route({
      'PUT /v1/check-groups/3': validationError(
        'body.alertSettings.reminders.interval must be <= 1440',
        'alertSettings.reminders.interval',
      ),
    });
    renderAt('/check-groups/3', '3');
    fireEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit the group' });
    fireEvent.click(within(form).getByLabelText("Use the account's alert settings"));
    fireEvent.change(within(form).getByLabelText('Reminders while a check keeps failing'), {
      target: { value: '2' },
    });
    type('Minutes between reminders', '5000');
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    const input = await within(form).findByLabelText('Minutes between reminders');
    await waitFor(() => expect(input.getAttribute('aria-invalid')).toBe('true'));
    expect(input.closest('.field')?.textContent).toContain('must be <= 1440');
  });

  it('says when the account has no private location', async () => {
    api.route({ 'GET /v1/private-locations': { status: 200, body: [] } });
    renderAt('/check-groups');
    fireEvent.click(await screen.findByRole('button', { name: 'New check group' }));
    await screen.findByText(/No private location yet/);
  });
});

describe('a group’s page', () => {
  it('shows its settings and its checks with their status', async () => {
    renderAt('/check-groups/3', '3');
    await screen.findByRole('heading', { name: 'Shop' });
    expect(screen.getByText('https://shop.example.com')).toBeTruthy();
    const table = await screen.findByRole('table', { name: 'Checks of Shop' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getByRole('link').textContent)).toEqual(['Cart API', 'Checkout page']);
    expect(screen.getByRole('heading', { name: 'Checks (2)' })).toBeTruthy();
  });

  it('deletes it after asking, then goes back to the list', async () => {
    api.route({ 'DELETE /v1/check-groups/3': { status: 204 } });
    renderAt('/check-groups/3', '3');
    fireEvent.click(await screen.findByRole('button', { name: 'Delete group' }));
    const confirm = screen.getAllByRole('button', { name: 'Delete group' });
    fireEvent.click(confirm[confirm.length - 1]!);
    await waitFor(() => expect(api.requests('DELETE /v1/check-groups/3')).toHaveLength(1));
    await waitFor(() => expect(window.location.pathname).toBe('/check-groups'));
  });
});
