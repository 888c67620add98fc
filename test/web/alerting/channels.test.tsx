import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import AlertChannelsPage from '../../../app/src/alerting/channels/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { choose, type } from '../forms.js';

// The alert-channel pages in a real DOM against a loopback API: the list, creating a channel of each kind
// of config (with the service's 400 shown at its field), and one channel's page (test send, subscriptions,
// notification log, delete).

function channel(fields: Record<string, unknown> = {}) {
  return {
    id: 7,
    type: 'EMAIL',
    config: { address: 'ops@example.com' },
    subscriptions: [{ checkId: 'chk-1', activated: true }],
    autoSubscribe: false,
    sendRecovery: true,
    sendFailure: true,
    sendDegraded: false,
    sslExpiry: false,
    sslExpiryThreshold: 30,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: null,
    ...fields,
  };
}

const attempt = (outcome: string) => ({
  startedAt: '2026-01-02T10:00:00.000Z',
  latencyMs: 120,
  outcome,
  statusCode: outcome === 'DELIVERED' ? 250 : 550,
  answer: outcome === 'DELIVERED' ? 'SMTP 250 2.0.0 Ok' : 'SMTP 550 no such user',
  error: outcome === 'DELIVERED' ? null : 'mailbox unavailable',
});

function notification(fields: Record<string, unknown> = {}) {
  return {
    id: 41,
    alertChannelId: 7,
    checkId: 'chk-1',
    alertId: 'al-1',
    alertType: 'ALERT_FAILURE',
    state: 'DELIVERED',
    idempotencyKey: 'k-41',
    attempts: [attempt('DELIVERED')],
    createdAt: '2026-01-02T10:00:00.000Z',
    deliveredAt: '2026-01-02T10:00:00.120Z',
    lastError: null,
    nextAttemptAt: null,
    ...fields,
  };
}

const api = serveApi(() => ({
  'GET /v1/alert-channels': {
    status: 200,
    body: [
      channel(),
      channel({ id: 8, type: 'WEBHOOK', config: { name: 'Ops hook', url: 'https://hooks.example.com/x' } }),
    ],
  },
  'GET /v1/alert-channels/7': { status: 200, body: channel() },
  'GET /v1/checks': { status: 200, body: [{ id: 'chk-1', name: 'Home page' }] },
  'GET /v1/check-groups': { status: 200, body: [{ id: 3, name: 'Shop' }] },
  'GET /v1/alert-notifications': { status: 200, body: [notification()] },
}));

function renderAt(path: string, channelId?: string) {
  return renderRoute(path, <AlertChannelsPage {...(channelId ? { channelId } : {})} />);
}

