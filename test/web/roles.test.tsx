import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import type { VNode } from 'preact';
import { describe, expect, it, vi } from 'vitest';
import AlertChannelsPage from '../../app/src/alerting/channels/page.js';
import CheckGroupsPage from '../../app/src/check-groups/page.js';
import CheckDetail from '../../app/src/checks/detail/page.js';
import CheckFormPage from '../../app/src/checks/form/page.js';
import ChecksList from '../../app/src/checks/list/page.js';
import IncidentsPage from '../../app/src/incidents/page.js';
import PrivateLocationsPage from '../../app/src/locations/page.js';
import { endOfLocalDay } from '../../app/src/settings/api-keys.js';
import SettingsPage from '../../app/src/settings/page.js';
import StatusPagesPage from '../../app/src/status-pages/page.js';
import { can, ROLES, type Role, rolesUpTo } from '../../app/src/ui/permissions.js';
import { renderRoute, serveApi } from './dom.js';
import { choose, type } from './forms.js';

// The check page draws its charts with uPlot, which reads the device pixel ratio through matchMedia when it
// loads; jsdom has no matchMedia. Set before the imports (vi.hoisted runs first).
vi.hoisted(() => {
  window.matchMedia ??= (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addListener: () => undefined,
      removeListener: () => undefined,
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
      dispatchEvent: () => false,
    }) as MediaQueryList;
});

// What each role sees: the app's pages rendered for a session of each role against a loopback API. A
// READ_ONLY session sees no control that changes anything, and a new or edit page explains why instead of
// showing its form; READ_WRITE sees them; the API keys and the private locations' keys are ADMIN's.

const check = {
  id: 'chk-a',
  name: 'Alpha API',
  checkType: 'API',
  activated: true,
  muted: false,
  groupId: null,
  tags: [],
  frequency: 5,
  frequencyOffset: null,
  locations: ['us-east-1'],
  privateLocations: [],
  runParallel: false,
  updated_at: null,
};

const group = {
  id: 3,
  name: 'Shop',
  activated: true,
  muted: false,
  tags: [],
  locations: ['us-east-1'],
  privateLocations: [],
  concurrency: 3,
  apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: null },
  environmentVariables: [],
  alertChannelSubscriptions: [],
  alertSettings: null,
  useGlobalAlertSettings: true,
  doubleCheck: true,
  runtimeId: null,
  localSetupScript: null,
  localTearDownScript: null,
  setupSnippetId: null,
  tearDownSnippetId: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: null,
};

const channel = {
  id: 7,
  type: 'EMAIL',
  config: { address: 'ops@example.com' },
  subscriptions: [{ checkId: 'chk-a', activated: true }],
  autoSubscribe: false,
  sendRecovery: true,
  sendFailure: true,
  sendDegraded: false,
  sslExpiry: false,
  sslExpiryThreshold: 30,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: null,
};

const incident = {
  id: 'inc-1',
  name: 'Checkout errors',
  impact: 'MAJOR',
  services: [{ id: 'svc-1', name: 'Website' }],
  startedAt: '2026-03-01T10:00:00.000Z',
  stoppedAt: null,
  incidentUpdates: [
    {
      id: 'upd-1',
      status: 'INVESTIGATING',
      description: 'Looking into it.',
      notifySubscribers: false,
      publicIncidentUpdateDate: '2026-03-01T10:00:00.000Z',
    },
  ],
};

const statusPage = {
  id: 'sp-1',
  name: 'Acme status',
  url: 'acme',
  description: null,
  isPrivate: false,
  keys: [],
  customDomain: null,
  customDomainStatus: null,
  customDomainVerification: null,
  customDomainProblem: null,
  cards: [{ id: 'card-1', name: 'Services', services: [{ id: 'svc-1', name: 'Website' }] }],
  incidents: [],
};

const location = {
  id: 'loc-1',
  name: 'Berlin office',
  slugName: 'berlin-office',
  icon: 'location',
  agentCount: 0,
  lastSeen: null,
  keys: [{ id: 'key-1', maskedKey: 'pl_abcd…', created_at: '2026-01-05T09:00:00.000Z' }],
  created_at: '2026-01-05T09:00:00.000Z',
};

const apiKey = (fields: Record<string, unknown>) => ({
  id: 'k-1',
  name: 'CI deploy',
  keyPrefix: 'op_ci01',
  role: 'READ_WRITE',
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: null,
  lastUsedAt: null,
  ...fields,
});

