import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/index.js';
import { isCredentialHeader } from '../../src/common/credential-headers.js';
import { apiBody, claimJobs, expectBadField, type TestService, testService } from '../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc?.close());

type Pair = { key: string; value: string };

/** The job the agent gets for a check, claimed at once. */
async function jobOf(checkId: string): Promise<Job> {
  const res = await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
  expect(res.statusCode, res.body).toBe(201);
  const jobs = await claimJobs(svc, randomUUID(), { runtimes: ['2026.04'] });
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
}

/** GET then PUT the same body back (plus the update body's required `heartbeat` and `script`). */
async function roundTrip(checkId: string): Promise<Record<string, unknown>> {
  const read = (await svc.request('GET', `/v1/checks/${checkId}`)).json();
  const { id: _i, created_at: _c, updated_at: _u, alertChannels: _a, ...body } = read;
  const put = await svc.request('PUT', `/v1/checks/${checkId}`, { ...body, heartbeat: {}, script: null });
  expect(put.statusCode, put.body).toBe(200);
  return put.json();
}

const SECRET = 'sk-live-4b1d9e';

describe('credential values in checks', () => {
  const headers: Pair[] = [
    { key: 'authorization', value: `Bearer ${SECRET}-1` },
    { key: 'PROXY-AUTHORIZATION', value: `Basic ${SECRET}-2` },
    { key: 'X-API-KEY', value: `${SECRET}-3` },
    { key: 'Cookie', value: `a=${SECRET}-4` },
    { key: 'Cookie', value: `b=${SECRET}-5` },
    { key: 'X-Auth-Token', value: `${SECRET}-6` },
    { key: 'X-Service-Token', value: `${SECRET}-7` },
    { key: 'Api-Key', value: `${SECRET}-8` },
    { key: 'X-Ref', value: '{{TOKEN}}' },
    { key: 'Authorization-Ref', value: '{{ TOKEN }}' },
    { key: 'X-Bearer-Ref', value: 'Bearer {{TOKEN}}' },
    { key: 'Accept', value: 'application/json' },
  ];
  const queryParameters: Pair[] = [
    { key: 'api_key', value: `${SECRET}-9` },
    { key: 'access_token', value: `${SECRET}-10` },
    { key: 'page', value: '2' },
  ];
  let checkId: string;

  beforeAll(async () => {
    const res = await svc.request(
      'POST',
      '/v1/checks/api',
      apiBody({
        activated: false,
        request: {
          method: 'GET',
          url: `https://user:${SECRET}-11@api.example.test/v1`,
          headers,
          queryParameters,
          basicAuth: { username: 'u', password: `${SECRET}-12` },
        },
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.body).not.toContain(SECRET);
    checkId = res.json().id;
  });

  it('are masked in GET, list and PUT answers; a bare {{VARIABLE}} reference stays visible', async () => {
    const one = await svc.request('GET', `/v1/checks/${checkId}`);
    const list = await svc.request('GET', '/v1/checks');
    for (const res of [one, list]) expect(res.body).not.toContain(SECRET);
    const request = one.json().request;
    expect(request.url).toBe('https://user:*****@api.example.test/v1');
    expect(request.basicAuth).toEqual({ username: 'u', password: '*****' });
    expect((request.headers as Pair[]).map((h) => h.value)).toEqual([
      '*****',
      '*****',
      '*****',
      '*****',
      '*****',
      '*****',
      '*****',
      '*****',
      '{{TOKEN}}',
      '{{ TOKEN }}',
      'Bearer {{TOKEN}}',
      'application/json',
    ]);
    expect((request.queryParameters as Pair[]).map((q) => q.value)).toEqual(['*****', '*****', '2']);
    expect(JSON.stringify(await roundTrip(checkId))).not.toContain(SECRET);
  });

  it('survive a GET → PUT round trip: the agent still gets every real value, in place', async () => {
    await roundTrip(checkId);
    await roundTrip(checkId);
    const job = await jobOf(checkId);
    const request = job.check.request as { url: string; headers: Pair[]; queryParameters: Pair[] };
    expect(request.headers).toEqual(headers);
    expect(request.queryParameters).toEqual(queryParameters);
    expect(request.url).toBe(`https://user:${SECRET}-11@api.example.test/v1`);
    expect((job.check.request as { basicAuth: { password: string } }).basicAuth.password).toBe(
      `${SECRET}-12`,
    );
  });

  it('a new value replaces the stored one; a removed header is gone', async () => {
    const read = (await svc.request('GET', `/v1/checks/${checkId}`)).json();
    const changed = (read.request.headers as Pair[])
      .filter((h) => h.key !== 'X-Auth-Token')
      .map((h) => (h.key === 'X-API-KEY' ? { ...h, value: 'new-key' } : h));
    const put = await svc.request('PUT', `/v1/checks/${checkId}`, {
      request: { ...read.request, headers: changed },
      heartbeat: {},
      script: null,
    });
    expect(put.statusCode, put.body).toBe(200);
    const sent = (await jobOf(checkId)).check.request as { headers: Pair[] };
    expect(sent.headers.find((h) => h.key === 'X-API-KEY')?.value).toBe('new-key');
    expect(sent.headers.some((h) => h.key === 'X-Auth-Token')).toBe(false);
    // The two Cookie headers keep their own values, in order.
    expect(sent.headers.filter((h) => h.key === 'Cookie').map((h) => h.value)).toEqual([
      `a=${SECRET}-4`,
      `b=${SECRET}-5`,
    ]);
  });

  it.each([
    [
      'a header with nothing stored',
      { headers: [{ key: 'X-New-Token', value: '*****' }] },
      'request.headers[0].value',
    ],
    [
      'a password with no basic auth stored',
      { basicAuth: { username: 'x', password: '*****' } },
      'request.basicAuth.password',
    ],
    ['a masked password in another URL', { url: 'https://user:*****@other.example.test/' }, 'request.url'],
  ])('refuses the mask standing for nothing (%s), naming the field', async (_name, request, field) => {
    const plain = await svc.request(
      'POST',
      '/v1/checks/api',
      apiBody({ activated: false, request: { method: 'GET', url: 'https://api.example.test/' } }),
    );
    const id = plain.json().id;
    const res = await svc.request('PUT', `/v1/checks/${id}`, {
      request: { method: 'GET', url: 'https://api.example.test/', ...request },
      heartbeat: {},
      script: null,
    });
    expectBadField(res, field);
  });

  it('a clear value that looks sealed (v1:…) reaches the agent unchanged', async () => {
    const res = await svc.request(
      'POST',
      '/v1/checks/api',
      apiBody({
        activated: false,
        request: {
          method: 'GET',
          url: 'https://api.example.test/',
          headers: [{ key: 'X-Api-Key', value: 'v1:AAAA' }],
        },
      }),
    );
    const job = await jobOf(res.json().id);
    expect((job.check.request as { headers: Pair[] }).headers).toEqual([
      { key: 'X-Api-Key', value: 'v1:AAAA' },
    ]);
  });

  it('keeps a check’s secret variable sent back masked', async () => {
    const res = await svc.request(
      'POST',
      '/v1/checks/api',
      apiBody({
        activated: false,
        environmentVariables: [{ key: 'TOKEN', value: `${SECRET}-var`, secret: true }],
      }),
    );
    const id = res.json().id;
    await roundTrip(id);
    const job = await jobOf(id);
    expect(job.environmentVariables.find((v) => v.key === 'TOKEN')?.value).toBe(`${SECRET}-var`);
  });
});

describe('credential values in groups, alert channels and variables', () => {
  it('group apiCheckDefaults: masked on read, kept on GET → PUT, real in the job', async () => {
    const created = await svc.request('POST', '/v1/check-groups', {
      name: 'g',
      activated: true,
      apiCheckDefaults: {
        url: 'https://api.example.test',
        headers: [{ key: 'Authorization', value: `Bearer ${SECRET}-g1` }],
        basicAuth: { username: 'g', password: `${SECRET}-g2` },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.body).not.toContain(SECRET);
    const { id, created_at: _c, updated_at: _u, ...body } = created.json();
    const put = await svc.request('PUT', `/v1/check-groups/${id}`, body);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.body).not.toContain(SECRET);
    const check = await svc.request(
      'POST',
      '/v1/checks/api',
      apiBody({ activated: false, groupId: id, request: { method: 'GET', url: '{{GROUP_BASE_URL}}/x' } }),
    );
    const job = await jobOf(check.json().id);
    const request = job.check.request as { headers: Pair[]; basicAuth: { password: string } };
    expect(request.headers).toContainEqual({ key: 'Authorization', value: `Bearer ${SECRET}-g1` });
    expect(request.basicAuth.password).toBe(`${SECRET}-g2`);
  });

  it('webhook credential headers: masked on read (also in a check’s alertChannels), kept on GET → PUT', async () => {
    const created = await svc.request('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: {
        name: 'hook',
        url: 'https://hooks.example.test/x',
        headers: [
          { key: 'Authorization', value: `Bearer ${SECRET}-w1` },
          { key: 'X-Plain', value: 'visible' },
        ],
        queryParameters: [{ key: 'access_token', value: `${SECRET}-w2` }],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.body).not.toContain(SECRET);
    const channel = created.json();
    const put = await svc.request('PUT', `/v1/alert-channels/${channel.id}`, { config: channel.config });
    expect(put.statusCode, put.body).toBe(200);
    const check = await svc.request(
      'POST',
      '/v1/checks/api',
      apiBody({
        activated: false,
        alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      }),
    );
    expect(check.body).not.toContain(SECRET);
    expect(check.json().alertChannels.webhook[0].headers).toEqual([
      { key: 'Authorization', value: '*****', locked: false },
      { key: 'X-Plain', value: 'visible', locked: false },
    ]);
    expect(check.json().alertChannels.webhook[0].queryParameters).toEqual([
      { key: 'access_token', value: '*****', locked: false },
    ]);
    const { openChannelDoc } = await import('../../src/service/alerting/alert-channels/alert-channels.js');
    const row = await svc.context.db
      .selectFrom('alert_channels')
      .select(['id', 'type', 'doc', 'created_at', 'updated_at'])
      .where('id', '=', channel.id)
      .executeTakeFirstOrThrow();
    expect(row.doc).not.toContain(SECRET);
    expect(openChannelDoc(svc.context.db, row).config.headers).toEqual([
      { key: 'Authorization', value: `Bearer ${SECRET}-w1`, locked: false },
      { key: 'X-Plain', value: 'visible', locked: false },
    ]);
    expect(openChannelDoc(svc.context.db, row).config.queryParameters).toEqual([
      { key: 'access_token', value: `${SECRET}-w2`, locked: false },
    ]);
  });

  it('secret variables: the mask sent back keeps the stored value', async () => {
    await svc.request('POST', '/v1/variables', { key: 'KEEP_ME', value: `${SECRET}-v`, secret: true });
    const read = (await svc.request('GET', '/v1/variables/KEEP_ME')).json();
    const put = await svc.request('PUT', '/v1/variables/KEEP_ME', { value: read.value });
    expect(put.statusCode, put.body).toBe(200);
    const check = await svc.request('POST', '/v1/checks/api', apiBody({ activated: false }));
    const job = await jobOf(check.json().id);
    expect(job.environmentVariables.find((v) => v.key === 'KEEP_ME')?.value).toBe(`${SECRET}-v`);
  });
});

describe('isCredentialHeader', () => {
  it.each([
    'Authorization',
    ' proxy-authorization ',
    'COOKIE',
    'Set-Cookie',
    'x-api-key',
    'X-Auth-Token',
    'x-access-token',
    'X-My-Api-Key',
    'x-service-secret',
    'X-Session-Id',
    'x-hub-signature',
    'api_key',
    'access_token',
    'password',
  ])('treats %s as a credential', (name) => expect(isCredentialHeader(name)).toBe(true));

  it.each(['Accept', 'Content-Type', 'User-Agent', 'X-Request-Id', 'page', 'monkey', 'tokenizer'])(
    'leaves %s visible',
    (name) => expect(isCredentialHeader(name)).toBe(false),
  );
});

describe('a sealed value moved to another row', () => {
  it('does not open there: the job builder fails with OUTPOST_ERR_ENCRYPTION_KEY instead of using it', async () => {
    const { accountVariables } = await import('../../src/service/resources/variables/variables.js');
    const { hasCode } = await import('../../src/common/errors.js');
    await svc.request('POST', '/v1/variables', { key: 'MOVE_FROM', value: 'from-value', secret: true });
    await svc.request('POST', '/v1/variables', { key: 'MOVE_TO', value: 'to-value', secret: true });
    const db = svc.context.db;
    const from = await db
      .selectFrom('variables')
      .select('value')
      .where('key', '=', 'MOVE_FROM')
      .executeTakeFirstOrThrow();
    await db.updateTable('variables').set({ value: from.value }).where('key', '=', 'MOVE_TO').execute();
    const err = await accountVariables(db, svc.accountA.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(hasCode(err, 'OUTPOST_ERR_ENCRYPTION_KEY')).toBe(true);
    expect((err as Error).message).toContain('variables:');
    await db.deleteFrom('variables').where('key', 'in', ['MOVE_FROM', 'MOVE_TO']).execute();
  });
});
