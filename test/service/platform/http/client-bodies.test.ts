import { afterEach, describe, expect, it } from 'vitest';
import { icmpBody, type TestService, testService } from '../../../helpers/service.js';

// Bodies as the hosted API's own clients send them (its Go SDK, and so its Terraform provider): an empty body
// sent as application/json is no body, and `heartbeat` and `script`, which the hosted API's current document
// no longer requires, may be left out of an ICMP create and of the generic update.

let svc: TestService;
afterEach(async () => svc?.close());

const json = { 'content-type': 'application/json' };

describe('an empty application/json body is no body', () => {
  it('DELETE and a bodiless POST work; a route that needs a body names it; a broken body is still refused', async () => {
    svc = await testService();
    const created = await svc.request('POST', '/v1/checks/icmp', icmpBody({ activated: false }));
    const id = created.json().id as string;
    const trigger = await svc.app.inject({
      method: 'POST',
      url: '/v1/check-sessions/trigger',
      headers: { ...svc.auth(), ...json },
      payload: '',
    });
    expect(trigger.statusCode, trigger.body).toBe(201);
    const deleted = await svc.app.inject({
      method: 'DELETE',
      url: `/v1/checks/${id}`,
      headers: { ...svc.auth(), ...json },
      payload: '',
    });
    expect(deleted.statusCode, deleted.body).toBe(204);

    const empty = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: { ...svc.auth(), ...json },
      payload: '',
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(empty.json().message).not.toMatch(/cannot be empty/);

    const broken = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: { ...svc.auth(), ...json },
      payload: '{"name":',
    });
    expect(broken.statusCode).toBe(400);
    const poisoned = await svc.app.inject({
      method: 'POST',
      url: '/v1/variables',
      headers: { ...svc.auth(), ...json },
      payload: '{"key":"A","value":"b","__proto__":{"admin":true}}',
    });
    expect(poisoned.statusCode).toBe(400);
  });
});

describe('heartbeat and script are not required', () => {
  it('an ICMP check is created without them (defaults {} and ""), and the generic update leaves them out', async () => {
    svc = await testService();
    const { heartbeat: _h, script: _s, ...bare } = icmpBody({ activated: false });
    const created = await svc.request('POST', '/v1/checks/icmp', bare);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ heartbeat: {}, script: '' });
    const id = created.json().id as string;

    const renamed = await svc.request('PUT', `/v1/checks/${id}`, { name: 'renamed' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'renamed', heartbeat: {}, script: '' });
    // Sent, they are still checked (a zero-valued heartbeat, which the Go SDK sends with every check, is none).
    const bad = await svc.request('PUT', `/v1/checks/${id}`, { heartbeat: { period: -1 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes).toMatchObject({ field: 'heartbeat.period' });
  });
});

/** An API check as the Go SDK's `Check` struct marshals it: every field, zero values included. */
function sdkApiCheck(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const assertion = {
    edit: false,
    order: 0,
    arrayIndex: 0,
    arraySelector: 0,
    source: 'STATUS_CODE',
    property: '',
    comparison: 'EQUALS',
    target: '200',
  };
  return {
    id: '',
    name: 'sdk',
    description: null,
    checkType: 'API',
    frequency: 10,
    activated: false,
    muted: false,
    shouldFail: false,
    runParallel: false,
    locations: ['eu-west-1'],
    degradedResponseTime: 15000,
    maxResponseTime: 30000,
    script: 'kept',
    environmentVariables: [{ key: 'A', value: 'b', locked: false, secret: false }],
    sslCheckDomain: '',
    alertSettings: {
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 2 },
      timeBasedEscalation: {},
      reminders: { interval: 5 },
      parallelRunFailureThreshold: { percentage: 10 },
      sslCertificates: {},
    },
    useGlobalAlertSettings: false,
    request: {
      method: 'GET',
      url: 'https://example.com',
      followRedirects: false,
      skipSSL: false,
      body: '',
      bodyType: 'NONE',
      headers: [{ key: 'X-Test', value: 'foo', locked: false }],
      queryParameters: [],
      assertions: [assertion],
      basicAuth: { username: '', password: '' },
      ipFamily: 'IPv4',
    },
    heartbeat: { period: 0, periodUnit: '', grace: 0, graceUnit: '', pingToken: '' },
    createdAt: '0001-01-01T00:00:00Z',
    updatedAt: '0001-01-01T00:00:00Z',
    privateLocations: [],
    runtimeId: null,
    retryStrategy: {
      type: 'FIXED',
      baseBackoffSeconds: 0,
      maxRetries: 1,
      maxDurationSeconds: 600,
      sameRegion: false,
    },
    triggerIncident: null,
    sslCheck: false,
    doubleCheck: false,
    ...overrides,
  };
}

