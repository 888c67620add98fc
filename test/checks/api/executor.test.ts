import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiExecutor } from '../../../src/checks/api/index.js';
import type { ExecutorContext } from '../../../src/checks/executor.js';
import type { Assertion, AssertionComparison, Job } from '../../../src/protocol/index.js';
import { apiRequest } from '../../helpers/api-request.js';
import { startApiServer, type TestApiServer } from '../../helpers/api-server.js';
import { refusedPort } from '../../helpers/http-servers.js';
import { commandWorks, missingRequirement } from '../../helpers/requirements.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';

const assertion = (
  source: Assertion['source'],
  comparison: Assertion['comparison'],
  target = '',
  property = '',
  regex: string | null = null,
): Assertion => ({ source, comparison, target, property, regex });

/** A context whose logger writes every line into `lines` (to search agent logs for secrets). */
function recordingContext(): { context: ExecutorContext; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { context: { signal: new AbortController().signal, log: pino({ level: 'debug' }, stream) }, lines };
}

describe('API executor against a loopback JSON API', () => {
  let server: TestApiServer;
  const executor = createApiExecutor();
  beforeAll(async () => {
    server = await startApiServer();
  });
  afterAll(() => server.close());

  const run = (
    request: Record<string, unknown>,
    overrides: Parameters<typeof jobOf>[2] = {},
    extra: Partial<Job> = {},
  ) => executor.run({ ...jobOf('API', request, overrides), ...extra }, contextOf());

  it('sends the method, headers, query parameters and JSON body, and reports the phases', async () => {
    const outcome = await run(
      apiRequest(`${server.origin}/echo?fixed=1`, {
        method: 'POST',
        headers: [{ key: 'X-Custom', value: 'yes' }],
        queryParameters: [{ key: 'page', value: '2' }],
        body: '{"hello":"world"}',
        bodyType: 'JSON',
        assertions: [
          assertion('STATUS_CODE', 'EQUALS', '200'),
          assertion('JSON_BODY', 'EQUALS', 'POST', '$.method'),
        ],
      }),
    );

    expect(outcome.status).toBe('PASSED');
    const seen = server.requests.at(-1)!;
    expect(seen).toMatchObject({
      method: 'POST',
      path: '/echo',
      query: { fixed: '1', page: '2' },
      body: '{"hello":"world"}',
    });
    expect(seen.headers['x-custom']).toBe('yes');
    expect(seen.headers['content-type']).toBe('application/json');
    const http = outcome.httpCheckResult!;
    expect(http.request).toMatchObject({ method: 'POST', body: '{"hello":"world"}' });
    expect(http.response).toMatchObject({ statusCode: 200, bodyTruncated: false });
    expect(JSON.parse(http.response!.body!)).toMatchObject({ method: 'POST' });
    for (const phase of ['wait', 'dns', 'tcp', 'firstByte', 'download', 'total'] as const) {
      expect(http.timingPhases[phase]).toBeGreaterThanOrEqual(0);
    }
    expect(http.timingPhases.tls).toBeNull();
    expect(outcome.responseTime).toBeCloseTo(http.timingPhases.total, 0);
  });

  it('sends FORM bodies url-encoded and GRAPHQL queries as JSON', async () => {
    await run(
      apiRequest(`${server.origin}/echo`, {
        method: 'POST',
        body: '{"a":"1 2","b":"x&y"}',
        bodyType: 'FORM',
      }),
    );
    expect(server.requests.at(-1)).toMatchObject({ body: 'a=1+2&b=x%26y' });
    expect(server.requests.at(-1)!.headers['content-type']).toBe('application/x-www-form-urlencoded');

    await run(
      apiRequest(`${server.origin}/echo`, { method: 'POST', body: '{ viewer { id } }', bodyType: 'GRAPHQL' }),
    );
    expect(JSON.parse(server.requests.at(-1)!.body)).toEqual({ query: '{ viewer { id } }' });
  });

  it('follows a 303 after a POST as a GET without the body, and a 307 with it', async () => {
    const seeOther = await run(
      apiRequest(`${server.origin}/see-other`, { method: 'POST', body: 'x=1', bodyType: 'RAW' }),
    );
    expect(seeOther.httpCheckResult!.redirects).toEqual([
      { url: `${server.origin}/see-other`, statusCode: 303 },
    ]);
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', path: '/echo', body: '' });

    await run(apiRequest(`${server.origin}/temporary`, { method: 'PUT', body: 'x=1', bodyType: 'RAW' }));
    expect(server.requests.at(-1)).toMatchObject({ method: 'PUT', path: '/echo', body: 'x=1' });
  });

  describe('assertions', () => {
    const url = () => `${server.origin}/items`;
    const cases: [string, Assertion, boolean][] = [
      ['STATUS_CODE holds', assertion('STATUS_CODE', 'EQUALS', '200'), true],
      ['STATUS_CODE fails', assertion('STATUS_CODE', 'EQUALS', '201'), false],
      ['JSON_BODY every price < 100', assertion('JSON_BODY', 'LESS_THAN', '100', '$.items[*].price'), true],
      ['JSON_BODY one price ≥ 25', assertion('JSON_BODY', 'LESS_THAN', '25', '$.items[*].price'), false],
      ['JSON_BODY .length', assertion('JSON_BODY', 'EQUALS', '3', '$.items.length'), true],
      ['HEADERS content-type', assertion('HEADERS', 'CONTAINS', 'json', 'Content-Type'), true],
      [
        'HEADERS regex capture',
        assertion('HEADERS', 'EQUALS', 'utf-8', 'content-type', 'charset=(\\S+)'),
        true,
      ],
      ['HEADERS missing is null', assertion('HEADERS', 'IS_NULL', '', 'x-none'), true],
      ['HEADERS missing not empty', assertion('HEADERS', 'NOT_EMPTY', '', 'x-none'), false],
      ['TEXT_BODY contains', assertion('TEXT_BODY', 'CONTAINS', '"name":"outpost"'), true],
      ['TEXT_BODY regex group', assertion('TEXT_BODY', 'EQUALS', 'outpost', '', '"name":"(\\w+)"'), true],
      ['TEXT_BODY regex mismatch', assertion('TEXT_BODY', 'EQUALS', 'other', '', '"name":"(\\w+)"'), false],
      ['RESPONSE_TIME below 10 s', assertion('RESPONSE_TIME', 'LESS_THAN', '10000'), true],
      ['RESPONSE_TIME below 0', assertion('RESPONSE_TIME', 'LESS_THAN', '0'), false],
    ];
    it.each(cases)('%s', async (_name, a, passes) => {
      const outcome = await run(apiRequest(url(), { assertions: [a] }));
      expect(outcome.status).toBe(passes ? 'PASSED' : 'FAILED');
      expect(outcome.assertions[0]!.error === null).toBe(passes);
      if (!passes) expect(outcome.errorMessage).toContain(`assertion ${a.source}`);
    });

    // Every comparison of the reference, holding and failing, over JSON_BODY.
    const comparisons: Record<AssertionComparison, [Assertion, Assertion]> = {
      EQUALS: [
        assertion('JSON_BODY', 'EQUALS', 'outpost', '$.name'),
        assertion('JSON_BODY', 'EQUALS', 'x', '$.name'),
      ],
      NOT_EQUALS: [
        assertion('JSON_BODY', 'NOT_EQUALS', 'x', '$.name'),
        assertion('JSON_BODY', 'NOT_EQUALS', 'outpost', '$.name'),
      ],
      HAS_KEY: [
        assertion('JSON_BODY', 'HAS_KEY', 'ok', '$.nested'),
        assertion('JSON_BODY', 'HAS_KEY', 'no', '$.nested'),
      ],
      NOT_HAS_KEY: [
        assertion('JSON_BODY', 'NOT_HAS_KEY', 'no', '$.nested'),
        assertion('JSON_BODY', 'NOT_HAS_KEY', 'ok', '$.nested'),
      ],
      HAS_VALUE: [
        assertion('JSON_BODY', 'HAS_VALUE', '1.2.3', '$.nested'),
        assertion('JSON_BODY', 'HAS_VALUE', '9', '$.nested'),
      ],
      NOT_HAS_VALUE: [
        assertion('JSON_BODY', 'NOT_HAS_VALUE', '9', '$.nested'),
        assertion('JSON_BODY', 'NOT_HAS_VALUE', '1.2.3', '$.nested'),
      ],
      IS_EMPTY: [
        assertion('JSON_BODY', 'IS_EMPTY', '', '$.empty'),
        assertion('JSON_BODY', 'IS_EMPTY', '', '$.items'),
      ],
      NOT_EMPTY: [
        assertion('JSON_BODY', 'NOT_EMPTY', '', '$.items'),
        assertion('JSON_BODY', 'NOT_EMPTY', '', '$.empty'),
      ],
      GREATER_THAN: [
        assertion('JSON_BODY', 'GREATER_THAN', '2', '$.total'),
        assertion('JSON_BODY', 'GREATER_THAN', '3', '$.total'),
      ],
      LESS_THAN: [
        assertion('JSON_BODY', 'LESS_THAN', '4', '$.total'),
        assertion('JSON_BODY', 'LESS_THAN', '3', '$.total'),
      ],
      CONTAINS: [
        assertion('JSON_BODY', 'CONTAINS', 'post', '$.name'),
        assertion('JSON_BODY', 'CONTAINS', 'pre', '$.name'),
      ],
      NOT_CONTAINS: [
        assertion('JSON_BODY', 'NOT_CONTAINS', 'pre', '$.name'),
        assertion('JSON_BODY', 'NOT_CONTAINS', 'post', '$.name'),
      ],
      IS_NULL: [
        assertion('JSON_BODY', 'IS_NULL', '', '$.nothing'),
        assertion('JSON_BODY', 'IS_NULL', '', '$.name'),
      ],
      NOT_NULL: [
        assertion('JSON_BODY', 'NOT_NULL', '', '$.name'),
        assertion('JSON_BODY', 'NOT_NULL', '', '$.nothing'),
      ],
    };
    it.each(Object.entries(comparisons))('%s holds and fails', async (_name, [holds, fails]) => {
      const outcome = await run(apiRequest(url(), { assertions: [holds, fails] }));
      expect(outcome.assertions.map((a) => a.error === null)).toEqual([true, false]);
      expect(outcome.status).toBe('FAILED');
    });

    it('fails JSON_BODY assertions on a body that is not JSON, naming why', async () => {
      const outcome = await run(
        apiRequest(`${server.origin}/binary`, {
          assertions: [assertion('JSON_BODY', 'NOT_NULL', '', '$.a')],
        }),
      );
      expect(outcome.assertions[0]!.error).toMatch(/response body is not JSON/);
    });
  });

  it('without assertions fails on status ≥ 400 and passes below', async () => {
    expect((await run(apiRequest(`${server.origin}/status/503`))).status).toBe('FAILED');
    expect((await run(apiRequest(`${server.origin}/status/204`))).status).toBe('PASSED');
    const expected = await run(
      apiRequest(`${server.origin}/status/404`, { assertions: [assertion('STATUS_CODE', 'EQUALS', '404')] }),
    );
    expect(expected.status).toBe('PASSED');
  });

  it('judges degraded and max response time and shouldFail', async () => {
    const slow = { degradedResponseTime: 0, maxResponseTime: 60_000 };
    expect((await run(apiRequest(`${server.origin}/items`), slow)).status).toBe('DEGRADED');
    const over = await run(apiRequest(`${server.origin}/items`), { maxResponseTime: 0 });
    expect(over).toMatchObject({ status: 'FAILED', overMaxResponseTime: true });
    const refused = await run(apiRequest(`http://127.0.0.1:${await refusedPort()}/`), { shouldFail: true });
    expect(refused.status).toBe('PASSED');
  });

  it('reads up to 25 MB of body and stops there; binary bodies are not stored', async () => {
    const big = await run(apiRequest(`${server.origin}/bytes/${26 * 1024 * 1024}`), { timeoutMs: 20_000 });
    expect(big.httpCheckResult!.response).toMatchObject({
      bodySizeBytes: 25 * 1024 * 1024,
      bodyTruncated: true,
      bodyStoredTruncated: true,
    });
    expect(big.httpCheckResult!.response!.body!.length).toBe(1024 * 1024);

    const small = await run(
      apiRequest(`${server.origin}/bytes/${5 * 1024 * 1024}`, {
        assertions: [assertion('TEXT_BODY', 'CONTAINS', 'aaa')],
      }),
    );
    expect(small.httpCheckResult!.response).toMatchObject({
      bodySizeBytes: 5 * 1024 * 1024,
      bodyTruncated: false,
    });
    expect(small.status).toBe('PASSED');

    const binary = await run(apiRequest(`${server.origin}/binary`));
    expect(binary.httpCheckResult!.response).toMatchObject({ bodySizeBytes: 1024, body: null });
  });

  it('reports a refused connection with its code', async () => {
    const outcome = await run(apiRequest(`http://127.0.0.1:${await refusedPort()}/`));
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: false });
    expect(outcome.httpCheckResult).toMatchObject({ errorCode: 'ECONNREFUSED', response: null });
  });

  it('fails a malformed job with a reason, not a throw', async () => {
    const outcome = await run({ url: 'x' });
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: true });
    expect(outcome.errorMessage).toMatch(/invalid API request/);
    const unknownSource = await run(
      apiRequest(`${server.origin}/`, { assertions: [assertion('LATENCY', 'EQUALS', '1')] }),
    );
    expect(unknownSource.errorMessage).toMatch(/source LATENCY is not one of/);
  });

  it('interpolates {{VAR}} in url, headers, query parameters, body and basic auth', async () => {
    const outcome = await run(
      apiRequest('{{BASE}}/echo', {
        method: 'POST',
        headers: [{ key: 'x-env', value: '{{ENVIRONMENT}}' }],
        queryParameters: [{ key: 'q', value: '{{QUERY}}' }],
        body: '{"region":"{{REGION}}","id":"{{$UUID}}","missing":"{{NOPE}}"}',
        bodyType: 'JSON',
        basicAuth: { username: '{{USER}}', password: 'pw' },
      }),
      {},
      {
        environmentVariables: [
          { key: 'BASE', value: server.origin, secret: false },
          { key: 'ENVIRONMENT', value: 'staging', secret: false },
          { key: 'QUERY', value: 'a b', secret: false },
          { key: 'USER', value: 'alice', secret: false },
        ],
      },
    );
    expect(outcome.status).toBe('PASSED');
    const seen = server.requests.at(-1)!;
    expect(seen.headers['x-env']).toBe('staging');
    expect(seen.query.q).toBe('a b');
    const body = JSON.parse(seen.body);
    expect(body.region).toBe('test-location');
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.missing).toBe('{{NOPE}}');
    expect(seen.headers.authorization).toBe(`Basic ${Buffer.from('alice:pw').toString('base64')}`);
    expect(outcome.logs.some((l) => l.level === 'WARN' && l.msg.includes('{{NOPE}}'))).toBe(true);
  });

  it('never lets a secret variable, basic-auth password or credential header out in clear', async () => {
    const secret = 's3cr3t-T0ken!value';
    const cookieServer = await startApiServer({ cookieValue: 'sess-Pl4nted-cookie' });
    try {
      const { context, lines } = recordingContext();
      const job = {
        ...jobOf(
          'API',
          apiRequest(`${server.origin}/echo`, {
            method: 'POST',
            headers: [
              { key: 'x-token', value: '{{TOKEN}}' },
              { key: 'x-api-key', value: 'plain-api-key-123' },
              { key: 'Cookie', value: 'sid=cookie-value-987' },
            ],
            queryParameters: [{ key: 'token', value: '{{TOKEN}}' }],
            body: '{"token":"{{TOKEN}}"}',
            bodyType: 'JSON',
            basicAuth: { username: 'bob', password: 'basic-pass-555' },
            assertions: [assertion('TEXT_BODY', 'CONTAINS', 'no-such-text')],
          }),
        ),
        environmentVariables: [{ key: 'TOKEN', value: secret, secret: true }],
      };
      const outcome = await executor.run(job, context);
      const cookieRun = await executor.run(
        jobOf(
          'API',
          apiRequest(`${cookieServer.origin}/cookie`, {
            assertions: [assertion('HEADERS', 'CONTAINS', 'x', 'set-cookie')],
          }),
        ),
        context,
      );
      // The server did get the real values.
      expect(server.requests.at(-1)!.query.token).toBe(secret);

      const everything = [JSON.stringify(outcome), JSON.stringify(cookieRun), ...lines].join('\n');
      for (const planted of [
        secret,
        encodeURIComponent(secret),
        'basic-pass-555',
        Buffer.from('bob:basic-pass-555').toString('base64'),
        'plain-api-key-123',
        'cookie-value-987',
        'sess-Pl4nted-cookie',
      ]) {
        expect(everything).not.toContain(planted);
      }
      expect(outcome.httpCheckResult!.request.headers!['x-token']).toBe('*****');
      expect(outcome.httpCheckResult!.request.headers!.authorization).toBe('*****');
      expect(outcome.httpCheckResult!.response!.body).toContain('*****');
    } finally {
      await cookieServer.close();
    }
  });
});

