import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBadField, type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const request = (method: 'POST' | 'PUT' | 'GET' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
  svc.app.inject({ method, url, headers: svc.auth(), ...(payload ? { payload } : {}) });

/** The body the Go SDK sends (fixtures/CreateGRPCMonitor.json's request). */
const sdkBody = {
  name: 'gRPC Monitor #1',
  checkType: 'GRPC',
  activated: false,
  frequency: 10,
  locations: ['us-east-1'],
  doubleCheck: false,
  request: {
    url: 'grpc.example.com',
    port: 443,
    ipFamily: 'IPv4',
    skipSSL: false,
    timeout: 30,
    grpcConfig: {
      method: '/grpc.health.v1.Health/Check',
      mode: 'BEHAVIOR',
      storeResponseBody: false,
      tls: true,
    },
    assertions: [{ comparison: 'EQUALS', property: '', source: 'GRPC_STATUS', target: '0' }],
  },
};

describe('/v1/checks/grpc', () => {
  it('creates, reads, updates and deletes a gRPC monitor, filling the defaults', async () => {
    const created = await request('POST', '/v1/checks/grpc', sdkBody);
    expect(created.statusCode).toBe(201);
    const check = created.json();
    expect(check).toMatchObject({
      checkType: 'GRPC',
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: {
        url: 'grpc.example.com',
        port: 443,
        timeout: 30,
        grpcConfig: {
          mode: 'BEHAVIOR',
          tls: true,
          method: '/grpc.health.v1.Health/Check',
          metadata: [],
          protoContent: '',
          message: '',
          service: '',
        },
        assertions: [{ source: 'GRPC_STATUS', comparison: 'EQUALS', target: '0' }],
      },
    });
    expect((await request('GET', `/v1/checks/${check.id}`)).json().request.grpcConfig.tls).toBe(true);

    const updated = await request('PUT', `/v1/checks/grpc/${check.id}`, {
      ...sdkBody,
      request: {
        ...sdkBody.request,
        port: '{{GRPC_PORT}}',
        grpcConfig: { mode: 'HEALTH', tls: false, service: 'outpost.test.Users' },
      },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().request).toMatchObject({
      port: '{{GRPC_PORT}}',
      grpcConfig: { mode: 'HEALTH', service: 'outpost.test.Users' },
    });
    expect((await request('DELETE', `/v1/checks/${check.id}`)).statusCode).toBe(204);
    expect((await request('GET', `/v1/checks/${check.id}`)).statusCode).toBe(404);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['no grpcConfig', { url: 'a.test', port: 50051 }, 'request.grpcConfig'],
    [
      'a url with a scheme',
      { url: 'https://a.test', port: 1, grpcConfig: { method: '/a.B/C' } },
      'request.url',
    ],
    ['port 0', { url: 'a.test', port: 0, grpcConfig: { method: '/a.B/C' } }, 'request.port'],
    [
      'a port that is not a template',
      { url: 'a.test', port: 'http', grpcConfig: { method: '/a.B/C' } },
      'request.port',
    ],
    [
      'an unknown mode',
      { url: 'a.test', port: 1, grpcConfig: { mode: 'STREAM', method: '/a.B/C' } },
      'request.grpcConfig.mode',
    ],
    ['BEHAVIOR without a method', { url: 'a.test', port: 1, grpcConfig: {} }, 'request.grpcConfig.method'],
    [
      'a method naming no service',
      { url: 'a.test', port: 1, grpcConfig: { method: 'Check' } },
      'request.grpcConfig.method',
    ],
    [
      'a message that is not JSON',
      { url: 'a.test', port: 1, grpcConfig: { method: '/a.B/C', message: '{id' } },
      'request.grpcConfig.message',
    ],
    [
      'HEALTH with a method',
      { url: 'a.test', port: 1, grpcConfig: { mode: 'HEALTH', method: '/a.B/C' } },
      'request.grpcConfig.method',
    ],
    [
      'BEHAVIOR with a health service',
      { url: 'a.test', port: 1, grpcConfig: { method: '/a.B/C', service: 'a.B' } },
      'request.grpcConfig.service',
    ],
    [
      'protoContent over 256 KiB',
      { url: 'a.test', port: 1, grpcConfig: { method: '/a.B/C', protoContent: 'x'.repeat(262_145) } },
      'request.grpcConfig.protoContent',
    ],
    [
      'a timeout over 30 s',
      { url: 'a.test', port: 1, timeout: 31, grpcConfig: { method: '/a.B/C' } },
      'request.timeout',
    ],
    [
      'an assertion source of another type',
      {
        url: 'a.test',
        port: 1,
        grpcConfig: { method: '/a.B/C' },
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
      'request.assertions[0].source',
    ],
  ];
  for (const [what, body, field] of invalid) {
    it(`answers 400 naming ${field} for ${what}`, async () => {
      expectBadField(await request('POST', '/v1/checks/grpc', { name: 'bad', request: body }), field);
    });
  }

  it('takes a bare method with serviceDefinition, and the sources of gRPC assertions', async () => {
    const res = await request('POST', '/v1/checks/grpc', {
      name: 'users',
      request: {
        url: '127.0.0.1',
        port: 50051,
        grpcConfig: { serviceDefinition: 'outpost.test.Users', method: 'GetUser', message: '{"id":"42"}' },
        assertions: [
          { source: 'JSON_RESPONSE', property: '$.name', comparison: 'EQUALS', target: 'Ada' },
          { source: 'HEADERS', property: 'x-served-by', comparison: 'NOT_EMPTY' },
          { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '500' },
        ],
      },
    });
    expect(res.statusCode).toBe(201);
  });
});
