import { fireEvent, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import AlertChannelsPage from '../../../app/src/alerting/channels/page.js';
import { renderRoute, serveApi } from '../dom.js';
import { choose, type } from '../forms.js';

// The chat and push kinds of the channel form in a real DOM against a loopback API: each kind's fields make
// the config the service documents (WEBHOOK presets with their webhookType, own types with theirs), and the
// form says what "Subscribe new checks automatically" does.

const saved = (id: number, type: string, config: Record<string, unknown>) => ({
  id,
  type,
  config,
  subscriptions: [],
  autoSubscribe: false,
  sendRecovery: true,
  sendFailure: true,
  sendDegraded: false,
  sslExpiry: false,
  sslExpiryThreshold: 30,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: null,
});

const telegram = saved(21, 'WEBHOOK', {
  name: 'Ops chat',
  url: 'https://api.telegram.org',
  method: 'POST',
  headers: [],
  queryParameters: [],
  webhookType: 'WEBHOOK_TELEGRAM',
  chatId: '-100123',
  botToken: '*****',
});

const api = serveApi(() => ({
  'GET /v1/alert-channels': { status: 200, body: [telegram] },
  'GET /v1/alert-channels/21': { status: 200, body: telegram },
  'GET /v1/checks': { status: 200, body: [] },
  'GET /v1/check-groups': { status: 200, body: [] },
  'GET /v1/alert-notifications': { status: 200, body: [] },
}));

async function create(
  kind: string,
  fill: () => void,
): Promise<{ type: string; config: Record<string, unknown> }> {
  api.route({ 'POST /v1/alert-channels': { status: 201, body: saved(30, 'NTFY', {}) } });
  renderRoute('/alert-channels', <AlertChannelsPage />);
  fireEvent.click(await screen.findByRole('button', { name: 'New alert channel' }));
  choose(/^Type/, kind);
  fill();
  fireEvent.click(screen.getByRole('button', { name: 'Create alert channel' }));
  await waitFor(() => expect(api.requests('POST /v1/alert-channels')).toHaveLength(1));
  return api.requests('POST /v1/alert-channels')[0]!.body as {
    type: string;
    config: Record<string, unknown>;
  };
}

describe('chat and push kinds in the form', () => {
  it('Telegram is a WEBHOOK of webhookType WEBHOOK_TELEGRAM with its bot token, chat and the Bot API by default', async () => {
    const body = await create('WEBHOOK_TELEGRAM', () => {
      type(/^Name/, 'Ops chat');
      type(/^Bot token/, '123:secret');
      type(/^Chat ID/, '-100123');
    });
    expect(body.type).toBe('WEBHOOK');
    expect(body.config).toMatchObject({
      name: 'Ops chat',
      url: 'https://api.telegram.org',
      method: 'POST',
      webhookType: 'WEBHOOK_TELEGRAM',
      chatId: '-100123',
      botToken: '123:secret',
      template: null,
    });
    expect(screen.getByLabelText(/^Bot token/).getAttribute('type')).toBe('password');
  });

  it('Teams is a WEBHOOK of webhookType WEBHOOK_MSTEAMS; ntfy an NTFY with a numeric priority and ntfy.sh by default', async () => {
    const teams = await create('WEBHOOK_MSTEAMS', () => {
      type(/^Name/, 'Ops team');
      type(/^Workflow URL/, 'https://prod.westus.logic.azure.com/workflows/x?sig=y');
    });
    expect(teams).toMatchObject({
      type: 'WEBHOOK',
      config: {
        webhookType: 'WEBHOOK_MSTEAMS',
        url: 'https://prod.westus.logic.azure.com/workflows/x?sig=y',
      },
    });
  });

  it('ntfy sends its topic, priority as a number and the public server when none is given', async () => {
    const body = await create('NTFY', () => {
      type(/^Name/, 'phones');
      type(/^Topic/, 'outpost-alerts');
      type(/^Priority/, '5');
    });
    expect(body).toEqual({
      type: 'NTFY',
      config: {
        name: 'phones',
        url: 'https://ntfy.sh',
        topic: 'outpost-alerts',
        priority: 5,
        accessToken: null,
      },
      sendFailure: true,
      sendDegraded: false,
      sendRecovery: true,
      sslExpiry: false,
      sslExpiryThreshold: 30,
      autoSubscribe: false,
    });
  });

  it('says what subscribing new checks automatically does', async () => {
    renderRoute('/alert-channels', <AlertChannelsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'New alert channel' }));
    const box = screen.getByLabelText('Subscribe new checks automatically');
    const hint = document.getElementById(box.getAttribute('aria-describedby') ?? '');
    expect(hint?.textContent).toMatch(/Every check created from now on alerts here/);
    expect(hint?.textContent).toMatch(/Checks that exist now are not changed/);
  });

  it('shows a Telegram channel as Telegram, its token masked, with the test button', async () => {
    renderRoute('/alert-channels/21', <AlertChannelsPage channelId="21" />);
    await screen.findByRole('heading', { name: 'Telegram settings' });
    expect(screen.getByRole('button', { name: 'Send test notification' })).toBeTruthy();
    expect(document.body.textContent).toContain('*****');
  });
});