const noOpenssl = missingRequirement([
  { ok: commandWorks('openssl', ['version']), what: 'openssl', install: 'apt-get install openssl' },
]);

describe.skipIf(noOpenssl !== null)('API executor with client certificates (mTLS)', () => {
  let ca: TestCa;
  let server: TestApiServer;
  let client: { key: string; cert: string };
  beforeAll(async () => {
    ca = createTestCa();
    const serverPair = ca.issue({ commonName: 'localhost' });
    client = ca.issue({
      commonName: 'outpost-client',
      altNames: ['DNS:outpost-client'],
      extendedKeyUsage: 'clientAuth',
    });
    server = await startApiServer({ tls: serverPair, ca: ca.caCert, requireClientCert: true });
  });
  afterAll(async () => {
    await server?.close();
    ca?.destroy();
  });

  it('presents the job certificate and trusts its CA; without it the handshake is refused', async () => {
    const executor = createApiExecutor();
    const request = apiRequest(`https://localhost:${server.port}/echo`, {
      assertions: [assertion('STATUS_CODE', 'EQUALS', '200')],
    });
    const withCert = await executor.run(
      {
        ...jobOf('API', request),
        clientCertificate: {
          host: 'localhost',
          cert: client.cert,
          key: client.key,
          ca: ca.caCert,
          passphrase: null,
        },
      },
      contextOf(),
    );
    expect(withCert.status).toBe('PASSED');
    expect(server.requests.at(-1)!.clientCertificate).toBe('outpost-client');
    expect(withCert.httpCheckResult!.certificate).toMatchObject({ authorized: true });
    expect(JSON.stringify(withCert)).not.toContain('PRIVATE KEY');

    const without = await executor.run(jobOf('API', request), contextOf());
    expect(without.status).toBe('FAILED');
    expect(without.httpCheckResult!.response).toBeNull();

    const broken = await executor.run(
      {
        ...jobOf('API', request),
        clientCertificate: {
          host: 'localhost',
          cert: client.cert,
          key: 'not a key',
          ca: null,
          passphrase: null,
        },
      },
      contextOf(),
    );
    expect(broken.errorMessage).toMatch(/client certificate for localhost could not be loaded/);
  });
});
