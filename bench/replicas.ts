/**
 * Several service replicas on PostgreSQL against the one process on the embedded SQLite store, the setup a
 * self-hoster outgrows (same machine, same work, each at its best settings: SQLite in WAL mode as the service
 * runs it; PostgreSQL with fsync on, as a production cluster runs):
 * - claim + result cycles per second: jobs queued beforehand (one trigger of 500 checks queues 500 jobs), then `agents` concurrent agent loops (`POST /v1/agent/jobs/claim`, `waitSeconds` 0, up to 10 jobs;
 *   then the results of the jobs claimed), spread over the replicas, until the queue is empty. The results
 *   go as the agent sends them (its ServiceClient: the results that end while a post is on its way go
 *   together, `POST /v1/agent/results`), and, for the row marked so, one request per result
 *   (`POST /v1/agent/jobs/{id}/result`, as agents did before batches). On PostgreSQL three times: every
 *   statement unnamed (`OUTPOST_DATABASE_PREPARED_STATEMENTS=off`, parsed and planned on each run), then
 *   prepared as the service runs by default, with results one request each and then as the agent sends them;
 * - cross-replica wake-up: an agent long-polls replica B with nothing queued, a trigger through replica A
 *   queues one job; the time from the trigger's answer to the claim's answer (LISTEN/NOTIFY), p50/p99.
 * Every process runs on this machine, so the replicas share its cores: the figure says what the protocol and
 * the store cost, not what more machines would add. Run: `npm run bench -- replicas` (PostgreSQL needed:
 * `apt-get install postgresql`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceClient } from '../src/agent/service-client.js';
import { type Job, PROTOCOL_VERSION } from '../src/protocol/index.js';
import { type ServiceProcess, startServiceProcess } from '../test/helpers/cli.js';
import { createDatabase, postgresBinDir, startPostgresCluster } from '../test/helpers/postgres.js';
import { resultFor } from '../test/helpers/service.js';
import { loadAverageLine } from './watchdog.js';

/** What one store setup achieved. */
export type ReplicaCycleRow = {
  setup: string;
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  claimP99Ms: number;
  /**
   * CPU time per cycle, ms, by who spent it: the service processes, PostgreSQL's server processes (0 on
   * SQLite) and this bench's agent loops. Unlike the rate, it hardly moves with what else the machine runs:
   * on 2 cores, 1,000 cycles a second need at most 2 ms in all.
   */
  cpuMsPerJob: { service: number; postgres: number; agents: number };
};

/** CPU seconds (user + system) spent so far by `pid` and every live process under it; 0 once it is gone. */
function treeCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const stats = new Map<number, { ppid: number; cpu: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // pid (comm) state ppid … utime stime: fields after the command's closing parenthesis.
      const text = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(name), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / CLOCK_TICKS });
    } catch {
      // Gone since the listing.
    }
  }
  let total = 0;
  const todo = [pid];
  while (todo.length > 0) {
    const at = todo.pop()!;
    total += stats.get(at)?.cpu ?? 0;
    for (const [child, stat] of stats) if (stat.ppid === at) todo.push(child);
  }
  return total;
}

/** The kernel's clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux everywhere). */
const CLOCK_TICKS = 100;

/** The postmaster's pid of the cluster in `dir` (first line of `data/postmaster.pid`). */
function postmasterPid(dir: string): number {
  return Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

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
      // As the agent asks (undici's request sends no accept-encoding): fetch would ask for gzip, and the
      // service would compress the claims' answers for this bench only.
      'accept-encoding': 'identity',
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

/**
 * `ROUNDS` triggers of the checks `checkIds`, each drained by `agents` loops spread over `urls`; `results`
 * `agent`: posted by the agent's ServiceClient (batched as they end), `alone`: one request per result.
 */
async function cycles(
  setup: string,
  services: ServiceProcess[],
  agents: number,
  checkIds: string[],
  postgresPid?: number,
  results: 'agent' | 'alone' = 'agent',
): Promise<ReplicaCycleRow> {
  const urls = services.map((s) => s.url);
  const claimMs: number[] = [];
  let jobs = 0;
  let busyMs = 0;
  const cpu = { service: 0, postgres: 0, agents: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const trigger = await post(urls[0]!, '/v1/check-sessions/trigger', { target: { checkId: checkIds } });
    const answer = await trigger.text();
    if (trigger.status !== 201) throw new Error(`trigger answered ${trigger.status}: ${answer}`);
    const sessions = (JSON.parse(answer) as { sessions: unknown[] }).sessions.length;
    if (sessions !== CHECKS) {
      throw new Error(`the trigger started ${sessions} sessions, not ${CHECKS}: ${answer.slice(0, 500)}`);
    }
    const started = performance.now();
    const serviceCpu = services.reduce((sum, s) => sum + treeCpuSeconds(s.process.child.pid), 0);
    const postgresCpu = treeCpuSeconds(postgresPid);
    const agentCpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: agents }, async (_, i) => {
        const url = urls[i % urls.length]!;
        const agentId = randomUUID();
        const client = new ServiceClient({ serviceUrl: url, apiKey: API_KEY, agentId });
        try {
          for (;;) {
            const t = performance.now();
            const handed = await claim(url, agentId, 0);
            claimMs.push(performance.now() - t);
            if (handed.length === 0) return;
            await Promise.all(
              handed.map(async (job) => {
                if (results === 'agent') {
                  await client.postResult(job.jobId, resultFor(job), AbortSignal.timeout(60_000));
                } else {
                  const res = await post(url, `/v1/agent/jobs/${job.jobId}/result`, resultFor(job), agentId);
                  if (res.status >= 300)
                    throw new Error(`result answered ${res.status}: ${await res.text()}`);
                }
                jobs++;
              }),
            );
          }
        } finally {
          await client.close();
        }
      }),
    );
    busyMs += performance.now() - started;
    cpu.service += services.reduce((sum, s) => sum + treeCpuSeconds(s.process.child.pid), 0) - serviceCpu;
    cpu.postgres += treeCpuSeconds(postgresPid) - postgresCpu;
    const agentUsage = process.cpuUsage(agentCpu);
    cpu.agents += (agentUsage.user + agentUsage.system) / 1e6;
  }
  const seconds = busyMs / 1000;
  const perJob = (s: number) => (s * 1000) / jobs;
  return {
    setup,
    jobs,
    seconds,
    jobsPerSecond: jobs / seconds,
    claimP99Ms: quantile(claimMs, 0.99),
    cpuMsPerJob: { service: perJob(cpu.service), postgres: perJob(cpu.postgres), agents: perJob(cpu.agents) },
  };
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

