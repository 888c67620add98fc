/**
 * Several service replicas on PostgreSQL against the one process on the embedded SQLite store, the setup a
 * self-hoster outgrows (same machine, same work, each at its best settings: SQLite in WAL mode as the service
 * runs it; PostgreSQL with fsync on, as a production cluster runs):
 * - claim + result cycles per second: jobs queued beforehand (one trigger of 500 checks queues 500 jobs), then `agents` concurrent agent loops (`POST /v1/agent/jobs/claim`, `waitSeconds` 0, up to 10 jobs;
 *   then `POST /v1/agent/jobs/{id}/result` for each), spread over the replicas, until the queue is empty;
 * - cross-replica wake-up: an agent long-polls replica B with nothing queued, a trigger through replica A
 *   queues one job; the time from the trigger's answer to the claim's answer (LISTEN/NOTIFY), p50/p99.
 * Every process runs on this machine, so the replicas share its cores: the figure says what the protocol and
 * the store cost, not what more machines would add. Run: `npm run bench -- replicas` (PostgreSQL needed:
 * `apt-get install postgresql`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { type Job, PROTOCOL_VERSION } from '../src/protocol/index.js';
import { type ServiceProcess, startServiceProcess } from '../test/helpers/cli.js';
import { createDatabase, postgresBinDir, startPostgresCluster } from '../test/helpers/postgres.js';
import { resultFor } from '../test/helpers/service.js';

/** What one store setup achieved. */
export type ReplicaCycleRow = {
  setup: string;
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  claimP99Ms: number;
};

const API_KEY = `op_${randomBytes(20).toString('hex')}`;
const CHECKS = 500;
const ROUNDS = 4;

const quantile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

async function post(url: string, path: string, body: unknown, agentId?: string): Promise<Response> {
  return fetch(new URL(path, url), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
      ...(agentId ? { 'x-agent-id': agentId } : {}),
    },
    body: JSON.stringify(body),
  });
}

