/**
 * Scheduler lateness of `outpost service` with many 1-minute checks, on the embedded SQLite store (one process)
 * against PostgreSQL (two replicas on one database, fsync on, as a production cluster runs), measured against
 * the project's goal: lateness p99 < 1 s, max < 2 s, no duplicate run of a slot.
 * - SQLite: one `outpost service`, `BENCH_SCHEDULER_CHECKS_SQLITE` checks (default 10 000);
 * - PostgreSQL: two replicas (OUTPOST_DATABASE_URL, one OUTPOST_ENCRYPTION_KEY), `BENCH_SCHEDULER_CHECKS_POSTGRES`
 *   checks (default 100 000), each over the 3 data-center locations us-east-1, eu-west-1 and ap-southeast-1
 *   (not `runParallel`: one location per run, in turn);
 * each measured over `BENCH_SCHEDULER_MINUTES` whole minutes (default 10).
 *
 * The checks are ICMP checks at frequency 1 without `frequencyOffset`, so each runs on the service's own grid:
 * once a minute at the phase its id hashes to (phaseMs / nextRunAfter in src/service/runs/scheduler/schedule.ts).
 * One check is created through the API; the others are copies of its `checks` row written with SQL (same
 * columns, the document with its own id and name; creating 100 000 through the API takes too long), inserted
 * inactive, then activated in one statement with `next_run_at` at their first slot in the first measured minute
 * (a whole minute at least 20 s later; the API itself would first run a new check at once, then on the grid).
 * Nothing claims the jobs (no agent): the queue expires each after 6 minutes, as it does with no agent.
 *
 * Lateness of a job = its `enqueued_at` (the time of the scheduler batch that queued it: the tick's `nowMs` plus what
 * the tick had taken before the batch; jobs table) − the slot it was queued for; the batch commits its jobs up to its
 * own duration later (a batch of 250 takes tens of ms). The slot is not stored on the job (only `checks.next_run_at` holds it until the tick moves it),
 * so it is rebuilt the way the scheduler moves it: a check's first slot is the `next_run_at` the bench set; after a
 * job queued at t the scheduler sets `next_run_at = nextRunAfter(t)` (claimSlot, scheduler.ts), so each next job
 * is for the slot nextRunAfter(previous job's enqueued_at). A job queued before the slot so derived is a second
 * job of an earlier slot: a duplicate (counted per check and slot; the checks are not parallel, so two jobs of one
 * slot are a duplicate whatever their locations). A slot of the measured minutes with no job is skipped (the
 * scheduler, late past a whole period, moves to the next slot after now and never runs the missed one); slots not
 * reached by the end of the bench (`pending`, 90 s past the last minute at most) count as skipped too.
 * Scheduled jobs are the rows with no check session and attempt 1 (the run source, SCHEDULER, is inside the sealed
 * payload; triggered runs have a session, retries attempt > 1, and the bench starts neither).
 *
 * Jobs are deleted when they expire, so the bench reads `jobs` every 5 s and keeps what it saw by job id; each read
 * goes back past the newest `enqueued_at` seen by twice the largest delay seen between a job's `enqueued_at` and its
 * first read (at least 15 s): a tick commits its jobs up to its own duration after its `nowMs`. At the end the
 * `expired_runs` ids are checked against those seen: `unseen` counts jobs that expired unread (then their slots
 * show as skipped; it should be 0). CPU seconds (/proc/<pid>/stat) are those of the service processes and of the whole
 * PostgreSQL cluster, from the first measured minute to the end of the wait for late slots. The bench's own reads
 * run on the same machine.
 * Run: `npm run bench -- scheduler` (PostgreSQL: `apt-get install postgresql`, else that setup is skipped), e.g.
 * `BENCH_SCHEDULER_CHECKS_SQLITE=2000 BENCH_SCHEDULER_CHECKS_POSTGRES=10000 BENCH_SCHEDULER_MINUTES=2 node
 * dist/bench/run.js scheduler` after `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { SQLite } from '../src/service/platform/store/sqlite.js';
import { nextRunAfter, phaseMs } from '../src/service/runs/scheduler/schedule.js';
import { type ServiceProcess, startServiceProcess, stopCli } from '../test/helpers/cli.js';
import { createDatabase, postgresBinDir, startPostgresCluster } from '../test/helpers/postgres.js';
import { loadAverageLine } from './watchdog.js';

/** What one store setup achieved over the measured minutes. Times in ms. */
export type SchedulerLatenessRow = {
  setup: string;
  checks: number;
  minutes: number;
  /** Scheduled jobs seen whose slot is in the measured minutes (duplicates included). */
  jobs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Largest lateness of the slots of each measured minute. */
  maxMsByMinute: number[];
  /** Jobs beyond the first of one check and slot. */
  duplicates: number;
  /** Slots of the measured minutes without a job (`pending` included). */
  skipped: number;
  /** Skipped slots the scheduler had not reached when the bench ended. */
  pending: number;
  /** Jobs that expired before the bench read them (0 when the reads kept up). */
  unseen: number;
  /** Jobs per location over the measured minutes. */
  byLocation: Record<string, number>;
  /** CPU seconds of the service processes from the first measured minute to the end of the wait for late slots. */
  serviceCpuSeconds: number;
  /** CPU seconds of the PostgreSQL cluster over the same time; null on SQLite. */
  postgresCpuSeconds: number | null;
  /** Scheduler errors the services logged. */
  schedulerErrors: number;
};

