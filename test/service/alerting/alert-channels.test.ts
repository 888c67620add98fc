import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alertChannelsForNewCheck,
  channelIdsForCheck,
  openChannelDoc,
} from '../../../src/service/alerting/alert-channels/alert-channels.js';
import { expectBadField, icmpBody, testService, type TestService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Account = 'A' | 'B';
const req: TestService['request'] = (...args) => svc.request(...args);

const email = (over: Record<string, unknown> = {}) => ({
  type: 'EMAIL',
  config: { address: 'ops@example.com' },
  ...over,
});

async function createChannel(body: Record<string, unknown> = email(), account: Account = 'A') {
  const res = await req('POST', '/v1/alert-channels', body, account);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function countChannels(): Promise<number> {
  return (await svc.context.db.selectFrom('alert_channels').select('id').execute()).length;
}

/** The stored config with its secrets opened (they are sealed at rest). */
async function storedConfig(id: number): Promise<Record<string, unknown>> {
  const row = await svc.context.db
    .selectFrom('alert_channels')
    .select(['id', 'type', 'doc', 'created_at', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return openChannelDoc(svc.context.db, row).config;
}

const webhook = {
  name: 'hook',
  url: 'http://hooks.example.com/in',
  method: 'PUT',
  headers: [{ key: 'X-A', value: '1', locked: true }],
  queryParameters: [{ key: 'q', value: '2', locked: false }],
  template: '{"check":"{{CHECK_NAME}}"}',
  webhookSecret: 'planted-webhook-secret',
  webhookType: 'WEBHOOK_MSTEAMS',
};

describe('POST /v1/alert-channels', () => {
  it('creates a channel with the defaults', async () => {
    const res = await req('POST', '/v1/alert-channels', email());
    expect(res.statusCode).toBe(201);
    const channel = res.json();
    expect(channel).toEqual({
      id: expect.any(Number),
      type: 'EMAIL',
      config: { address: 'ops@example.com' },
      subscriptions: [],
      sendRecovery: true,
      sendFailure: true,
      sendDegraded: false,
      sslExpiry: false,
      sslExpiryThreshold: 30,
      autoSubscribe: false,
      created_at: expect.any(String),
      updated_at: null,
    });
    expect(new Date(channel.created_at).toISOString()).toBe(channel.created_at);
    expect((await req('GET', `/v1/alert-channels/${channel.id}`)).json()).toEqual(channel);
  });

  const valid: [string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'SLACK',
      { url: 'https://hooks.slack.com/services/T/B/x', channel: '#ops' },
      { url: 'https://hooks.slack.com/services/T/B/x', channel: '#ops' },
    ],
    ['WEBHOOK', webhook, { ...webhook, webhookSecret: '*****' }],
    [
      'WEBHOOK',
      { name: 'defaults', url: 'https://x.example/' },
      { name: 'defaults', url: 'https://x.example/', method: 'POST', headers: [], queryParameters: [] },
    ],
    ['SMS', { name: 'on call', number: '+4915112345678' }, { name: 'on call', number: '+4915112345678' }],
    ['CALL', { name: 'on call', number: '+12025550123' }, { name: 'on call', number: '+12025550123' }],
    [
      'PAGERDUTY',
      { serviceKey: 'planted-pd-key', account: 'acme', serviceName: 'api' },
      { serviceKey: '*****', account: 'acme', serviceName: 'api' },
    ],
    [
      'OPSGENIE',
      { name: 'og', apiKey: 'planted-og-key', region: 'EU', priority: 'P1' },
      { name: 'og', apiKey: '*****', region: 'EU', priority: 'P1' },
    ],
  ];
  it.each(valid)(
    'creates a %s channel and answers its config with secrets masked',
    async (type, config, shown) => {
      const res = await req('POST', '/v1/alert-channels', { type, config });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.body).not.toContain('planted');
      expect(res.json()).toMatchObject({ type, config: shown });
      expect(Object.keys(res.json().config).sort()).toEqual(Object.keys(shown).sort());
    },
  );

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing type', { type: undefined }, 'type'],
    ['unknown type', { type: 'FAX' }, 'type'],
    ['missing config', { config: undefined }, 'config'],
    ['EMAIL bad address', { config: { address: 'not-an-email' } }, 'config.address'],
    ['EMAIL missing address', { config: {} }, 'config.address'],
    ['EMAIL unknown config field', { config: { address: 'a@b.co', cc: 'x' } }, 'config.cc'],
    ['SLACK over http', { type: 'SLACK', config: { url: 'http://hooks.slack.com/x' } }, 'config.url'],
    ['WEBHOOK missing name', { type: 'WEBHOOK', config: { url: 'https://x.example' } }, 'config.name'],
    ['WEBHOOK ftp url', { type: 'WEBHOOK', config: { name: 'n', url: 'ftp://x.example' } }, 'config.url'],
    [
      'WEBHOOK bad method',
      { type: 'WEBHOOK', config: { name: 'n', url: 'https://x.example', method: 'TRACE' } },
      'config.method',
    ],
    [
      'WEBHOOK header without value',
      { type: 'WEBHOOK', config: { name: 'n', url: 'https://x.example', headers: [{ key: 'k' }] } },
      'config.headers[0].value',
    ],
    [
      'SMS number without plus',
      { type: 'SMS', config: { name: 'n', number: '4915112345678' } },
      'config.number',
    ],
    [
      'SMS number of 16 digits',
      { type: 'SMS', config: { name: 'n', number: '+1234567890123456' } },
      'config.number',
    ],
    ['CALL missing name', { type: 'CALL', config: { number: '+12025550123' } }, 'config.name'],
    ['PAGERDUTY missing serviceKey', { type: 'PAGERDUTY', config: {} }, 'config.serviceKey'],
    [
      'OPSGENIE bad region',
      { type: 'OPSGENIE', config: { name: 'n', apiKey: 'k', region: 'APAC', priority: 'P1' } },
      'config.region',
    ],
    [
      'OPSGENIE priority P6',
      { type: 'OPSGENIE', config: { name: 'n', apiKey: 'k', region: 'US', priority: 'P6' } },
      'config.priority',
    ],
    [
      'OPSGENIE the mask as apiKey',
      { type: 'OPSGENIE', config: { name: 'n', apiKey: '*****', region: 'US', priority: 'P1' } },
      'config.apiKey',
    ],
    ['sslExpiryThreshold 0', { sslExpiryThreshold: 0 }, 'sslExpiryThreshold'],
    ['sslExpiryThreshold 31', { sslExpiryThreshold: 31 }, 'sslExpiryThreshold'],
    ['sendFailure as string', { sendFailure: 'yes' }, 'sendFailure'],
    ['unknown field', { name: 'x' }, 'name'],
    ['subscription without target', { subscriptions: [{ activated: true }] }, 'subscriptions[0]'],
    [
      'subscription with both targets',
      { subscriptions: [{ checkId: 'c', groupId: 1, activated: true }] },
      'subscriptions[0]',
    ],
    [
      'subscription to an unknown check',
      { subscriptions: [{ checkId: 'nope', activated: true }] },
      'subscriptions[0].checkId',
    ],
    [
      'subscription to an unknown group',
      { subscriptions: [{ groupId: 999_999, activated: true }] },
      'subscriptions[0].groupId',
    ],
    ['subscription without activated', { subscriptions: [{ groupId: 1 }] }, 'subscriptions[0].activated'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field and writes nothing', async (_name, over, field) => {
    const before = await countChannels();
    const res = await req('POST', '/v1/alert-channels', email(over));
    expectBadField(res, field);
    expect(await countChannels()).toBe(before);
  });

  it('accepts sslExpiryThreshold at 1 and 30 and stores the flags it is given', async () => {
    expect((await createChannel(email({ sslExpiryThreshold: 1 }))).sslExpiryThreshold).toBe(1);
    const flags = {
      sendRecovery: false,
      sendFailure: false,
      sendDegraded: true,
      sslExpiry: true,
      sslExpiryThreshold: 30,
      autoSubscribe: true,
    };
    expect(await createChannel(email(flags))).toMatchObject(flags);
  });

  it('subscribes checks and groups of the account, once each', async () => {
    const check = (await req('POST', '/v1/checks/icmp', icmpBody({ activated: false }))).json();
    const group = (
      await req('POST', '/v1/check-groups', { name: 'g', activated: true, apiCheckDefaults: {} })
    ).json();
    const subscriptions = [
      { checkId: check.id, activated: true },
      { groupId: group.id, activated: false },
    ];
    expect((await createChannel(email({ subscriptions }))).subscriptions).toEqual(subscriptions);
    expectBadField(
      await req(
        'POST',
        '/v1/alert-channels',
        email({ subscriptions: [subscriptions[0], { ...subscriptions[0], activated: false }] }),
      ),
      'subscriptions[1]',
    );
  });
});

describe('GET /v1/alert-channels', () => {
  it('lists by id with limit and page, and gives 404/400 for bad ids', async () => {
    const local = await testService();
    try {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await local.app.inject({
          method: 'POST',
          url: '/v1/alert-channels',
          headers: local.auth(),
          payload: email(),
        });
        ids.push(res.json().id);
      }
      const get = (url: string) => local.app.inject({ method: 'GET', url, headers: local.auth() });
      expect((await get('/v1/alert-channels')).json().map((c: { id: number }) => c.id)).toEqual(ids);
      expect(
        (await get('/v1/alert-channels?limit=1&page=3')).json().map((c: { id: number }) => c.id),
      ).toEqual([ids[2]]);
      expectBadField(await get('/v1/alert-channels?limit=101'), 'limit', 'querystring');
      expect((await get('/v1/alert-channels/2147483647')).statusCode).toBe(404);
      expectBadField(await get('/v1/alert-channels/x1'), 'id', 'params');
    } finally {
      await local.close();
    }
  });
});

