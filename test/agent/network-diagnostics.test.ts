import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetworkDiagnostics, diagnosticTargetOf } from '../../src/agent/network-diagnostics.js';
import type { HttpCheckResult, HttpConnection, RunOutcome } from '../../src/protocol/index.js';
import { refusedPort } from '../helpers/http-servers.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';
import { jobOf } from '../helpers/jobs.js';

/** A failed run whose final request dialled `connection` (null: it never opened one). */
const failedOn = (
  url: string,
  errorCode: string | null,
  connection: HttpConnection | null = {
    protocol: 'tcp',
    family: 4,
    remoteAddress: '127.0.0.1',
    remotePort: 80,
  },
  redirects: HttpCheckResult['redirects'] = [],
): RunOutcome => ({
  status: 'FAILED',
  hasFailures: true,
  hasErrors: false,
  isDegraded: false,
  overMaxResponseTime: false,
  responseTime: 1,
  startedAt: new Date().toISOString(),
  stoppedAt: new Date().toISOString(),
  errorMessage: 'failed',
  assertions: [],
  logs: [],
  httpCheckResult: {
    request: { method: 'GET', url },
    response: null,
    timings: { socket: null, lookup: null, connect: null, secureConnect: null, response: null, end: null },
    timingPhases: { wait: null, dns: null, tcp: null, tls: null, firstByte: null, download: null, total: 1 },
    redirects,
    certificate: null,
    resolvedIp: connection?.remoteAddress ?? null,
    connection,
    resolver: 'dns',
    errorCode,
  } satisfies HttpCheckResult,
});

const tcp = (remoteAddress: string, remotePort: number): HttpConnection => ({
  protocol: 'tcp',
  family: remoteAddress.includes(':') ? 6 : 4,
  remoteAddress,
  remotePort,
});

describe('which failures get network diagnostics', () => {
  it('API and URL runs failing on a connection error, on the connection the final request dialled', () => {
    const api = jobOf('API', {});
    expect(
      diagnosticTargetOf(api, failedOn('http://a.test:8080/x', 'ECONNREFUSED', tcp('127.0.0.1', 8080))),
    ).toEqual({
      address: '127.0.0.1',
      port: 8080,
      family: 4,
    });
    expect(
      diagnosticTargetOf(
        jobOf('URL', {}),
        failedOn('https://a.test/', 'UND_ERR_CONNECT_TIMEOUT', tcp('::1', 443)),
      ),
    ).toEqual({ address: '::1', port: 443, family: 6 });
  });

  it('an older result without a recorded connection: only a single request, its URL port or the scheme default', () => {
    const api = jobOf('API', {});
    for (const [url, port] of [
      ['http://a.test:8080/x', 8080],
      ['https://a.test/', 443],
      ['http://a.test/', 80],
    ] as const) {
      const outcome = failedOn(url, 'ECONNREFUSED', tcp('127.0.0.1', port));
      delete outcome.httpCheckResult!.connection;
      expect(diagnosticTargetOf(api, outcome)).toEqual({ address: '127.0.0.1', port, family: 4 });
    }
  });

  it('after redirects: address and port both of the failing hop, never the first URL port', () => {
    // The first URL's host:port answered (a live service); the redirect target refused.
    const outcome = failedOn('http://127.0.0.5:8080/start', 'ECONNREFUSED', tcp('127.0.0.9', 4444), [
      { url: 'http://127.0.0.5:8080/start', statusCode: 302 },
      { url: 'http://127.0.0.6:9090/next', statusCode: 307 },
    ]);
    expect(diagnosticTargetOf(jobOf('URL', {}), outcome)).toEqual({
      address: '127.0.0.9',
      port: 4444,
      family: 4,
    });
    expect(diagnosticTargetOf(jobOf('API', {}), outcome)).toEqual({
      address: '127.0.0.9',
      port: 4444,
      family: 4,
    });
  });

  it('not DNS, TLS or HTTP failures, passes, other check types, or runs without a recorded connection', () => {
    const api = jobOf('API', {});
    expect(diagnosticTargetOf(api, failedOn('http://a.test/', 'ENOTFOUND', null))).toBeNull();
    expect(diagnosticTargetOf(api, failedOn('https://a.test/', 'CERT_HAS_EXPIRED'))).toBeNull();
    expect(diagnosticTargetOf(api, failedOn('http://a.test/', null))).toBeNull();
    expect(
      diagnosticTargetOf(api, { ...failedOn('http://a.test/', 'ECONNREFUSED'), status: 'PASSED' }),
    ).toBeNull();
    expect(diagnosticTargetOf(jobOf('TCP', {}), failedOn('http://a.test/', 'ECONNREFUSED'))).toBeNull();
    // An older result after a redirect: an address but no connection. Never assembled from hops.
    const old = failedOn('http://a.test:8080/', 'ECONNREFUSED', tcp('127.0.0.9', 4444), [
      { url: 'http://a.test:8080/', statusCode: 302 },
    ]);
    delete old.httpCheckResult!.connection;
    expect(diagnosticTargetOf(api, old)).toBeNull();
    // A connection whose family does not match its address, or a bad port.
    expect(
      diagnosticTargetOf(
        api,
        failedOn('http://a.test/', 'ECONNREFUSED', { ...tcp('127.0.0.1', 80), family: 6 }),
      ),
    ).toBeNull();
    expect(
      diagnosticTargetOf(api, failedOn('http://a.test/', 'ECONNREFUSED', tcp('127.0.0.1', 0))),
    ).toBeNull();
  });
});