const API_KEY = `op_${randomBytes(20).toString('hex')}`;
const LOCATIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-1'];
const MINUTE = 60_000;
const POLL_MS = 5000;
const INSERT_CHUNK = 500;
/** How long past the last measured minute the bench waits for slots not yet queued. */
const CATCH_UP_MS = 90_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

const envCount = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, not ${raw}`);
  return n;
};

const quantile = (sorted: Float64Array, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** The few statements the bench runs on a store, `$1`-style parameters (turned into `?` on SQLite). */
type BenchStore = {
  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  run(sql: string, params?: unknown[]): Promise<number>;
  close(): Promise<void>;
};

function sqliteStore(file: string): BenchStore {
  const db = new SQLite(file);
  db.pragma('busy_timeout = 10000');
  const prepare = (sql: string) => db.prepare(sql.replace(/\$\d+/g, '?'));
  return {
    all: async (sql, params = []) => prepare(sql).all(...params) as Record<string, unknown>[],
    run: async (sql, params = []) => prepare(sql).run(...params).changes,
    close: async () => {
      db.close();
    },
  };
}

async function postgresStore(url: string): Promise<BenchStore> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    all: async (sql, params = []) => (await client.query(sql, params)).rows,
    run: async (sql, params = []) => (await client.query(sql, params)).rowCount ?? 0,
    close: () => client.end(),
  };
}

let clockTicks: number | undefined;
/** utime + stime (+ cutime + cstime with `children`) of a process, s; 0 when it is gone. */
function cpuOf(pid: number, children = false): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // After the name: state is field 3, so field n is f[n - 3]: utime 14, stime 15, cutime 16, cstime 17.
    const ticks = f[11]! + f[12]! + (children ? f[13]! + f[14]! : 0);
    return ticks / clockTicks;
  } catch {
    return 0;
  }
}

/** CPU seconds of a PostgreSQL cluster: the postmaster with its reaped children, and its live children. */
function clusterCpu(dataDir: string): number {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = cpuOf(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuOf(Number(entry));
    } catch {
      // Gone meanwhile: its CPU is in the postmaster's cutime now.
    }
  }
  return total;
}

/** Scheduled jobs seen so far, by check: each job's `enqueued_at` and location. */
class JobLedger {
  readonly byCheck = new Map<string, { at: number; location: string }[]>();
  readonly seen = new Set<string>();
  newest = 0;
  /** Largest delay between a job's `enqueued_at` and the read that first saw it, ms. */
  maxDelayMs = 0;

  add(rows: Record<string, unknown>[], readAtMs: number): void {
    for (const row of rows) {
      const id = String(row.id);
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      const at = Number(row.enqueued_at);
      const checkId = String(row.check_id);
      let jobs = this.byCheck.get(checkId);
      if (!jobs) {
        jobs = [];
        this.byCheck.set(checkId, jobs);
      }
      jobs.push({ at, location: String(row.location) });
      this.newest = Math.max(this.newest, at);
      this.maxDelayMs = Math.max(this.maxDelayMs, readAtMs - at);
    }
  }
}

/** The scheduled jobs of the account queued since `sinceMs` (index `jobs_claimable`: nothing is leased). */
async function readJobs(store: BenchStore, accountId: string, sinceMs: number) {
  return store.all(
    `SELECT id, check_id, location, enqueued_at FROM jobs
     WHERE account_id = $1 AND state = 'queued' AND job_class = 'uptime' AND enqueued_at >= $2
       AND check_session_id IS NULL AND attempt = 1`,
    [accountId, sinceMs],
  );
}

/**
 * Creates `count` checks (one through the API, the rest copies of its row), activates them on the grid from the
 * next whole minute at least 20 s ahead, and records their scheduled jobs over `minutes` minutes.
 */
async function measure(
  setup: string,
  services: ServiceProcess[],
  store: BenchStore,
  count: number,
  minutes: number,
  postgresDataDir?: string,
): Promise<SchedulerLatenessRow> {
  const created = await services[0]!.api('POST', '/v1/checks/icmp', {
    name: 'bench 0',
    request: { hostname: '127.0.0.1' },
    activated: true,
    frequency: 1,
    locations: LOCATIONS,
    tags: ['bench'],
  });
  if (created.status !== 201) throw new Error(`check create answered ${created.status}`);
  const templateId = String(created.json.id);
  // Inactive until every copy is in; `next_run_at` holds the check's phase until activation adds the minute.
  await store.run('UPDATE checks SET activated = 0, next_run_at = $1 WHERE id = $2', [
    phaseMs(templateId, 1, null),
    templateId,
  ]);
  const [template] = await store.all('SELECT * FROM checks WHERE id = $1', [templateId]);
  if (!template) throw new Error('the created check has no row');
  const accountId = String(template.account_id);
  const templateDoc = String(template.doc);
  if (templateDoc.includes('"v1:'))
    throw new Error('the check document holds sealed values: it cannot be copied');
  const columns = Object.keys(template);

  const ids = [templateId];
  const insertStarted = performance.now();
  for (let first = 1; first < count; first += INSERT_CHUNK) {
    const params: unknown[] = [];
    const tuples: string[] = [];
    for (let i = first; i < Math.min(count, first + INSERT_CHUNK); i++) {
      const id = randomUUID();
      ids.push(id);
      const doc = { ...JSON.parse(templateDoc), id, name: `bench ${i}` };
      const docText = JSON.stringify(doc);
      if (docText.includes(templateId)) throw new Error('the check document names its id outside `id`');
      const values: Record<string, unknown> = {
        ...template,
        id,
        name: `bench ${i}`,
        doc: docText,
        activated: 0,
        next_run_at: phaseMs(id, 1, null),
        location_cursor: 0,
        created_at: Date.now(),
        updated_at: null,
      };
      tuples.push(`(${columns.map((c) => `$${params.push(values[c])}`).join(', ')})`);
    }
    await store.run(`INSERT INTO checks (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, params);
  }
  const insertSeconds = (performance.now() - insertStarted) / 1000;

  const activatedAt = Date.now();
  const windowStart = Math.ceil((activatedAt + 20_000) / MINUTE) * MINUTE;
  const windowEnd = windowStart + minutes * MINUTE;
  // Jobs queued before activation (the API's check ran once at creation) are not the bench's.
  const before = new Set(
    (await store.all('SELECT id FROM jobs WHERE account_id = $1', [accountId])).map((r) => String(r.id)),
  );
  const activated = await store.run(
    'UPDATE checks SET activated = 1, next_run_at = next_run_at + $1 WHERE account_id = $2',
    [windowStart, accountId],
  );
  if (activated !== count) throw new Error(`activated ${activated} checks, not ${count}`);
  const activationLate = Date.now() - windowStart;
  console.log(
    `${setup}: ${count} checks in ${insertSeconds.toFixed(1)} s; measuring ${minutes} min from ${new Date(windowStart).toISOString()}${activationLate > 0 ? ` (activation ended ${activationLate} ms into it)` : ''}`,
  );

  const ledger = new JobLedger();
  let polling = true;
  let pollError: unknown;
  const poller = (async () => {
    while (polling) {
      const readAt = Date.now();
      const margin = Math.max(15_000, 2 * ledger.maxDelayMs);
      try {
        ledger.add(await readJobs(store, accountId, Math.max(activatedAt, ledger.newest - margin)), readAt);
      } catch (err) {
        pollError = err;
        return;
      }
      await sleep(POLL_MS - (Date.now() - readAt));
    }
  })();

  const cpu = () => ({
    service: services.reduce((sum, s) => sum + cpuOf(s.process.child.pid!), 0),
    postgres: postgresDataDir === undefined ? null : clusterCpu(postgresDataDir),
  });
  await sleep(windowStart - Date.now());
  const cpuBefore = cpu();
  await sleep(windowEnd - Date.now());
  // Slots of the last minutes a late scheduler has not queued yet: wait for them a while.
  while (Date.now() < windowEnd + CATCH_UP_MS) {
    const [left] = await store.all(
      'SELECT count(*) AS n FROM checks WHERE account_id = $1 AND next_run_at < $2',
      [accountId, windowEnd],
    );
    if (Number(left?.n) === 0) break;
    await sleep(2000);
  }
  const cpuAfter = cpu();
  polling = false;
  await poller;
  if (pollError) throw pollError;
  const schedulerErrors = services.reduce(
    (sum, s) =>
      sum +
      s.process
        .output()
        .split('\n')
        .filter((l) =>
          /scheduler tick failed|could not be enqueued|next run of a check could not be set/.test(l),
        ).length,
    0,
  );
  // Stopped first, so the last reads see everything they queued.
  await Promise.all(services.map((s) => stopCli(s.process)));
  ledger.add(await readJobs(store, accountId, activatedAt), Date.now());
  let unseen = 0;
  for (const row of await store.all(
    'SELECT id FROM expired_runs WHERE account_id = $1 AND check_session_id IS NULL',
    [accountId],
  )) {
    const id = String(row.id);
    if (!ledger.seen.has(id) && !before.has(id)) unseen++;
  }
  await store.close();

  const lateness: number[] = [];
  const maxMsByMinute = Array.from({ length: minutes }, () => 0);
  const byLocation: Record<string, number> = {};
  let jobs = 0;
  let duplicates = 0;
  let skipped = 0;
  let pending = 0;
  for (const id of ids) {
    const firstSlot = nextRunAfter(windowStart - 1, id, 1, null);
    const seen = (ledger.byCheck.get(id) ?? [])
      .filter((j) => j.at >= activatedAt)
      .sort((a, b) => a.at - b.at);
    const slots = new Set<number>();
    let previous: number | undefined;
    let slot = firstSlot;
    for (const job of seen) {
      const next = previous === undefined ? firstSlot : nextRunAfter(previous, id, 1, null);
      const inWindow = (s: number) => s >= windowStart && s < windowEnd;
      if (job.at < next || slots.has(next)) {
        // Queued before the slot the previous job moved `next_run_at` to: another job of the slot before.
        if (inWindow(slot)) {
          duplicates++;
          jobs++;
        }
      } else {
        slot = next;
        slots.add(slot);
        if (inWindow(slot)) {
          const late = job.at - slot;
          lateness.push(late);
          const minute = Math.floor((slot - windowStart) / MINUTE);
          maxMsByMinute[minute] = Math.max(maxMsByMinute[minute]!, late);
          byLocation[job.location] = (byLocation[job.location] ?? 0) + 1;
          jobs++;
        }
      }
      previous = job.at;
    }
    const last = seen.at(-1)?.at ?? Number.NEGATIVE_INFINITY;
    for (let k = 0; k < minutes; k++) {
      const s = firstSlot + k * MINUTE;
      if (slots.has(s)) continue;
      skipped++;
      if (s > last) pending++;
    }
  }
  const sorted = Float64Array.from(lateness).sort();
  return {
    setup,
    checks: count,
    minutes,
    jobs,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
    maxMsByMinute,
    duplicates,
    skipped,
    pending,
    unseen,
    byLocation,
    serviceCpuSeconds: cpuAfter.service - cpuBefore.service,
    postgresCpuSeconds:
      cpuAfter.postgres === null || cpuBefore.postgres === null
        ? null
        : cpuAfter.postgres - cpuBefore.postgres,
    schedulerErrors,
  };
}

