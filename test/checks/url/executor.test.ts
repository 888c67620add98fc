import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUrlExecutor } from '../../../src/checks/url/index.js';
import { RunOutcomeSchema } from '../../../src/protocol/index.js';
import { refusedPort, startHttpServer, type TestHttpServer } from '../../helpers/http-servers.js';
import { ipv6Missing } from '../../helpers/requirements.js';
import { type DnsStub, startDnsStub } from '../../helpers/dns-stub.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';

const urlRequest = (url: string, request: Record<string, unknown> = {}) => ({
  url,
  followRedirects: true,
  skipSSL: false,
  ipFamily: 'IPv4',
  assertions: [],
  ...request,
});

let http: TestHttpServer;
let stub: DnsStub;
beforeAll(async () => {
  http = await startHttpServer();
  stub = await startDnsStub({ 'web.test': { A: ['127.0.0.1'] } });
});
afterAll(async () => {
  await http.close();
  await stub.close();
});

describe('URL executor over HTTP', () => {
  const executor = createUrlExecutor();
  const run = (url: string, request: Record<string, unknown> = {}, check: Parameters<typeof jobOf>[2] = {}) =>
    executor.run(jobOf('URL', urlRequest(url, request), check), contextOf());

  it('passes a 200 and reports the response, timings and phases', async () => {
    const outcome = await run(`${http.origin}/`);

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome).toMatchObject({ status: 'PASSED', hasErrors: false, errorMessage: null });
    const part = outcome.httpCheckResult!;
    expect(part).toMatchObject({
      request: { method: 'GET', url: `${http.origin}/` },
      response: {
        statusCode: 200,
        statusText: 'OK',
        url: `${http.origin}/`,
        bodySizeBytes: 2,
        bodyTruncated: false,
      },
      redirects: [],
      certificate: null,
      resolvedIp: '127.0.0.1',
      resolver: 'dns',
      errorCode: null,
    });
    const { timings: t, timingPhases: p } = part;
    expect(t.secureConnect).toBeNull();
    expect(p.tls).toBeNull();
    for (const value of [t.socket, t.lookup, t.connect, t.response, t.end]) expect(value).not.toBeNull();
    expect(
      t.socket! <= t.lookup! && t.lookup! <= t.connect! && t.connect! < t.response! && t.response! <= t.end!,
    ).toBe(true);
    const sum = p.wait! + p.dns! + p.tcp! + p.firstByte! + p.download!;
    expect(Math.abs(sum - p.total)).toBeLessThan(0.01);
    expect(p.total).toBe(t.end);
    expect(outcome.responseTime).toBeGreaterThanOrEqual(p.total);
  });

  it('fails a status of 400 or more when the check has no assertions', async () => {
    const outcome = await run(`${http.origin}/status/404`);

    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: false, errorMessage: 'HTTP 404 Not Found' });
    expect(outcome.httpCheckResult!.response!.statusCode).toBe(404);
  });

  it('lets STATUS_CODE assertions alone judge the status', async () => {
    const expect404 = [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '404' }];
    const expect201 = [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '201' }];
    const below300 = [{ source: 'STATUS_CODE', comparison: 'LESS_THAN', target: '300' }];

    const notFound = await run(`${http.origin}/status/404`, { assertions: expect404 });
    const wrong = await run(`${http.origin}/`, { assertions: expect201 });
    const ok = await run(`${http.origin}/`, { assertions: below300 });

    expect(notFound.status).toBe('PASSED');
    expect(wrong.status).toBe('FAILED');
    expect(wrong.assertions[0]).toMatchObject({ actual: 200, error: '200 does not equal "201"' });
    expect(wrong.errorMessage).toContain('assertion STATUS_CODE EQUALS 201 failed');
    expect(ok.status).toBe('PASSED');
  });

  it('follows redirects and records every hop', async () => {
    const outcome = await run(`${http.origin}/redirect/3`);

    const part = outcome.httpCheckResult!;
    expect(outcome.status).toBe('PASSED');
    expect(part.redirects).toEqual([
      { url: `${http.origin}/redirect/3`, statusCode: 302 },
      { url: `${http.origin}/redirect/2`, statusCode: 302 },
      { url: `${http.origin}/redirect/1`, statusCode: 302 },
    ]);
    expect(part.response).toMatchObject({ statusCode: 200, url: `${http.origin}/redirect/0` });
    expect(part.request.url).toBe(`${http.origin}/redirect/3`);
    // The phases describe the last request; the response time covers all four.
    expect(outcome.responseTime).toBeGreaterThan(part.timingPhases.total);
  });

  it('does not follow redirects when followRedirects is false: a 302 passes', async () => {
    const outcome = await run(`${http.origin}/redirect/3`, { followRedirects: false });

    expect(outcome.status).toBe('PASSED');
    expect(outcome.httpCheckResult!.redirects).toEqual([]);
    expect(outcome.httpCheckResult!.response).toMatchObject({
      statusCode: 302,
      headers: { location: '/redirect/2' },
    });
  });

  it('fails after more than 10 redirects', async () => {
    const outcome = await run(`${http.origin}/redirect/12`);

    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult).toMatchObject({ errorCode: 'UND_ERR_MAX_REDIRECTS' });
    expect(outcome.httpCheckResult!.redirects).toHaveLength(10);
    expect(outcome.errorMessage).toContain('more than 10 redirects');
  });

  it('does not follow a response with more than one Location header: it is the final one', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(302, ['location', '/a', 'location', '/b']).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const outcome = await run(`http://127.0.0.1:${port}/`);

      expect(outcome.status).toBe('PASSED');
      expect(outcome.httpCheckResult!.redirects).toEqual([]);
      expect(outcome.httpCheckResult!.response).toMatchObject({ statusCode: 302 });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails a redirect to a scheme it cannot follow', async () => {
    const outcome = await run(
      `${http.origin}/redirect-to?location=${encodeURIComponent('ftp://127.0.0.1/')}`,
    );

    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult!.errorCode).toBe('ERR_INVALID_REDIRECT');
  });

  it('scrubs Authorization, Cookie, Set-Cookie and x-api-key header values', async () => {
    const outcome = await run(`${http.origin}/secrets`);

    expect(outcome.httpCheckResult!.response!.headers).toMatchObject({
      'set-cookie': '*****',
      'x-api-key': '*****',
      authorization: '*****',
      'x-plain': 'visible',
    });
    expect(JSON.stringify(outcome)).not.toMatch(/abc|key-123|token-456/);
  });

  it('counts the body without storing it, up to maxBodyBytes', async () => {
    const capped = createUrlExecutor({ maxBodyBytes: 1000 });

    const whole = await run(`${http.origin}/bytes/5000`);
    const cut = await capped.run(jobOf('URL', urlRequest(`${http.origin}/bytes/5000`)), contextOf());

    expect(whole.httpCheckResult!.response).toMatchObject({ bodySizeBytes: 5000, bodyTruncated: false });
    expect(cut.status).toBe('PASSED');
    expect(cut.httpCheckResult!.response).toMatchObject({ bodySizeBytes: 1000, bodyTruncated: true });
    expect(JSON.stringify(whole)).not.toContain('aaaa');
  });

  it('fails a refused connection with ECONNREFUSED and no response', async () => {
    const port = await refusedPort();

    const outcome = await run(`http://127.0.0.1:${port}/`);

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: false });
    expect(outcome.errorMessage).toContain('ECONNREFUSED');
    expect(outcome.httpCheckResult).toMatchObject({ response: null, errorCode: 'ECONNREFUSED' });
    expect(outcome.httpCheckResult!.timings).toMatchObject({ connect: null, response: null, end: null });
  });

  it('passes a failing status when shouldFail is set', async () => {
    const outcome = await run(`${http.origin}/status/500`, {}, { shouldFail: true });

    expect(outcome).toMatchObject({ status: 'PASSED', errorMessage: null });
  });

  it('marks the run DEGRADED or FAILED by the response-time limits', async () => {
    const degraded = await run(
      `${http.origin}/delay/60`,
      {},
      { degradedResponseTime: 50, maxResponseTime: 5000 },
    );
    const over = await run(`${http.origin}/delay/60`, {}, { degradedResponseTime: 10, maxResponseTime: 50 });

    expect(degraded).toMatchObject({ status: 'DEGRADED', isDegraded: true });
    expect(over).toMatchObject({ status: 'FAILED', overMaxResponseTime: true });
    expect(over.errorMessage).toMatch(/response time [\d.]+ ms is at or above maxResponseTime 50 ms/);
  });

  it('fails with UND_ERR_HEADERS_TIMEOUT on time when the server never answers', async () => {
    const started = performance.now();

    const outcome = await run(`${http.origin}/stall-headers`, {}, { timeoutMs: 1000 });

    const elapsedMs = performance.now() - started;
    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult).toMatchObject({ errorCode: 'UND_ERR_HEADERS_TIMEOUT', response: null });
    expect(outcome.errorMessage).toMatch(
      /no response headers within [89]\d\d ms \(UND_ERR_HEADERS_TIMEOUT\)/,
    );
    // 10 % of the job's timeout is kept for posting the result.
    expect(elapsedMs).toBeGreaterThanOrEqual(895);
    expect(elapsedMs).toBeLessThan(1000);
  });

  it('fails with UND_ERR_BODY_TIMEOUT on time when the body stalls', async () => {
    const started = performance.now();

    const outcome = await run(`${http.origin}/stall-body`, {}, { timeoutMs: 1000 });

    const elapsedMs = performance.now() - started;
    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult).toMatchObject({ errorCode: 'UND_ERR_BODY_TIMEOUT' });
    expect(outcome.httpCheckResult!.response).toMatchObject({ statusCode: 200, bodySizeBytes: 5 });
    expect(outcome.httpCheckResult!.timings.end).toBeNull();
    expect(elapsedMs).toBeGreaterThanOrEqual(895);
    expect(elapsedMs).toBeLessThan(1000);
  });

  it('resolves the hostname through the name server and reports the dns phase', async () => {
    const withStub = createUrlExecutor({ dnsServers: [stub.server] });
    const job = (host: string) => jobOf('URL', urlRequest(`http://${host}:${http.port}/`));

    const found = await withStub.run(job('web.test'), contextOf());
    const missing = await withStub.run(job('nowhere.test'), contextOf());

    expect(found.status).toBe('PASSED');
    expect(found.httpCheckResult).toMatchObject({ resolvedIp: '127.0.0.1', resolver: 'dns' });
    expect(found.httpCheckResult!.timingPhases.dns).toBeGreaterThan(0);
    expect(stub.questions).toContainEqual({ name: 'web.test', type: 'A' });
    expect(missing.status).toBe('FAILED');
    expect(missing.httpCheckResult).toMatchObject({
      errorCode: 'ENOTFOUND',
      resolvedIp: null,
      response: null,
    });
    expect(missing.errorMessage).toContain('cannot resolve nowhere.test: ENOTFOUND');
  });

  it('throws OUTPOST_ERR_ABORTED when the job signal aborts', async () => {
    const controller = new AbortController();

    const pending = executor.run(
      jobOf('URL', urlRequest(`${http.origin}/stall-headers`)),
      contextOf(controller.signal),
    );
    setTimeout(() => controller.abort(), 50);

    await expect(pending).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
  });

  it.skipIf(ipv6Missing())('connects over IPv6 to [::1] and to localhost when asked', async () => {
    const v6 = await startHttpServer({ host: '::1' });
    try {
      const literal = await run(`${v6.origin}/`);
      const named = await run(`http://localhost:${v6.port}/`, { ipFamily: 'IPv6' });

      expect(literal.httpCheckResult).toMatchObject({ resolvedIp: '::1', response: { statusCode: 200 } });
      expect(named.httpCheckResult).toMatchObject({ resolvedIp: '::1', response: { statusCode: 200 } });
    } finally {
      await v6.close();
    }
  });
});

describe('URL executor with malformed jobs', () => {
  const executor = createUrlExecutor();
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['a missing url', { followRedirects: true, skipSSL: false, ipFamily: 'IPv4', assertions: [] }, /\/url/],
    ['a non-URL', urlRequest('not a url'), /url "not a url" is not a URL/],
    ['an ftp URL', urlRequest('ftp://127.0.0.1/'), /url must be http or https \(got ftp\)/],
    [
      'a string followRedirects',
      urlRequest('http://127.0.0.1/', { followRedirects: 'yes' }),
      /\/followRedirects/,
    ],
    [
      'a TEXT_BODY assertion',
      urlRequest('http://127.0.0.1/', {
        assertions: [{ source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'x' }],
      }),
      /source TEXT_BODY is not one of STATUS_CODE/,
    ],
  ];

  it.each(cases)('answers %s with hasErrors and never throws', async (_name, request, message) => {
    const outcome = await executor.run(jobOf('URL', request), contextOf());

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: true });
    expect(outcome.errorMessage).toMatch(message);
  });
});