describe('the list', () => {
  it('shows each channel with its target, type and subscriptions, linking to its page', async () => {
    renderAt('/alert-channels');
    const table = await screen.findByRole('table', { name: 'Alert channels' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByRole('link', { name: 'ops@example.com' }).getAttribute('href')).toBe(
      '/alert-channels/7',
    );
    expect(rows[0]!.textContent).toContain('Email');
    expect(rows[1]!.textContent).toContain('Webhook');
  });

  it('says how to start when there is no channel', async () => {
    api.route({ 'GET /v1/alert-channels': { status: 200, body: [] } });
    renderAt('/alert-channels');
    await screen.findByText(/No alert channel yet/);
  });
});

describe('creating a channel', () => {
  it('sends an email channel’s config and switches, then opens its page', async () => {
    api.route({ 'POST /v1/alert-channels': { status: 201, body: channel({ id: 12 }) } });
    renderAt('/alert-channels');
    fireEvent.click(await screen.findByRole('button', { name: 'New alert channel' }));
    type(/^Email address/, 'oncall@example.com');
    fireEvent.click(screen.getByLabelText('Degradations'));
    fireEvent.click(screen.getByRole('button', { name: 'Create alert channel' }));
    await waitFor(() => expect(api.requests('POST /v1/alert-channels')).toHaveLength(1));
    const [sent] = api.requests('POST /v1/alert-channels');
    expect(sent?.body).toEqual({
      type: 'EMAIL',
      config: { address: 'oncall@example.com' },
      sendFailure: true,
      sendDegraded: true,
      sendRecovery: true,
      sslExpiry: false,
      sslExpiryThreshold: 30,
      autoSubscribe: false,
    });
    await waitFor(() => expect(window.location.pathname).toBe('/alert-channels/12'));
  });

  it('shows the service’s 400 next to the config field it names', async () => {
    api.route({
      'POST /v1/alert-channels': validationError('must match format "email"', 'config.address'),
    });
    renderAt('/alert-channels');
    fireEvent.click(await screen.findByRole('button', { name: 'New alert channel' }));
    type(/^Email address/, 'not-an-address');
    fireEvent.click(screen.getByRole('button', { name: 'Create alert channel' }));
    const field = screen.getByLabelText(/^Email address/);
    await waitFor(() => expect(field.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('must match format "email"')).toBeTruthy();
  });

  it('sends a webhook’s headers as rows, blank ones left out', async () => {
    api.route({ 'POST /v1/alert-channels': { status: 201, body: channel({ id: 13, type: 'WEBHOOK' }) } });
    renderAt('/alert-channels');
    fireEvent.click(await screen.findByRole('button', { name: 'New alert channel' }));
    choose(/^Type/, 'WEBHOOK');
    type(/^Name/, 'Ops hook');
    type(/^URL/, 'https://hooks.example.com/x');
    fireEvent.click(screen.getByRole('button', { name: 'Add header' }));
    fireEvent.click(screen.getByRole('button', { name: 'Add header' }));
    type('Name of header 1', 'X-Team');
    type('Value of header 1', 'ops');
    fireEvent.click(screen.getByRole('button', { name: 'Create alert channel' }));
    await waitFor(() => expect(api.requests('POST /v1/alert-channels')).toHaveLength(1));
    const body = api.requests('POST /v1/alert-channels')[0]?.body as {
      type: string;
      config: Record<string, unknown>;
    };
    expect(body.type).toBe('WEBHOOK');
    expect(body.config.headers).toEqual([{ key: 'X-Team', value: 'ops' }]);
    expect(body.config).toMatchObject({ name: 'Ops hook', url: 'https://hooks.example.com/x' });
  });
});

describe('a channel’s page', () => {
  it('shows its settings, subscriptions and notification log', async () => {
    renderAt('/alert-channels/7', '7');
    await screen.findByRole('heading', { name: 'Email settings' });
    await screen.findByRole('table', { name: 'Notifications sent through the channel, newest first' });
    const [log] = api.requests('GET /v1/alert-notifications');
    expect(Object.fromEntries(log!.query)).toEqual({ alertChannelId: '7', limit: '20', page: '1' });
    await waitFor(() => expect(screen.getAllByText('Home page').length).toBeGreaterThan(0));
  });

  it('sends a test notification and tells how it went', async () => {
    api.route({
      'POST /v1/alert-channels/7/test': {
        status: 200,
        body: notification({ id: 42, alertType: 'ALERT_TEST', alertId: null, checkId: null }),
      },
    });
    renderAt('/alert-channels/7', '7');
    fireEvent.click(await screen.findByRole('button', { name: 'Send test notification' }));
    await screen.findByText('The test notification was delivered.');
    const [sent] = api.requests('POST /v1/alert-channels/7/test');
    expect(sent?.query.get('maxWaitSeconds')).toBe('10');
    expect(
      screen.getByRole('table', { name: "The test notification's first attempt" }).textContent,
    ).toContain('SMTP 250 2.0.0 Ok');
  });

  it('tells a failed test as an alert', async () => {
    api.route({
      'POST /v1/alert-channels/7/test': {
        status: 200,
        body: notification({ state: 'FAILED', attempts: [attempt('FAILED')], alertType: 'ALERT_TEST' }),
      },
    });
    renderAt('/alert-channels/7', '7');
    fireEvent.click(await screen.findByRole('button', { name: 'Send test notification' }));
    await waitFor(() =>
      expect(screen.getAllByRole('alert').some((a) => a.textContent?.includes('mailbox unavailable'))).toBe(
        true,
      ),
    );
  });

  it('changes its subscriptions with one PUT of the subscriptions', async () => {
    api.route({ 'PUT /v1/alert-channels/7': { status: 200, body: channel() } });
    renderAt('/alert-channels/7', '7');
    const change = await screen.findByRole('button', { name: 'Change subscriptions' });
    await waitFor(() => expect((change as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(change);
    fireEvent.click(screen.getByLabelText('Shop'));
    fireEvent.click(screen.getByRole('button', { name: /^Save/ }));
    await waitFor(() => expect(api.requests('PUT /v1/alert-channels/7')).toHaveLength(1));
    const body = api.requests('PUT /v1/alert-channels/7')[0]?.body as { subscriptions: unknown[] };
    expect(body.subscriptions).toEqual(
      expect.arrayContaining([
        { checkId: 'chk-1', activated: true },
        { groupId: 3, activated: true },
      ]),
    );
    expect(body.subscriptions).toHaveLength(2);
  });

  it('deletes it after asking, then goes back to the list', async () => {
    api.route({ 'DELETE /v1/alert-channels/7': { status: 204 } });
    renderAt('/alert-channels/7', '7');
    fireEvent.click(await screen.findByRole('button', { name: 'Delete channel' }));
    const confirm = screen.getAllByRole('button', { name: 'Delete channel' });
    fireEvent.click(confirm[confirm.length - 1]!);
    await waitFor(() => expect(api.requests('DELETE /v1/alert-channels/7')).toHaveLength(1));
    await waitFor(() => expect(window.location.pathname).toBe('/alert-channels'));
  });

  it('says so for a channel that does not exist', async () => {
    renderAt('/alert-channels/99', '99');
    await screen.findByText('Nothing with this id exists in your account.');
  });
});
