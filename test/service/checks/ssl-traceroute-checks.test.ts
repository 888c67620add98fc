import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSslExecutor } from '../../../src/checks/ssl/index.js';
import type { Job } from '../../../src/protocol/index.js';
import { contextOf } from '../../helpers/jobs.js';
import {
  claimJobs,
  createCheck,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';

/**
 * `POST/GET/PUT/DELETE /v1/checks/{ssl,traceroute}` as the hosted API's clients send them (the Go SDK's
 * fixtures), their defaults and refusals naming the field, and an SSL monitor run end to end: its job, built
 * from the stored check, run by the agent's SSL executor against a loopback TLS server, its result read back
 * with `sslCheckResult`.
 */
const AGENT_ID = '5b0c6a3e-4f1d-4c2a-9e77-1f2d3c4b5a69';
let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const create = (type: string, body: Record<string, unknown>) =>
  svc.request('POST', `/v1/checks/${type}`, body);

const valid = {
  ssl: { name: 'cert', request: { sslConfig: { hostname: 'shop.example.test' } } },
  traceroute: { name: 'path', request: { url: 'shop.example.test' } },
} as const;

describe('POST /v1/checks/{ssl,traceroute}', () => {
  it('creates an SSL monitor with its defaults', async () => {
    const res = await create('ssl', valid.ssl);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      checkType: 'SSL',
      degradedResponseTime: 3000,
      maxResponseTime: 10_000,
      frequency: 10,
      request: {
        sslConfig: {
          hostname: 'shop.example.test',
          port: 443,
          serverName: null,
          ipFamily: 'IPv4',
          skipChainValidation: false,
          handshakeTimeoutMs: 10_000,
          alertDaysBeforeExpiry: 20,
          securityBaseline: null,
        },
        assertions: [],
      },
    });
  });

  it('creates a TRACEROUTE monitor with its defaults, in a private location too', async () => {
    const res = await create('traceroute', valid.traceroute);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      checkType: 'TRACEROUTE',
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: {
        url: 'shop.example.test',
        protocol: 'ICMP',
        port: null,
        ipFamily: 'IPv4',
        maxHops: 30,
        maxUnknownHops: 15,
        ptrLookup: true,
        timeout: 10,
        assertions: [],
      },
    });
    const location = await svc.request('POST', '/v1/private-locations', {
      name: 'Lab',
      slugName: 'trace-lab',
    });
    expect(location.statusCode, location.body).toBe(201);
    const placed = await create('traceroute', { ...valid.traceroute, privateLocations: ['trace-lab'] });
    expect(placed.statusCode, placed.body).toBe(201);
    expect(placed.json().privateLocations).toEqual(['trace-lab']);
  });

  it('takes the Go SDK fixtures as they are, and reads, updates and deletes them', async () => {
    const ssl = await create('ssl', {
      name: 'SSL Monitor #1',
      activated: false,
      frequency: 10,
      degradedResponseTime: 3000,
      maxResponseTime: 10_000,
      locations: ['us-east-1'],
      privateLocations: null,
      runtimeId: null,
      retryStrategy: null,
      triggerIncident: null,
      useGlobalAlertSettings: false,
      request: {
        assertions: [
          { comparison: 'GREATER_THAN', property: 'daysUntilExpiry', source: 'CERTIFICATE', target: '14' },
          { comparison: 'EQUALS', property: 'tlsVersion', source: 'CONNECTION', target: 'TLSv1.3' },
          {
            comparison: 'GREATER_THAN',
            property: '$.certificate.keySizeBits',
            source: 'JSON_RESPONSE',
            target: '2048',
          },
          {
            comparison: 'CONTAINS',
            property: "Issuer:.*Let's Encrypt",
            source: 'TEXT_RESPONSE',
            target: 'true',
          },
        ],
        sslConfig: {
          alertDaysBeforeExpiry: 20,
          handshakeTimeoutMs: 10_000,
          hostname: 'example.com',
          ipFamily: 'IPv4',
          port: 443,
          skipChainValidation: false,
          securityBaseline: { enabled: true, minTLSVersion: { value: 'TLS1.2', severity: 'fail' } },
        },
      },
    });
    expect(ssl.statusCode, ssl.body).toBe(201);
    const id = ssl.json().id as string;
    const read = await svc.request('GET', `/v1/checks/${id}`);
    expect(read.json().request.assertions).toHaveLength(4);
    const updated = await svc.request('PUT', `/v1/checks/${id}`, {
      name: 'SSL Monitor #2',
      request: { sslConfig: { hostname: 'example.org', port: 8443, serverName: 'www.example.org' } },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({
      name: 'SSL Monitor #2',
      request: { sslConfig: { hostname: 'example.org', port: 8443, serverName: 'www.example.org' } },
    });
    expect((await svc.request('DELETE', `/v1/checks/${id}`)).statusCode).toBe(204);
    expect((await svc.request('GET', `/v1/checks/${id}`)).statusCode).toBe(404);

    const trace = await create('traceroute', {
      name: 'Traceroute Monitor #1',
      frequency: 10,
      locations: ['us-east-1'],
      request: {
        assertions: [{ comparison: 'LESS_THAN', property: 'avg', source: 'LATENCY', target: '200' }],
        ipFamily: 'IPv4',
        maxHops: 30,
        maxUnknownHops: 5,
        protocol: 'ICMP',
        timeout: 30,
        url: 'traceroute.example.com',
      },
    });
    expect(trace.statusCode, trace.body).toBe(201);
    const traceId = trace.json().id as string;
    const updatedTrace = await svc.request('PUT', `/v1/checks/${traceId}`, {
      request: { url: 'traceroute.example.com', protocol: 'UDP', port: 33_434, ptrLookup: false },
    });
    expect(updatedTrace.statusCode, updatedTrace.body).toBe(200);
    expect(updatedTrace.json().request).toMatchObject({ protocol: 'UDP', port: 33_434, ptrLookup: false });
    expect((await svc.request('DELETE', `/v1/checks/${traceId}`)).statusCode).toBe(204);
  });

  const invalid: [keyof typeof valid, string, Record<string, unknown>, string][] = [
    ['ssl', 'no sslConfig', { request: {} }, 'request.sslConfig'],
    [
      'ssl',
      'hostname with a scheme',
      { request: { sslConfig: { hostname: 'https://a' } } },
      'request.sslConfig.hostname',
    ],
    ['ssl', 'port 0', { request: { sslConfig: { hostname: 'a', port: 0 } } }, 'request.sslConfig.port'],
    [
      'ssl',
      'handshake timeout under 1 s',
      { request: { sslConfig: { hostname: 'a', handshakeTimeoutMs: 500 } } },
      'request.sslConfig.handshakeTimeoutMs',
    ],
    [
      'ssl',
      'a baseline TLS version that does not exist',
      { request: { sslConfig: { hostname: 'a', securityBaseline: { minTLSVersion: { value: 'TLS2.0' } } } } },
      'request.sslConfig.securityBaseline.minTLSVersion.value',
    ],
    [
      'ssl',
      'a HOP_COUNT assertion',
      {
        request: {
          sslConfig: { hostname: 'a' },
          assertions: [{ source: 'HOP_COUNT', comparison: 'LESS_THAN', target: '3' }],
        },
      },
      'request.assertions[0].source',
    ],
    ['ssl', 'maxResponseTime over 30 s', { maxResponseTime: 30_001 }, 'maxResponseTime'],
    ['ssl', 'sub-minute frequency', { frequency: 0, frequencyOffset: 10 }, 'frequency'],
    ['traceroute', 'TCP probes', { request: { url: 'a', protocol: 'TCP' } }, 'request.protocol'],
    ['traceroute', 'maxHops 65', { request: { url: 'a', maxHops: 65 } }, 'request.maxHops'],
    ['traceroute', 'timeout 31 s', { request: { url: 'a', timeout: 31 } }, 'request.timeout'],
    ['traceroute', 'url with a path', { request: { url: 'a.test/x' } }, 'request.url'],
    [
      'traceroute',
      'UDP ports past 65535',
      { request: { url: 'a', protocol: 'UDP', port: 65_500, maxHops: 30 } },
      'request.port',
    ],
    [
      'traceroute',
      'a CERTIFICATE assertion',
      {
        request: {
          url: 'a',
          assertions: [{ source: 'CERTIFICATE', property: 'x', comparison: 'EQUALS', target: '1' }],
        },
      },
      'request.assertions[0].source',
    ],
  ];
  it.each(invalid)('%s: %s gives 400 naming the field', async (type, _label, overrides, field) => {
    const res = await create(type, { ...valid[type], ...overrides });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', attributes: { field } });
  });
});