/**
 * Runs both setups (PostgreSQL skipped with a message when it is not installed) and prints their figures with
 * the machine's load average.
 * @returns the rows, SQLite first.
 */
export async function benchScheduler(
  options: { sqliteChecks?: number; postgresChecks?: number; minutes?: number } = {},
): Promise<SchedulerLatenessRow[]> {
  const sqliteChecks = options.sqliteChecks ?? envCount('BENCH_SCHEDULER_CHECKS_SQLITE', 10_000);
  const postgresChecks = options.postgresChecks ?? envCount('BENCH_SCHEDULER_CHECKS_POSTGRES', 100_000);
  const minutes = options.minutes ?? envCount('BENCH_SCHEDULER_MINUTES', 10);
  const limitMinutes = 2 * (minutes + 6) + 10;
  const watchdog = setTimeout(() => {
    console.error(`scheduler bench: no end within ${limitMinutes} minutes; stopping`);
    process.exit(3);
  }, limitMinutes * 60_000);
  watchdog.unref();
  const rows: SchedulerLatenessRow[] = [];
  const encryptionKey = randomBytes(32).toString('base64');

  const sqlite = await startServiceProcess(API_KEY, {
    OUTPOST_ENCRYPTION_KEY: encryptionKey,
    LOG_LEVEL: 'WARN',
  });
  try {
    const store = sqliteStore(join(sqlite.dataDir, 'outpost.db'));
    rows.push(await measure('SQLite, 1 process', [sqlite], store, sqliteChecks, minutes));
  } finally {
    await sqlite.stop();
  }

  if (postgresBinDir() === null) {
    console.log('PostgreSQL setup skipped: PostgreSQL is not installed (apt-get install postgresql)');
  } else {
    const cluster = await startPostgresCluster({ durable: true });
    const replicas: ServiceProcess[] = [];
    try {
      const url = await createDatabase(cluster.url());
      const env = { OUTPOST_DATABASE_URL: url, OUTPOST_ENCRYPTION_KEY: encryptionKey, LOG_LEVEL: 'WARN' };
      for (let i = 0; i < 2; i++) replicas.push(await startServiceProcess(API_KEY, env));
      const store = await postgresStore(url);
      rows.push(
        await measure(
          'PostgreSQL, 2 replicas',
          replicas,
          store,
          postgresChecks,
          minutes,
          join(cluster.dir, 'data'),
        ),
      );
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      await cluster.stop();
    }
  }

  const num = (n: number, width: number, digits = 0) =>
    (Number.isNaN(n) ? '-' : n.toFixed(digits)).padStart(width);
  console.log(
    `${'setup'.padEnd(24)}${'checks'.padStart(8)}${'min'.padStart(5)}${'jobs'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}${'dup'.padStart(6)}${'skipped'.padStart(9)}${'unseen'.padStart(8)}${'svc CPU s'.padStart(11)}${'pg CPU s'.padStart(10)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.setup.padEnd(24)}${num(r.checks, 8)}${num(r.minutes, 5)}${num(r.jobs, 9)}${num(r.p50Ms, 9)}${num(r.p99Ms, 9)}${num(r.maxMs, 9)}${num(r.duplicates, 6)}${num(r.skipped, 9)}${num(r.unseen, 8)}${num(r.serviceCpuSeconds, 11, 1)}${num(r.postgresCpuSeconds ?? Number.NaN, 10, 1)}`,
    );
  }
  for (const r of rows) {
    const met = r.p99Ms < 1000 && r.maxMs < 2000 && r.duplicates === 0 && r.skipped === 0;
    console.log(
      `${r.setup}: goal (p99 < 1 s, max < 2 s, no duplicate or skipped slot) ${met ? 'met' : 'NOT met'}; max per minute (ms) ${r.maxMsByMinute.map((m) => m.toFixed(0)).join(' ')}; by location ${Object.entries(
        r.byLocation,
      )
        .map(([l, n]) => `${l} ${n}`)
        .join(
          ', ',
        )}${r.pending > 0 ? `; ${r.pending} skipped slots were still not queued at the end` : ''}${r.schedulerErrors > 0 ? `; ${r.schedulerErrors} scheduler errors logged` : ''}`,
    );
  }
  console.log(loadAverageLine());
  clearTimeout(watchdog);
  return rows;
}
