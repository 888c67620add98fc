import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBadField, type TestService, testService } from '../../helpers/service.js';
import { apiRequest } from '../../helpers/api-request.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const create = (body: Record<string, unknown>) => svc.request('POST', '/v1/checks/api', body);

async function countChecks(): Promise<number> {
  const row = await svc.context.db
    .selectFrom('checks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const valid = { name: 'users api', request: { url: 'https://api.example.test/users' } };
const withRequest = (request: Record<string, unknown>) => ({
  ...valid,
  request: { ...valid.request, ...request },
});

describe('POST /v1/checks/api', () => {
  it('creates an API check with the defaults of docs/checks.md', async () => {
    const res = await create(valid);
    expect(res.statusCode).toBe(201);
    const check = res.json();
    expect(check).toMatchObject({
      checkType: 'API',
      name: 'users api',
      activated: true,
      doubleCheck: true,
      frequency: 10,
      degradedResponseTime: 10_000,
      maxResponseTime: 20_000,
      locations: ['us-east-1'],
      alertChannels: { email: [], webhook: [], slack: [], sms: [] },
    });
    expect(check.request).toEqual(apiRequest('https://api.example.test/users'));
    const read = await svc.request('GET', `/v1/checks/${check.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(check);
  });

  it('keeps every request field it is given', async () => {
    const request = {
      method: 'POST',
      url: 'https://api.example.test/login',
      headers: [{ key: 'Authorization', value: 'Bearer {{TOKEN}}', locked: true }],
      queryParameters: [{ key: 'lang', value: 'en' }],
      body: '{"user":"{{USER}}"}',
      bodyType: 'JSON',
      basicAuth: { username: 'u', password: 'p' },
      followRedirects: false,
      skipSSL: true,
      ipFamily: 'IPv6',
      assertions: [
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
        { source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 'true' },
        { source: 'HEADERS', property: 'content-type', comparison: 'CONTAINS', target: 'json' },
        { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'ok', regex: '(ok)' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '500' },
      ],
    };
    const res = await create({ ...valid, request, degradedResponseTime: 30_000, maxResponseTime: 30_000 });
    expect(res.statusCode).toBe(201);
    // The basic-auth password is masked on read; `Bearer {{TOKEN}}` too (only a bare reference stays visible).
    expect(res.json().request).toEqual({
      ...request,
      headers: [{ key: 'Authorization', value: '*****', locked: true }],
      basicAuth: { username: 'u', password: '*****' },
    });
  });

  it.each([
    ['{{BASE_URL}}/health'],
    ['{{GROUP_BASE_URL}}/users'],
    ['{{ BASE_URL }}'],
    ['HTTP://EXAMPLE.TEST/'],
    [`https://a.test/${'x'.repeat(2048 - 'https://a.test/'.length)}`],
  ])('accepts the url %s', async (url) => {
    expect((await create(withRequest({ url }))).statusCode).toBe(201);
  });

  it('allows sub-minute frequencies with a 10, 20 or 30 s offset', async () => {
    const ok = await create({ ...valid, frequency: 0, frequencyOffset: 20 });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ frequency: 0, frequencyOffset: 20 });
    expectBadField(await create({ ...valid, frequency: 0 }), 'frequencyOffset');
    expectBadField(await create({ ...valid, frequency: 0, frequencyOffset: 15 }), 'frequencyOffset');
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing request', { name: 'x' }, 'request'],
    ['missing url', { ...valid, request: { method: 'GET' } }, 'request.url'],
    ['empty url', withRequest({ url: '' }), 'request.url'],
    ['ftp url', withRequest({ url: 'ftp://example.test/' }), 'request.url'],
    ['url without scheme', withRequest({ url: 'example.test/health' }), 'request.url'],
    ['url with a space', withRequest({ url: 'https://example.test/a b' }), 'request.url'],
    ['url over 2048', withRequest({ url: `https://a.test/${'x'.repeat(2049 - 15)}` }), 'request.url'],
    ['single brace', withRequest({ url: '{BASE_URL}/x' }), 'request.url'],
    ['method TRACE', withRequest({ method: 'TRACE' }), 'request.method'],
    ['lower-case method', withRequest({ method: 'get' }), 'request.method'],
    ['bodyType XML', withRequest({ bodyType: 'XML' }), 'request.bodyType'],
    ['body not a string', withRequest({ body: { a: 1 } }), 'request.body'],
    ['body over 131072', withRequest({ body: 'x'.repeat(131_073) }), 'request.body'],
    ['header without key', withRequest({ headers: [{ value: 'v' }] }), 'request.headers[0].key'],
    ['header with empty key', withRequest({ headers: [{ key: '', value: 'v' }] }), 'request.headers[0].key'],
    [
      'header value over 8192',
      withRequest({ headers: [{ key: 'k', value: 'v'.repeat(8193) }] }),
      'request.headers[0].value',
    ],
    [
      '101 headers',
      withRequest({ headers: Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, value: 'v' })) }),
      'request.headers',
    ],
    [
      'unknown header field',
      withRequest({ headers: [{ key: 'k', value: 'v', secret: true }] }),
      'request.headers[0].secret',
    ],
    [
      'query parameter without value',
      withRequest({ queryParameters: [{ key: 'k' }] }),
      'request.queryParameters[0].value',
    ],
    [
      'basicAuth without password',
      withRequest({ basicAuth: { username: 'u' } }),
      'request.basicAuth.password',
    ],
    ['followRedirects as string', withRequest({ followRedirects: 'yes' }), 'request.followRedirects'],
    ['skipSSL as number', withRequest({ skipSSL: 1 }), 'request.skipSSL'],
    ['ipFamily IPv5', withRequest({ ipFamily: 'IPv5' }), 'request.ipFamily'],
    [
      'LATENCY assertion',
      withRequest({ assertions: [{ source: 'LATENCY', comparison: 'LESS_THAN', target: '1' }] }),
      'request.assertions[0].source',
    ],
    [
      'unknown comparison',
      withRequest({ assertions: [{ source: 'STATUS_CODE', comparison: 'ABOUT', target: '1' }] }),
      'request.assertions[0].comparison',
    ],
    ['unknown request field', withRequest({ hostname: 'a' }), 'request.hostname'],
    ['maxResponseTime over 30000', { ...valid, maxResponseTime: 30_001 }, 'maxResponseTime'],
    ['degradedResponseTime over 30000', { ...valid, degradedResponseTime: 30_001 }, 'degradedResponseTime'],
    ['negative maxResponseTime', { ...valid, maxResponseTime: -1 }, 'maxResponseTime'],
    ['frequency 3', { ...valid, frequency: 3 }, 'frequency'],
    // Only a zero-valued heartbeat is taken (what the Go SDK sends with every check), and ignored.
    [
      'heartbeat with a period',
      { ...valid, heartbeat: { period: 5, periodUnit: 'minutes' } },
      'heartbeat.period',
    ],
    ['script as a number', { ...valid, script: 5 }, 'script'],
    ['missing name', { request: valid.request }, 'name'],
  ];
  it.each(invalid)('%s gives 400 naming the field and stores nothing', async (_label, body, field) => {
    const before = await countChecks();
    const res = await create(body);
    expectBadField(res, field);
    expect(res.json().message).toContain(field);
    expect(await countChecks()).toBe(before);
  });
});

