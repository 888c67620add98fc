/**
 * HTTP throughput of the service on loopback, measured with autocannon against the real
 * service (`build()` listening on 127.0.0.1:0 in a worker thread, a SQLite file store in a temp
 * directory):
 * - `GET /v1/check-sessions/{id}` for a finished session;
 * - the agent's cycle: `POST /v1/agent/jobs/claim` (waitSeconds 0, one free slot) then
 *   `POST /v1/agent/jobs/{jobId}/result`, over jobs queued beforehand with the trigger endpoint.
 * Prints requests per second and latency p50/p99; returns them.
 * Run: `npm run build && node dist/bench/service-http.js`.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { type CheckResult, type Job, PROTOCOL_VERSION } from '../src/protocol/index.js';
import { build } from '../src/service/app.js';
import { createAccount, createApiKey } from '../src/service/platform/http/auth.js';
import { openSqliteDatabase } from '../src/service/platform/store/database.js';

/** Figures of one scenario. Latencies in ms. */
export type HttpBenchScenario = {
  name: string;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx (must be 0). */
  non2xx: number;
  errors: number;
  /** Claim-and-result sequences restarted because a claim came back empty (must be 0). */
  resets: number;
};

/** What benchServiceHttp measured. */
export type HttpBenchReport = {
  connections: number;
  /** The service ran in its own worker thread (false when run from source: it then shared autocannon's event loop). */
  serviceInWorker: boolean;
  scenarios: HttpBenchScenario[];
};

function scenario(name: string, r: autocannon.Result): HttpBenchScenario {
  return {
    name,
    requests: r.requests.total,
    requestsPerSecond: Math.round(r.requests.total / (r.duration || 1)),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    resets: r.resets,
  };
}

/** What one autocannon connection keeps between the claim and the result. */
type CycleContext = { job?: Job | undefined };

/** A passing URL result with its HTTP part, as an agent posts it. */
function resultFor(job: Job): CheckResult {
  const now = new Date().toISOString();
  return {
    status: 'PASSED',
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: 42.5,
    startedAt: now,
    stoppedAt: now,
    errorMessage: null,
    assertions: [
      {
        source: 'STATUS_CODE',
        property: '',
        comparison: 'EQUALS',
        target: '200',
        regex: null,
        actual: '200',
        error: null,
      },
    ],
    logs: [],
    runLocation: job.runLocation,
    attempts: 1,
    resultType: 'FINAL',
    artifacts: [],
    httpCheckResult: {
      request: { method: 'GET', url: 'https://api.example.com/health' },
      response: {
        statusCode: 200,
        statusText: 'OK',
        url: 'https://api.example.com/health',
        bodySizeBytes: 512,
        bodyTruncated: false,
        headers: { 'content-type': 'application/json', 'content-length': '512', server: 'nginx' },
      },
      timings: { socket: 0.1, lookup: 1.2, connect: 10.3, secureConnect: 30.4, response: 40.5, end: 42.5 },
      timingPhases: { wait: 0.1, dns: 1.1, tcp: 9.1, tls: 20.1, firstByte: 10.1, download: 2, total: 42.5 },
      redirects: [],
      certificate: null,
      resolvedIp: '203.0.113.10',
      resolver: 'dns',
      errorCode: null,
    },
  } as CheckResult;
}

/**
 * Runs both scenarios and prints a table.
 * @param options.connections - concurrent connections. Default 10.
 * @param options.durationSeconds - length of the GET scenario. Default 5.
 * @param options.cycles - claim-and-result cycles (jobs queued beforehand). Default 2000.
 */
