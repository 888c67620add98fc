import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_TYPE_REGISTRY } from '../../../src/service/checks/types/registry.js';
import { icmpBody, type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const post = (body: unknown, headers = svc.auth(), query = '') =>
  svc.app.inject({ method: 'POST', url: `/v1/checks/icmp${query}`, headers, payload: body as object });

async function countChecks(): Promise<number> {
  const row = await svc.context.db
    .selectFrom('checks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('POST /v1/checks/icmp', () => {
  it('creates a check with the spec defaults', async () => {
    const res = await post(icmpBody({ request: { hostname: 'localhost' } }));
    expect(res.statusCode).toBe(201);
    const check = res.json();
    expect(check).toMatchObject({
      checkType: 'ICMP',
      name: 'ping loopback',
      activated: true,
      muted: false,
      doubleCheck: true,
      shouldFail: false,
      useGlobalAlertSettings: true,
      runParallel: false,
      frequency: 10,
      degradedResponseTime: 10000,
      maxResponseTime: 20000,
      degradedPacketLossThreshold: 10,
      maxPacketLossThreshold: 20,
      request: { hostname: 'localhost', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
      alertChannels: { email: [], webhook: [], slack: [], sms: [] },
      updated_at: null,
    });
    expect(check.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(check.created_at)).not.toBeNaN();
  });

  it('masks secret environment variables in responses', async () => {
    const res = await post(
      icmpBody({
        environmentVariables: [
          { key: 'TOKEN', value: 's3cr3t-planted', secret: true },
          { key: 'PLAIN', value: 'v' },
        ],
      }),
    );
    expect(res.statusCode).toBe(201);
    expect(res.body).not.toContain('s3cr3t-planted');
    expect(res.json().environmentVariables).toEqual([
      { key: 'TOKEN', value: '*****', secret: true, locked: false },
      { key: 'PLAIN', value: 'v', secret: false, locked: false },
    ]);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing name', { name: undefined }, 'name'],
    ['missing request', { request: undefined }, 'request'],
    ['missing hostname', { request: { pingCount: 3 } }, 'request.hostname'],
    ['pingCount 0', { request: { hostname: 'a', pingCount: 0 } }, 'request.pingCount'],
    ['pingCount 51', { request: { hostname: 'a', pingCount: 51 } }, 'request.pingCount'],
    ['bad ipFamily', { request: { hostname: 'a', ipFamily: 'IPv5' } }, 'request.ipFamily'],
    [
      'bad assertion source',
      {
        request: {
          hostname: 'a',
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '1' }],
        },
      },
      'request.assertions[0].source',
    ],
    ['frequency 3', { frequency: 3 }, 'frequency'],
    ['frequency 0 without offset', { frequency: 0 }, 'frequencyOffset'],
    ['frequency 0 offset 15', { frequency: 0, frequencyOffset: 15 }, 'frequencyOffset'],
    ['frequency 10 offset 101', { frequency: 10, frequencyOffset: 101 }, 'frequencyOffset'],
    ['frequency 120 offset 3', { frequency: 120, frequencyOffset: 3 }, 'frequencyOffset'],
    ['offset 0', { frequencyOffset: 0 }, 'frequencyOffset'],
    ['degradedResponseTime -1', { degradedResponseTime: -1 }, 'degradedResponseTime'],
    ['maxResponseTime 300001', { maxResponseTime: 300001 }, 'maxResponseTime'],
    ['degraded loss 0', { degradedPacketLossThreshold: 0 }, 'degradedPacketLossThreshold'],
    ['max loss 101', { maxPacketLossThreshold: 101 }, 'maxPacketLossThreshold'],
    [
      'max loss below degraded',
      { degradedPacketLossThreshold: 50, maxPacketLossThreshold: 40 },
      'maxPacketLossThreshold',
    ],
    ['description 501', { description: 'x'.repeat(501) }, 'description'],
    [
      '101 env vars',
      { environmentVariables: Array.from({ length: 101 }, (_, i) => ({ key: `K${i}`, value: 'v' })) },
      'environmentVariables',
    ],
    ['unknown location', { locations: ['mars-1'] }, 'locations[0]'],
    ['groupOrder -1', { groupOrder: -1 }, 'groupOrder'],
    ['unknown field', { colour: 'red' }, 'colour'],
    ['string boolean', { activated: 'true' }, 'activated'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field', async (_label, overrides, field) => {
    const before = await countChecks();
    const body = icmpBody(overrides);
    for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete body[k];
    const res = await post(body);
    expect(res.statusCode).toBe(400);
    const err = res.json();
    expect(err).toMatchObject({ statusCode: 400, error: 'Bad Request', attributes: { field } });
    expect(err.message).toContain(field);
    expect(await countChecks()).toBe(before);
  });

  it('accepts every limit at its edge', async () => {
    const res = await post(
      icmpBody({
        frequency: 0,
        frequencyOffset: 30,
        degradedResponseTime: 0,
        maxResponseTime: 300000,
        degradedPacketLossThreshold: 0.1,
        maxPacketLossThreshold: 100,
        description: 'x'.repeat(500),
        environmentVariables: Array.from({ length: 100 }, (_, i) => ({ key: `K${i}`, value: 'v' })),
        request: { hostname: 'h', pingCount: 50 },
      }),
    );
    expect(res.statusCode).toBe(201);
    expect((await post(icmpBody({ frequency: 10, frequencyOffset: 100 }))).statusCode).toBe(201);
    expect((await post(icmpBody({ frequency: 1440, frequencyOffset: 24 }))).statusCode).toBe(201);
  });

  it('validates autoAssignAlerts as a boolean', async () => {
    expect((await post(icmpBody(), svc.auth(), '?autoAssignAlerts=false')).statusCode).toBe(201);
    const res = await post(icmpBody(), svc.auth(), '?autoAssignAlerts=maybe');
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field: 'autoAssignAlerts', in: 'querystring' });
  });
});