describe('PUT /v1/alert-channels/{id}', () => {
  it('keeps a secret sent back masked, replaces a new one, and sets updated_at', async () => {
    const channel = await createChannel({
      type: 'OPSGENIE',
      config: { name: 'og', apiKey: 'first-key', region: 'US', priority: 'P3' },
    });
    const same = await req('PUT', `/v1/alert-channels/${channel.id}`, {
      config: { ...channel.config, priority: 'P2' },
      sendDegraded: true,
    });
    expect(same.statusCode).toBe(200);
    expect(same.json()).toEqual({
      ...channel,
      config: { ...channel.config, priority: 'P2' },
      sendDegraded: true,
      updated_at: expect.any(String),
    });
    expect(await storedConfig(channel.id)).toEqual({
      name: 'og',
      apiKey: 'first-key',
      region: 'US',
      priority: 'P2',
    });

    const rotated = await req('PUT', `/v1/alert-channels/${channel.id}`, {
      config: { ...channel.config, apiKey: 'second-key' },
    });
    expect(rotated.json().config.apiKey).toBe('*****');
    expect((await storedConfig(channel.id)).apiKey).toBe('second-key');
  });

  it('changes type only with a config of the new type, and never resolves a mask across types', async () => {
    const channel = await createChannel({ type: 'PAGERDUTY', config: { serviceKey: 'pd' } });
    expectBadField(await req('PUT', `/v1/alert-channels/${channel.id}`, { type: 'EMAIL' }), 'config');
    expectBadField(
      await req('PUT', `/v1/alert-channels/${channel.id}`, {
        type: 'OPSGENIE',
        config: { name: 'n', apiKey: '*****', region: 'US', priority: 'P1' },
      }),
      'config.apiKey',
    );
    expectBadField(
      await req('PUT', `/v1/alert-channels/${channel.id}`, { type: 'EMAIL', config: { address: 'x' } }),
      'config.address',
    );
    expect((await req('GET', `/v1/alert-channels/${channel.id}`)).json()).toEqual(channel);
    const res = await req('PUT', `/v1/alert-channels/${channel.id}`, {
      type: 'EMAIL',
      config: { address: 'new@example.com' },
    });
    expect(res.json()).toMatchObject({ type: 'EMAIL', config: { address: 'new@example.com' } });
    expect((await req('PUT', '/v1/alert-channels/2147483647', { sslExpiry: true })).statusCode).toBe(404);
    expectBadField(
      await req('PUT', `/v1/alert-channels/${channel.id}`, { sslExpiryThreshold: 31 }),
      'sslExpiryThreshold',
    );
  });
});

