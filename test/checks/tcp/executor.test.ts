import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTcpExecutor } from '../../../src/checks/tcp/index.js';
import { RunOutcomeSchema } from '../../../src/protocol/index.js';
import { refusedPort, startTcpServer, type TestTcpServer } from '../../helpers/http-servers.js';
import { ipv6Missing } from '../../helpers/requirements.js';
import { type DnsStub, startDnsStub } from '../../helpers/dns-stub.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';

const tcp = (request: Record<string, unknown>) => ({
  hostname: '127.0.0.1',
  data: null,
  ipFamily: 'IPv4',
  assertions: [],
  ...request,
});

let echo: TestTcpServer;
let banner: TestTcpServer;
let silent: TestTcpServer;
let echoClose: TestTcpServer;
let stub: DnsStub;

beforeAll(async () => {
  [echo, banner, silent, echoClose] = await Promise.all([
    startTcpServer('echo'),
    startTcpServer('banner', { banner: 'SSH-2.0-Outpost\r\n' }),
    startTcpServer('silent'),
    startTcpServer('echo-close'),
  ]);
  stub = await startDnsStub({ 'echo.test': { A: ['127.0.0.1'] } });
});
afterAll(async () => {
  await Promise.all([echo, banner, silent, echoClose].map((s) => s.close()));
  await stub.close();
});