describe('authentication', () => {
  it.each([
    ['no header', {}],
    ['wrong key', { authorization: 'Bearer op_nope' }],
    ['not bearer', { authorization: 'Basic abc' }],
  ])('%s gives 401 with the spec body', async (_l, headers) => {
    const res = await post(icmpBody(), headers as Record<string, string>);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: expect.any(String),
      attributes: { code: 'OUTPOST_ERR_UNAUTHORIZED' },
    });
  });

  it('rejects an x-service-account header naming another account', async () => {
    const res = await post(icmpBody(), { ...svc.auth('A'), 'x-service-account': svc.accountB.id });
    expect(res.statusCode).toBe(401);
    const ok = await post(icmpBody(), { ...svc.auth('A'), 'x-service-account': svc.accountA.id });
    expect(ok.statusCode).toBe(201);
  });

  it("rejects an x-checkly-account header (what the hosted API's clients send) naming another account", async () => {
    const res = await post(icmpBody(), { ...svc.auth('A'), 'x-checkly-account': svc.accountB.id });
    expect(res.statusCode).toBe(401);
    const both = await post(icmpBody(), {
      ...svc.auth('A'),
      'x-service-account': svc.accountA.id,
      'x-checkly-account': svc.accountB.id,
    });
    expect(both.statusCode).toBe(401);
    const ok = await post(icmpBody(), { ...svc.auth('A'), 'x-checkly-account': svc.accountA.id });
    expect(ok.statusCode).toBe(201);
  });
});

describe('PUT and DELETE /v1/checks/{id}', () => {
  it('updates fields, keeps the rest, and deletes', async () => {
    const created = (await post(icmpBody())).json();
    const res = await svc.app.inject({
      method: 'PUT',
      url: `/v1/checks/${created.id}`,
      headers: svc.auth(),
      payload: {
        heartbeat: {},
        script: '',
        name: 'renamed',
        request: { hostname: '::1', ipFamily: 'IPv6', pingCount: 2 },
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: created.id,
      checkType: 'ICMP',
      name: 'renamed',
      frequency: 10,
      request: { hostname: '::1', ipFamily: 'IPv6' },
    });
    expect(res.json().updated_at).not.toBeNull();

    const badReq = await svc.app.inject({
      method: 'PUT',
      url: `/v1/checks/${created.id}`,
      headers: svc.auth(),
      payload: { heartbeat: {}, script: '', request: { hostname: 'x', pingCount: 99 } },
    });
    expect(badReq.statusCode).toBe(400);
    expect(badReq.json().attributes.field).toBe('request.pingCount');
    const badFreq = await svc.app.inject({
      method: 'PUT',
      url: `/v1/checks/${created.id}`,
      headers: svc.auth(),
      payload: { heartbeat: {}, script: '', frequency: 7 },
    });
    expect(badFreq.statusCode).toBe(400);
    expect(badFreq.json().attributes.field).toBe('frequency');
    const badType = await svc.app.inject({
      method: 'PUT',
      url: `/v1/checks/${created.id}`,
      headers: svc.auth(),
      payload: { heartbeat: {}, script: '', checkType: 'BROWSER' },
    });
    expect(badType.statusCode).toBe(400);
    const stored = (
      await svc.app.inject({ method: 'GET', url: `/v1/checks/${created.id}`, headers: svc.auth() })
    ).json();
    expect(stored.name).toBe('renamed');
    expect(stored.request.pingCount).toBe(2);

    const del = await svc.app.inject({
      method: 'DELETE',
      url: `/v1/checks/${created.id}`,
      headers: svc.auth(),
    });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    const again = await svc.app.inject({
      method: 'DELETE',
      url: `/v1/checks/${created.id}`,
      headers: svc.auth(),
    });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });

  it('gives 404, never 403, for another account’s check', async () => {
    const created = (await post(icmpBody())).json();
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await svc.app.inject({
        method,
        url: `/v1/checks/${created.id}`,
        headers: svc.auth('B'),
        ...(method === 'PUT' ? { payload: { heartbeat: {}, script: '' } } : {}),
      });
      expect(res.statusCode).toBe(404);
    }
    const list = await svc.app.inject({ method: 'GET', url: '/v1/checks', headers: svc.auth('B') });
    expect(list.json()).toEqual([]);
  });

  it('gives 404 for an unknown id', async () => {
    const res = await svc.app.inject({
      method: 'PUT',
      url: '/v1/checks/00000000-0000-0000-0000-000000000000',
      headers: svc.auth(),
      payload: { heartbeat: {}, script: '' },
    });
    expect(res.statusCode).toBe(404);
  });
});

describe('the check-type registry', () => {
  it.each(CHECK_TYPE_REGISTRY.map((e) => [e.checkType, e.path]))(
    '%s: POST /v1/checks/%s is routed and validated by the entry’s create body',
    async (_type, path) => {
      const res = await svc.app.inject({
        method: 'POST',
        url: `/v1/checks/${path}`,
        headers: svc.auth(),
        payload: {},
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().attributes).toMatchObject({ in: 'body', rule: 'required' });
    },
  );
});
