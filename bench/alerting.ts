/**
 * Alert delivery latency, end to end: `outpost service` (the built CLI, dist/src/cli.js, in its own
 * process, a SQLite file store in a temp folder) with one WEBHOOK channel pointing at a receiver on
 * loopback in this process, which answers 200 at once. This process plays the agent: it triggers
 * runs, claims their jobs and posts FAILED results; each one's transaction queues an ALERT_FAILURE
 * notification and the delivery worker sends it. A latency is from the start of the result's POST
 * to the webhook's arrival at the receiver (one clock: both ends are in this process).
 * - sequential: ~200 failures one after another (each waits for its webhook); goals p50 < 100 ms,
 *   p99 < 500 ms;
 * - burst: 1,000 checks failing at once (1,000 result POSTs in flight together, as 1,000 agents with one
 *   failure each would send them); goal p99 < 2 s (delivery never waits behind result ingestion);
 *   also the time from the first POST to the last arrival;
 * - agent burst: 1,000 checks of one agent failing at once, their results handed at once to the agent's own
 *   client (src/agent/service-client.ts `postResult`), which posts them as the agent does (batches of up to
 *   100 through `POST /v1/agent/results`, 4 posts in flight); same goal. A latency is from the hand-over to
 *   the webhook's arrival.
 * Prints the figures and their ratio to the goals (goal ÷ figure: above 1 is met); returns them.
 * Run: `npm run build && node dist/bench/alerting.js` (or `npx tsx bench/alerting.ts` after a build).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once, setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { PACKAGE_ROOT } from '../src/common/paths.js';
import { ServiceClient } from '../src/agent/service-client.js';
import { PROTOCOL_VERSION } from '../src/protocol/index.js';
import type { CheckResult } from '../src/protocol/result.js';

/** Latency figures of one scenario, ms. */
export type AlertingLatency = {
  failures: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
};

/** What benchAlerting measured. */
export type AlertingBenchReport = {
  /** Always true: the service ran as `outpost service` in its own process. */
  serviceProcess: true;
  sequential: AlertingLatency & { goalP50Ms: number; goalP99Ms: number };
  burst: AlertingLatency & {
    goalP99Ms: number;
    /** From the first result POST to the last webhook's arrival, ms. */
    lastArrivalMs: number;
    /** Time the 1,000 POSTs took to be answered, ms (the results stored, notifications queued). */
    postsAnsweredMs: number;
    /** Webhooks of the burst that had arrived when the last POST was answered. */
    deliveredWhilePosting: number;
    /** Webhooks per second from the last POST's answer to the last arrival (delivery alone). */
    drainPerSecond: number;
  };
  /** The burst of one agent through its own client: the same figures, from the hand-over of the results. */
  agentBurst: AlertingLatency & {
    goalP99Ms: number;
    /** From the hand-over of the results to the last webhook's arrival, ms. */
    lastArrivalMs: number;
    /** Time until the client had every result acknowledged, ms. */
    postsAnsweredMs: number;
  };
  /** Creating the channel and the checks, ms (not measured against a goal). */
  setupMs: number;
};

