import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import PrivateLocationsPage from '../../../app/src/locations/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { type, fieldValue } from '../forms.js';

// The private-location pages in a real DOM against a loopback API: the list with the agents, creating a
// location (the slug follows the name; its key shown once with the agent command; the 400 at its field),
// and one location's page: its keys (add, at most two, delete), the agents serving it, renaming it.

function key(fields: Record<string, unknown> = {}) {
  return { id: 'key-1', maskedKey: 'pl_…a1b2', created_at: '2026-01-05T09:00:00.000Z', ...fields };
}

function location(fields: Record<string, unknown> = {}) {
  return {
    id: 'loc-1',
    name: 'Berlin office',
    slugName: 'berlin-office',
    icon: 'location',
    agentCount: 1,
    lastSeen: '2026-01-05T09:30:00.000Z',
    keys: [key()],
    created_at: '2026-01-05T09:00:00.000Z',
    ...fields,
  };
}

function agent(fields: Record<string, unknown> = {}) {
  return {
    id: 'agent-0123456789abcdef',
    scope: 'PRIVATE_LOCATION',
    privateLocation: { id: 'loc-1', name: 'Berlin office' },
    version: '1.4.0',
    connected: true,
    lastSeenAt: '2026-01-05T09:30:00.000Z',
    firstSeenAt: '2026-01-05T09:00:00.000Z',
    freeSlots: { uptime: 8, main: 2 },
    runningJobs: [],
    locations: ['berlin-office'],
    checkTypes: ['API'],
    runtimes: [],
    errorReports: { count: 0 },
    ...fields,
  };
}

const api = serveApi(() => ({
  'GET /v1/private-locations': { status: 200, body: [location()] },
  'GET /v1/private-locations/loc-1': { status: 200, body: location() },
  'GET /v1/agents': {
    status: 200,
    body: [
      agent(),
      agent({ id: 'agent-fedcba9876543210', scope: 'ACCOUNT', privateLocation: null, locations: null }),
    ],
  },
}));

function renderAt(path: string, locationId?: string) {
  return renderRoute(path, <PrivateLocationsPage {...(locationId ? { locationId } : {})} />);
}

describe('the list', () => {
  it('shows each location with its slug, agents and keys, and every agent of the account', async () => {
    renderAt('/private-locations');
    const table = await screen.findByRole('table', { name: 'Private locations' });
    const row = within(table).getAllByRole('row')[1]!;
    expect(within(row).getByRole('link', { name: 'Berlin office' }).getAttribute('href')).toBe(
      '/private-locations/loc-1',
    );
    expect(row.textContent).toContain('berlin-office');
    const agents = await screen.findByRole('table', { name: 'Agents of the account' });
    const rows = within(agents).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.textContent).toContain('Private location Berlin office');
    expect(rows[1]!.textContent).toContain('Every data-center location');
  });

  it('says how to start when there is no location', async () => {
    api.route({
      'GET /v1/private-locations': { status: 200, body: [] },
      'GET /v1/agents': { status: 200, body: [] },
    });
    renderAt('/private-locations');
    await screen.findByText(/No private location yet/);
    await screen.findByText(/No agent has claimed jobs yet/);
  });
});

