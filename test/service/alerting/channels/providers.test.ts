import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSenders, providersFromEnv, senders } from '../../../../src/service/alerting/channels/index.js';
import type {
  DeliveryResult,
  NotificationDoc,
  ProviderConfig,
} from '../../../../src/service/alerting/types.js';
import { OutboundPolicy } from '../../../../src/service/platform/http/outbound-policy.js';
import {
  type HttpPeer,
  type PeerHandler,
  type RecordedRequest,
  refusedOrigin,
  startHttpPeer,
} from '../../../helpers/alert-peers.js';
import { channel, expectNoSecret, never, notification } from './fixtures.js';

/** Scripted answers: the handler of the test running now; by default the peer echoes the request with 202. */
let script: PeerHandler | undefined;
let peer: HttpPeer;
let eu: HttpPeer;
beforeAll(async () => {
  peer = await startHttpPeer((req, n) =>
    script ? script(req, n) : { status: 202, body: JSON.stringify({ echo: req }) },
  );
  eu = await startHttpPeer(() => ({ status: 202, body: '{"result":"Request will be processed"}' }));
});
afterAll(async () => {
  await Promise.all([peer.close(), eu.close()]);
  await closeSenders();
});

const env = () => ({
  OUTPOST_PAGERDUTY_URL: `${peer.origin}/pd/`,
  OUTPOST_OPSGENIE_URL: `${peer.origin}/og`,
  OUTPOST_OPSGENIE_EU_URL: `${eu.origin}/og-eu`,
  OUTPOST_TWILIO_URL: `${peer.origin}/tw`,
  OUTPOST_TWILIO_ACCOUNT_SID: 'AC0123456789',
  OUTPOST_TWILIO_AUTH_TOKEN: 'twilio-auth-token-secret-55',
  OUTPOST_TWILIO_FROM: '+15005550006',
});

/** Sends with `handler` answering; returns the result and the requests it made. */
async function run(
  type: keyof typeof senders,
  config: Record<string, unknown>,
  overrides: Partial<NotificationDoc> = {},
  handler?: PeerHandler,
  // The peers listen on loopback: the outbound policy of user-given URLs (SLACK) must allow it.
  providers: ProviderConfig = {
    ...providersFromEnv(env()),
    outbound: new OutboundPolicy({ allow: ['127.0.0.1/32'] }),
  },
): Promise<{ result: DeliveryResult; requests: RecordedRequest[] }> {
  script = handler;
  const before = peer.requests.length;
  const result = await senders[type](notification(overrides), channel(type, config), providers, never);
  return { result, requests: peer.requests.slice(before) };
}

const json = (r: RecordedRequest | undefined) => JSON.parse(r?.body ?? 'null');

describe('providersFromEnv', () => {
  it('uses the public defaults and needs every variable of SMTP and Twilio', () => {
    expect(providersFromEnv({})).toEqual({
      pagerdutyUrl: 'https://events.pagerduty.com',
      opsgenieUrl: { US: 'https://api.opsgenie.com', EU: 'https://api.eu.opsgenie.com' },
    });
    const full = providersFromEnv({ ...env(), OUTPOST_SMTP_URL: 'smtp://h:25', OUTPOST_SMTP_FROM: 'a@b.c' });
    expect(full.smtp).toEqual({ url: 'smtp://h:25', from: 'a@b.c' });
    expect(full.pagerdutyUrl).toBe(`${peer.origin}/pd`);
    expect(full.twilio).toEqual({
      url: `${peer.origin}/tw`,
      accountSid: 'AC0123456789',
      authToken: 'twilio-auth-token-secret-55',
      from: '+15005550006',
    });
    expect(providersFromEnv({ ...env(), OUTPOST_TWILIO_FROM: '' }).twilio).toBeUndefined();
    expect(providersFromEnv({ OUTPOST_SMTP_URL: 'smtp://h:25' }).smtp).toBeUndefined();
  });
});

describe('SLACK sender', () => {
  const slack = () => ({ url: `${peer.origin}/services/T1/B2/slack-hook-secret`, channel: '#alerts' });

  it('posts text and blocks (and the channel); 200 is DELIVERED', async () => {
    const { result, requests } = await run('SLACK', slack(), {}, () => ({ status: 200, body: 'ok' }));
    expect(result).toMatchObject({
      outcome: 'DELIVERED',
      statusCode: 200,
      answer: 'HTTP 200 OK',
      error: null,
    });
    expect(requests[0]?.headers['content-type']).toMatch(/^application\/json/);
    const body = json(requests[0]);
    expect(body.text).toBe('❌ checkout API is failing in eu-west-1: expected status 200, got 503');
    expect(body.channel).toBe('#alerts');
    expect(body.blocks[0]).toEqual({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: '*❌ checkout API is failing in eu-west-1: expected status 200, got 503*',
      },
    });
    expect(JSON.stringify(body.blocks)).toContain('https://outpost.example/checks/x/results/res-1');
  });

  it('429 is RETRY after Retry-After; 410 channel_is_archived and 404 no_service are FAILED', async () => {
    const limited = await run('SLACK', slack(), {}, () => ({
      status: 429,
      headers: { 'retry-after': '30' },
      body: 'rate_limited',
    }));
    expect(limited.result).toMatchObject({ outcome: 'RETRY', statusCode: 429, retryAfterMs: 30_000 });
    const archived = await run('SLACK', slack(), {}, () => ({ status: 410, body: 'channel_is_archived' }));
    // Only the status is kept, never the body (`channel_is_archived`).
    expect(archived.result).toMatchObject({ outcome: 'FAILED', statusCode: 410, answer: 'HTTP 410 Gone' });
    const gone = await run('SLACK', slack(), {}, () => ({ status: 404, body: 'no_service' }));
    expect(gone.result).toMatchObject({ outcome: 'FAILED', statusCode: 404 });
  });
});