export async function benchServiceHttp(
  options: { connections?: number; durationSeconds?: number; cycles?: number } = {},
): Promise<HttpBenchReport> {
  const connections = options.connections ?? 10;
  const cycles = options.cycles ?? 2000;
  // The service runs in a worker thread, so autocannon (on this thread) does not share its event loop.
  const { port, key, close, inProcess } = await startService();
  try {
    const base = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    const check = await call('POST', '/v1/checks/url', {
      name: 'bench',
      activated: false,
      request: { url: 'https://api.example.com/health' },
    });
    const trigger = async () =>
      (
        (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } })) as {
          sessions: { checkSessionId: string }[];
        }
      ).sessions[0]!.checkSessionId;
    const sessionId = await trigger();
    // Jobs for the cycle scenario, plus one per connection so no claim comes back empty.
    for (let i = 0; i < cycles + connections; i++) await trigger();

    const agentHeaders = { ...headers, 'x-agent-id': randomUUID() };
    const claimBody = JSON.stringify({
      agentVersion: 'bench',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['URL'],
      runtimes: [],
      freeSlots: { uptime: 1, main: 0 },
      waitSeconds: 0,
    });
    const cycle = await autocannon({
      url: base,
      connections,
      amount: 2 * cycles,
      requests: [
        {
          method: 'POST',
          path: '/v1/agent/jobs/claim',
          headers: agentHeaders,
          body: claimBody,
          onResponse: (_status, body, context) => {
            (context as CycleContext).job = (JSON.parse(body) as { jobs: Job[] }).jobs[0];
          },
        },
        {
          method: 'POST',
          headers: agentHeaders,
          setupRequest: (request, context) => {
            const { job } = context as CycleContext;
            // No job claimed: start over with a claim (counted by autocannon as a reset).
            if (!job) return null as unknown as autocannon.Request;
            return {
              ...request,
              path: `/v1/agent/jobs/${job.jobId}/result`,
              body: JSON.stringify(resultFor(job)),
            };
          },
        },
      ],
    });

    const get = await autocannon({
      url: `${base}/v1/check-sessions/${sessionId}`,
      connections,
      duration: options.durationSeconds ?? 5,
      headers,
    });
    const report = {
      connections,
      serviceInWorker: !inProcess,
      scenarios: [
        scenario(`GET /v1/check-sessions/{id}`, get),
        scenario('claim + result cycle (2 requests)', cycle),
      ],
    };
    print(report);
    return report;
  } finally {
    await close();
  }
}

/** A running service: its port, an API key of its one account, and how to stop it. */
type RunningService = { port: number; key: string; close(): Promise<void>; inProcess: boolean };

/** A real service on a SQLite file in a temp directory, with one account, listening on 127.0.0.1. */
async function listen(): Promise<RunningService> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-http-'));
  const db = await openSqliteDatabase(join(dir, 'store.sqlite'));
  const key = await createApiKey(db, await createAccount(db, 'bench'));
  const service = await build({ db, log: pino({ level: 'silent' }) });
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (service.app.server.address() as AddressInfo).port;
  const close = async () => {
    await service.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  return { port, key, close, inProcess: true };
}

/**
 * Starts the service in a worker thread, so autocannon on this thread does not share its event
 * loop. Run from source (tsx), workers cannot load TypeScript: the service then runs in this
 * process and the figures are lower (flagged in the output).
 */
async function startService(): Promise<RunningService> {
  if (import.meta.url.endsWith('.ts')) return listen();
  const worker = new Worker(new URL(import.meta.url), { workerData: { outpostBenchService: true } });
  const { port, key } = await new Promise<{ port: number; key: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const close = async () => {
    worker.postMessage('close');
    await once(worker, 'exit');
  };
  return { port, key, close, inProcess: false };
}

/** The worker side: posts `{ port, key }` once listening; closes and removes the store on any message. */
async function serveInWorker(): Promise<void> {
  const service = await listen();
  parentPort!.once('message', async () => {
    await service.close();
    parentPort!.close();
  });
  parentPort!.postMessage({ port: service.port, key: service.key });
}

function print(r: HttpBenchReport): void {
  const where = r.serviceInWorker ? 'service in a worker thread' : "service in the load generator's process";
  console.log(`service HTTP on 127.0.0.1, ${r.connections} connections (autocannon), ${where}`);
  console.log(
    `${'scenario'.padEnd(40)}${'requests'.padStart(10)}${'req/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'failed'.padStart(9)}`,
  );
  for (const s of r.scenarios) {
    console.log(
      `${s.name.padEnd(40)}${String(s.requests).padStart(10)}${String(s.requestsPerSecond).padStart(9)}` +
        `${String(s.p50Ms).padStart(8)}${String(s.p99Ms).padStart(8)}${String(s.non2xx + s.errors + s.resets).padStart(9)}`,
    );
  }
}

if (!isMainThread && (workerData as { outpostBenchService?: boolean } | null)?.outpostBenchService) {
  await serveInWorker();
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchServiceHttp();
}