describe('TCP executor', () => {
  const executor = createTcpExecutor();

  it('connects, sends data and judges the echoed reply', async () => {
    const job = jobOf(
      'TCP',
      tcp({
        port: echo.port,
        data: 'PING outpost\r\n',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PING outpost' }],
      }),
    );

    const outcome = await executor.run(job, contextOf());

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome).toMatchObject({
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      errorMessage: null,
    });
    const part = outcome.tcpCheckResult!;
    expect(part).toMatchObject({
      hostname: '127.0.0.1',
      resolvedIp: '127.0.0.1',
      ipFamily: 'IPv4',
      resolver: 'dns',
      connected: true,
      errorCode: null,
      bytesSent: 14,
      bytesReceived: 14,
      responseData: 'PING outpost\r\n',
      responseTruncated: false,
    });
    expect(part.timings.dns).toBe(0);
    expect(part.timings.connect).toBeGreaterThan(0);
    expect(part.timings.firstByte).toBeGreaterThan(0);
    // The 100 ms idle wait that ends the reply is not part of the response time.
    expect(part.timings.total).toBeLessThan(100);
    expect(part.timings.total).toBeGreaterThanOrEqual(part.timings.connect + part.timings.firstByte!);
    expect(outcome.responseTime).toBe(part.timings.total);
  });

  it('is a plain port check without data and without RESPONSE_DATA assertions', async () => {
    const outcome = await executor.run(jobOf('TCP', tcp({ port: banner.port })), contextOf());

    expect(outcome.status).toBe('PASSED');
    expect(outcome.tcpCheckResult).toMatchObject({ connected: true, bytesSent: 0, responseData: '' });
    expect(outcome.tcpCheckResult!.timings.firstByte).toBeNull();
  });

  it('reads a banner when a RESPONSE_DATA assertion needs one, with the regex capture', async () => {
    const job = jobOf(
      'TCP',
      tcp({
        port: banner.port,
        assertions: [
          { source: 'RESPONSE_DATA', comparison: 'EQUALS', target: '2.0', regex: '^SSH-([0-9.]+)-' },
        ],
      }),
    );

    const outcome = await executor.run(job, contextOf());

    expect(outcome.status).toBe('PASSED');
    expect(outcome.assertions[0]).toMatchObject({ actual: '2.0', error: null });
    expect(outcome.tcpCheckResult!.responseData).toBe('SSH-2.0-Outpost\r\n');
  });

  it('fails on a RESPONSE_DATA assertion that does not hold', async () => {
    const job = jobOf(
      'TCP',
      tcp({
        port: echo.port,
        data: 'hello',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG' }],
      }),
    );

    const outcome = await executor.run(job, contextOf());

    expect(outcome.status).toBe('FAILED');
    expect(outcome.errorMessage).toContain('assertion RESPONSE_DATA CONTAINS PONG failed');
  });

  it('judges RESPONSE_TIME assertions on the total time', async () => {
    const pass = [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '5000' }];
    const fail = [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '0' }];

    const passed = await executor.run(jobOf('TCP', tcp({ port: echo.port, assertions: pass })), contextOf());
    const failed = await executor.run(jobOf('TCP', tcp({ port: echo.port, assertions: fail })), contextOf());

    expect(passed.status).toBe('PASSED');
    expect(failed.status).toBe('FAILED');
    expect(failed.assertions[0]!.actual).toBe(failed.tcpCheckResult!.timings.total);
  });

  it('ends the reply when the peer closes', async () => {
    const outcome = await executor.run(jobOf('TCP', tcp({ port: echoClose.port, data: 'bye' })), contextOf());

    expect(outcome.status).toBe('PASSED');
    expect(outcome.tcpCheckResult).toMatchObject({ responseData: 'bye', bytesReceived: 3 });
  });

  it('keeps at most maxResponseBytes of the reply and counts all of it', async () => {
    const small = createTcpExecutor({ maxResponseBytes: 16 });

    const outcome = await small.run(
      jobOf('TCP', tcp({ port: echo.port, data: 'x'.repeat(100) })),
      contextOf(),
    );

    expect(outcome.tcpCheckResult).toMatchObject({ responseData: 'x'.repeat(16), responseTruncated: true });
    expect(outcome.tcpCheckResult!.bytesReceived).toBeGreaterThan(16);
  });

  it('fails a refused connection with ECONNREFUSED', async () => {
    const port = await refusedPort();

    const outcome = await executor.run(jobOf('TCP', tcp({ port })), contextOf());

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome).toMatchObject({ status: 'FAILED', hasFailures: true, hasErrors: false });
    expect(outcome.errorMessage).toContain('ECONNREFUSED');
    expect(outcome.tcpCheckResult).toMatchObject({ connected: false, errorCode: 'ECONNREFUSED' });
  });

  it('passes a refused connection when shouldFail is set, and fails an open one', async () => {
    const port = await refusedPort();

    const refused = await executor.run(jobOf('TCP', tcp({ port }), { shouldFail: true }), contextOf());
    const open = await executor.run(
      jobOf('TCP', tcp({ port: echo.port }), { shouldFail: true }),
      contextOf(),
    );

    expect(refused).toMatchObject({ status: 'PASSED', hasFailures: false, errorMessage: null });
    expect(refused.tcpCheckResult!.errorCode).toBe('ECONNREFUSED');
    expect(open).toMatchObject({ status: 'FAILED', errorMessage: 'the check passed but shouldFail is set' });
  });

  it('fails with ETIMEDOUT on time when the peer never replies to data', async () => {
    const job = jobOf('TCP', tcp({ port: silent.port, data: 'anyone?' }), { timeoutMs: 1000 });
    const started = performance.now();

    const outcome = await executor.run(job, contextOf());

    const elapsedMs = performance.now() - started;
    expect(outcome.status).toBe('FAILED');
    expect(outcome.tcpCheckResult).toMatchObject({
      connected: true,
      errorCode: 'ETIMEDOUT',
      bytesReceived: 0,
    });
    expect(outcome.errorMessage).toMatch(/no reply from 127\.0\.0\.1:\d+ within [89]\d\d ms/);
    // 10 % of the timeout is kept for posting the result: the run ends at 900 ms.
    expect(elapsedMs).toBeGreaterThanOrEqual(895);
    expect(elapsedMs).toBeLessThan(1000);
  });

  it('marks the run DEGRADED or FAILED by the response-time limits', async () => {
    const degraded = await executor.run(
      jobOf('TCP', tcp({ port: echo.port }), { degradedResponseTime: 0 }),
      contextOf(),
    );
    const over = await executor.run(
      jobOf('TCP', tcp({ port: echo.port }), { maxResponseTime: 0 }),
      contextOf(),
    );

    expect(degraded).toMatchObject({ status: 'DEGRADED', isDegraded: true });
    expect(degraded.errorMessage).toContain('degradedResponseTime 0 ms');
    expect(over).toMatchObject({ status: 'FAILED', overMaxResponseTime: true });
  });

  it('fails an unknown hostname with ENOTFOUND', async () => {
    const withStub = createTcpExecutor({ dnsServers: [stub.server] });

    const outcome = await withStub.run(
      jobOf('TCP', tcp({ hostname: 'nowhere.test', port: 80 })),
      contextOf(),
    );

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.errorMessage).toBe('cannot resolve nowhere.test: ENOTFOUND');
    expect(outcome.tcpCheckResult).toMatchObject({
      resolvedIp: null,
      connected: false,
      errorCode: 'ENOTFOUND',
    });
  });

  it('resolves a name through the name server and times the lookup', async () => {
    const withStub = createTcpExecutor({ dnsServers: [stub.server] });

    const outcome = await withStub.run(
      jobOf('TCP', tcp({ hostname: 'echo.test', port: echo.port, data: 'hi' })),
      contextOf(),
    );

    expect(outcome.status).toBe('PASSED');
    expect(outcome.tcpCheckResult).toMatchObject({
      resolvedIp: '127.0.0.1',
      resolver: 'dns',
      responseData: 'hi',
    });
    expect(outcome.tcpCheckResult!.timings.dns).toBeGreaterThan(0);
    expect(outcome.tcpCheckResult!.timings.total).toBeGreaterThan(outcome.tcpCheckResult!.timings.dns);
  });

  it('reports the OS resolver when useOsDnsResolver is set', async () => {
    const os = createTcpExecutor({ useOsDnsResolver: true });

    const outcome = await os.run(jobOf('TCP', tcp({ hostname: 'localhost', port: echo.port })), contextOf());

    expect(outcome.status).toBe('PASSED');
    expect(outcome.tcpCheckResult).toMatchObject({ resolver: 'os', resolvedIp: '127.0.0.1' });
  });

  it.skipIf(ipv6Missing())('connects over IPv6 to localhost when asked', async () => {
    const v6 = await startTcpServer('echo', { host: '::1' });
    try {
      const job = jobOf('TCP', tcp({ hostname: 'localhost', port: v6.port, ipFamily: 'IPv6', data: 'six' }));

      const outcome = await executor.run(job, contextOf());

      expect(outcome.status).toBe('PASSED');
      expect(outcome.tcpCheckResult).toMatchObject({
        resolvedIp: '::1',
        ipFamily: 'IPv6',
        responseData: 'six',
      });
    } finally {
      await v6.close();
    }
  });

  it('throws OUTPOST_ERR_ABORTED when the job signal aborts', async () => {
    const controller = new AbortController();
    const job = jobOf('TCP', tcp({ port: silent.port, data: 'x' }));

    const run = executor.run(job, contextOf(controller.signal));
    setTimeout(() => controller.abort(), 50);

    await expect(run).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
  });
});

