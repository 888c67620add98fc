import { fireEvent, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { punctualityOf } from '../../../app/src/checks/detail/pings.js';
import { completeAlertSettings } from '../../../app/src/checks/form/model/alert-settings.js';
import { newCheckBody } from '../../../app/src/checks/form/model/new-check.js';
import CheckFormPage from '../../../app/src/checks/form/page.js';
import { renderRoute, serveApi } from '../dom.js';
import { choose, field, fieldValue, type } from '../forms.js';

// The check form's alerting in a real DOM against a loopback API: a new uptime monitor runs every minute,
// the check's own alert settings are set with controls and sent in the API's shape, stored settings and an
// incident trigger come back in the controls and go out unchanged, and clearing the status-page service
// removes the trigger. Also the model: the defaults, and whether a heartbeat's pings came on time.

const SERVICES = [
  {
    id: 'svc-1',
    name: 'Checkout',
    accountId: 'acc',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: null,
  },
  {
    id: 'svc-2',
    name: 'Payments',
    accountId: 'acc',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: null,
  },
];

const api = serveApi(() => ({
  'GET /v1/check-groups': { status: 200, body: [] },
  'GET /v1/private-locations': { status: 200, body: [] },
  'GET /v1/runtimes': { status: 200, body: [] },
  'GET /v1/alert-channels': { status: 200, body: [] },
  'GET /v1/snippets': { status: 200, body: [] },
  'GET /v1/status-pages/services': { status: 200, body: { entries: SERVICES, length: 2 } },
}));

/** A stored TCP monitor with its own alert settings and an incident trigger on Payments. */
const STORED = {
  id: 'chk-9',
  checkType: 'TCP',
  name: 'Database port',
  activated: true,
  muted: false,
  doubleCheck: false,
  shouldFail: false,
  locations: ['eu-west-1'],
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
  degradedResponseTime: 4000,
  maxResponseTime: 5000,
  request: { hostname: 'db.internal', port: 5432, data: null, ipFamily: 'IPv4', assertions: [] },
  useGlobalAlertSettings: false,
  alertSettings: {
    escalationType: 'TIME_BASED',
    runBasedEscalation: { failedRunThreshold: 2 },
    timeBasedEscalation: { minutesFailingThreshold: 30 },
    reminders: { amount: 100000, interval: 60 },
    parallelRunFailureThreshold: { enabled: false, percentage: 10 },
  },
  triggerIncident: {
    serviceId: 'svc-2',
    severity: 'MEDIUM',
    name: 'Database unreachable',
    description: 'Investigating.',
    notifySubscribers: false,
  },
};

describe('the form model', () => {
  it('starts uptime monitors every minute and the other types every 10 minutes, in no location until the form picks one', () => {
    for (const t of ['URL', 'TCP', 'ICMP', 'DNS'] as const) {
      expect(newCheckBody(t).frequency, t).toBe(1);
      expect(newCheckBody(t).locations, t).toEqual([]);
    }
    for (const t of ['API', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT'] as const)
      expect(newCheckBody(t).frequency, t).toBe(10);
  });

  it('fills in missing alert settings with their defaults and keeps the stored ones', () => {
    expect(completeAlertSettings({ reminders: { amount: 3 } })).toEqual({
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 1 },
      timeBasedEscalation: { minutesFailingThreshold: 5 },
      reminders: { amount: 3, interval: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    });
    expect(completeAlertSettings(STORED.alertSettings)).toEqual(STORED.alertSettings);
  });

  it('says a ping is late when it came after period + grace since the previous one', () => {
    const hb = { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' };
    const ping = (id: number, at: string, kind = 'success') => ({
      id,
      kind,
      exitCode: null,
      method: 'GET',
      remoteAddress: '10.0.0.1',
      userAgent: null,
      body: null,
      bodySizeBytes: 0,
      receivedAt: at,
    });
    // Newest first, as the API lists them; the check was created at 00:00. Deadlines: 01:10, then 02:15
    // (01:05 + 1 h 10 min; the start at 02:05 does not bring it earlier), then 03:30 (02:20 + 1 h 10 min).
    const pings = [
      ping(4, '2026-01-01T03:25:00.000Z'),
      ping(3, '2026-01-01T02:20:00.000Z'),
      ping(2, '2026-01-01T02:05:00.000Z', 'start'),
      ping(1, '2026-01-01T01:05:00.000Z'),
    ];
    const result = punctualityOf(pings, hb, '2026-01-01T00:00:00.000Z');
    expect(Object.fromEntries(result)).toEqual({ 1: 'on-time', 2: 'on-time', 3: 'late', 4: 'on-time' });
    // A cron schedule's deadlines are not worked out here.
    const cron = punctualityOf(
      pings,
      { schedule: '0 * * * *', grace: 10, graceUnit: 'minutes' },
      '2026-01-01T00:00:00.000Z',
    );
    expect([...cron.values()]).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
  });
});

/** The body of the first `PUT /v1/checks/chk-9` the form sent. */
function sentPut(): Record<string, unknown> | undefined {
  return api.requests('PUT /v1/checks/chk-9')[0]?.body as Record<string, unknown> | undefined;
}

describe('alert settings in the form', () => {
  it('offers every minute for a new uptime monitor and sends the check’s own settings in the API’s shape', async () => {
    api.route({ 'POST /v1/checks/tcp': { status: 201, body: { ...STORED, id: 'new-1' } } });
    renderRoute('/checks/new?type=TCP', <CheckFormPage />);
    await screen.findByRole('button', { name: 'Create check' });
    const frequency = field(/^Frequency/) as unknown as HTMLSelectElement;
    expect(frequency.selectedOptions[0]?.textContent).toBe('Every minute');
    expect(screen.queryByLabelText('Reminders')).toBeNull();
    type(/^Name/, 'DB');
    type(/^Host/, 'db.internal');
    fireEvent.click(screen.getByLabelText("This check's own settings"));
    expect(fieldValue('Alert after (failed runs)')).toBe('1');
    choose('Alert after (failed runs)', '3');
    choose('Reminders', '100000');
    type('Reminder every (minutes)', '15');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(api.requests('POST /v1/checks/tcp')).toHaveLength(1));
    const body = api.requests('POST /v1/checks/tcp')[0]?.body as Record<string, unknown>;
    expect(body.frequency).toBe(1);
    expect(body.useGlobalAlertSettings).toBe(false);
    expect(body.alertSettings).toEqual({
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 3 },
      timeBasedEscalation: { minutesFailingThreshold: 5 },
      reminders: { amount: 100000, interval: 15 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    });
    // No service chosen: no trigger sent.
    expect(body.triggerIncident).toBeUndefined();
  });

  it('shows stored settings and the trigger’s service by name, sends them back unchanged, and clears the trigger', async () => {
    api.route({
      'GET /v1/checks/chk-9': { status: 200, body: STORED },
      'PUT /v1/checks/chk-9': { status: 200, body: STORED },
    });
    renderRoute('/checks/chk-9/edit', <CheckFormPage checkId="chk-9" />);
    await screen.findByRole('button', { name: 'Save changes' });
    expect((screen.getByLabelText("This check's own settings") as HTMLInputElement).checked).toBe(true);
    expect((screen.getByLabelText('After minutes failing') as HTMLInputElement).checked).toBe(true);
    expect(fieldValue('Alert after (minutes failing)')).toBe('30');
    const reminders = field('Reminders') as unknown as HTMLSelectElement;
    expect(reminders.selectedOptions[0]?.textContent).toBe('Until the check recovers');
    const service = field('Status-page service') as unknown as HTMLSelectElement;
    expect(service.selectedOptions[0]?.textContent).toBe('Payments');
    expect(fieldValue('Severity')).toBe('MEDIUM');
    expect(fieldValue('Incident name')).toBe('Database unreachable');
    // Advanced (JSON) no longer holds them.
    expect(fieldValue('Other fields (JSON)')).not.toContain('alertSettings');

    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(api.requests('PUT /v1/checks/chk-9')).toHaveLength(1));
    const first = api.requests('PUT /v1/checks/chk-9')[0]?.body as Record<string, unknown>;
    expect(first.alertSettings).toEqual(STORED.alertSettings);
    expect(first.useGlobalAlertSettings).toBe(false);
    expect(first.triggerIncident).toEqual(STORED.triggerIncident);
  });

  it('picks another service by name keeping the trigger’s text, and None removes the trigger', async () => {
    api.route({
      'GET /v1/checks/chk-9': { status: 200, body: STORED },
      'PUT /v1/checks/chk-9': { status: 200, body: STORED },
    });
    renderRoute('/checks/chk-9/edit', <CheckFormPage checkId="chk-9" />);
    await screen.findByRole('button', { name: 'Save changes' });
    choose('Status-page service', 'svc-1');
    choose('Severity', 'CRITICAL');
    fireEvent.click(screen.getByLabelText("Email the status pages' subscribers"));
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(api.requests('PUT /v1/checks/chk-9')).toHaveLength(1));
    expect(sentPut()?.triggerIncident).toEqual({
      ...STORED.triggerIncident,
      serviceId: 'svc-1',
      severity: 'CRITICAL',
      notifySubscribers: true,
    });
  });

  it('sends null for the trigger when the service is set to None', async () => {
    api.route({
      'GET /v1/checks/chk-9': { status: 200, body: STORED },
      'PUT /v1/checks/chk-9': { status: 200, body: STORED },
    });
    renderRoute('/checks/chk-9/edit', <CheckFormPage checkId="chk-9" />);
    await screen.findByRole('button', { name: 'Save changes' });
    choose('Status-page service', '');
    expect(screen.queryByLabelText('Severity')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(api.requests('PUT /v1/checks/chk-9')).toHaveLength(1));
    expect(sentPut()?.triggerIncident).toBeNull();
  });

  it('keeps the trigger as it is, with a notice, when the services cannot be loaded', async () => {
    api.route({
      'GET /v1/status-pages/services': { status: 500, body: { message: 'boom' } },
      'GET /v1/checks/chk-9': { status: 200, body: STORED },
      'PUT /v1/checks/chk-9': { status: 200, body: STORED },
    });
    renderRoute('/checks/chk-9/edit', <CheckFormPage checkId="chk-9" />);
    await screen.findByRole('button', { name: 'Save changes' });
    expect(screen.getByText(/Status-page services could not be loaded/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(api.requests('PUT /v1/checks/chk-9')).toHaveLength(1));
    expect(sentPut()?.triggerIncident).toEqual(STORED.triggerIncident);
  });
});