describe('DELETE /v1/alert-channels/{id}', () => {
  it('deletes (204), then answers 404', async () => {
    const channel = await createChannel();
    const res = await req('DELETE', `/v1/alert-channels/${channel.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await req('GET', `/v1/alert-channels/${channel.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/alert-channels/${channel.id}`)).statusCode).toBe(404);
  });

  it('takes a deleted channel out of check groups’ alertChannelSubscriptions', async () => {
    const channel = await createChannel();
    const keep = await createChannel();
    const subscriptions = [
      { alertChannelId: channel.id, activated: true },
      { alertChannelId: keep.id, activated: false },
    ];
    const group = (
      await req('POST', '/v1/check-groups', {
        name: 'g',
        activated: true,
        apiCheckDefaults: {},
        alertChannelSubscriptions: subscriptions,
      })
    ).json();
    expect((await req('DELETE', `/v1/alert-channels/${channel.id}`)).statusCode).toBe(204);
    const after = (await req('GET', `/v1/check-groups/${group.id}`)).json();
    expect(after.alertChannelSubscriptions).toEqual([subscriptions[1]]);
  });

  it('leaves out subscriptions of a check deleted since', async () => {
    const check = (await req('POST', '/v1/checks/icmp', icmpBody({ activated: false }))).json();
    const channel = await createChannel(email({ subscriptions: [{ checkId: check.id, activated: true }] }));
    expect(channel.subscriptions).toHaveLength(1);
    await req('DELETE', `/v1/checks/${check.id}`);
    expect((await req('GET', `/v1/alert-channels/${channel.id}`)).json().subscriptions).toEqual([]);
  });
});

describe('two accounts', () => {
  it('never shows, changes or deletes another account’s channel (404), nor subscribes its checks', async () => {
    const channel = await createChannel(email({ config: { address: 'a-only@example.com' } }));
    expect((await req('GET', `/v1/alert-channels/${channel.id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', '/v1/alert-channels?limit=100', undefined, 'B')).body).not.toContain(
      'a-only@example.com',
    );
    expect((await req('PUT', `/v1/alert-channels/${channel.id}`, { sslExpiry: true }, 'B')).statusCode).toBe(
      404,
    );
    expect((await req('DELETE', `/v1/alert-channels/${channel.id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', `/v1/alert-channels/${channel.id}`)).json()).toEqual(channel);

    const checkOfA = (await req('POST', '/v1/checks/icmp', icmpBody({ activated: false }))).json();
    expectBadField(
      await req(
        'POST',
        '/v1/alert-channels',
        email({ subscriptions: [{ checkId: checkOfA.id, activated: true }] }),
        'B',
      ),
      'subscriptions[0].checkId',
    );
  });
});

describe('alertChannelsForNewCheck and channelIdsForCheck', () => {
  it('gives every channel with autoAssignAlerts, else only autoSubscribe ones; alerting takes both sides', async () => {
    const local = await testService();
    try {
      const make = async (payload: Record<string, unknown>, account: Account = 'A') =>
        (
          await local.app.inject({
            method: 'POST',
            url: '/v1/alert-channels',
            headers: local.auth(account),
            payload,
          })
        ).json();
      const db = local.context.db;
      const accountId = local.accountA.id;
      expect(await alertChannelsForNewCheck(db, accountId, true)).toEqual([]);
      const plain = await make(email());
      const auto = await make(email({ autoSubscribe: true }));
      await make(email({ autoSubscribe: true }), 'B');
      expect(await alertChannelsForNewCheck(db, accountId, true)).toEqual([
        { alertChannelId: plain.id, activated: true },
        { alertChannelId: auto.id, activated: true },
      ]);
      expect(await alertChannelsForNewCheck(db, accountId, false)).toEqual([
        { alertChannelId: auto.id, activated: true },
      ]);

      const group = (
        await local.app.inject({
          method: 'POST',
          url: '/v1/check-groups',
          headers: local.auth(),
          payload: { name: 'g', activated: true, apiCheckDefaults: {} },
        })
      ).json();
      const byGroup = await make(email({ subscriptions: [{ groupId: group.id, activated: true }] }));
      await make(email({ subscriptions: [{ groupId: group.id, activated: false }] }));
      const ids = await channelIdsForCheck(db, accountId, {
        id: 'some-check',
        groupId: group.id,
        alertChannelSubscriptions: [
          { alertChannelId: plain.id, activated: true },
          { alertChannelId: auto.id, activated: false },
        ],
      });
      expect(ids).toEqual([plain.id, byGroup.id]);
    } finally {
      await local.close();
    }
  });
});
