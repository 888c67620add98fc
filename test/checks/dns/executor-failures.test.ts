import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDnsExecutor } from '../../../src/checks/dns/index.js';
import { hasCode } from '../../../src/common/errors.js';
import { freeDnsPort, startScriptedDnsServer } from '../../helpers/dns-servers.js';
import { assertion, context, dnsJob, expectValidOutcome } from './helpers.js';

describe('DNS executor against a misbehaving server', () => {
  const executor = createDnsExecutor();

  it('fails SERVFAIL', async () => {
    const server = await startScriptedDnsServer(() => ({ rcode: 2 }));
    try {
      const outcome = await executor.run(dnsJob({ port: server.port }), context());
      expect(outcome).toMatchObject({
        status: 'FAILED',
        hasErrors: false,
        errorMessage: expect.stringMatching(/^return code SERVFAIL is not NOERROR/),
      });
      expect(outcome.dnsCheckResult?.returnCode).toBe('SERVFAIL');
    } finally {
      await server.close();
    }
  });

  it('retries a truncated answer over TCP and reports it', async () => {
    const answers = [{ type: 'A' as const, name: 'www.example.test', ttl: 5, data: '192.0.2.77' }];
    const server = await startScriptedDnsServer((_, transport) =>
      transport === 'UDP' ? { truncated: true } : { answers },
    );
    try {
      const outcome = await executor.run(dnsJob({ port: server.port }), context());
      expectValidOutcome(outcome);
      expect(outcome.status).toBe('PASSED');
      expect(outcome.dnsCheckResult).toMatchObject({
        truncatedRetriedOverTcp: true,
        nameServerInfo: { protocol: 'TCP' },
        answer: 'www.example.test.\t5\tIN\tA\t192.0.2.77',
      });
      expect(outcome.logs.map((l) => l.msg)).toContain('UDP answer truncated (TC); retried over TCP');
    } finally {
      await server.close();
    }
  });

  it('fails within the job timeout when the server never answers', async () => {
    const server = await startScriptedDnsServer(() => ({ silent: true }));
    try {
      const started = performance.now();
      const outcome = await executor.run(dnsJob({ port: server.port }, {}, 1000), context());
      const elapsedMs = performance.now() - started;
      expectValidOutcome(outcome);
      // 10 % of the job's time is kept for posting the result.
      expect(outcome).toMatchObject({
        status: 'FAILED',
        hasErrors: false,
        errorMessage: 'DNS query timed out after 900 ms',
      });
      expect(outcome.dnsCheckResult).toMatchObject({
        returnCode: null,
        answer: '',
        json: null,
        responseTime: null,
      });
      expect(elapsedMs).toBeGreaterThanOrEqual(890); // timers start from the cached loop time
      expect(elapsedMs).toBeLessThan(1000);

      const short = createDnsExecutor({ queryTimeoutMs: 150 });
      const quick = await short.run(dnsJob({ port: server.port }), context());
      expect(quick.errorMessage).toBe('DNS query timed out after 150 ms');
    } finally {
      await server.close();
    }
  });

  it('fails with ECONNREFUSED when no server listens', async () => {
    const port = await freeDnsPort();
    const outcome = await executor.run(dnsJob({ port }), context());
    expect(outcome).toMatchObject({
      status: 'FAILED',
      hasErrors: false,
      errorMessage: `ECONNREFUSED: no DNS server at 127.0.0.1 port ${port} (UDP)`,
    });
  });

  it('is DEGRADED at or above degradedResponseTime and FAILED at or above maxResponseTime', async () => {
    const server = await startScriptedDnsServer(() => ({
      delayMs: 60,
      answers: [{ type: 'A', name: 'www.example.test', ttl: 5, data: '192.0.2.1' }],
    }));
    try {
      const degraded = await executor.run(
        dnsJob({ port: server.port }, { degradedResponseTime: 50, maxResponseTime: 1000 }),
        context(),
      );
      expect(degraded).toMatchObject({ status: 'DEGRADED', isDegraded: true, hasFailures: false });
      expect(degraded.errorMessage).toMatch(
        /^response time [\d.]+ ms is at or above degradedResponseTime 50 ms$/,
      );
      const over = await executor.run(
        dnsJob({ port: server.port }, { degradedResponseTime: 20, maxResponseTime: 50 }),
        context(),
      );
      expect(over).toMatchObject({ status: 'FAILED', overMaxResponseTime: true });
      expect(over.errorMessage).toMatch(/^response time [\d.]+ ms is at or above maxResponseTime 50 ms$/);
    } finally {
      await server.close();
    }
  });

  it('asks the first name server of resolv.conf when the check gives none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-dns-'));
    const server = await startScriptedDnsServer(() => ({
      answers: [{ type: 'A', name: 'www.example.test', ttl: 5, data: '192.0.2.3' }],
    }));
    try {
      writeFileSync(join(dir, 'resolv.conf'), 'nameserver 127.0.0.1\nnameserver 127.0.0.2\n');
      const withDefault = createDnsExecutor({ resolvConfPath: join(dir, 'resolv.conf') });
      const outcome = await withDefault.run(dnsJob({ port: server.port, nameServer: null }), context());
      expect(outcome.status).toBe('PASSED');
      expect(outcome.dnsCheckResult?.nameServerInfo).toEqual({
        host: '127.0.0.1',
        port: server.port,
        protocol: 'UDP',
      });
      expect(server.queries).toHaveLength(1);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('throws OUTPOST_ERR_ABORTED when the agent aborts the run', async () => {
    const server = await startScriptedDnsServer(() => ({ silent: true }));
    try {
      const controller = new AbortController();
      const pending = executor.run(dnsJob({ port: server.port }), context(controller.signal));
      await expect.poll(() => server.queries.length).toBe(1);
      controller.abort();
      const error = await pending.catch((e: unknown) => e);
      expect(hasCode(error, 'OUTPOST_ERR_ABORTED')).toBe(true);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['a missing query', { query: undefined }, /^invalid DNS request: \/query /],
    ['an unknown record type', { recordType: 'ANY' }, /^invalid DNS request: \/recordType /],
    ['a port out of range', { port: 70000 }, /^invalid DNS request: \/port /],
    ['a protocol that is not UDP or TCP', { protocol: 'DOH' }, /^invalid DNS request: \/protocol /],
    [
      'a label longer than 63 bytes',
      { query: `${'a'.repeat(64)}.test` },
      /^invalid DNS request: \/query query name has a label longer than 63 bytes$/,
    ],
    [
      'an assertion source of another check type',
      { assertions: [assertion('STATUS_CODE', 'EQUALS', '200')] },
      /^assertion 1: source STATUS_CODE is not one of RESPONSE_TIME, RESPONSE_CODE, TEXT_ANSWER, JSON_ANSWER$/,
    ],
  ])('reports a malformed job (%s) with hasErrors and never throws', async (_, request, message) => {
    const outcome = await executor.run(dnsJob(request), context());
    expectValidOutcome(outcome);
    expect(outcome).toMatchObject({
      status: 'FAILED',
      hasErrors: true,
      hasFailures: true,
      errorMessage: expect.stringMatching(message),
    });
    expect(outcome.dnsCheckResult).toBeUndefined();
  });

  it('reports a job of another check type with hasErrors', async () => {
    const job = dnsJob({});
    job.check.checkType = 'ICMP';
    const outcome = await executor.run(job, context());
    expect(outcome).toMatchObject({ hasErrors: true, errorMessage: 'check type ICMP is not DNS' });
  });
});