const api = serveApi(() => ({
  'GET /v1/checks': { status: 200, body: [check] },
  'GET /v1/checks/chk-a': { status: 200, body: check },
  'GET /v1/check-statuses': { status: 200, body: [] },
  'GET /v1/check-groups': { status: 200, body: [group] },
  'GET /v1/check-groups/3': { status: 200, body: group },
  'GET /v1/alert-channels': { status: 200, body: [channel] },
  'GET /v1/alert-channels/7': { status: 200, body: channel },
  'GET /v1/alert-notifications': { status: 200, body: [] },
  'GET /v1/incidents': { status: 200, body: [incident] },
  'GET /v1/incidents/inc-1': { status: 200, body: incident },
  'GET /v1/status-pages': { status: 200, body: { entries: [statusPage], nextId: null } },
  'GET /v1/status-pages/services': {
    status: 200,
    body: { entries: [{ id: 'svc-1', name: 'Website', checks: [] }], nextId: null },
  },
  'GET /v1/variables': {
    status: 200,
    body: [{ key: 'BASE_URL', value: 'https://shop.example.com', locked: false, secret: false }],
  },
  'GET /v1/alert-settings': {
    status: 200,
    body: {
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 1 },
      timeBasedEscalation: { minutesFailingThreshold: 5 },
      reminders: { amount: 0, interval: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    },
  },
  'GET /v1/private-locations': { status: 200, body: [location] },
  'GET /v1/private-locations/loc-1': { status: 200, body: location },
  'GET /v1/agents': { status: 200, body: [] },
  'GET /v1/api-keys': {
    status: 200,
    body: [
      apiKey({
        id: 'k-0',
        name: null,
        keyPrefix: 'op_own0',
        role: 'OWNER',
        lastUsedAt: '2026-01-02T10:00:00.000Z',
      }),
      apiKey({ expiresAt: '2026-01-31T22:59:59.999Z' }),
      apiKey({
        id: 'k-2',
        name: 'Grafana',
        keyPrefix: 'op_graf',
        role: 'READ_ONLY',
        expiresAt: '2099-12-31T22:59:59.999Z',
      }),
    ],
  },
}));

/** Whether a button named `name` is shown (spaces in the name match any or none: jsdom joins hidden text). */
const hasButton = (name: string) =>
  screen.queryByRole('button', {
    name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s*')}$`),
  }) !== null;
const ROLE_NOTE = /^Your role \((READ_ONLY|READ_WRITE|ADMIN)\) cannot change this; ask an (admin|owner)\./;

// The expectations, written out rather than asked of the helper under test.
const mayWrite = (role: Role) => ['READ_WRITE', 'ADMIN', 'OWNER'].includes(role);
const mayAdmin = (role: Role) => ['ADMIN', 'OWNER'].includes(role);

/** The notice a page shows instead of its form, or null. */
function roleNote(): HTMLElement | null {
  return screen.queryByRole('note', { name: 'Not allowed for your role' });
}

describe('the helper', () => {
  it('ranks the roles as the service does: each holds its own permission and the weaker ones', () => {
    const held = (role: Role) =>
      (['read', 'write', 'admin', 'owner'] as const).filter((p) => can({ role }, p));
    expect(ROLES.map(held)).toEqual([
      ['read'],
      ['read', 'write'],
      ['read', 'write', 'admin'],
      ['read', 'write', 'admin', 'owner'],
    ]);
    expect(can('ADMIN', 'admin')).toBe(true);
    // No session, or a role the app does not know, holds nothing.
    expect(can(null, 'read')).toBe(false);
    expect(can({ role: 'SUPERUSER' }, 'read')).toBe(false);
    expect(rolesUpTo('READ_WRITE')).toEqual(['READ_ONLY', 'READ_WRITE']);
  });

  it('sends an expiry date as the end of that local day', () => {
    expect(endOfLocalDay('2030-06-15')).toBe(new Date(2030, 5, 15, 23, 59, 59, 999).toISOString());
    expect(endOfLocalDay('')).toBeUndefined();
    expect(endOfLocalDay('15/06/2030')).toBeUndefined();
  });
});

/**
 * A page, how to know it has loaded, and the controls (buttons, or a summary/link/form by text) only a role
 * holding the permission may see.
 */
type PageCase = {
  name: string;
  path: string;
  page: VNode;
  ready: () => Promise<unknown>;
  controls: string[];
  /** Forms (by their accessible name) that change something. */
  forms?: string[];
  /** Links (by name) to an edit or new page. */
  links?: string[];
};