const missing = missingRequirement([
  {
    ok: commandWorks('tcpdump', ['--version']),
    what: 'tcpdump',
    install: 'apt-get install tcpdump; run as root',
  },
]);

describe.skipIf(missing !== null)('network diagnostics with the real traceroute and tcpdump', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-diag-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('uploads a route trace and a pcap of the refused connection', async () => {
    const uploads: { name: string; bytes: Buffer }[] = [];
    const diagnose = createNetworkDiagnostics({
      client: {
        async uploadArtifact(_jobId, name, path) {
          const bytes = readFileSync(path);
          copyFileSync(path, join(dir, name));
          uploads.push({ name, bytes });
          return bytes.length;
        },
      },
    });
    const port = await refusedPort();
    const job = {
      ...jobOf('API', {}),
      environmentVariables: [{ key: 'S', value: 'never-in-artifacts-123', secret: true }],
    };
    const artifacts = await diagnose(
      job,
      failedOn(`http://127.0.0.1:${port}/`, 'ECONNREFUSED', tcp('127.0.0.1', port)),
      {
        signal: new AbortController().signal,
        log: pino({ level: 'silent' }),
      },
    );

    expect(artifacts.map((a) => a.name).sort()).toEqual(['connection.pcap', 'route-trace.json']);
    const trace = JSON.parse(uploads.find((u) => u.name === 'route-trace.json')!.bytes.toString());
    expect(trace.trace).toMatchObject({ resolvedIp: '127.0.0.1', reached: true });
    const printed = execFileSync('tcpdump', ['-nn', '-r', join(dir, 'connection.pcap')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    expect(printed).toContain(`127.0.0.1.${port}: Flags [S]`);
    expect(printed).toMatch(new RegExp(`127\\.0\\.0\\.1\\.${port} > .*Flags \\[R`));
  });

  it('runs at most maxConcurrent at once and skips the rest', async () => {
    const diagnose = createNetworkDiagnostics({
      maxConcurrent: 1,
      client: { uploadArtifact: async (_j, _n, path) => readFileSync(path).length },
    });
    const port = await refusedPort();
    const context = { signal: new AbortController().signal, log: pino({ level: 'silent' }) };
    const outcome = failedOn(`http://127.0.0.1:${port}/`, 'ECONNREFUSED', tcp('127.0.0.1', port));
    const [first, second] = await Promise.all([
      diagnose(jobOf('API', {}), outcome, context),
      diagnose(jobOf('API', {}), outcome, context),
    ]);
    expect(first).toHaveLength(2);
    expect(second).toEqual([]);
  });
});