async function claim(url: string, agentId: string, waitSeconds: number): Promise<Job[]> {
  const res = await post(
    url,
    '/v1/agent/jobs/claim',
    {
      agentVersion: '0.0.0-bench',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['ICMP'],
      runtimes: [],
      freeSlots: { uptime: 10, main: 0 },
      waitSeconds,
    },
    agentId,
  );
  if (res.status !== 200) throw new Error(`claim answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { jobs: Job[] }).jobs;
}

/** Creates `CHECKS` inactive ICMP checks through `url`; their ids. */
async function seed(url: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < CHECKS; i++) {
    const res = await post(url, '/v1/checks/icmp', {
      name: `bench ${i}`,
      request: { hostname: '127.0.0.1' },
      activated: false,
      tags: ['bench'],
    });
    if (res.status !== 201) throw new Error(`check create answered ${res.status}: ${await res.text()}`);
    ids.push(((await res.json()) as { id: string }).id);
  }
  return ids;
}

/** `ROUNDS` triggers of the checks `checkIds`, each drained by `agents` loops spread over `urls`. */
async function cycles(
  setup: string,
  urls: string[],
  agents: number,
  checkIds: string[],
): Promise<ReplicaCycleRow> {
  const claimMs: number[] = [];
  let jobs = 0;
  let busyMs = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const trigger = await post(urls[0]!, '/v1/check-sessions/trigger', { target: { checkId: checkIds } });
    const answer = await trigger.text();
    if (trigger.status !== 201) throw new Error(`trigger answered ${trigger.status}: ${answer}`);
    const sessions = (JSON.parse(answer) as { sessions: unknown[] }).sessions.length;
    if (sessions !== CHECKS) {
      throw new Error(`the trigger started ${sessions} sessions, not ${CHECKS}: ${answer.slice(0, 500)}`);
    }
    const started = performance.now();
    await Promise.all(
      Array.from({ length: agents }, async (_, i) => {
        const url = urls[i % urls.length]!;
        const agentId = randomUUID();
        for (;;) {
          const t = performance.now();
          const handed = await claim(url, agentId, 0);
          claimMs.push(performance.now() - t);
          if (handed.length === 0) return;
          await Promise.all(
            handed.map(async (job) => {
              const res = await post(url, `/v1/agent/jobs/${job.jobId}/result`, resultFor(job), agentId);
              if (res.status >= 300) throw new Error(`result answered ${res.status}: ${await res.text()}`);
              jobs++;
            }),
          );
        }
      }),
    );
    busyMs += performance.now() - started;
  }
  const seconds = busyMs / 1000;
  return { setup, jobs, seconds, jobsPerSecond: jobs / seconds, claimP99Ms: quantile(claimMs, 0.99) };
}

/** Wake-up latency across replicas, ms: long poll on `b`, trigger of one check through `a`. */
async function wakeUps(a: string, b: string, samples: number): Promise<number[]> {
  const res = await post(a, '/v1/checks/icmp', {
    name: 'wake',
    request: { hostname: '127.0.0.1' },
    activated: false,
    tags: ['wake'],
  });
  const checkId = ((await res.json()) as { id: string }).id;
  const latencies: number[] = [];
  const agentId = randomUUID();
  for (let i = 0; i < samples; i++) {
    const waiting = claim(b, agentId, 20).then((jobs) => ({ jobs, at: performance.now() }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const trigger = await post(a, '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    const queuedAt = performance.now();
    if (trigger.status !== 201) throw new Error(`trigger answered ${trigger.status}`);
    const { jobs, at } = await waiting;
    latencies.push(at - queuedAt);
    for (const job of jobs) await post(b, `/v1/agent/jobs/${job.jobId}/result`, resultFor(job), agentId);
  }
  return latencies;
}

/**
 * Runs both setups and prints their figures and ratios with the machine's load average.
 * @returns the cycle rows (SQLite first) and the wake-up latencies, ms.
 */
export async function benchReplicas(
  options: { replicas?: number; agents?: number; wakeSamples?: number } = {},
): Promise<{ rows: ReplicaCycleRow[]; wakeUpMs: number[] }> {
  if (postgresBinDir() === null)
    throw new Error('the replicas bench needs PostgreSQL: apt-get install postgresql');
  const replicaCount = options.replicas ?? 3;
  const agents = options.agents ?? 12;
  const watchdog = setTimeout(() => {
    console.error('replicas bench: no end within 15 minutes; stopping');
    process.exit(3);
  }, 15 * 60_000);
  watchdog.unref();
  const rows: ReplicaCycleRow[] = [];
  const encryptionKey = randomBytes(32).toString('base64');

  const sqlite = await startServiceProcess(API_KEY, {
    OUTPOST_ENCRYPTION_KEY: encryptionKey,
    LOG_LEVEL: 'WARN',
  });
  try {
    rows.push(await cycles('SQLite, 1 process', [sqlite.url], agents, await seed(sqlite.url)));
  } finally {
    await sqlite.stop();
  }

  const cluster = await startPostgresCluster({ durable: true });
  const replicas: ServiceProcess[] = [];
  let wakeUpMs: number[] = [];
  try {
    const env = {
      OUTPOST_DATABASE_URL: await createDatabase(cluster.url()),
      OUTPOST_ENCRYPTION_KEY: encryptionKey,
      LOG_LEVEL: 'WARN',
    };
    for (let i = 0; i < replicaCount; i++) replicas.push(await startServiceProcess(API_KEY, env));
    const urls = replicas.map((r) => r.url);
    const checkIds = await seed(urls[0]!);
    rows.push(await cycles(`PostgreSQL, ${replicaCount} replicas`, urls, agents, checkIds));
    wakeUpMs = await wakeUps(urls[0]!, urls[1 % urls.length]!, options.wakeSamples ?? 50);
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await cluster.stop();
  }

  const [one, many] = rows as [ReplicaCycleRow, ReplicaCycleRow];
  for (const row of rows) {
    console.log(
      `${row.setup.padEnd(26)} ${row.jobs} claim+result cycles in ${row.seconds.toFixed(1)} s = ${row.jobsPerSecond.toFixed(0)}/s (claim p99 ${row.claimP99Ms.toFixed(1)} ms)`,
    );
  }
  console.log(
    `ratio PostgreSQL replicas / SQLite process: ${(many.jobsPerSecond / one.jobsPerSecond).toFixed(2)}×`,
  );
  console.log(
    `cross-replica wake-up (trigger on A → claim answered on B): p50 ${quantile(wakeUpMs, 0.5).toFixed(1)} ms, p99 ${quantile(wakeUpMs, 0.99).toFixed(1)} ms over ${wakeUpMs.length}`,
  );
  console.log(
    `load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  clearTimeout(watchdog);
  return { rows, wakeUpMs };
}
