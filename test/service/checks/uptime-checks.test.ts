import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const create = (type: string, body: Record<string, unknown>) =>
  svc.app.inject({ method: 'POST', url: `/v1/checks/${type}`, headers: svc.auth(), payload: body });

async function countChecks(): Promise<number> {
  const row = await svc.context.db
    .selectFrom('checks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const valid = {
  dns: { name: 'dns', request: { recordType: 'A', query: 'example.test' } },
  tcp: { name: 'tcp', request: { hostname: '127.0.0.1', port: 5432 } },
  url: { name: 'url', request: { url: 'https://example.test/health' } },
} as const;

describe('POST /v1/checks/{dns,tcp,url}', () => {
  it('creates each type with its defaults', async () => {
    const dns = await create('dns', valid.dns);
    expect(dns.statusCode).toBe(201);
    expect(dns.json()).toMatchObject({
      checkType: 'DNS',
      degradedResponseTime: 500,
      maxResponseTime: 1000,
      frequency: 10,
      request: {
        recordType: 'A',
        query: 'example.test',
        nameServer: null,
        port: 53,
        protocol: 'UDP',
        assertions: [],
      },
    });
    const tcp = await create('tcp', valid.tcp);
    expect(tcp.statusCode).toBe(201);
    expect(tcp.json()).toMatchObject({
      checkType: 'TCP',
      degradedResponseTime: 4000,
      maxResponseTime: 5000,
      request: { hostname: '127.0.0.1', port: 5432, data: null, ipFamily: 'IPv4', assertions: [] },
    });
    const url = await create('url', valid.url);
    expect(url.statusCode).toBe(201);
    expect(url.json()).toMatchObject({
      checkType: 'URL',
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: {
        url: 'https://example.test/health',
        followRedirects: true,
        skipSSL: false,
        ipFamily: 'IPv4',
        method: 'GET',
      },
    });
  });

  it('allows sub-minute frequency for TCP only', async () => {
    expect((await create('tcp', { ...valid.tcp, frequency: 0, frequencyOffset: 10 })).statusCode).toBe(201);
    const dns = await create('dns', { ...valid.dns, frequency: 0, frequencyOffset: 10 });
    expect(dns.statusCode).toBe(400);
    expect(dns.json().attributes.field).toBe('frequency');
  });

  const invalid: [string, string, Record<string, unknown>, string][] = [
    ['dns', 'unknown record type', { request: { recordType: 'AXFR', query: 'a' } }, 'request.recordType'],
    ['dns', 'query over 100', { request: { recordType: 'A', query: 'a'.repeat(101) } }, 'request.query'],
    ['dns', 'missing query', { request: { recordType: 'A' } }, 'request.query'],
    ['dns', 'port 0', { request: { recordType: 'A', query: 'a', port: 0 } }, 'request.port'],
    ['dns', 'port 65536', { request: { recordType: 'A', query: 'a', port: 65536 } }, 'request.port'],
    [
      'dns',
      'protocol QUIC',
      { request: { recordType: 'A', query: 'a', protocol: 'QUIC' } },
      'request.protocol',
    ],
    [
      'dns',
      'LATENCY assertion',
      {
        request: {
          recordType: 'A',
          query: 'a',
          assertions: [{ source: 'LATENCY', comparison: 'LESS_THAN', target: '1' }],
        },
      },
      'request.assertions[0].source',
    ],
    ['tcp', 'missing port', { request: { hostname: 'db' } }, 'request.port'],
    ['tcp', 'hostname with scheme', { request: { hostname: 'tcp://db', port: 1 } }, 'request.hostname'],
    ['tcp', 'hostname with port', { request: { hostname: 'db:5432', port: 1 } }, 'request.hostname'],
    ['tcp', 'maxResponseTime over limit', { maxResponseTime: 300001 }, 'maxResponseTime'],
    ['url', 'ftp url', { request: { url: 'ftp://example.test/' } }, 'request.url'],
    ['url', 'POST method', { request: { url: 'http://a/', method: 'POST' } }, 'request.method'],
    ['url', 'url over 2048', { request: { url: `http://a/${'x'.repeat(2048)}` } }, 'request.url'],
    [
      'url',
      'JSON_BODY assertion',
      {
        request: {
          url: 'http://a/',
          assertions: [{ source: 'JSON_BODY', comparison: 'EQUALS', target: '1' }],
        },
      },
      'request.assertions[0].source',
    ],
    ['url', 'heartbeat with a grace', { heartbeat: { grace: 1 } }, 'heartbeat.grace'],
  ];
  it.each(invalid)('%s: %s gives 400', async (type, _label, overrides, field) => {
    const before = await countChecks();
    const res = await create(type, { ...valid[type as keyof typeof valid], ...overrides });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', attributes: { field } });
    expect(await countChecks()).toBe(before);
  });

  it('validates an updated request against the check’s own type', async () => {
    const dns = (await create('dns', valid.dns)).json();
    const bad = await svc.app.inject({
      method: 'PUT',
      url: `/v1/checks/${dns.id}`,
      headers: svc.auth(),
      payload: { heartbeat: {}, script: null, request: { recordType: 'A', query: 'a', port: 70000 } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes.field).toBe('request.port');
    const ok = await svc.app.inject({
      method: 'PUT',
      url: `/v1/checks/${dns.id}`,
      headers: svc.auth(),
      payload: {
        heartbeat: {},
        script: null,
        request: { recordType: 'MX', query: 'mail.test', nameServer: '127.0.0.1', port: 5353 },
      },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().request).toEqual({
      recordType: 'MX',
      query: 'mail.test',
      nameServer: '127.0.0.1',
      port: 5353,
      protocol: 'UDP',
      assertions: [],
    });
  });
});
