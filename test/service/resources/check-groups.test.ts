import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertGroupExists, CheckGroups } from '../../../src/service/resources/check-groups/check-groups.js';
import { expectBadField, icmpBody, testService, type TestService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Account = 'A' | 'B';
const req: TestService['request'] = (...args) => svc.request(...args);

const minimal = (over: Record<string, unknown> = {}) => ({
  name: 'group',
  activated: true,
  apiCheckDefaults: {},
  ...over,
});

async function createGroup(over: Record<string, unknown> = {}, account: Account = 'A') {
  const res = await req('POST', '/v1/check-groups', minimal(over), account);
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function countGroups(): Promise<number> {
  const rows = await svc.context.db.selectFrom('check_groups').select('id').execute();
  return rows.length;
}

describe('POST /v1/check-groups', () => {
  it('creates a group with every field present and the defaults applied', async () => {
    const res = await req('POST', '/v1/check-groups', minimal({ name: 'defaults' }));
    expect(res.statusCode).toBe(201);
    const group = res.json();
    expect(group).toEqual({
      id: expect.any(Number),
      name: 'defaults',
      activated: true,
      concurrency: 3,
      apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: null },
      muted: false,
      tags: [],
      locations: [],
      browserCheckDefaults: null,
      environmentVariables: null,
      doubleCheck: true,
      useGlobalAlertSettings: true,
      alertSettings: {
        escalationType: 'RUN_BASED',
        runBasedEscalation: { failedRunThreshold: 1 },
        timeBasedEscalation: { minutesFailingThreshold: 5 },
        reminders: { amount: 0, interval: 5 },
        parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      },
      alertChannelSubscriptions: [],
      setupSnippetId: null,
      tearDownSnippetId: null,
      localSetupScript: null,
      localTearDownScript: null,
      runtimeId: null,
      privateLocations: null,
      retryStrategy: 'FALLBACK',
      runParallel: false,
      created_at: expect.any(String),
      updated_at: null,
    });
    expect(new Date(group.created_at).toISOString()).toBe(group.created_at);
  });

  it('stores every field it is given and masks secret variable values', async () => {
    const snippet = (await req('POST', '/v1/snippets', { name: 's', script: 'x' })).json();
    const channel = (
      await req('POST', '/v1/alert-channels', { type: 'EMAIL', config: { address: 'a@b.co' } })
    ).json();
    const location = (
      await req('POST', '/v1/private-locations', { name: 'Lab', slugName: 'lab-groups' })
    ).json();
    const body = minimal({
      name: 'full',
      activated: false,
      concurrency: 7,
      apiCheckDefaults: {
        url: 'https://api.example.com/v1',
        headers: [{ key: 'X-Env', value: 'prod', locked: true }],
        queryParameters: [{ key: 'q', value: '1' }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        basicAuth: { username: 'u', password: 'p' },
      },
      muted: true,
      tags: ['prod', 'api'],
      locations: ['eu-west-1', 'us-east-1'],
      browserCheckDefaults: 'await page.goto(url)',
      environmentVariables: [
        { key: 'TOKEN', value: 'planted-group-secret', secret: true },
        { key: 'PLAIN', value: 'v' },
      ],
      doubleCheck: false,
      useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      setupSnippetId: snippet.id,
      tearDownSnippetId: snippet.id,
      localSetupScript: 'setup()',
      localTearDownScript: 'teardown()',
      runtimeId: '2025.04',
      privateLocations: [location.slugName],
      retryStrategy: {
        type: 'FIXED',
        baseBackoffSeconds: 60,
        maxRetries: 2,
        sameRegion: true,
        onlyOn: ['NETWORK_ERROR'],
      },
      runParallel: true,
    });
    const res = await req('POST', '/v1/check-groups', body);
    expect(res.statusCode).toBe(201);
    expect(res.body).not.toContain('planted-group-secret');
    const { id, created_at, updated_at, ...rest } = res.json();
    expect(rest).toEqual({
      ...body,
      // A partial alertSettings is stored completed with the defaults.
      alertSettings: {
        escalationType: 'RUN_BASED',
        runBasedEscalation: { failedRunThreshold: 2 },
        timeBasedEscalation: { minutesFailingThreshold: 5 },
        reminders: { amount: 0, interval: 5 },
        parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      },
      apiCheckDefaults: { ...body.apiCheckDefaults, basicAuth: { username: 'u', password: '*****' } },
      environmentVariables: [
        { key: 'TOKEN', value: '*****', secret: true, locked: false },
        { key: 'PLAIN', value: 'v', secret: false, locked: false },
      ],
    });
    expect((await req('GET', `/v1/check-groups/${id}`)).json()).toEqual(res.json());
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing name', { name: undefined }, 'name'],
    ['missing activated', { activated: undefined }, 'activated'],
    ['missing apiCheckDefaults', { apiCheckDefaults: undefined }, 'apiCheckDefaults'],
    ['empty name', { name: '' }, 'name'],
    ['name of 256', { name: 'n'.repeat(256) }, 'name'],
    ['activated as string', { activated: 'true' }, 'activated'],
    ['concurrency 0', { concurrency: 0 }, 'concurrency'],
    ['concurrency 1001', { concurrency: 1001 }, 'concurrency'],
    ['concurrency 1.5', { concurrency: 1.5 }, 'concurrency'],
    ['unknown field', { frequency: 10 }, 'frequency'],
    ['unknown apiCheckDefaults field', { apiCheckDefaults: { method: 'GET' } }, 'apiCheckDefaults.method'],
    [
      'header without key',
      { apiCheckDefaults: { headers: [{ value: 'v' }] } },
      'apiCheckDefaults.headers[0].key',
    ],
    [
      'bad assertion source',
      { apiCheckDefaults: { assertions: [{ source: 'LATENCY', comparison: 'EQUALS', target: '1' }] } },
      'apiCheckDefaults.assertions[0].source',
    ],
    [
      'basicAuth without password',
      { apiCheckDefaults: { basicAuth: { username: 'u' } } },
      'apiCheckDefaults.basicAuth.password',
    ],
    ['unknown location', { locations: ['mars-1'] }, 'locations[0]'],
    ['repeated location', { locations: ['eu-west-1', 'eu-west-1'] }, 'locations'],
    ['101 tags', { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 'tags'],
    [
      '101 env vars',
      { environmentVariables: Array.from({ length: 101 }, (_, i) => ({ key: `K${i}`, value: 'v' })) },
      'environmentVariables',
    ],
    ['env var bad key', { environmentVariables: [{ key: '1A', value: 'v' }] }, 'environmentVariables[0].key'],
    ['retryStrategy other string', { retryStrategy: 'ALWAYS' }, 'retryStrategy'],
    ['retryStrategy bad type', { retryStrategy: { type: 'SOMETIMES' } }, 'retryStrategy.type'],
    [
      'retryStrategy 11 retries',
      { retryStrategy: { type: 'FIXED', maxRetries: 11 } },
      'retryStrategy.maxRetries',
    ],
    ['retryStrategy of another string', { retryStrategy: 'NONE' }, 'retryStrategy'],
    ['bad runtimeId', { runtimeId: '2021.01' }, 'runtimeId'],
    ['bad slug', { privateLocations: ['Not A Slug'] }, 'privateLocations[0]'],
    ['unknown private location', { privateLocations: ['nowhere'] }, 'privateLocations[0]'],
    ['unknown snippet', { setupSnippetId: 999_999 }, 'setupSnippetId'],
    ['unknown teardown snippet', { tearDownSnippetId: 999_999 }, 'tearDownSnippetId'],
    [
      'unknown alert channel',
      { alertChannelSubscriptions: [{ alertChannelId: 999_999, activated: true }] },
      'alertChannelSubscriptions[0].alertChannelId',
    ],
    [
      'alertSettings threshold 6',
      { alertSettings: { runBasedEscalation: { failedRunThreshold: 6 } } },
      'alertSettings.runBasedEscalation.failedRunThreshold',
    ],
    ['script over 128 KiB', { localSetupScript: 'x'.repeat(131_073) }, 'localSetupScript'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field and writes nothing', async (_name, over, field) => {
    const before = await countGroups();
    const res = await req('POST', '/v1/check-groups', minimal(over));
    expectBadField(res, field);
    expect(res.json().message).toContain(field);
    expect(await countGroups()).toBe(before);
  });

  it('accepts every limit at its edge', async () => {
    const group = await createGroup({
      name: 'n'.repeat(255),
      concurrency: 1,
      tags: Array.from({ length: 100 }, (_, i) => `t${i}`),
      environmentVariables: Array.from({ length: 100 }, (_, i) => ({ key: `K${i}`, value: 'v' })),
      localSetupScript: 'x'.repeat(131_072),
    });
    expect(group.concurrency).toBe(1);
    expect(group.environmentVariables).toHaveLength(100);
    expect((await createGroup({ concurrency: 1000 })).concurrency).toBe(1000);
  });
});

describe('GET /v1/check-groups', () => {
  it('lists the account’s groups by id, paged by limit and page', async () => {
    const local = await testService();
    try {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await local.app.inject({
          method: 'POST',
          url: '/v1/check-groups',
          headers: local.auth(),
          payload: minimal({ name: `g${i}` }),
        });
        ids.push(res.json().id);
      }
      const list = (q: string) =>
        local.app.inject({ method: 'GET', url: `/v1/check-groups${q}`, headers: local.auth() });
      expect((await list('')).json().map((g: { id: number }) => g.id)).toEqual(ids);
      expect((await list('?limit=2')).json().map((g: { id: number }) => g.id)).toEqual(ids.slice(0, 2));
      expect((await list('?limit=2&page=2')).json().map((g: { id: number }) => g.id)).toEqual(ids.slice(2));
      expect((await list('?limit=100')).statusCode).toBe(200);
      expectBadField(await list('?limit=0'), 'limit', 'querystring');
      expectBadField(await list('?limit=101'), 'limit', 'querystring');
      expectBadField(await list('?page=0'), 'page', 'querystring');
      expectBadField(await list('?sort=name'), 'sort', 'querystring');
    } finally {
      await local.close();
    }
  });
});

describe('GET /v1/check-groups/{id}', () => {
  it('answers 404 for an unknown id and 400 for an id that is not a positive integer', async () => {
    expect((await req('GET', '/v1/check-groups/2147483647')).statusCode).toBe(404);
    expect((await req('GET', '/v1/check-groups/2147483647')).json()).toMatchObject({
      statusCode: 404,
      error: 'Not Found',
    });
    expectBadField(await req('GET', '/v1/check-groups/abc'), 'id', 'params');
    expectBadField(await req('GET', '/v1/check-groups/0'), 'id', 'params');
    expectBadField(await req('GET', '/v1/check-groups/2147483648'), 'id', 'params');
  });
});

describe('PUT /v1/check-groups/{id}', () => {
  it('replaces the given fields, keeps the rest and sets updated_at', async () => {
    const group = await createGroup({ name: 'before', tags: ['a'], concurrency: 5 });
    const res = await req('PUT', `/v1/check-groups/${group.id}`, {
      name: 'after',
      retryStrategy: { type: 'FIXED' },
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json();
    expect(updated).toEqual({
      ...group,
      name: 'after',
      retryStrategy: { type: 'FIXED' },
      updated_at: expect.any(String),
    });
    expect(Date.parse(updated.updated_at)).not.toBeNaN();
    expect((await req('GET', `/v1/check-groups/${group.id}`)).json()).toEqual(updated);
  });

  it('keeps a secret value sent back masked and refuses to unset secret', async () => {
    const group = await createGroup({
      environmentVariables: [{ key: 'TOKEN', value: 'kept-secret', secret: true }],
    });
    const res = await req('PUT', `/v1/check-groups/${group.id}`, {
      environmentVariables: [...group.environmentVariables, { key: 'NEW', value: 'n' }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().environmentVariables[0]).toEqual({
      key: 'TOKEN',
      value: '*****',
      secret: true,
      locked: false,
    });
    const row = await svc.context.db
      .selectFrom('check_groups')
      .select(['id', 'doc', 'created_at', 'updated_at'])
      .where('id', '=', group.id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.doc).environmentVariables[0].value).toMatch(/^v1:/);
    expect(new CheckGroups(svc.context.db).open(row).environmentVariables?.[0]?.value).toBe('kept-secret');

    const unset = await req('PUT', `/v1/check-groups/${group.id}`, {
      environmentVariables: [{ key: 'TOKEN', value: 'x', secret: false }],
    });
    expectBadField(unset, 'environmentVariables[0].secret');
    const maskOfNothing = await req('PUT', `/v1/check-groups/${group.id}`, {
      environmentVariables: [{ key: 'OTHER', value: '*****' }],
    });
    expectBadField(maskOfNothing, 'environmentVariables[0].value');
  });

  it('validates the body like create, writes nothing when rejected, and gives 404 for unknown ids', async () => {
    const group = await createGroup({ name: 'stable' });
    expectBadField(await req('PUT', `/v1/check-groups/${group.id}`, { concurrency: 0 }), 'concurrency');
    expectBadField(
      await req('PUT', `/v1/check-groups/${group.id}`, { name: 'x', setupSnippetId: 999_999 }),
      'setupSnippetId',
    );
    expectBadField(await req('PUT', `/v1/check-groups/${group.id}`, { checkType: 'API' }), 'checkType');
    expect((await req('GET', `/v1/check-groups/${group.id}`)).json()).toEqual(group);
    expect((await req('PUT', '/v1/check-groups/2147483647', { name: 'x' })).statusCode).toBe(404);
  });
});

describe('DELETE /v1/check-groups/{id}', () => {
  it('deletes an empty group (204), then answers 404', async () => {
    const group = await createGroup();
    const res = await req('DELETE', `/v1/check-groups/${group.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await req('GET', `/v1/check-groups/${group.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/check-groups/${group.id}`)).statusCode).toBe(404);
  });

  it('refuses with 409 while a check belongs to the group', async () => {
    const group = await createGroup();
    const check = (
      await req('POST', '/v1/checks/icmp', icmpBody({ groupId: group.id, activated: false }))
    ).json();
    const res = await req('DELETE', `/v1/check-groups/${group.id}`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: expect.stringContaining('still holds 1 check'),
      attributes: { id: String(group.id), checkIds: [check.id], code: 'OUTPOST_ERR_GROUP_NOT_EMPTY' },
    });
    expect((await req('GET', `/v1/check-groups/${group.id}`)).statusCode).toBe(200);
    expect((await req('DELETE', `/v1/checks/${check.id}`)).statusCode).toBe(204);
    expect((await req('DELETE', `/v1/check-groups/${group.id}`)).statusCode).toBe(204);
  });
});

describe('two accounts', () => {
  it('never shows, changes or deletes another account’s group (404)', async () => {
    const group = await createGroup({ name: 'A only' });
    expect((await req('GET', `/v1/check-groups/${group.id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', '/v1/check-groups?limit=100', undefined, 'B')).json()).toEqual([]);
    expect((await req('PUT', `/v1/check-groups/${group.id}`, { name: 'stolen' }, 'B')).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/check-groups/${group.id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', `/v1/check-groups/${group.id}`)).json()).toEqual(group);
  });

  it('refuses references to another account’s snippets, channels and private locations', async () => {
    const snippet = (await req('POST', '/v1/snippets', { name: 's', script: 'x' }, 'B')).json();
    const channel = (
      await req('POST', '/v1/alert-channels', { type: 'EMAIL', config: { address: 'b@b.co' } }, 'B')
    ).json();
    await req('POST', '/v1/private-locations', { name: 'B lab', slugName: 'b-only' }, 'B');
    expectBadField(
      await req('POST', '/v1/check-groups', minimal({ setupSnippetId: snippet.id })),
      'setupSnippetId',
    );
    expectBadField(
      await req(
        'POST',
        '/v1/check-groups',
        minimal({ alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }] }),
      ),
      'alertChannelSubscriptions[0].alertChannelId',
    );
    expectBadField(
      await req('POST', '/v1/check-groups', minimal({ privateLocations: ['b-only'] })),
      'privateLocations[0]',
    );
  });

  it('assertGroupExists accepts the account’s own group and null, and refuses another account’s', async () => {
    const group = await createGroup();
    const db = svc.context.db;
    await expect(assertGroupExists(db, svc.accountA.id, group.id)).resolves.toBeUndefined();
    await expect(assertGroupExists(db, svc.accountA.id, null)).resolves.toBeUndefined();
    await expect(assertGroupExists(db, svc.accountB.id, group.id)).rejects.toMatchObject({
      statusCode: 400,
      attributes: { field: 'groupId', in: 'body', rule: 'exists' },
    });
  });
});

describe('GET /v1/check-groups/{id}/checks', () => {
  it("answers the group's checks with the group's settings applied, and 404 outside the group", async () => {
    const group = (
      await req('POST', '/v1/check-groups', {
        name: 'applied',
        activated: true,
        apiCheckDefaults: {},
        locations: ['eu-central-1'],
        runtimeId: '2025.04',
        environmentVariables: [
          { key: 'SHARED', value: 'from-group' },
          { key: 'GROUP_ONLY', value: 'g' },
        ],
        useGlobalAlertSettings: false,
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 3 } },
        retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 30, maxRetries: 2 },
      })
    ).json();
    const member = await req('POST', '/v1/checks/tcp', {
      name: 'member',
      activated: false,
      groupId: group.id,
      locations: ['us-east-1'],
      environmentVariables: [{ key: 'SHARED', value: 'from-check' }],
      request: { hostname: 'db', port: 5432 },
    });
    expect(member.statusCode, member.body).toBe(201);
    const outsider = (
      await req('POST', '/v1/checks/tcp', {
        name: 'outside',
        activated: false,
        request: { hostname: 'h', port: 1 },
      })
    ).json();

    const list = await req('GET', `/v1/check-groups/${group.id}/checks`);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toHaveLength(1);
    const [applied] = list.json();
    expect(applied).toMatchObject({
      id: member.json().id,
      locations: ['eu-central-1'],
      runtimeId: '2025.04',
      useGlobalAlertSettings: false,
      alertSettings: { runBasedEscalation: { failedRunThreshold: 3 } },
      retryStrategy: { type: 'LINEAR', maxRetries: 2 },
    });
    expect(applied.environmentVariables).toEqual([
      { key: 'GROUP_ONLY', value: 'g', locked: false, secret: false },
      { key: 'SHARED', value: 'from-check', locked: false, secret: false },
    ]);
    const one = await req('GET', `/v1/check-groups/${group.id}/checks/${member.json().id}`);
    expect(one.json()).toEqual(applied);
    // The check itself is unchanged: the group's settings are applied in the answer only.
    expect((await req('GET', `/v1/checks/${member.json().id}`)).json().locations).toEqual(['us-east-1']);

    expect((await req('GET', `/v1/check-groups/${group.id}/checks/${outsider.id}`)).statusCode).toBe(404);
    expect((await req('GET', '/v1/check-groups/999999/checks')).statusCode).toBe(404);
    expect((await req('GET', `/v1/check-groups/${group.id}/checks`, undefined, 'B')).statusCode).toBe(404);
    await req('DELETE', `/v1/checks/${member.json().id}`);
    await req('DELETE', `/v1/checks/${outsider.id}`);
  });
});
