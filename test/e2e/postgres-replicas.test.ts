import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/index.js';
import { nextRunAfter } from '../../src/service/runs/scheduler/schedule.js';
import {
  claimOverHttp,
  apiClient,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';
import {
  createDatabase,
  POSTGRES_REQUIREMENT,
  type PostgresCluster,
  startPostgresCluster,
} from '../helpers/postgres.js';
import { missingRequirement } from '../helpers/requirements.js';
import { resultFor } from '../helpers/service.js';

/**
 * Three `outpost service` processes on one PostgreSQL store (a throwaway cluster on loopback): one migrate
 * command, replicas that start together, see each other's writes, schedule each slot once, hand each job
 * to one agent, and ride out a restart of the database without exiting.
 */
const missing = missingRequirement([POSTGRES_REQUIREMENT]);

const API_KEY = `op_${randomBytes(20).toString('hex')}`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

let cluster: PostgresCluster;
let databaseUrl: string;
let replicas: ServiceProcess[] = [];
let sql: pg.Client;

/** A client of the test's database, to be connected; its connection's end (a restart) is no error. */
function connectLater(): pg.Client {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  return client;
}

/** Every replica's process is still running. */
function allAlive(): boolean {
  return replicas.every((r) => r.process.child.exitCode === null && r.process.child.signalCode === null);
}

/** `GET /` of the server at `url` with another `Host` header (fetch may not set one). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(new URL('/', url), { headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}

/** Polls readiness every 200 ms until it is 200 or `byMs` (epoch ms) passes; the last status. */
async function readyBy(replica: ServiceProcess, byMs: number): Promise<number> {
  for (;;) {
    const status = await readiness(replica);
    if (status === 200 || Date.now() >= byMs) return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function readiness(replica: ServiceProcess): Promise<number> {
  try {
    return (await fetch(new URL('/-/readiness', replica.url), { signal: AbortSignal.timeout(3000) })).status;
  } catch {
    return 0;
  }
}

/** `POST /v1/agent/jobs/claim` through `replica` as agent `agentId`: the ids of the jobs it was handed. */
async function claim(replica: ServiceProcess, agentId: string, waitSeconds = 0): Promise<string[]> {
  return (await claimJobs(replica, agentId, waitSeconds)).map((job) => job.jobId);
}

/** The jobs handed to agent `agentId` by a claim through `replica`, waiting up to `waitSeconds` for one. */
function claimJobs(replica: ServiceProcess, agentId: string, waitSeconds: number): Promise<Job[]> {
  return claimOverHttp(replica.url, API_KEY, { agentId, waitSeconds });
}

describe.skipIf(missing !== null)('several service replicas on PostgreSQL', () => {
  beforeAll(async () => {
    cluster = await startPostgresCluster();
    databaseUrl = await createDatabase(cluster.url());
    sql = connectLater();
  });

  afterAll(async () => {
    await sql?.end().catch(() => {});
    await Promise.all(replicas.map((r) => r.stop()));
    await cluster?.stop();
  });

  it('outpost migrate brings an empty database to the latest migration and exits 0', async () => {
    const migrate = spawnCli(['migrate'], {
      OUTPOST_DATABASE_URL: databaseUrl,
      OUTPOST_ENCRYPTION_KEY: ENCRYPTION_KEY,
    });
    expect(await migrate.exited, migrate.output()).toBe(0);
    expect(migrate.output()).toMatch(/the PostgreSQL store is at migration 00\d\d_\w+/);
    await sql.connect();
    const { rows } = await sql.query<{ n: number }>('select count(*)::int as n from kysely_migration');
    expect(rows[0]!.n).toBeGreaterThan(15);
  });

  it('three replicas start at once on the store, with one account, and each answers readiness', async () => {
    const env = {
      OUTPOST_DATABASE_URL: databaseUrl,
      OUTPOST_ENCRYPTION_KEY: ENCRYPTION_KEY,
      // Custom domains under it need no DNS verification.
      OUTPOST_STATUS_PAGE_DOMAINS: '.status.example.test',
    };
    replicas = await Promise.all([0, 1, 2].map(() => startServiceProcess(API_KEY, env)));
    for (const replica of replicas) expect(await readiness(replica)).toBe(200);
    const { rows } = await sql.query<{ n: number }>('select count(*)::int as n from accounts');
    expect(rows[0]!.n).toBe(1);
    const live = await fetch(new URL('/-/liveness', replicas[0]!.url));
    expect(live.status).toBe(200);
  });

  it('a check created through one replica is read, changed and listed through the others', async () => {
    const [a, b, c] = replicas as [ServiceProcess, ServiceProcess, ServiceProcess];
    const created = await a.api('POST', '/v1/checks/icmp', {
      name: 'Replicated',
      request: { hostname: '127.0.0.1' },
      activated: false,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const id = created.json.id as string;
    expect((await b.api('GET', `/v1/checks/${id}`)).json.name).toBe('Replicated');
    const renamed = await c.api('PUT', `/v1/checks/icmp/${id}`, { name: 'Renamed on C' });
    expect(renamed.status, JSON.stringify(renamed.json)).toBe(200);
    expect((await a.api('GET', `/v1/checks/${id}`)).json.name).toBe('Renamed on C');
    expect(((await b.api('GET', '/v1/checks')).json as { id: string }[]).map((x) => x.id)).toContain(id);
  });

  it('schedules each due slot once although three schedulers tick, and hands each job to one agent', async () => {
    const [a] = replicas as [ServiceProcess];
    // Daily checks at a minute of the day whose next slot is far off: each is due once here, however long the
    // test takes.
    const offset = Array.from({ length: 24 }, (_, m) => m + 1).find(
      (m) => nextRunAfter(Date.now(), 'any', 1440, m) - Date.now() > 15 * 60_000,
    )!;
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) {
      const created = await a.api('POST', '/v1/checks/icmp', {
        name: `Scheduled ${i}`,
        request: { hostname: '127.0.0.1' },
        frequency: 1440,
        frequencyOffset: offset,
        activated: false,
      });
      expect(created.status, JSON.stringify(created.json)).toBe(201);
      ids.push(created.json.id as string);
    }
    // All 150 due at once, each at its latest slot on its fixed grid (its next slot is at least 15 minutes
    // away): the three schedulers' next ticks find them together and take them in batches, each its own.
    const nowMs = Date.now();
    const slots = ids.map((id) => nextRunAfter(nowMs - 86_400_000, id, 1440, offset));
    await sql.query(
      'update checks set activated = 1, next_run_at = s.slot from unnest($1::text[], $2::bigint[]) as s(id, slot) where checks.id = s.id',
      [ids, slots],
    );
    // Every replica's scheduler ticks each second: within a few seconds every check's first slot is queued.
    const deadline = Date.now() + 15_000;
    let perCheck: { check_id: string; n: number }[] = [];
    while (Date.now() < deadline) {
      perCheck = (
        await sql.query<{ check_id: string; n: number }>(
          'select check_id, count(*)::int as n from jobs where check_id = any($1) group by check_id',
          [ids],
        )
      ).rows;
      if (perCheck.length === ids.length) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(perCheck).toHaveLength(ids.length);
    // One slot each: no replica enqueued a slot another had taken.
    expect(perCheck.filter((row) => row.n !== 1)).toEqual([]);

    // Three agents claim at once, each through its own replica, until the queue is empty.
    const handed: string[] = [];
    await Promise.all(
      replicas.map(async (replica) => {
        const agentId = randomUUID();
        for (let empty = 0; empty < 3; ) {
          const jobs = await claim(replica, agentId);
          handed.push(...jobs);
          empty = jobs.length === 0 ? empty + 1 : 0;
        }
      }),
    );
    // Every job of the store was handed out, each once (the scheduled ones and any other slot that came due).
    const all = (await sql.query<{ id: string }>('select id from jobs')).rows.map((row) => row.id);
    expect(new Set(handed).size).toBe(handed.length);
    expect(new Set(handed)).toEqual(new Set(all));
  });

  it('wakes a long poll on one replica when another queues a job or stores a result (LISTEN/NOTIFY, not the 2-5 s poll)', async () => {
    const [a, b, c] = replicas as [ServiceProcess, ServiceProcess, ServiceProcess];
    const created = await a.api('POST', '/v1/checks/icmp', {
      name: 'Woken',
      request: { hostname: '127.0.0.1' },
      activated: false,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const agentId = randomUUID();
    // Nothing else may come due meanwhile, and the queue starts empty.
    await sql.query('update checks set activated = 0');
    while ((await claim(b, agentId)).length > 0) {}
    // The agent long-polls B with nothing queued; A queues the run.
    const waiting = claimJobs(b, agentId, 20).then((jobs) => ({ jobs, at: Date.now() }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const triggered = await a.api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json.id] },
    });
    expect(triggered.status, JSON.stringify(triggered.json)).toBe(201);
    const queuedAt = Date.now();
    const { jobs, at } = await waiting;
    expect(jobs).toHaveLength(1);
    // Without the notification the poll on B would look again 2 to 5 s after it began.
    expect(at - queuedAt).toBeLessThan(1500);

    // A completion wait on C ends when B stores the result.
    const sessionId = triggered.json.sessions[0].checkSessionId as string;
    const completion = c
      .api('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=20`)
      .then((res) => ({ res, at: Date.now() }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const job = jobs[0]!;
    const posted = await fetch(new URL(`/v1/agent/jobs/${job.jobId}/result`, b.url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'x-agent-id': agentId,
        'content-type': 'application/json',
      },
      body: JSON.stringify(resultFor(job)),
    });
    expect(posted.status, await posted.text()).toBeLessThan(300);
    const storedAt = Date.now();
    const done = await completion;
    expect(done.res.status, JSON.stringify(done.res.json)).toBe(200);
    expect(done.at - storedAt).toBeLessThan(1500);
  });

  it('a status page given a custom domain through one replica is served at that domain by the others at once', async () => {
    const [a, b, c] = replicas as [ServiceProcess, ServiceProcess, ServiceProcess];
    const domain = 'acme.status.example.test';
    const created = await a.api('POST', '/v1/status-pages', {
      name: 'Acme status',
      url: `acme-${randomBytes(4).toString('hex')}`,
      cards: [],
      customDomain: domain,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    // The periodic refresh of the other replicas' domain maps is 30 s away: the announcement must do it.
    for (const replica of [a, b, c]) {
      const deadline = Date.now() + 3000;
      let status = 0;
      let body = '';
      while (Date.now() < deadline) {
        ({ status, body } = await getWithHost(replica.url, domain));
        if (status === 200 && body.includes('Acme status')) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
      expect(body).toContain('Acme status');
    }
  });

  it('failed authentications count across replicas: 21 wrong keys spread over three hit the limit of 20', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      const replica = replicas[i % replicas.length]!;
      const res = await fetch(new URL('/v1/checks', replica.url), {
        headers: { authorization: `Bearer op_${randomBytes(20).toString('hex')}` },
      });
      statuses.push(res.status);
    }
    // Seven failures per replica: under the limit of any one of them, over the limit they share.
    expect(statuses.slice(0, 20).every((status) => status === 401)).toBe(true);
    expect(statuses[20]).toBe(429);
    // A valid key is never held back.
    expect((await replicas[0]!.api('GET', '/v1/checks')).status).toBe(200);
  });

  it('pg_terminate_backend of every connection of the replicas: each serves again within 10 s, none exits', async () => {
    const { rows } = await sql.query<{ n: number }>(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()`,
    );
    // Each replica's pool and its LISTEN connection.
    expect(rows[0]!.n).toBeGreaterThanOrEqual(replicas.length);
    const terminatedAt = Date.now();
    for (const [i, replica] of replicas.entries()) {
      expect(await readyBy(replica, terminatedAt + 10_000)).toBe(200);
      const res = await replica.api('POST', '/v1/checks/icmp', {
        name: `After termination ${i}`,
        request: { hostname: '127.0.0.1' },
        activated: false,
      });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
    }
    expect(allAlive()).toBe(true);
  });

  it('a fast restart of PostgreSQL: readiness says so, no replica exits, all serve again within 10 s', async () => {
    cluster.pgCtl(['restart', '-m', 'fast']);
    const restartedAt = Date.now();
    for (const replica of replicas) {
      expect(await readyBy(replica, restartedAt + 10_000), replica.process.output().slice(-3000)).toBe(200);
    }
    expect(allAlive()).toBe(true);
    // The pools dropped their dead connections: a write through each replica works.
    for (const [i, replica] of replicas.entries()) {
      const res = await replica.api('POST', '/v1/checks/icmp', {
        name: `After restart ${i}`,
        request: { hostname: '127.0.0.1' },
        activated: false,
      });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
    }
    // The test's own connection was ended by the restart.
    sql = connectLater();
    await sql.connect();
  });

  it('a stopped database: readiness answers 503, replicas keep running, and a new one waits for it alive', async () => {
    cluster.pgCtl(['stop', '-m', 'fast']);
    let late: CliProcess | undefined;
    let up = false;
    try {
      for (const replica of replicas) expect(await readiness(replica)).toBe(503);
      expect(allAlive()).toBe(true);
      // A replica started now: its port answers the probes (alive, not ready) while it tries again.
      const port = await freePort();
      late = spawnCli(['service'], {
        PORT: String(port),
        OUTPOST_DATA_DIR: mkdtempSync(join(tmpdir(), 'outpost-late-')),
        OUTPOST_API_KEY: API_KEY,
        OUTPOST_DATABASE_URL: databaseUrl,
        OUTPOST_ENCRYPTION_KEY: ENCRYPTION_KEY,
      });
      await late.waitFor(/PostgreSQL cannot be reached yet/);
      const url = `http://127.0.0.1:${port}`;
      expect((await fetch(`${url}/-/liveness`)).status).toBe(200);
      expect((await fetch(`${url}/-/readiness`)).status).toBe(503);
      expect((await fetch(`${url}/v1/checks`)).status).toBe(503);
      expect(late.child.exitCode).toBe(null);
      cluster.pgCtl(['start']);
      up = true;
      await late.waitFor(/service is listening/, 30_000);
      expect((await fetch(`${url}/-/readiness`)).status).toBe(200);
      expect((await apiClient(url, API_KEY)('GET', '/v1/checks')).status).toBe(200);
    } finally {
      if (!up) cluster.pgCtl(['start']);
      await stopCli(late);
    }
    const startedAt = Date.now();
    for (const replica of replicas) expect(await readyBy(replica, startedAt + 10_000)).toBe(200);
  });
});