const GOALS = { sequentialP50Ms: 100, sequentialP99Ms: 500, burstP99Ms: 2000 } as const;
const API_KEY = 'bench_alerting_key_0123456789';
const AGENT_ID = '7f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b';

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function latency(samples: number[]): AlertingLatency {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    failures: samples.length,
    p50Ms: round(quantile(sorted, 0.5)),
    p99Ms: round(quantile(sorted, 0.99)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createTcpServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A webhook receiver recording the arrival of each check's first webhook (performance.now() ms). */
async function startReceiver() {
  const arrivals = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  let received = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      // A notification body is a few KB; more is not recorded.
      if (size <= 256 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      const at = performance.now();
      received += 1;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      let checkId: string | undefined;
      try {
        checkId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { CHECK_ID?: string }).CHECK_ID;
      } catch {
        return;
      }
      if (checkId === undefined || arrivals.has(checkId)) return;
      arrivals.set(checkId, at);
      waiters.get(checkId)?.();
      waiters.delete(checkId);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    received: () => received,
    /** Resolves with the arrival time of `checkId`'s webhook; rejects after `timeoutMs`. */
    arrival(checkId: string, timeoutMs: number): Promise<number> {
      const at = arrivals.get(checkId);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(checkId);
          reject(new Error(`no webhook for check ${checkId} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(checkId, () => {
          clearTimeout(timer);
          resolve(arrivals.get(checkId)!);
        });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `outpost service` from the build, resolved once it listens. */
async function startService(
  dataDir: string,
  port: number,
): Promise<{ child: ChildProcess; output(): string }> {
  const cli = join(PACKAGE_ROOT, 'dist/src/cli.js');
  const child = spawn(process.execPath, [cli, 'service'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      PORT: String(port),
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: API_KEY,
      LOG_LEVEL: 'WARN',
      // The receiver is on loopback, which the outbound policy refuses to users' webhooks unless allowed.
      OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (c: Buffer) => {
    // Start-up lines and warnings only (LOG_LEVEL WARN); kept bounded all the same.
    if (out.length < 64 * 1024) out += c.toString('utf8');
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const deadline = Date.now() + 30_000;
  while (!/service is listening/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`outpost service did not start (is dist/ built?):\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, output: () => out };
}

/**
 * Measures alert delivery (see the file comment), prints the figures with their ratio to the goals.
 * @param options `sequential` failures one after another (default 200); `burst` checks failing at
 *   once (default 1,000).
 * @throws Error when the service does not start, refuses a call, or a webhook does not arrive (30 s).
 */
export async function benchAlerting(
  options: { sequential?: number; burst?: number } = {},
): Promise<AlertingBenchReport> {
  const sequentialCount = options.sequential ?? 200;
  const burstCount = options.burst ?? 1000;
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-bench-alerting-'));
  const receiver = await startReceiver();
  // Enough connections for every POST of the burst to be on the wire at once, as 1,000 agents would be.
  const dispatcher = new Agent({ connections: burstCount + 10, pipelining: 0 });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let service: Awaited<ReturnType<typeof startService>> | undefined;

  const call = async (method: string, path: string, body?: unknown, agent = false) => {
    const res = await request(new URL(path, base), {
      method: method as 'GET' | 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        ...(agent ? { 'x-agent-id': AGENT_ID } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      dispatcher,
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      json: text ? (JSON.parse(text) as { id?: unknown; jobs?: unknown }) : null,
    };
  };
  const expect = (what: string, res: { status: number; json: unknown }, status: number) => {
    if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.json)}`);
  };

  try {
    service = await startService(dataDir, port);
    const setupStarted = performance.now();
    expect(
      'channel create',
      await call('POST', '/v1/alert-channels', {
        type: 'WEBHOOK',
        config: { name: 'bench receiver', url: receiver.url, webhookSecret: 'bench-secret' },
      }),
      201,
    );
    const createChecks = async (count: number, prefix: string): Promise<string[]> => {
      const ids: string[] = new Array(count);
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < count) {
            const i = next++;
            const res = await call('POST', '/v1/checks/url', {
              name: `${prefix} ${i}`,
              activated: false,
              request: { url: `https://${prefix}-${i}.example.test/`, assertions: [] },
            });
            expect('check create', res, 201);
            ids[i] = String(res.json?.id);
          }
        }),
      );
      return ids;
    };
    const sequentialChecks = await createChecks(sequentialCount, 'seq');
    const burstChecks = await createChecks(burstCount, 'burst');
    const agentBurstChecks = await createChecks(burstCount, 'agent');
    const setupMs = performance.now() - setupStarted;

    type ClaimedJob = { jobId: string; check: { id: string }; runLocation: string; attempt: number };
    const claimRunsOf = async (checkIds: string[]): Promise<ClaimedJob[]> => {
      for (let i = 0; i < checkIds.length; i += 1000) {
        expect(
          'trigger',
          await call('POST', '/v1/check-sessions/trigger', {
            target: { checkId: checkIds.slice(i, i + 1000) },
          }),
          201,
        );
      }
      const wanted = new Set(checkIds);
      const jobs: ClaimedJob[] = [];
      for (let round = 0; jobs.length < wanted.size; round++) {
        if (round > 50) throw new Error(`claimed ${jobs.length} of ${wanted.size} jobs`);
        const res = await call(
          'POST',
          '/v1/agent/jobs/claim',
          {
            agentVersion: '0.0.0-bench',
            protocolVersion: PROTOCOL_VERSION,
            checkTypes: ['URL'],
            runtimes: [],
            freeSlots: { uptime: 1000, main: 0 },
            waitSeconds: 1,
          },
          true,
        );
        expect('claim', res, 200);
        jobs.push(...((res.json?.jobs ?? []) as ClaimedJob[]).filter((j) => wanted.has(j.check.id)));
      }
      return jobs;
    };
    const failed = (job: ClaimedJob): CheckResult => {
      const now = new Date().toISOString();
      return {
        status: 'FAILED',
        hasFailures: true,
        hasErrors: false,
        isDegraded: false,
        overMaxResponseTime: false,
        responseTime: 12.5,
        startedAt: now,
        stoppedAt: now,
        errorMessage: 'expected status 200, got 503',
        assertions: [],
        logs: [],
        runLocation: job.runLocation,
        attempts: job.attempt,
        resultType: 'FINAL',
        artifacts: [],
      };
    };
    const post = async (job: ClaimedJob) =>
      expect('result post', await call('POST', `/v1/agent/jobs/${job.jobId}/result`, failed(job), true), 200);

    // Sequential: one failure at a time, each waiting for its webhook.
    const sequentialJobs = await claimRunsOf(sequentialChecks);
    const sequentialMs: number[] = [];
    for (const job of sequentialJobs) {
      const started = performance.now();
      await post(job);
      sequentialMs.push((await receiver.arrival(job.check.id, 30_000)) - started);
    }

    // Burst: every result posted at once.
    const burstJobs = await claimRunsOf(burstChecks);
    const burstStarted = performance.now();
    const postStarts = new Map<string, number>();
    await Promise.all(
      burstJobs.map((job) => {
        postStarts.set(job.check.id, performance.now());
        return post(job);
      }),
    );
    const postsAnsweredAt = performance.now();
    const postsAnsweredMs = postsAnsweredAt - burstStarted;
    const deliveredWhilePosting = burstChecks.filter((id) => receiver.arrivals.has(id)).length;
    const arrivals = await Promise.all(burstJobs.map((job) => receiver.arrival(job.check.id, 30_000)));
    const burstMs = burstJobs.map((job, i) => arrivals[i]! - postStarts.get(job.check.id)!);
    const lastArrivalMs = Math.max(...arrivals) - burstStarted;
    const drainMs = Math.max(...arrivals) - postsAnsweredAt;

    // Agent burst: one agent's results handed to its own client at once.
    const agentJobs = await claimRunsOf(agentBurstChecks);
    const client = new ServiceClient({ serviceUrl: base, apiKey: API_KEY, agentId: AGENT_ID });
    const agentStarted = performance.now();
    const posting = new AbortController();
    // Each result waiting for its batch listens to it, as each of the agent's listens to its hard signal (whose
    // limit the dispatcher lifts too): 1,000 of them are no leak.
    setMaxListeners(0, posting.signal);
    try {
      await Promise.all(
        agentJobs.map(async (job) => {
          const ack = await client.postResult(job.jobId, failed(job), posting.signal);
          if (!ack.stored) throw new Error(`the result of job ${job.jobId} was not stored`);
        }),
      );
    } finally {
      await client.close();
    }
    const agentAnsweredMs = performance.now() - agentStarted;
    const agentArrivals = await Promise.all(agentJobs.map((job) => receiver.arrival(job.check.id, 30_000)));
    const agentMs = agentArrivals.map((at) => at - agentStarted);

    const report: AlertingBenchReport = {
      serviceProcess: true,
      sequential: {
        ...latency(sequentialMs),
        goalP50Ms: GOALS.sequentialP50Ms,
        goalP99Ms: GOALS.sequentialP99Ms,
      },
      burst: {
        ...latency(burstMs),
        goalP99Ms: GOALS.burstP99Ms,
        lastArrivalMs: Math.round(lastArrivalMs),
        postsAnsweredMs: Math.round(postsAnsweredMs),
        deliveredWhilePosting,
        drainPerSecond: Math.round(
          ((burstJobs.length - deliveredWhilePosting) / Math.max(drainMs, 1)) * 1000,
        ),
      },
      agentBurst: {
        ...latency(agentMs),
        goalP99Ms: GOALS.burstP99Ms,
        lastArrivalMs: Math.round(Math.max(...agentMs)),
        postsAnsweredMs: Math.round(agentAnsweredMs),
      },
      setupMs: Math.round(setupMs),
    };
    print(report, receiver.received());
    return report;
  } finally {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      const timer = setTimeout(() => service?.child.kill('SIGKILL'), 5000);
      await once(service.child, 'exit');
      clearTimeout(timer);
    }
    await receiver.close();
    await dispatcher.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function print(r: AlertingBenchReport, webhooks: number): void {
  const ms = (n: number) => `${n.toFixed(1)} ms`.padStart(11);
  const ratio = (goal: number, figure: number) =>
    `×${(goal / Math.max(figure, 0.001)).toFixed(2)}`.padStart(8);
  const row = (what: string, figure: number, goal: number) =>
    `${what.padEnd(44)}|${ms(figure)} | < ${`${goal} ms`.padEnd(8)} |${ratio(goal, figure)}`;
  console.log(
    `alerting: outpost service process (SQLite file store) → WEBHOOK channel → receiver on loopback; ` +
      `result POST start → webhook arrival; setup ${r.setupMs} ms, ${webhooks} webhooks received`,
  );
  console.log(`${'scenario'.padEnd(44)}|${'figure'.padStart(11)} | ${'goal'.padEnd(10)} | ratio`);
  console.log(
    row(`sequential (${r.sequential.failures} failures) p50`, r.sequential.p50Ms, r.sequential.goalP50Ms),
  );
  console.log(
    row(`sequential (${r.sequential.failures} failures) p99`, r.sequential.p99Ms, r.sequential.goalP99Ms),
  );
  console.log(row(`burst (${r.burst.failures} at once) p99`, r.burst.p99Ms, r.burst.goalP99Ms));
  console.log(
    `${`burst: p50 / max`.padEnd(44)}|${ms(r.burst.p50Ms)} / ${r.burst.maxMs.toFixed(1)} ms; POSTs answered in ${r.burst.postsAnsweredMs} ms, last arrival ${r.burst.lastArrivalMs} ms after the first POST`,
  );
  console.log(
    `${'burst: delivery'.padEnd(44)}| ${r.burst.deliveredWhilePosting} webhooks arrived while the POSTs were answered, then ${r.burst.drainPerSecond} webhooks/s`,
  );
  console.log(
    row(
      `agent burst (${r.agentBurst.failures} of one agent) p99`,
      r.agentBurst.p99Ms,
      r.agentBurst.goalP99Ms,
    ),
  );
  console.log(
    `${'agent burst: p50 / max'.padEnd(44)}|${ms(r.agentBurst.p50Ms)} / ${r.agentBurst.maxMs.toFixed(1)} ms; results acknowledged in ${r.agentBurst.postsAnsweredMs} ms (the agent's client: batches of up to 100, 4 posts in flight)`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchAlerting();
}