describe('fields the hosted API answers and its clients send back', () => {
  it('are accepted on create and update, never stored, and a read check sent back whole changes nothing', async () => {
    svc = await testService();
    const created = await svc.request('POST', '/v1/checks/api', sdkApiCheck());
    expect(created.statusCode, created.body).toBe(201);
    const check = created.json();
    expect(check.id).not.toBe('');
    expect(check.created_at).not.toBe('0001-01-01T00:00:00Z');
    for (const field of ['createdAt', 'updatedAt', 'heartbeat', 'sslCheck'])
      expect(check).not.toHaveProperty(field);
    expect(check.request.assertions).toEqual([
      { source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200' },
    ]);
    // Kept and answered as the hosted API does; an empty password is no secret and is answered as it is.
    expect(check.script).toBe('kept');
    expect(check.request.basicAuth).toEqual({ username: '', password: '' });
    // A partial alertSettings comes back completed with the defaults, the same on every read.
    expect(check.alertSettings).toEqual({
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 2 },
      timeBasedEscalation: { minutesFailingThreshold: 5 },
      reminders: { amount: 0, interval: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    });

    const again = await svc.request('PUT', `/v1/checks/api/${check.id}`, check);
    expect(again.statusCode, again.body).toBe(200);
    const { updated_at: _u, ...after } = again.json();
    const { updated_at: _b, ...before } = check;
    expect(after).toEqual(before);
    const generic = await svc.request('PUT', `/v1/checks/${check.id}`, sdkApiCheck({ name: 'renamed' }));
    expect(generic.statusCode, generic.body).toBe(200);
    expect(generic.json()).toMatchObject({ id: check.id, name: 'renamed', created_at: check.created_at });
  });

  it('are still refused when their shape is wrong, and a field no version of the API has is refused', async () => {
    svc = await testService();
    const cases: [Record<string, unknown>, string][] = [
      [sdkApiCheck({ createdAt: 5 }), 'createdAt'],
      [sdkApiCheck({ sslCheck: 'yes' }), 'sslCheck'],
      [sdkApiCheck({ checkType: 'TCP' }), 'checkType'],
      [sdkApiCheck({ heartbeat: { period: 30, periodUnit: 'seconds' } }), 'heartbeat.period'],
      [sdkApiCheck({ favouriteColour: 'red' }), 'favouriteColour'],
      [
        sdkApiCheck({
          request: {
            url: 'https://example.com',
            assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', order: 'first' }],
          },
        }),
        'request.assertions[0].order',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await svc.request('POST', '/v1/checks/api', body);
      expect(res.statusCode, `${field}: ${res.body}`).toBe(400);
      expect(res.json().attributes).toMatchObject({ field });
    }
    expect((await svc.request('GET', '/v1/checks')).json()).toEqual([]);
  });

  it('POST /v1/checks creates a check of the type its body names, validated as that type', async () => {
    svc = await testService();
    const created = await svc.request('POST', '/v1/checks', sdkApiCheck());
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ checkType: 'API', name: 'sdk', script: 'kept' });
    const tcp = await svc.request('POST', '/v1/checks', {
      checkType: 'TCP',
      name: 'tcp',
      activated: false,
      request: { hostname: '127.0.0.1', port: 9, url: '', body: '' },
    });
    expect(tcp.statusCode, tcp.body).toBe(201);
    expect(tcp.json().request).not.toHaveProperty('url');
    const bad = await svc.request('POST', '/v1/checks', {
      checkType: 'TCP',
      name: 'tcp',
      request: { hostname: 'h', port: 0 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes).toMatchObject({ field: 'request.port' });
    const noType = await svc.request('POST', '/v1/checks', { name: 'x' });
    expect(noType.statusCode).toBe(400);
    expect(noType.json().attributes).toMatchObject({ field: 'checkType' });
  });

  it('PUT /v1/checks/{type}/{id} updates a check of that type and finds no check of another', async () => {
    svc = await testService();
    const tcp = (
      await svc.request('POST', '/v1/checks/tcp', {
        name: 'tcp',
        activated: false,
        request: { hostname: 'h', port: 1 },
      })
    ).json();
    const renamed = await svc.request('PUT', `/v1/checks/tcp/${tcp.id}`, { name: 'tcp 2', checkType: 'TCP' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'tcp 2', request: { hostname: 'h', port: 1 } });
    const wrongRoute = await svc.request('PUT', `/v1/checks/dns/${tcp.id}`, { name: 'x' });
    expect(wrongRoute.statusCode).toBe(404);
    expect((await svc.request('GET', `/v1/checks/${tcp.id}`)).json().name).toBe('tcp 2');
  });
});

describe('GET /v1/checks filters and pages as the hosted API does', () => {
  it('by checkType, tag (every one given), search in the name, and limit/page', async () => {
    svc = await testService();
    const make = (path: string, name: string, tags: string[], request: Record<string, unknown>) =>
      svc.request('POST', `/v1/checks/${path}`, { name, tags, activated: false, request });
    await make('tcp', 'Shop database', ['shop', 'db'], { hostname: 'db', port: 5432 });
    await make('tcp', 'Shop cache', ['shop'], { hostname: 'cache', port: 6379 });
    await make('url', 'Blog', ['blog'], { url: 'https://example.com/' });
    const names = async (query: string) =>
      ((await svc.request('GET', `/v1/checks?${query}`)).json() as { name: string }[]).map((c) => c.name);
    expect(await names('checkType=TCP')).toEqual(['Shop database', 'Shop cache']);
    expect(await names('tag=shop&tag=db')).toEqual(['Shop database']);
    expect(await names('search=SHOP')).toEqual(['Shop database', 'Shop cache']);
    expect(await names('limit=2&page=2')).toEqual(['Blog']);
    expect(await names('')).toHaveLength(3);
    const bad = await svc.request('GET', '/v1/checks?limit=101');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes).toMatchObject({ field: 'limit' });
  });
});
