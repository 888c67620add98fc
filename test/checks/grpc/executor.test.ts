import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcExecutor, methodOf } from '../../../src/checks/grpc/index.js';
import { RunOutcomeSchema } from '../../../src/protocol/index.js';
import { startGrpcServer, type TestGrpcServer, USERS_PROTO } from '../../helpers/grpc-servers.js';
import { refusedPort } from '../../helpers/http-servers.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';
import { LIMIT_MS, worstLoopGap } from '../../helpers/event-loop.js';

type Config = Record<string, unknown>;
const grpcRequest = (port: number, config: Config = {}, request: Record<string, unknown> = {}) => ({
  url: '127.0.0.1',
  port,
  ipFamily: 'IPv4',
  skipSSL: false,
  timeout: 5,
  assertions: [],
  ...request,
  grpcConfig: {
    mode: 'BEHAVIOR',
    tls: false,
    metadata: [],
    serviceDefinition: '',
    method: '/outpost.test.Users/GetUser',
    protoContent: USERS_PROTO,
    message: '{"id":"42"}',
    service: '',
    ...config,
  },
});

let plain: TestGrpcServer;
let reflecting: TestGrpcServer;
let reflectingOld: TestGrpcServer;
let secure: TestGrpcServer;
let ca: TestCa;

beforeAll(async () => {
  ca = createTestCa();
  [plain, reflecting, secure, reflectingOld] = await Promise.all([
    startGrpcServer({ health: { '': 'SERVING', 'outpost.test.Users': 'NOT_SERVING' }, slowMs: 3000 }),
    startGrpcServer({ reflection: true }),
    startGrpcServer({ tls: ca.issue({ commonName: 'localhost' }) }),
    startGrpcServer({ reflection: 'v1alpha' }),
  ]);
});
afterAll(async () => {
  await Promise.all([plain, reflecting, secure, reflectingOld].map((s) => s.close()));
  ca.destroy();
});

describe('gRPC method names', () => {
  it('reads the forms a method is given in', () => {
    expect(methodOf('/outpost.test.Users/GetUser', '')).toEqual({
      service: 'outpost.test.Users',
      method: 'GetUser',
    });
    expect(methodOf('outpost.test.Users.GetUser', '')).toEqual({
      service: 'outpost.test.Users',
      method: 'GetUser',
    });
    expect(methodOf('GetUser', 'outpost.test.Users')).toEqual({
      service: 'outpost.test.Users',
      method: 'GetUser',
    });
    expect(methodOf('GetUser', '')).toBeNull();
  });
});