const WRITE_PAGES: PageCase[] = [
  {
    name: 'the checks page',
    path: '/checks',
    page: <ChecksList />,
    ready: () => screen.findByRole('link', { name: 'Alpha API' }),
    controls: [],
    links: ['New check'],
  },
  {
    name: 'a check’s page',
    path: '/checks/chk-a',
    page: <CheckDetail checkId="chk-a" />,
    ready: () => screen.findByRole('heading', { level: 1, name: 'Alpha API' }),
    controls: ['Run now', 'Pause', 'Mute', 'Delete'],
    links: ['Edit'],
  },
  {
    name: 'the check groups',
    path: '/check-groups',
    page: <CheckGroupsPage />,
    ready: () => screen.findByRole('link', { name: 'Shop' }),
    controls: ['New check group'],
  },
  {
    name: 'a check group',
    path: '/check-groups/3',
    page: <CheckGroupsPage groupId="3" />,
    ready: () => screen.findByRole('heading', { level: 1, name: 'Shop' }),
    controls: ['Edit', 'Delete group'],
  },
  {
    name: 'the alert channels',
    path: '/alert-channels',
    page: <AlertChannelsPage />,
    ready: () => screen.findByRole('table'),
    controls: ['New alert channel'],
  },
  {
    name: 'an alert channel',
    path: '/alert-channels/7',
    page: <AlertChannelsPage channelId="7" />,
    ready: () => screen.findByRole('heading', { level: 1, name: 'ops@example.com' }),
    controls: ['Send test notification', 'Edit', 'Delete channel', 'Change subscriptions'],
  },
  {
    name: 'the incidents',
    path: '/incidents',
    page: <IncidentsPage />,
    ready: () => screen.findByRole('link', { name: 'Checkout errors' }),
    controls: ['New incident'],
  },
  {
    name: 'an incident',
    path: '/incidents/inc-1',
    page: <IncidentsPage incidentId="inc-1" />,
    ready: () => screen.findByRole('heading', { level: 1, name: 'Checkout errors' }),
    controls: ['Edit', 'Delete incident', 'Post update'],
    forms: ['Post an update'],
  },
  {
    name: 'the status pages',
    path: '/status-pages',
    page: <StatusPagesPage />,
    ready: () =>
      Promise.all([
        screen.findByRole('table', { name: 'Status-page services' }),
        screen.findByRole('heading', { level: 3, name: 'Acme status' }),
      ]),
    controls: [
      'New status page',
      'Edit Acme status',
      'Delete Acme status',
      'Link checks of Website',
      'Rename Website',
      'Delete Website',
      'Add service',
    ],
    forms: ['Add a service'],
  },
  {
    name: 'the variables',
    path: '/settings/variables',
    page: <SettingsPage section="variables" />,
    ready: () => screen.findByRole('table', { name: 'Environment variables' }),
    controls: ['New variable', 'Edit BASE_URL', 'Delete BASE_URL'],
  },
];

describe.each(WRITE_PAGES)('$name', (c) => {
  it.each(ROLES)('for %s: changing controls only from READ_WRITE up', async (role) => {
    renderRoute(c.path, c.page, role);
    await c.ready();
    // Let the other loads of the page land (a control may depend on them).
    await waitFor(() => expect(screen.queryAllByText(/^Loading/).length).toBe(0));
    const expected = mayWrite(role);
    for (const name of c.controls)
      expect({ name, shown: hasButton(name) }).toEqual({ name, shown: expected });
    for (const name of c.forms ?? []) {
      expect({ name, shown: screen.queryByRole('form', { name }) !== null }).toEqual({
        name,
        shown: expected,
      });
    }
    for (const name of c.links ?? []) {
      const shown = screen.queryAllByText(name, { selector: 'a, summary' }).length > 0;
      expect({ name, shown }).toEqual({ name, shown: expected });
    }
  });
});