/** `3.1 ms (service 1.2, PostgreSQL 1.5, agents 0.4)`. */
function cpuText(cpu: ReplicaCycleRow['cpuMsPerJob']): string {
  const total = cpu.service + cpu.postgres + cpu.agents;
  return `${total.toFixed(2)} ms (service ${cpu.service.toFixed(2)}, PostgreSQL ${cpu.postgres.toFixed(2)}, agents ${cpu.agents.toFixed(2)})`;
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
    rows.push(await cycles('SQLite, 1 process', [sqlite], agents, await seed(sqlite.url)));
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
    // First with every statement unnamed (OUTPOST_DATABASE_PREPARED_STATEMENTS=off, as behind an old
    // PgBouncer): parsed and planned on every run, which is what prepared statements save.
    for (let i = 0; i < replicaCount; i++) {
      replicas.push(
        await startServiceProcess(API_KEY, { ...env, OUTPOST_DATABASE_PREPARED_STATEMENTS: 'off' }),
      );
    }
    const checkIds = await seed(replicas[0]!.url);
    const postgresPid = postmasterPid(cluster.dir);
    rows.push(
      await cycles(
        `PostgreSQL, ${replicaCount} replicas, unprepared, results alone`,
        replicas,
        agents,
        checkIds,
        postgresPid,
        'alone',
      ),
    );
    await Promise.all(replicas.splice(0).map((r) => r.stop()));
    for (let i = 0; i < replicaCount; i++) replicas.push(await startServiceProcess(API_KEY, env));
    const urls = replicas.map((r) => r.url);
    rows.push(
      await cycles(
        `PostgreSQL, ${replicaCount} replicas, results alone`,
        replicas,
        agents,
        checkIds,
        postgresPid,
        'alone',
      ),
    );
    rows.push(await cycles(`PostgreSQL, ${replicaCount} replicas`, replicas, agents, checkIds, postgresPid));
    wakeUpMs = await wakeUps(urls[0]!, urls[1 % urls.length]!, options.wakeSamples ?? 50);
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await cluster.stop();
  }

  const [one, unprepared, alone, many] = rows as [
    ReplicaCycleRow,
    ReplicaCycleRow,
    ReplicaCycleRow,
    ReplicaCycleRow,
  ];
  for (const row of rows) {
    console.log(
      `${row.setup.padEnd(52)} ${row.jobs} claim+result cycles in ${row.seconds.toFixed(1)} s = ${row.jobsPerSecond.toFixed(0)}/s (claim p99 ${row.claimP99Ms.toFixed(1)} ms); CPU per cycle ${cpuText(row.cpuMsPerJob)}`,
    );
  }
  console.log(
    `ratio PostgreSQL replicas / SQLite process: ${(many.jobsPerSecond / one.jobsPerSecond).toFixed(2)}× (goal ≥ 1,000/s); prepared / unprepared statements: ${(alone.jobsPerSecond / unprepared.jobsPerSecond).toFixed(2)}×; results batched / alone: ${(many.jobsPerSecond / alone.jobsPerSecond).toFixed(2)}×`,
  );
  console.log(
    `cross-replica wake-up (trigger on A → claim answered on B): p50 ${quantile(wakeUpMs, 0.5).toFixed(1)} ms, p99 ${quantile(wakeUpMs, 0.99).toFixed(1)} ms over ${wakeUpMs.length}`,
  );
  console.log(loadAverageLine());
  clearTimeout(watchdog);
  return { rows, wakeUpMs };
}
