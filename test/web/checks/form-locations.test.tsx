import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import {
  defaultLocations,
  offeredRegions,
  servedRegions,
} from '../../../app/src/checks/form/model/locations.js';
import CheckFormPage from '../../../app/src/checks/form/page.js';
import type { Agent, PrivateLocation } from '../../../app/src/api/schemas.js';
import { renderRoute, serveApi } from '../dom.js';
import { type } from '../forms.js';

// Where the check form says a check runs: the locations agents serve (this machine's `local` first for a new
// check), data-center names only when an agent with an account key serves them, and a location the check has
// that nothing serves flagged as such. Against a loopback API in a real DOM.

const LOCAL: PrivateLocation = {
  id: 'pl-1',
  name: 'laptop',
  slugName: 'local',
  icon: 'desktop',
  keys: [],
  agentCount: 1,
  lastSeen: '2026-11-28T09:00:00.000Z',
  embedded: true,
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: null,
};
const OFFICE: PrivateLocation = {
  ...LOCAL,
  id: 'pl-2',
  name: 'Office',
  slugName: 'office-lan',
  agentCount: 0,
  embedded: false,
};

function agent(over: Partial<Agent>): Agent {
  return {
    id: 'a-1',
    version: '1.0.0',
    scope: 'ACCOUNT',
    privateLocation: null,
    locations: null,
    hostName: 'probe',
    firstSeenAt: '2026-11-28T09:00:00.000Z',
    lastSeenAt: '2026-11-28T09:00:00.000Z',
    stoppedAt: null,
    connected: true,
    freeSlots: { uptime: 10, main: 10 },
    checkTypes: ['TCP'],
    runtimes: [],
    runningJobs: [],
    errorReports: { count: 0, lastReportedAt: null },
    ...over,
  };
}

const api = serveApi(() => ({
  'GET /v1/check-groups': { status: 200, body: [] },
  'GET /v1/private-locations': { status: 200, body: [LOCAL, OFFICE] },
  'GET /v1/agents': { status: 200, body: [agent({ locations: ['eu-west-1'] })] },
  'GET /v1/runtimes': { status: 200, body: [] },
  'GET /v1/alert-channels': { status: 200, body: [] },
  'GET /v1/snippets': { status: 200, body: [] },
  'GET /v1/status-pages/services': { status: 200, body: { entries: [], length: 0 } },
}));

describe('locations in the check form', () => {
  it('a new check runs on this machine (local); only served data-center locations are offered', async () => {
    api.route({ 'POST /v1/checks/tcp': { status: 201, body: { id: 'new-1', checkType: 'TCP' } } });
    renderRoute('/checks/new?type=TCP', <CheckFormPage />);
    await screen.findByRole('button', { name: 'Create check' });
    const local = screen.getByLabelText('laptop (local): 1 agent connected') as HTMLInputElement;
    expect(local.checked).toBe(true);
    expect(
      (screen.getByLabelText('Office (office-lan): no agent connected') as HTMLInputElement).checked,
    ).toBe(false);
    const regions = screen.getByRole('group', { name: 'Data-center locations' });
    expect(
      within(regions)
        .getAllByRole('checkbox')
        .map((c) => c.parentElement?.textContent?.trim()),
    ).toEqual(['eu-west-1 (Ireland): 1 agent connected']);
    expect(screen.queryByText(/us-east-1/)).toBeNull();
    type(/^Name/, 'DB');
    type(/^Host/, 'db.internal');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(api.requests('POST /v1/checks/tcp')).toHaveLength(1));
    const body = api.requests('POST /v1/checks/tcp')[0]?.body as Record<string, unknown>;
    expect(body.privateLocations).toEqual(['local']);
    expect(body.locations).toEqual([]);
  });

  it('a stored check’s location that nothing serves stays listed, flagged', async () => {
    api.route({
      'GET /v1/agents': { status: 200, body: [] },
      'GET /v1/checks/chk-1': {
        status: 200,
        body: {
          id: 'chk-1',
          checkType: 'TCP',
          name: 'DB',
          activated: true,
          muted: false,
          doubleCheck: false,
          shouldFail: false,
          locations: ['us-east-1'],
          privateLocations: [],
          tags: [],
          frequency: 5,
          frequencyOffset: null,
          runParallel: false,
          groupId: null,
          groupOrder: null,
          runtimeId: null,
          description: null,
          alertChannelSubscriptions: [],
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: null,
          request: { hostname: 'db.internal', port: 5432, data: null, ipFamily: 'IPv4', assertions: [] },
        },
      },
    });
    renderRoute('/checks/chk-1/edit', <CheckFormPage checkId="chk-1" />);
    await screen.findByRole('button', { name: 'Save changes' });
    const flagged = screen.getByLabelText(
      'us-east-1 (N. Virginia): no agent serves it, its runs expire',
    ) as HTMLInputElement;
    expect(flagged.checked).toBe(true);
    expect(screen.queryByText(/eu-west-1/)).toBeNull();
  });
});

describe('the locations model', () => {
  it('counts connected account-key agents only; naming none serves every data-center location', () => {
    const served = servedRegions([
      agent({ id: 'a', locations: ['eu-west-1', 'us-east-1'] }),
      agent({ id: 'b', locations: null }),
      agent({ id: 'c', locations: ['eu-west-1'], connected: false }),
      agent({ id: 'd', scope: 'PRIVATE_LOCATION', locations: ['office-lan'] }),
    ]);
    expect(served.get('eu-west-1')).toBe(2);
    expect(served.get('af-south-1')).toBe(1);
    expect(served.has('office-lan')).toBe(false);
    expect(offeredRegions(new Map([['eu-west-1', 1]]), ['ap-south-1'])).toEqual(['eu-west-1', 'ap-south-1']);
  });

  it('defaults: local, else a staffed private location, else a served region, else nothing', () => {
    expect(defaultLocations([OFFICE, LOCAL], [])).toEqual({ locations: [], privateLocations: ['local'] });
    expect(defaultLocations([{ ...OFFICE, agentCount: 2 }], [])).toEqual({
      locations: [],
      privateLocations: ['office-lan'],
    });
    expect(defaultLocations([OFFICE], [agent({ locations: ['eu-west-2'] })])).toEqual({
      locations: ['eu-west-2'],
      privateLocations: [],
    });
    expect(defaultLocations(undefined, undefined)).toEqual({ locations: [], privateLocations: [] });
  });
});