describe('new and edit pages opened by their address', () => {
  it.each([
    ['/checks/new?type=API', <CheckFormPage key="new" />],
    ['/checks/new', <CheckFormPage key="picker" />],
    ['/checks/chk-a/edit', <CheckFormPage key="edit" checkId="chk-a" />],
  ])(
    '%s: READ_ONLY gets the role’s notice instead of the form, and nothing of the form is loaded',
    async (path, page) => {
      renderRoute(path, page, 'READ_ONLY');
      const note = await screen.findByRole('note', { name: 'Not allowed for your role' });
      expect(note.textContent).toMatch(ROLE_NOTE);
      expect(note.textContent).toContain('Your role (READ_ONLY) cannot change this; ask an admin.');
      expect(note.textContent).toContain('READ_WRITE or above');
      expect(screen.queryByRole('form')).toBeNull();
      expect(screen.queryAllByRole('textbox')).toEqual([]);
      expect(screen.getByRole('heading', { level: 1 }).textContent).toMatch(/^(New|Edit) check$/);
      // Nothing was asked of the API: the notice needs nothing.
      expect(api.received.map((r) => r.path)).toEqual([]);
    },
  );

  it('READ_WRITE gets the form', async () => {
    renderRoute('/checks/new', <CheckFormPage />, 'READ_WRITE');
    await screen.findByRole('heading', { level: 1, name: 'New check' });
    expect(roleNote()).toBeNull();
    expect(screen.getAllByRole('link').some((a) => a.getAttribute('href') === '/checks/new?type=API')).toBe(
      true,
    );
  });
});

describe('the checks page without checks', () => {
  it.each(ROLES)('for %s: links to new checks only for a role that may create them', async (role) => {
    api.route({ 'GET /v1/checks': { status: 200, body: [] } });
    renderRoute('/checks', <ChecksList />, role);
    await screen.findByRole('heading', { name: 'No checks yet' });
    const links = screen
      .queryAllByRole('link')
      .filter((a) => a.getAttribute('href')?.startsWith('/checks/new'));
    expect(links.length > 0).toBe(mayWrite(role));
  });
});

describe('the alert settings', () => {
  it('READ_ONLY sees them disabled, without Save, under the role’s notice', async () => {
    renderRoute('/settings/alert-settings', <SettingsPage section="alert-settings" />, 'READ_ONLY');
    await screen.findByRole('heading', { name: 'Account alert settings' });
    expect(roleNote()?.textContent).toMatch(ROLE_NOTE);
    expect(hasButton('Save alert settings')).toBe(false);
    const group = screen.getByRole('group', { name: "The account's alert settings, as they are" });
    expect((group as HTMLFieldSetElement).disabled).toBe(true);
    expect(screen.queryByRole('form')).toBeNull();
  });

  it('READ_WRITE gets the form', async () => {
    renderRoute('/settings/alert-settings', <SettingsPage section="alert-settings" />, 'READ_WRITE');
    await screen.findByRole('button', { name: 'Save alert settings' });
    expect(roleNote()).toBeNull();
  });
});

describe('what is ADMIN’s', () => {
  it.each(ROLES)('for %s: the API keys tab, and the private locations’ controls', async (role) => {
    const admin = mayAdmin(role);
    renderRoute('/settings/variables', <SettingsPage section="variables" />, role);
    const tabs = within(await screen.findByRole('navigation', { name: 'Settings' }));
    expect(tabs.queryByRole('link', { name: 'API keys' }) !== null).toBe(admin);
    expect(tabs.getByRole('link', { name: 'Variables' })).toBeTruthy();
  });

  it.each(ROLES)('for %s: a private location’s page', async (role) => {
    const admin = mayAdmin(role);
    renderRoute('/private-locations/loc-1', <PrivateLocationsPage locationId="loc-1" />, role);
    await screen.findByRole('heading', { level: 1, name: 'Berlin office' });
    expect(hasButton('Delete location')).toBe(admin);
    expect(hasButton('Add key')).toBe(admin);
    expect(screen.queryByRole('table', { name: 'Keys of Berlin office' }) !== null).toBe(admin);
    expect(hasButton('Save')).toBe(admin);
  });

  it.each(ROLES)('for %s: the private locations', async (role) => {
    renderRoute('/private-locations', <PrivateLocationsPage />, role);
    await screen.findByRole('link', { name: 'Berlin office' });
    expect(hasButton('New private location')).toBe(mayAdmin(role));
  });

  it('/settings/api-keys opened by a READ_WRITE session: the notice, and the keys are not asked for', async () => {
    renderRoute('/settings/api-keys', <SettingsPage section="api-keys" />, 'READ_WRITE');
    const note = await screen.findByRole('note', { name: 'Not allowed for your role' });
    expect(note.textContent).toContain('Your role (READ_WRITE) cannot change this; ask an admin.');
    expect(note.textContent).toContain('ADMIN or above');
    expect(screen.getByRole('heading', { level: 1, name: 'API keys' })).toBeTruthy();
    expect(api.requests('GET /v1/api-keys')).toEqual([]);
  });
});