describe('PUT /v1/checks/{id} on an API check', () => {
  const put = (id: string, body: Record<string, unknown>) =>
    svc.request('PUT', `/v1/checks/${id}`, { heartbeat: {}, script: null, ...body });

  it('validates a new request against the API request schema and fills its defaults', async () => {
    const check = (await create(valid)).json();
    expectBadField(
      await put(check.id, { request: { url: 'https://a.test/', method: 'TRACE' } }),
      'request.method',
    );
    expectBadField(await put(check.id, { request: { method: 'GET' } }), 'request.url');
    expectBadField(await put(check.id, { request: { hostname: 'a.test', port: 1 } }), 'request.url');
    const ok = await put(check.id, { request: { url: '{{BASE_URL}}/v2', method: 'DELETE' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().request).toEqual(apiRequest('{{BASE_URL}}/v2', { method: 'DELETE' }));
    expect((await svc.request('GET', `/v1/checks/${check.id}`)).json().request.method).toBe('DELETE');
  });

  it('keeps the API limits after merging: response times ≤ 30000, sub-minute frequency', async () => {
    const check = (await create(valid)).json();
    expectBadField(await put(check.id, { maxResponseTime: 30_001 }), 'maxResponseTime');
    expectBadField(await put(check.id, { degradedResponseTime: 45_000 }), 'degradedResponseTime');
    expect((await put(check.id, { maxResponseTime: 30_000 })).statusCode).toBe(200);
    expectBadField(await put(check.id, { frequency: 0 }), 'frequencyOffset');
    const sub = await put(check.id, { frequency: 0, frequencyOffset: 30 });
    expect(sub.statusCode).toBe(200);
    expect(sub.json()).toMatchObject({ frequency: 0, frequencyOffset: 30, maxResponseTime: 30_000 });
    expectBadField(await put(check.id, { checkType: 'TCP' }), 'checkType');
  });
});