describe('gRPC executor', () => {
  const executor = createGrpcExecutor();

  it('calls a unary method with protoContent, and judges status, response fields and metadata', async () => {
    const job = jobOf(
      'GRPC',
      grpcRequest(
        plain.port,
        { metadata: [{ key: 'x-echo', value: 'hello' }] },
        {
          assertions: [
            { source: 'GRPC_STATUS', comparison: 'EQUALS', target: '0' },
            { source: 'JSON_RESPONSE', property: '$.name', comparison: 'EQUALS', target: 'Ada' },
            { source: 'JSON_RESPONSE', property: '$.tags[1]', comparison: 'EQUALS', target: 'ops' },
            { source: 'HEADERS', property: 'x-served-by', comparison: 'EQUALS', target: 'outpost-test' },
            { source: 'HEADERS', property: 'x-echo', comparison: 'EQUALS', target: 'hello' },
            { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '5000' },
          ],
        },
      ),
    );
    const outcome = await executor.run(job, contextOf());
    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome).toMatchObject({
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      errorMessage: null,
    });
    expect(outcome.assertions.map((a) => a.error)).toEqual([null, null, null, null, null, null]);
    const part = outcome.grpcCheckResult!;
    expect(part.grpcStatusCode).toBe(0);
    expect(part.response.grpcStatusMessage).toBe('OK');
    expect(part.response.descriptorSource).toBe('protoContent');
    expect(part.response.resolvedIp).toBe('127.0.0.1');
    expect(JSON.parse(part.response.responseMessage)).toMatchObject({
      id: '42',
      name: 'Ada',
      visits: '9007199254740993',
      tags: ['admin', 'ops'],
    });
    expect(part.response.discoveredMethods).toContain('outpost.test.Users/GetUser');
    expect(part.response.metadata).toContainEqual({ key: 'x-served-by', value: 'outpost-test' });
    // The TCP handshake alone (from the socket's creation), within the time until HTTP/2 was ready.
    expect(part.timingPhases.connect).not.toBeNull();
    expect(part.timingPhases.connect!).toBeLessThanOrEqual(part.timingPhases.ready!);
    expect(part.timingPhases.tls).toBeNull();
    expect(outcome.logs.filter((l) => l.msg.startsWith('connected to'))).toHaveLength(1);
    expect(part.timingPhases.firstResponse).not.toBeNull();
    expect(part.timingPhases.total).toBeGreaterThanOrEqual(part.timingPhases.firstResponse!);
    expect(outcome.responseTime).toBe(part.timingPhases.total);
  });

  it('fails on an error status with its name and details, unless a GRPC_STATUS assertion expects it', async () => {
    const failed = await executor.run(
      jobOf('GRPC', grpcRequest(plain.port, { message: '{"id":"7"}' })),
      contextOf(),
    );
    expect(failed.status).toBe('FAILED');
    expect(failed.errorMessage).toContain('status 5 NOT_FOUND: no user 7');
    expect(failed.grpcCheckResult?.grpcStatusCode).toBe(5);
    expect(failed.grpcCheckResult?.response.responseMessage).toBe('');

    const expected = await executor.run(
      jobOf(
        'GRPC',
        grpcRequest(
          plain.port,
          { message: '{"id":"7"}' },
          {
            assertions: [{ source: 'GRPC_STATUS', comparison: 'EQUALS', target: '5' }],
          },
        ),
      ),
      contextOf(),
    );
    expect(expected.status).toBe('PASSED');
  });

  it('ends a slow call at the request timeout with DEADLINE_EXCEEDED', async () => {
    const started = performance.now();
    const outcome = await executor.run(
      jobOf('GRPC', grpcRequest(plain.port, { method: '/outpost.test.Users/Slow' }, { timeout: 1 })),
      contextOf(),
    );
    const tookMs = performance.now() - started;
    expect(outcome.status).toBe('FAILED');
    expect(outcome.grpcCheckResult?.grpcStatusCode).toBe(4);
    expect(outcome.errorMessage).toContain('DEADLINE_EXCEEDED');
    expect(tookMs).toBeGreaterThan(900);
    expect(tookMs).toBeLessThan(2500);
  });

  it('asks the health service: SERVING passes, NOT_SERVING and an unknown service fail', async () => {
    const health = (service: string) =>
      executor.run(
        jobOf(
          'GRPC',
          grpcRequest(plain.port, { mode: 'HEALTH', method: '', protoContent: '', message: '', service }),
        ),
        contextOf(),
      );
    const serving = await health('');
    expect(serving.status).toBe('PASSED');
    expect(serving.grpcCheckResult).toMatchObject({
      grpcStatusCode: 0,
      healthStatus: 1,
      response: {
        healthStatusLabel: 'SERVING',
        grpcMethod: 'grpc.health.v1.Health/Check',
        descriptorSource: 'builtIn',
      },
    });
    const notServing = await health('outpost.test.Users');
    expect(notServing.status).toBe('FAILED');
    expect(notServing.errorMessage).toContain('health status NOT_SERVING');
    expect(notServing.grpcCheckResult?.healthStatus).toBe(2);
    const unknown = await health('no.such.Service');
    expect(unknown.status).toBe('FAILED');
    expect(unknown.grpcCheckResult?.grpcStatusCode).toBe(5);
    expect(unknown.errorMessage).toContain('NOT_FOUND');
  });

  it('reads the message types by server reflection when there is no protoContent', async () => {
    const outcome = await executor.run(
      jobOf(
        'GRPC',
        grpcRequest(
          reflecting.port,
          { protoContent: '' },
          {
            assertions: [
              { source: 'JSON_RESPONSE', property: '$.name', comparison: 'EQUALS', target: 'Ada' },
            ],
          },
        ),
      ),
      contextOf(),
    );
    expect(outcome.status).toBe('PASSED');
    expect(outcome.grpcCheckResult?.response.descriptorSource).toBe('reflection');
    expect(outcome.grpcCheckResult?.timingPhases.reflection).not.toBeNull();
    expect(JSON.parse(outcome.grpcCheckResult!.response.responseMessage).name).toBe('Ada');

    const old = await executor.run(
      jobOf('GRPC', grpcRequest(reflectingOld.port, { protoContent: '' })),
      contextOf(),
    );
    expect(old.errorMessage).toBeNull();
    expect(old.logs.map((l) => l.msg)).toContainEqual(
      expect.stringContaining('by grpc.reflection.v1alpha.ServerReflection'),
    );

    const none = await executor.run(
      jobOf('GRPC', grpcRequest(plain.port, { protoContent: '' })),
      contextOf(),
    );
    expect(none.status).toBe('FAILED');
    expect(none.errorMessage).toMatch(/server reflection: .*12 UNIMPLEMENTED/);
    expect(none.grpcCheckResult?.grpcStatusCode).toBeNull();
  });

  it('bounds responses: a message over the limit fails, a long one is kept cut', async () => {
    const tooBig = await executor.run(
      jobOf(
        'GRPC',
        grpcRequest(plain.port, { method: '/outpost.test.Users/Big', message: '{"size":2000000}' }),
      ),
      contextOf(),
    );
    expect(tooBig.status).toBe('FAILED');
    expect(tooBig.grpcCheckResult?.grpcStatusCode).toBe(8);
    expect(tooBig.errorMessage).toContain('RESOURCE_EXHAUSTED');

    const long = await executor.run(
      jobOf(
        'GRPC',
        grpcRequest(
          plain.port,
          { method: '/outpost.test.Users/Big', message: '{"size":300000}' },
          {
            assertions: [{ source: 'JSON_RESPONSE', property: '$.id', comparison: 'EQUALS', target: 'big' }],
          },
        ),
      ),
      contextOf(),
    );
    expect(long.status).toBe('PASSED');
    expect(long.grpcCheckResult?.response.responseTruncated).toBe(true);
    expect(long.grpcCheckResult?.response.responseMessage.length).toBe(64 * 1024);
  });

  it('fails a run whose protoContent does not parse, naming the field and the line', async () => {
    const outcome = await executor.run(
      jobOf(
        'GRPC',
        grpcRequest(plain.port, { protoContent: 'syntax = "proto3";\nmessage Broken { string a = ; }' }),
      ),
      contextOf(),
    );
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: false });
    expect(outcome.errorMessage).toMatch(/protoContent could not be read: .*line 2/);
    const noMethod = await executor.run(
      jobOf('GRPC', grpcRequest(plain.port, { method: '/outpost.test.Users/Nope' })),
      contextOf(),
    );
    expect(noMethod.errorMessage).toContain('service outpost.test.Users has no method Nope');
    const badMessage = await executor.run(
      jobOf('GRPC', grpcRequest(plain.port, { message: '{id' })),
      contextOf(),
    );
    expect(badMessage.errorMessage).toContain('message is not JSON');
  });

  it('connects over TLS to a server of a trusted CA and summarizes its certificate', async () => {
    const trusting = createGrpcExecutor({ ca: ca.caCert });
    const outcome = await trusting.run(
      jobOf('GRPC', grpcRequest(secure.port, { tls: true }, { url: 'localhost' })),
      contextOf(),
    );
    expect(outcome.errorMessage).toBeNull();
    const part = outcome.grpcCheckResult!;
    expect(part.timingPhases.tls).not.toBeNull();
    expect(part.timingPhases.connect! + part.timingPhases.tls!).toBeLessThanOrEqual(part.timingPhases.ready!);
    expect(part.response.tls?.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(part.response.tls?.certificate).toMatchObject({
      subject: { commonName: 'localhost' },
      authorized: true,
    });
  });

  it('refuses an untrusted certificate unless skipSSL, and plaintext to a TLS port', async () => {
    const untrusting = createGrpcExecutor();
    const refused = await untrusting.run(
      jobOf('GRPC', grpcRequest(secure.port, { tls: true }, { url: 'localhost' })),
      contextOf(),
    );
    expect(refused.status).toBe('FAILED');
    expect(refused.errorMessage).toContain('certificate not trusted');
    expect(refused.grpcCheckResult?.response.tls?.certificate?.authorized).toBe(false);

    const skipped = await untrusting.run(
      jobOf('GRPC', grpcRequest(secure.port, { tls: true }, { url: 'localhost', skipSSL: true })),
      contextOf(),
    );
    expect(skipped.status).toBe('PASSED');
  });

  it('fails with the reason when nothing listens, and for a port template naming no number', async () => {
    const port = await refusedPort();
    const outcome = await executor.run(jobOf('GRPC', grpcRequest(port)), contextOf());
    expect(outcome.status).toBe('FAILED');
    expect(outcome.errorMessage).toMatch(/ECONNREFUSED|UNAVAILABLE/);

    const templated = jobOf('GRPC', grpcRequest(0, {}, { port: '{{GRPC_PORT}}' }));
    templated.environmentVariables = [{ key: 'GRPC_PORT', value: String(plain.port), secret: false }];
    expect((await executor.run(templated, contextOf())).status).toBe('PASSED');
    const undefinedPort = await executor.run(
      jobOf('GRPC', grpcRequest(0, {}, { port: '{{NOPE}}' })),
      contextOf(),
    );
    expect(undefinedPort.errorMessage).toContain('is not a port number');
  });

  it('scrubs secret variables sent as metadata from what it reports', async () => {
    const job = jobOf('GRPC', grpcRequest(plain.port, { metadata: [{ key: 'x-echo', value: '{{TOKEN}}' }] }));
    job.environmentVariables = [{ key: 'TOKEN', value: 's3cr3t-token-value', secret: true }];
    const outcome = await executor.run(job, contextOf());
    expect(outcome.status).toBe('PASSED');
    expect(plain.received.at(-1)?.['x-echo']).toBe('s3cr3t-token-value');
    expect(JSON.stringify(outcome)).not.toContain('s3cr3t-token-value');
  });

  it('a malformed job is an error result, not a crash', async () => {
    const outcome = await executor.run(jobOf('GRPC', { url: 'x' }), contextOf());
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: true });
    expect(outcome.errorMessage).toContain('invalid GRPC request');
  });

  it('parses a large protoContent without holding the event loop', async () => {
    const messages = Array.from(
      { length: 2500 },
      (_, i) => `message Filler${i} { string a = 1; int64 b = 2; repeated string c = 3; }`,
    );
    const big = `${USERS_PROTO}\n${messages.join('\n')}\n`.slice(0, 262_144);
    const text = big.slice(0, big.lastIndexOf('\n') + 1);
    // The proto worker thread is started first: its start is not the parse being measured.
    expect((await executor.run(jobOf('GRPC', grpcRequest(plain.port)), contextOf())).status).toBe('PASSED');
    const { result, worstMs } = await worstLoopGap(() =>
      executor.run(jobOf('GRPC', grpcRequest(plain.port, { protoContent: text })), contextOf()),
    );
    expect(result.status).toBe('PASSED');
    expect(worstMs).toBeLessThan(LIMIT_MS);
  });
});

describe('gRPC proto workers', () => {
  it('stop a task at its time limit and say so', async () => {
    const { encodeOffThread } = await import('../../../src/checks/grpc/off-thread.js');
    const messages = Array.from({ length: 3000 }, (_, i) => `message M${i} { string a = 1; }`);
    const answer = await encodeOffThread(
      {
        schema: { kind: 'proto', text: `${USERS_PROTO}\n${messages.join('\n')}\n` },
        service: 'outpost.test.Users',
        method: 'GetUser',
        message: '{}',
      },
      1,
    );
    expect(answer).toEqual({ error: 'reading the message types did not finish within 1 ms; it was stopped' });
    // The next task gets a new thread and works.
    const next = await encodeOffThread({
      schema: { kind: 'proto', text: USERS_PROTO },
      service: 'outpost.test.Users',
      method: 'GetUser',
      message: '{"id":"1"}',
    });
    expect('path' in next && next.path).toBe('/outpost.test.Users/GetUser');
  });
});