describe('the API keys page', () => {
  it('lists each key’s role, expiry (expired when past) and last use; a stronger key has no Revoke', async () => {
    renderRoute('/settings/api-keys', <SettingsPage section="api-keys" />, 'ADMIN');
    const table = await screen.findByRole('table', { name: 'API keys' });
    const headers = within(table)
      .getAllByRole('columnheader')
      .map((h) => h.textContent);
    expect(headers).toEqual(['Name', 'Key', 'Role', 'Expires', 'Created', 'Last used', 'Actions']);
    const rows = within(table).getAllByRole('row').slice(1);
    const cell = (row: HTMLElement, label: string) =>
      row.querySelector(`td[data-label="${label}"]`)!.textContent;
    expect(rows.map((r) => cell(r, 'Role'))).toEqual(['OWNER', 'READ_WRITE', 'READ_ONLY']);
    expect(cell(rows[0]!, 'Expires')).toBe('Never');
    expect(cell(rows[1]!, 'Expires')).toMatch(/^Expired /);
    expect(cell(rows[2]!, 'Expires')).not.toContain('Expired');
    expect(cell(rows[0]!, 'Last used')).not.toBe('Never');
    expect(cell(rows[1]!, 'Last used')).toBe('Never');
    // The OWNER key is stronger than this ADMIN session: the service would refuse its revocation.
    expect(within(rows[0]!).queryByRole('button')).toBeNull();
    expect(rows[0]!.textContent).toContain('Stronger than your role');
    expect(within(rows[1]!).getByRole('button', { name: 'Revoke CI deploy' })).toBeTruthy();
  });

  it('creates a key with a role at most the session’s (the session’s by default) and an expiry date', async () => {
    api.route({
      'POST /v1/api-keys': {
        status: 201,
        body: {
          ...apiKey({ id: 'k-9', name: 'Grafana 2', role: 'READ_ONLY' }),
          rawKey: `op_${'a'.repeat(64)}`,
        },
      },
    });
    renderRoute('/settings/api-keys', <SettingsPage section="api-keys" />, 'ADMIN');
    fireEvent.click(await screen.findByRole('button', { name: 'New API key' }));
    const form = within(screen.getByRole('form', { name: 'New API key' }));
    const select = form.getByLabelText('Role') as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toEqual(['READ_ONLY', 'READ_WRITE', 'ADMIN']);
    expect(select.value).toBe('ADMIN');
    type('Name', 'Grafana 2');
    choose('Role', 'READ_ONLY');
    const expiry = form.getByLabelText('Expires on (optional)') as HTMLInputElement;
    expect(expiry.type).toBe('date');
    fireEvent.input(expiry, { target: { value: '2030-06-15' } });
    fireEvent.click(form.getByRole('button', { name: 'Create API key' }));
    await screen.findByRole('textbox', { name: 'API key Grafana 2' });
    expect(api.requests('POST /v1/api-keys').map((r) => r.body)).toEqual([
      {
        name: 'Grafana 2',
        role: 'READ_ONLY',
        expiresAt: new Date(2030, 5, 15, 23, 59, 59, 999).toISOString(),
      },
    ]);
  });

  it('without an expiry date sends none; an OWNER may make an OWNER key', async () => {
    api.route({
      'POST /v1/api-keys': {
        status: 201,
        body: { ...apiKey({ id: 'k-9', name: 'Terraform', role: 'OWNER' }), rawKey: `op_${'b'.repeat(64)}` },
      },
    });
    renderRoute('/settings/api-keys', <SettingsPage section="api-keys" />, 'OWNER');
    fireEvent.click(await screen.findByRole('button', { name: 'New API key' }));
    const form = within(screen.getByRole('form', { name: 'New API key' }));
    expect([...(form.getByLabelText('Role') as HTMLSelectElement).options].map((o) => o.value)).toEqual([
      ...ROLES,
    ]);
    type('Name', 'Terraform');
    fireEvent.click(form.getByRole('button', { name: 'Create API key' }));
    await screen.findByRole('textbox', { name: 'API key Terraform' });
    expect(api.requests('POST /v1/api-keys').map((r) => r.body)).toEqual([
      { name: 'Terraform', role: 'OWNER' },
    ]);
  });
});