describe('creating a location', () => {
  it('suggests the slug from the name, sends name, slug and icon, and shows its key once', async () => {
    api.route({
      'POST /v1/private-locations': {
        status: 201,
        body: location({ id: 'loc-2', name: 'Hamburg DC', keys: [key({ rawKey: 'pl_raw_secret' })] }),
      },
    });
    renderAt('/private-locations');
    fireEvent.click(await screen.findByRole('button', { name: 'New private location' }));
    type(/^Name/, 'Hamburg DC (2)');
    expect(fieldValue(/^Slug/)).toBe('hamburg-dc-2');
    type(/^Icon/, ' server ');
    fireEvent.click(screen.getByRole('button', { name: 'Create private location' }));
    await waitFor(() => expect(api.requests('POST /v1/private-locations')).toHaveLength(1));
    expect(api.requests('POST /v1/private-locations')[0]?.body).toEqual({
      name: 'Hamburg DC (2)',
      slugName: 'hamburg-dc-2',
      icon: 'server',
    });
    await screen.findByLabelText('Key of Hamburg DC');
    expect(fieldValue('Key of Hamburg DC')).toBe('pl_raw_secret');
    // Two commands: the agent image (docker run) and Node, on health port 8082 (not up's own 8081).
    const commands = screen.getAllByText(/API_KEY=pl_raw_secret/).map((c) => c.textContent ?? '');
    expect(commands).toHaveLength(2);
    expect(commands[0]).toMatch(/^docker run .*--cap-drop ALL/s);
    expect(commands[1]).toContain('AGENT_HEALTH_PORT=8082');
    // The test page is on localhost: another machine cannot reach that, and the page says so.
    expect(screen.getByText(/another machine cannot reach it/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Hamburg DC' }).getAttribute('href')).toBe(
      '/private-locations/loc-2',
    );
    expect(screen.queryByRole('form', { name: 'New private location' })).toBeNull();
  });

  it('keeps a slug typed by hand and leaves an empty icon out', async () => {
    api.route({ 'POST /v1/private-locations': { status: 201, body: location({ id: 'loc-3', keys: [] }) } });
    renderAt('/private-locations');
    fireEvent.click(await screen.findByRole('button', { name: 'New private location' }));
    type(/^Slug/, 'dc-hh');
    type(/^Name/, 'Hamburg');
    type(/^Icon/, '');
    expect(fieldValue(/^Slug/)).toBe('dc-hh');
    fireEvent.click(screen.getByRole('button', { name: 'Create private location' }));
    await waitFor(() => expect(api.requests('POST /v1/private-locations')).toHaveLength(1));
    expect(api.requests('POST /v1/private-locations')[0]?.body).toEqual({
      name: 'Hamburg',
      slugName: 'dc-hh',
    });
  });

  it('shows the service’s 400 next to the field it names', async () => {
    api.route({
      'POST /v1/private-locations': validationError('slugName is already used', 'slugName'),
    });
    renderAt('/private-locations');
    fireEvent.click(await screen.findByRole('button', { name: 'New private location' }));
    type(/^Name/, 'Berlin office');
    fireEvent.click(screen.getByRole('button', { name: 'Create private location' }));
    await waitFor(() => expect(screen.getByLabelText(/^Slug/).getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('slugName is already used')).toBeTruthy();
  });
});

describe('a location’s page', () => {
  it('shows its figures, keys and the agents serving it', async () => {
    renderAt('/private-locations/loc-1', 'loc-1');
    await screen.findByRole('heading', { name: 'Berlin office' });
    const keys = screen.getByRole('table', { name: 'Keys of Berlin office' });
    expect(keys.textContent).toContain('pl_…a1b2');
    const served = await screen.findByRole('table', { name: 'Agents serving Berlin office' });
    expect(within(served).getAllByRole('row')).toHaveLength(2);
  });

  it('adds a key, shows it once with the agent command, and reads the location again', async () => {
    api.route({
      'POST /v1/private-locations/loc-1/keys': {
        status: 201,
        body: key({ id: 'key-2', rawKey: 'pl_new_raw' }),
      },
    });
    renderAt('/private-locations/loc-1', 'loc-1');
    fireEvent.click(await screen.findByRole('button', { name: 'Add key' }));
    await waitFor(() => expect(api.requests('POST /v1/private-locations/loc-1/keys')).toHaveLength(1));
    await screen.findByLabelText('New key of Berlin office');
    expect(fieldValue('New key of Berlin office')).toBe('pl_new_raw');
    expect(screen.getAllByText(/API_KEY=pl_new_raw/)).toHaveLength(2);
    await waitFor(() => expect(api.requests('GET /v1/private-locations/loc-1').length).toBeGreaterThan(1));
  });

  it('offers no new key when the location holds two, and says when it holds none', async () => {
    api.route({
      'GET /v1/private-locations/loc-1': {
        status: 200,
        body: location({ keys: [key(), key({ id: 'key-2', maskedKey: 'pl_…c3d4' })] }),
      },
    });
    const { unmount } = renderAt('/private-locations/loc-1', 'loc-1');
    const add = (await screen.findByRole('button', { name: 'Add key' })) as HTMLButtonElement;
    expect(add.disabled).toBe(true);
    unmount();
    api.route({ 'GET /v1/private-locations/loc-1': { status: 200, body: location({ keys: [] }) } });
    renderAt('/private-locations/loc-1', 'loc-1');
    await screen.findByText(/This location has no key: no agent can serve it/);
  });

  it('deletes a key after asking', async () => {
    api.route({ 'DELETE /v1/private-locations/loc-1/keys/key-1': { status: 204 } });
    renderAt('/private-locations/loc-1', 'loc-1');
    const keys = await screen.findByRole('table', { name: 'Keys of Berlin office' });
    fireEvent.click(within(keys).getByRole('button', { name: /^Delete key/ }));
    fireEvent.click(await within(keys).findByRole('button', { name: 'Delete key' }));
    await waitFor(() =>
      expect(api.requests('DELETE /v1/private-locations/loc-1/keys/key-1')).toHaveLength(1),
    );
  });

  it('renames it, sending name and icon', async () => {
    api.route({ 'PUT /v1/private-locations/loc-1': { status: 200, body: location({ name: 'Berlin HQ' }) } });
    renderAt('/private-locations/loc-1', 'loc-1');
    const form = await screen.findByRole('form', { name: 'Name and icon' });
    fireEvent.input(within(form).getByLabelText(/^Name/), { target: { value: ' Berlin HQ ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.requests('PUT /v1/private-locations/loc-1')).toHaveLength(1));
    expect(api.requests('PUT /v1/private-locations/loc-1')[0]?.body).toEqual({
      name: 'Berlin HQ',
      icon: 'location',
    });
    await within(form).findByText('Saved.');
  });
});