describe('PAGERDUTY sender', () => {
  const key = 'pd-routing-key-secret-0042';

  it('triggers a failure and resolves its recovery with the same dedup_key; 202 is DELIVERED', async () => {
    const failure = await run('PAGERDUTY', { serviceKey: key });
    expect(failure.result).toMatchObject({ outcome: 'DELIVERED', statusCode: 202, error: null });
    expectNoSecret(failure.result, [key]);
    const request = failure.requests[0];
    expect(request?.url).toBe('/pd/v2/enqueue');
    const event = json(request);
    expect(event).toMatchObject({
      routing_key: key,
      event_action: 'trigger',
      dedup_key: 'outpost-6f1c1d2e-0000-4000-8000-000000000001-res-0',
      payload: {
        summary: '❌ checkout API is failing in eu-west-1: expected status 200, got 503',
        source: 'eu-west-1',
        severity: 'critical',
        timestamp: '2026-11-24T04:00:00.000Z',
        component: 'checkout API',
        group: 'Shop',
        class: 'API',
      },
    });
    expect(event.payload.custom_details).toMatchObject({
      alert_type: 'ALERT_FAILURE',
      tags: ['prod', 'payments'],
    });

    const recovery = await run('PAGERDUTY', { serviceKey: key }, { ALERT_TYPE: 'ALERT_RECOVERY' });
    expect(recovery.result.outcome).toBe('DELIVERED');
    expect(json(recovery.requests[0])).toEqual({
      routing_key: key,
      event_action: 'resolve',
      dedup_key: event.dedup_key,
    });
  });

  it('sends degraded as warning, hashes a dedup_key over 255 characters, 400 FAILED and 429 RETRY', async () => {
    const degraded = await run('PAGERDUTY', { serviceKey: key }, { ALERT_TYPE: 'ALERT_FAILURE_DEGRADED' });
    expect(json(degraded.requests[0])).toMatchObject({
      event_action: 'trigger',
      payload: { severity: 'warning' },
    });

    const long = await run('PAGERDUTY', { serviceKey: key }, { EPISODE_ID: 'e'.repeat(400) });
    const dedup = json(long.requests[0]).dedup_key as string;
    expect(dedup).toMatch(/^outpost-[0-9a-f]{64}$/);

    const bad = await run('PAGERDUTY', { serviceKey: key }, {}, (req) => ({
      status: 400,
      body: `{"status":"invalid event","echo":${JSON.stringify(req.body)}}`,
    }));
    expect(bad.result).toMatchObject({ outcome: 'FAILED', statusCode: 400 });
    expect(bad.result.answer).toBe('HTTP 400 Bad Request');
    expectNoSecret(bad.result, [key]);

    const limited = await run('PAGERDUTY', { serviceKey: key }, {}, () => ({ status: 429 }));
    expect(limited.result).toMatchObject({ outcome: 'RETRY', statusCode: 429 });
  });
});

describe('OPSGENIE sender', () => {
  const apiKey = 'og-api-key-secret-1234';

  it('creates an alert with the GenieKey, and closes it by alias on recovery', async () => {
    const create = await run('OPSGENIE', { name: 'og', apiKey, region: 'US', priority: 'P2' });
    expect(create.result).toMatchObject({ outcome: 'DELIVERED', statusCode: 202 });
    expectNoSecret(create.result, [apiKey]);
    const request = create.requests[0];
    expect(request?.url).toBe('/og/v2/alerts');
    expect(request?.headers.authorization).toBe(`GenieKey ${apiKey}`);
    const body = json(request);
    expect(body).toMatchObject({
      alias: 'outpost-6f1c1d2e-0000-4000-8000-000000000001-res-0',
      priority: 'P2',
      tags: ['prod', 'payments'],
    });
    expect(body.message.length).toBeLessThanOrEqual(130);
    expect(body.description).toContain('expected status 200, got 503');

    const close = await run(
      'OPSGENIE',
      { name: 'og', apiKey, region: 'US', priority: 'P2' },
      { ALERT_TYPE: 'ALERT_DEGRADED_RECOVERY' },
    );
    expect(close.result.outcome).toBe('DELIVERED');
    expect(close.requests[0]?.method).toBe('POST');
    expect(close.requests[0]?.url).toBe(
      `/og/v2/alerts/${encodeURIComponent(body.alias)}/close?identifierType=alias`,
    );
  });

  it('uses the EU base for region EU', async () => {
    const before = eu.requests.length;
    const { result, requests } = await run('OPSGENIE', { name: 'og', apiKey, region: 'EU', priority: 'P1' });
    expect(result.outcome).toBe('DELIVERED');
    expect(requests).toHaveLength(0);
    expect(eu.requests.slice(before).map((r) => r.url)).toEqual(['/og-eu/v2/alerts']);
  });
});

