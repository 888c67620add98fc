import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import IncidentsPage from '../../../app/src/incidents/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { choose, type } from '../forms.js';

// The incident pages in a real DOM against a loopback API: the list (open and resolved), declaring an
// incident with its first update (and the service's 400 at its field), one incident's page with its
// updates, posting an update and editing the incident.

const SERVICES = [
  { id: 'svc-1', name: 'Website' },
  { id: 'svc-2', name: 'Checkout API' },
];

function update(fields: Record<string, unknown> = {}) {
  return {
    id: 'upd-1',
    status: 'INVESTIGATING',
    description: 'We are looking into failed payments.',
    notifySubscribers: false,
    publicIncidentUpdateDate: '2026-03-01T10:00:00.000Z',
    ...fields,
  };
}

function incident(fields: Record<string, unknown> = {}) {
  return {
    id: 'inc-1',
    name: 'Checkout errors',
    impact: 'MAJOR',
    services: [SERVICES[1]],
    startedAt: '2026-03-01T10:00:00.000Z',
    stoppedAt: null,
    incidentUpdates: [update()],
    ...fields,
  };
}

const api = serveApi(() => ({
  'GET /v1/incidents': {
    status: 200,
    body: [
      incident(),
      incident({
        id: 'inc-0',
        name: 'Slow website',
        impact: 'MINOR',
        services: [SERVICES[0]],
        stoppedAt: '2026-02-01T12:00:00.000Z',
        incidentUpdates: [update({ id: 'upd-0', status: 'RESOLVED', description: 'Fixed.' })],
      }),
    ],
  },
  'GET /v1/incidents/inc-1': { status: 200, body: incident() },
  'GET /v1/status-pages/services': { status: 200, body: { entries: SERVICES, nextId: null } },
}));

function renderAt(path: string, incidentId?: string) {
  return renderRoute(path, <IncidentsPage {...(incidentId ? { incidentId } : {})} />);
}

describe('the list', () => {
  it('shows open incidents apart from resolved ones, each linking to its page', async () => {
    renderAt('/incidents');
    const open = await screen.findByRole('table', { name: 'Open incidents' });
    const row = within(open).getAllByRole('row')[1]!;
    expect(within(row).getByRole('link', { name: 'Checkout errors' }).getAttribute('href')).toBe(
      '/incidents/inc-1',
    );
    expect(row.textContent).toContain('Major');
    expect(row.textContent).toContain('Investigating');
    expect(row.textContent).toContain('Checkout API');
    const resolved = screen.getByRole('table', { name: 'Resolved incidents' });
    expect(within(resolved).getByRole('link', { name: 'Slow website' })).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Open (1)' })).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Resolved (1)' })).toBeTruthy();
  });

  it('says how to start when there is no incident', async () => {
    api.route({ 'GET /v1/incidents': { status: 200, body: [] } });
    renderAt('/incidents');
    await screen.findByText(/No incident yet/);
  });
});

describe('declaring an incident', () => {
  it('sends its name, impact, services and first update, then opens its page', async () => {
    api.route({ 'POST /v1/incidents': { status: 201, body: incident({ id: 'inc-9' }) } });
    renderAt('/incidents');
    fireEvent.click(await screen.findByRole('button', { name: 'New incident' }));
    const form = screen.getByRole('form', { name: 'New incident' });
    type(/^Name/, '  Payments down ');
    choose(/^Impact/, 'MAJOR', form);
    fireEvent.click(await within(form).findByLabelText('Checkout API'));
    choose(/^Status/, 'IDENTIFIED', form);
    type(/^Description/, ' The payment provider fails. ');
    fireEvent.click(within(form).getByLabelText(/^Notify subscribers/));
    fireEvent.click(within(form).getByRole('button', { name: 'Open incident' }));
    await waitFor(() => expect(api.requests('POST /v1/incidents')).toHaveLength(1));
    expect(api.requests('POST /v1/incidents')[0]?.body).toEqual({
      name: 'Payments down',
      impact: 'MAJOR',
      services: [{ id: 'svc-2' }],
      incidentUpdates: [
        { status: 'IDENTIFIED', description: 'The payment provider fails.', notifySubscribers: true },
      ],
    });
    await waitFor(() => expect(window.location.pathname).toBe('/incidents/inc-9'));
  });

  it('shows the service’s 400 at the first update’s field it names', async () => {
    api.route({
      'POST /v1/incidents': validationError(
        'must NOT have fewer than 1 characters',
        'incidentUpdates[0].description',
      ),
    });
    renderAt('/incidents');
    fireEvent.click(await screen.findByRole('button', { name: 'New incident' }));
    type(/^Name/, 'Payments down');
    fireEvent.click(screen.getByRole('button', { name: 'Open incident' }));
    const field = screen.getByLabelText(/^Description/);
    await waitFor(() => expect(field.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('must NOT have fewer than 1 characters')).toBeTruthy();
    expect(window.location.pathname).toBe('/incidents');
  });

  it('closes the form on Cancel without sending anything', async () => {
    renderAt('/incidents');
    fireEvent.click(await screen.findByRole('button', { name: 'New incident' }));
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'New incident' })).toBeNull();
    expect(api.requests('POST /v1/incidents')).toHaveLength(0);
  });
});