describe('TCP executor with malformed jobs', () => {
  const executor = createTcpExecutor();
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['a missing port', { hostname: 'h', data: null, ipFamily: 'IPv4', assertions: [] }, /\/port/],
    ['port 0', tcp({ port: 0 }), /\/port/],
    ['port 70000', tcp({ port: 70_000 }), /\/port/],
    ['an empty hostname', tcp({ hostname: '', port: 1 }), /\/hostname/],
    ['a bad ipFamily', tcp({ port: 1, ipFamily: 'IPv5' }), /\/ipFamily/],
    [
      'a STATUS_CODE assertion',
      tcp({ port: 1, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] }),
      /source STATUS_CODE is not one of RESPONSE_DATA, RESPONSE_TIME/,
    ],
  ];

  it.each(cases)('answers %s with hasErrors and never throws', async (_name, request, message) => {
    const outcome = await executor.run(jobOf('TCP', request), contextOf());

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: true, hasFailures: true });
    expect(outcome.errorMessage).toMatch(message);
    expect(outcome.tcpCheckResult).toBeUndefined();
  });

  it('refuses a job of another check type', async () => {
    const outcome = await executor.run(jobOf('URL', tcp({ port: 1 })), contextOf());

    expect(outcome).toMatchObject({ hasErrors: true, errorMessage: 'check type URL is not TCP' });
  });
});