describe('SMS and CALL senders', () => {
  const token = 'twilio-auth-token-secret-55';
  const basic = `Basic ${Buffer.from(`AC0123456789:${token}`).toString('base64')}`;

  it('posts an SMS form with basic auth, at most 160 characters', async () => {
    const { result, requests } = await run(
      'SMS',
      { name: 'sms', number: '+15551234567' },
      { CHECK_ERROR_MESSAGE: 'x'.repeat(500) },
      (req) => ({ status: 201, body: `{"sid":"SM1","echo":${JSON.stringify(req.headers.authorization)}}` }),
    );
    expect(result).toMatchObject({ outcome: 'DELIVERED', statusCode: 201 });
    // The peer echoed the Authorization header: the body is not kept, so neither shows.
    expect(result.answer).toBe('HTTP 201 Created');
    expectNoSecret(result, [token, basic.slice('Basic '.length)]);
    const request = requests[0];
    expect(request?.url).toBe('/tw/2010-04-01/Accounts/AC0123456789/Messages.json');
    expect(request?.headers.authorization).toBe(basic);
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request?.body);
    expect(form.get('To')).toBe('+15551234567');
    expect(form.get('From')).toBe('+15005550006');
    const text = form.get('Body') ?? '';
    expect(text.startsWith('Outpost: checkout API is failing in eu-west-1: xxx')).toBe(true);
    expect(text.length).toBeLessThanOrEqual(160);
  });

  it('places a call with XML-escaped TwiML', async () => {
    const { result, requests } = await run(
      'CALL',
      { name: 'call', number: '+15551234567' },
      { CHECK_NAME: 'a <b> & "c"', ALERT_TYPE: 'ALERT_TEST' },
      () => ({ status: 201 }),
    );
    expect(result.outcome).toBe('DELIVERED');
    expect(requests[0]?.url).toBe('/tw/2010-04-01/Accounts/AC0123456789/Calls.json');
    const twiml = new URLSearchParams(requests[0]?.body).get('Twiml') ?? '';
    expect(twiml).toMatch(/<Response><Say>This is a test call from Outpost\. .*<\/Say>.*<\/Response>$/);
    expect(twiml).toContain('a &#60;b&#62; &#38; &#34;c&#34;');
    expect(twiml).not.toContain('<b>');
  });

  it('does not repeat a 500 (it may have been sent), retries a 429 and a refused connection', async () => {
    const failed = await run('SMS', { name: 's', number: '+15551234567' }, {}, () => ({ status: 500 }));
    expect(failed.result).toMatchObject({ outcome: 'FAILED', statusCode: 500 });
    expect(failed.result.error).toMatch(/may have been sent/);

    const limited = await run('SMS', { name: 's', number: '+15551234567' }, {}, () => ({
      status: 429,
      headers: { 'retry-after': '3' },
    }));
    expect(limited.result).toMatchObject({ outcome: 'RETRY', retryAfterMs: 3000 });

    const invalid = await run('CALL', { name: 's', number: '+15551234567' }, {}, () => ({ status: 400 }));
    expect(invalid.result).toMatchObject({ outcome: 'FAILED', statusCode: 400 });

    const refused = await run(
      'SMS',
      { name: 's', number: '+15551234567' },
      {},
      undefined,
      providersFromEnv({ ...env(), OUTPOST_TWILIO_URL: await refusedOrigin() }),
    );
    expect(refused.result).toMatchObject({ outcome: 'RETRY', statusCode: null });
    expect(refused.result.error).toMatch(/ECONNREFUSED/);
    expectNoSecret(refused.result, [token]);
  });

  it('is FAILED naming the variables when Twilio is not configured', async () => {
    const { result, requests } = await run(
      'CALL',
      { name: 'c', number: '+15551234567' },
      {},
      undefined,
      providersFromEnv({}),
    );
    expect(result.error).toBe(
      'SMS and CALL channels need OUTPOST_TWILIO_ACCOUNT_SID, OUTPOST_TWILIO_AUTH_TOKEN and OUTPOST_TWILIO_FROM',
    );
    expect(result.outcome).toBe('FAILED');
    expect(requests).toHaveLength(0);
  });
});