describe('an incident’s page', () => {
  it('shows its summary and updates, read with every update', async () => {
    api.route({
      'GET /v1/incidents/inc-1': {
        status: 200,
        body: incident({
          incidentUpdates: [
            update({
              id: 'upd-2',
              status: 'MONITORING',
              description: 'A fix is out.',
              notifySubscribers: true,
            }),
            update(),
          ],
        }),
      },
    });
    renderAt('/incidents/inc-1', 'inc-1');
    await screen.findByRole('heading', { name: 'Checkout errors' });
    expect(api.requests('GET /v1/incidents/inc-1')[0]?.query.get('includeAllIncidentUpdates')).toBe('true');
    expect(screen.getByRole('heading', { name: 'Updates (2)' })).toBeTruthy();
    const updates = [...document.querySelectorAll('.inc-timeline > li')].map((li) => li.textContent);
    expect(updates).toEqual([
      expect.stringContaining('A fix is out.'),
      expect.stringContaining('We are looking into failed payments.'),
    ]);
    expect(screen.getByText(/subscribers notified/)).toBeTruthy();
    expect(screen.getByText('Going on for')).toBeTruthy();
  });

  it('posts an update, starting from the latest status, and reads the incident again', async () => {
    api.route({
      'GET /v1/incidents/inc-1': {
        status: 200,
        body: incident({ incidentUpdates: [update({ status: 'MONITORING' })] }),
      },
      'POST /v1/incidents/inc-1/updates': {
        status: 201,
        body: [update({ id: 'upd-3', status: 'RESOLVED' })],
      },
    });
    renderAt('/incidents/inc-1', 'inc-1');
    const form = await screen.findByRole('form', { name: 'Post an update' });
    expect((within(form).getByLabelText(/^Status/) as HTMLSelectElement).value).toBe('MONITORING');
    choose(/^Status/, 'RESOLVED', form);
    fireEvent.input(within(form).getByLabelText(/^Description/), { target: { value: ' All good again. ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Post update' }));
    await waitFor(() => expect(api.requests('POST /v1/incidents/inc-1/updates')).toHaveLength(1));
    expect(api.requests('POST /v1/incidents/inc-1/updates')[0]?.body).toEqual({
      status: 'RESOLVED',
      description: 'All good again.',
      notifySubscribers: false,
    });
    await within(form).findByText('Update posted.');
    expect((within(form).getByLabelText(/^Description/) as HTMLTextAreaElement).value).toBe('');
    await waitFor(() => expect(api.requests('GET /v1/incidents/inc-1').length).toBeGreaterThan(1));
  });

  it('edits its name, impact and services without an update', async () => {
    api.route({ 'PUT /v1/incidents/inc-1': { status: 200, body: incident({ name: 'Checkout outage' }) } });
    renderAt('/incidents/inc-1', 'inc-1');
    fireEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit the incident' });
    expect(within(form).queryByText('First update')).toBeNull();
    expect(((await within(form).findByLabelText('Checkout API')) as HTMLInputElement).checked).toBe(true);
    fireEvent.input(within(form).getByLabelText(/^Name/), { target: { value: 'Checkout outage' } });
    fireEvent.click(within(form).getByLabelText('Website'));
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.requests('PUT /v1/incidents/inc-1')).toHaveLength(1));
    expect(api.requests('PUT /v1/incidents/inc-1')[0]?.body).toEqual({
      name: 'Checkout outage',
      impact: 'MAJOR',
      services: [{ id: 'svc-2' }, { id: 'svc-1' }],
    });
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Edit the incident' })).toBeNull());
  });

  it('deletes it after asking, then goes back to the list', async () => {
    api.route({ 'DELETE /v1/incidents/inc-1': { status: 204 } });
    renderAt('/incidents/inc-1', 'inc-1');
    fireEvent.click(await screen.findByRole('button', { name: 'Delete incident' }));
    const confirm = screen.getAllByRole('button', { name: 'Delete incident' });
    fireEvent.click(confirm[confirm.length - 1]!);
    await waitFor(() => expect(api.requests('DELETE /v1/incidents/inc-1')).toHaveLength(1));
    await waitFor(() => expect(window.location.pathname).toBe('/incidents'));
  });
});