describe('an SSL monitor run, end to end', () => {
  let ca: TestCa;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    ca = createTestCa('Outpost Run CA');
    const pair = ca.issue({ commonName: 'localhost', altNames: ['DNS:localhost'] });
    server = createServer(pair, (socket) => socket.on('error', () => {}));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    ca?.destroy();
  });

  it('builds a job the SSL executor runs, and answers its result with sslCheckResult', async () => {
    const checkId = await createCheck(svc, 'ssl', {
      name: 'loopback cert',
      activated: false,
      request: {
        sslConfig: { hostname: 'localhost', port },
        assertions: [
          { source: 'CERTIFICATE', property: 'daysUntilExpiry', comparison: 'GREATER_THAN', target: '30' },
        ],
      },
    });
    await triggerCheck(svc, checkId);
    const jobs = (await claimJobs(svc, AGENT_ID, { checkTypes: ['SSL', 'TRACEROUTE'] })) as Job[];
    const job = jobs.find((j) => j.check.id === checkId);
    expect(job?.check.checkType).toBe('SSL');

    const outcome = await createSslExecutor({ trustedCas: [ca.caCert] }).run(job!, contextOf());
    expect(outcome.status, outcome.errorMessage ?? '').toBe('PASSED');
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': AGENT_ID },
      payload: { ...outcome, runLocation: job!.runLocation, attempts: 1, resultType: 'FINAL', artifacts: [] },
    });
    expect(posted.statusCode, posted.body).toBeLessThan(300);

    const results = await svc.request('GET', `/v1/check-results/${checkId}`);
    expect(results.statusCode).toBe(200);
    const [result] = results.json();
    expect(result.sslCheckResult).toMatchObject({
      tlsVersion: 'TLSv1.3',
      chainTrusted: true,
      hostnameVerified: true,
      request: { hostname: 'localhost', port },
      response: { certificate: { subjectCN: 'localhost', issuerCN: 'Outpost Run CA' } },
    });
    expect(result.tracerouteCheckResult).toBeNull();
  });
});
