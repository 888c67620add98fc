/**
 * Reads over 10,000,000 stored results, on the embedded SQLite store and on PostgreSQL (fsync on), against
 * the goal of p95 < 200 ms for each read a user makes of a large store:
 * - analytics of one check (`apiCheckAnalytics`, what `GET /v1/analytics/api-checks/{id}` answers): the last
 *   30 days in 1-day buckets (avg, p95, availability), the same by run location over 7 days, the last 30 days
 *   in 1-hour buckets (p99), the default last 24 hours;
 * - `GET /v1/check-statuses` of the account's 1,000 checks (`readCheckStatuses`);
 * - the 90-day uptime strip of a 50-service status page (`StripResultQueries`, what a page render reads of the
 *   results: the days before today of every linked check, then today's), and for comparison the statement that
 *   read the strip from the results before the daily rollup (migration 0024), timed 3 times.
 * Peer: none runs the same API; the figures are held to the goal and the two stores are printed side by side.
 *
 * The store is filled the way a year of real use leaves it, in SQL inside the store (10,000,000 rows through
 * the API would take hours): 1,000 checks of one account; 50 of them one-minute checks over the last 90 days
 * (3 run locations in turn; 6,480,000 results, the status page's checks), the other 950 sharing the rest over
 * the same 90 days; 2 % FAILED, 1 % DEGRADED; then the rollups are built from the results as the migrations'
 * backfills build them (`check_stats_hourly`, `check_stats_daily`, `check_last_results`). Each read runs once to
 * warm up, then `BENCH_RESULTS_RUNS` times (default 20); p50 and p95 of wall-clock time.
 *
 * Env: `BENCH_RESULTS` (default 10000000), `BENCH_RESULTS_STORES` (`sqlite,postgres`), `BENCH_RESULTS_DIR` (keep
 * the SQLite store there and reuse it on the next run), `BENCH_RESULTS_HOLD=1` (leave the PostgreSQL cluster
 * running at the end, its URL printed, for EXPLAIN; stop it with `pg_ctl stop -D <folder>/data`). Run: `npm run bench -- results-scale` (PostgreSQL:
 * `apt-get install postgresql`, else that store is skipped). About 15 minutes and 12 GB of disk at 10,000,000.
 */
import { timeRuns } from './read-timing.js';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Kysely, sql } from 'kysely';
import { apiCheckAnalytics } from '../src/service/analytics/api-checks.js';
import type { AnalyticsQuery } from '../src/service/analytics/schema.js';
import { AnalyticsWorkers } from '../src/service/analytics/workers.js';
import { newCheckDoc } from '../src/service/checks/checks.js';
import { CheckQueries } from '../src/service/checks/store.js';
import { createAccount } from '../src/service/platform/http/auth.js';
import { isPostgres } from '../src/service/platform/store/dialect.js';
import { type Database, openSqliteDatabase } from '../src/service/platform/store/database.js';
import { backfillCheckStatuses } from '../src/service/platform/store/migrations/0011_web_app.js';
import { backfillDailyStats } from '../src/service/platform/store/migrations/0024_daily_rollups.js';
import { openPostgresDatabase } from '../src/service/platform/store/postgres.js';
import { ResultPartitions } from '../src/service/platform/store/result-partitions.js';
import { readCheckStatuses } from '../src/service/resources/check-statuses/store.js';
import { StripResultQueries } from '../src/service/status-pages/public/result-queries.js';
import { createDatabase, postgresBinDir, startPostgresCluster } from '../test/helpers/postgres.js';
import { loadAverageLine } from './watchdog.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** The goal of every read, ms (p95). */
export const GOAL_P95_MS = 200;
const CHECKS = 1000;
const BUSY_CHECKS = 50;
const DAYS = 90;
const LOCATIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-1'];

/** A compact stored URL result (its size matters for the table, not its content). */
const DOC = JSON.stringify({
  status: 'PASSED',
  hasFailures: false,
  hasErrors: false,
  isDegraded: false,
  responseTime: 123.4,
  errorMessage: null,
  assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', actual: 200, error: null }],
  runLocation: 'eu-west-1',
  attempts: 1,
  resultType: 'FINAL',
  httpCheckResult: { response: { statusCode: 200, statusText: 'OK' } },
});

/** One timed read: wall-clock p50 and p95 over the runs, ms; `rows` what it answered (buckets, checks, days). */
export type ScaleRead = { store: string; read: string; p50Ms: number; p95Ms: number; rows: number };

/** The store's seconds to fill, and its size on disk (SQLite) or in the database (PostgreSQL), MiB. */
export type ScaleFill = {
  store: string;
  results: number;
  fillSeconds: number;
  rollupSeconds: number;
  sizeMiB: number;
};

type Store = {
  name: string;
  db: Kysely<Database>;
  workers: AnalyticsWorkers | null;
  sizeMiB(): Promise<number>;
};

/** `n` numbered rows `0 … n-1` as the table `s(i)` of a `WITH`, in the store's own SQL. */
function series(db: Kysely<Database>, n: number) {
  return isPostgres(db)
    ? sql`s(i) AS (SELECT generate_series(0, ${sql.lit(n - 1)})::bigint AS i)`
    : sql`s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ${sql.lit(n - 1)})`;
}

/** A 36-character id unique to (prefix, i): the length of the UUIDs the service stores. */
function idOf(db: Kysely<Database>, prefix: string, i: string) {
  return isPostgres(db)
    ? sql.raw(`'${prefix}' || lpad(${i}::text, 35, '0')`)
    : sql.raw(`'${prefix}' || printf('%035d', ${i})`);
}

/**
 * Inserts `count` results of the checks numbered `[firstCheck, firstCheck + checks)` (bench_checks), one every
 * `periodMs` from `startMs` per check, in statements of 500,000 rows (each its own transaction).
 */
async function fillResults(
  db: Kysely<Database>,
  accountId: string,
  prefix: string,
  firstCheck: number,
  checks: number,
  count: number,
  startMs: number,
  periodMs: number,
) {
  const step = 500_000;
  for (let from = 0; from < count; from += step) {
    const n = Math.min(step, count - from);
    const i = `(s.i + ${from})`;
    const k = `(${i} / ${checks})`;
    const hash = `((${i} * 7919) % 1000)`;
    const started = `(${startMs} + ${k} * ${periodMs} + ((${i} % ${checks}) * 997) % ${periodMs})`;
    const rt = `(40.0 + (${i} * 31 % 997) * 0.25 + CASE WHEN ${i} % 100 = 0 THEN 900.0 ELSE 0.0 END)`;
    const loc = `(CASE ${k} % 3 WHEN 0 THEN '${LOCATIONS[0]}' WHEN 1 THEN '${LOCATIONS[1]}' ELSE '${LOCATIONS[2]}' END)`;
    await sql`
      WITH RECURSIVE ${series(db, n)}
      INSERT INTO check_results (id, account_id, check_id, job_id, check_session_id, run_location, status,
        has_failures, has_errors, is_degraded, response_time, result_type, started_at, stopped_at, doc, created_at,
        phase_wait, phase_dns, phase_tcp, phase_first_byte, phase_download, status_code, attempts, agent_id,
        result_hash, round_id, details_settled)
      SELECT ${idOf(db, `r${prefix}`, i)}, ${accountId}, c.id, ${idOf(db, `j${prefix}`, i)}, NULL, ${sql.raw(loc)},
        CASE WHEN ${sql.raw(hash)} < 20 THEN 'FAILED' WHEN ${sql.raw(hash)} < 30 THEN 'DEGRADED' ELSE 'PASSED' END,
        CASE WHEN ${sql.raw(hash)} < 20 THEN 1 ELSE 0 END, 0,
        CASE WHEN ${sql.raw(hash)} >= 20 AND ${sql.raw(hash)} < 30 THEN 1 ELSE 0 END,
        ${sql.raw(rt)}, 'FINAL', ${sql.raw(started)}, ${sql.raw(started)} + 150, ${DOC}, ${sql.raw(started)} + 150,
        0.2, 1.0 + ${sql.raw(i)} % 20, 5.0 + ${sql.raw(i)} % 40, ${sql.raw(rt)} - 60.0, 10.0,
        CASE WHEN ${sql.raw(hash)} < 20 THEN 503 ELSE 200 END, CASE WHEN ${sql.raw(hash)} < 20 THEN 2 ELSE 1 END,
        NULL, NULL, NULL, 1
      FROM s JOIN bench_checks c ON c.idx = ${sql.lit(firstCheck)} + ${sql.raw(i)} % ${sql.lit(checks)}`.execute(
      db,
    );
  }
}

/** Creates the account and its checks, fills the results and the rollups; returns the fill's figures. */
async function fill(store: Store, results: number, nowMs: number): Promise<Omit<ScaleFill, 'sizeMiB'>> {
  const { db } = store;
  const accountId = await createAccount(db, 'bench');
  const checks = new CheckQueries(db);
  await sql`CREATE TABLE bench_checks (idx integer PRIMARY KEY, id text NOT NULL)`.execute(db);
  for (let idx = 0; idx < CHECKS; idx++) {
    const name = `check ${String(idx).padStart(4, '0')}`;
    const doc = newCheckDoc(
      'URL',
      { name, request: { url: 'https://example.com/' }, frequency: idx < BUSY_CHECKS ? 1 : 30 },
      new Date(nowMs),
    );
    await checks.insert(accountId, doc, nowMs);
    await sql`INSERT INTO bench_checks (idx, id) VALUES (${idx}, ${doc.id})`.execute(db);
  }
  const startMs = nowMs - DAYS * DAY_MS;
  // On PostgreSQL, the day partitions a store that ran for 90 days has (its retention pass made each ahead).
  await new ResultPartitions(db).ensureDays(startMs, nowMs);
  const busy = Math.min(results, BUSY_CHECKS * DAYS * 1440);
  const rest = results - busy;
  const t0 = performance.now();
  // The busy checks' runs end now (with fewer results than 90 days' worth, they cover the latest days).
  const busyStartMs = nowMs - Math.ceil(busy / BUSY_CHECKS) * MINUTE_MS;
  await fillResults(db, accountId, 'a', 0, BUSY_CHECKS, busy, busyStartMs, MINUTE_MS);
  if (rest > 0) {
    const perCheck = Math.ceil(rest / (CHECKS - BUSY_CHECKS));
    await fillResults(
      db,
      accountId,
      'b',
      BUSY_CHECKS,
      CHECKS - BUSY_CHECKS,
      rest,
      startMs,
      Math.floor((DAYS * DAY_MS) / perCheck),
    );
  }
  const fillSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  // The rollups the recorder writes with each result, built from the results as the migrations backfill them.
  await backfillCheckStatuses(db as Kysely<unknown>);
  await backfillDailyStats(db as Kysely<unknown>);
  await sql`ANALYZE`.execute(db);
  if (!isPostgres(db)) await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
  return { store: store.name, results, fillSeconds, rollupSeconds: (performance.now() - t1) / 1000 };
}

async function timeRead(
  store: Store,
  read: string,
  runs: number,
  run: () => Promise<number>,
): Promise<ScaleRead> {
  const { p50Ms, p95Ms, first: rows } = await timeRuns(runs, run);
  return { store: store.name, read, p50Ms, p95Ms, rows };
}

async function timeReads(store: Store, runs: number, nowMs: number): Promise<ScaleRead[]> {
  const { db, workers } = store;
  const busy = await sql<{ id: string; account_id: string }>`
    SELECT b.id, c.account_id FROM bench_checks b JOIN checks c ON c.id = b.id WHERE b.idx < ${BUSY_CHECKS} ORDER BY b.idx`.execute(
    db,
  );
  const accountId = busy.rows[0]!.account_id;
  const checkId = busy.rows[0]!.id;
  const pageChecks = busy.rows.map((r) => r.id);
  const analytics = (query: Omit<AnalyticsQuery, 'metrics'> & { metrics: string }) => async () => {
    const answer = await apiCheckAnalytics(
      db,
      accountId,
      checkId,
      { ...query, metrics: [query.metrics] } as AnalyticsQuery,
      {
        nowMs,
        workers,
      },
    );
    return answer.series.reduce((n, s) => n + s.data.length, 0);
  };
  const strip = new StripResultQueries(db);
  const todayStartMs = nowMs - (nowMs % DAY_MS);
  const out: ScaleRead[] = [];
  const reads: [string, () => Promise<number>][] = [
    [
      'analytics: 30 days, 1-day buckets, avg/p95/availability',
      analytics({
        quickRange: 'last30Days',
        aggregationInterval: 1440,
        metrics: 'responseTime_avg,responseTime_p95,availability',
      }),
    ],
    [
      'analytics: 7 days by run location, 1-day buckets',
      analytics({
        quickRange: 'last7Days',
        aggregationInterval: 1440,
        groupBy: 'runLocation',
        metrics: 'responseTime_avg,responseTime_p95,availability',
      }),
    ],
    [
      'analytics: 30 days, 1-hour buckets, p99',
      analytics({ quickRange: 'last30Days', aggregationInterval: 60, metrics: 'responseTime_p99' }),
    ],
    ['analytics: last 24 hours, default', analytics({ metrics: 'responseTime_p95,availability' })],
    [`check statuses: ${CHECKS} checks`, async () => (await readCheckStatuses(db, accountId, nowMs)).length],
    [
      `status page strip: ${BUSY_CHECKS} checks × ${DAYS} days`,
      async () => {
        const [past, today] = await Promise.all([
          strip.dailyCounts(pageChecks, todayStartMs - (DAYS - 1) * DAY_MS, todayStartMs),
          strip.dailyCounts(pageChecks, todayStartMs, todayStartMs + DAY_MS),
        ]);
        return past.length + today.length;
      },
    ],
    [
      'the same strip read from the results (before 0024)',
      async () => {
        const { rows } = await sql`
          SELECT r.check_id, r.started_at / ${sql.lit(DAY_MS)} AS day, r.status, count(*) AS n
          FROM check_results r
          WHERE r.check_id IN (${sql.join(pageChecks)}) AND r.result_type = 'FINAL'
            AND r.started_at >= ${sql.lit(todayStartMs - (DAYS - 1) * DAY_MS)} AND r.started_at < ${sql.lit(todayStartMs + DAY_MS)}
          GROUP BY r.check_id, r.started_at / ${sql.lit(DAY_MS)}, r.status`.execute(db);
        return rows.length;
      },
    ],
  ];
  for (const [name, run] of reads)
    out.push(await timeRead(store, name, name.includes('before') ? 3 : runs, run));
  return out;
}

async function sqliteStore(dir: string): Promise<Store & { fresh: boolean }> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'outpost.sqlite');
  const fresh = !existsSync(file);
  const db = await openSqliteDatabase(file);
  return {
    name: 'SQLite',
    db,
    workers: AnalyticsWorkers.for(file),
    fresh,
    sizeMiB: async () => Math.round(statSync(file).size / 1_048_576),
  };
}

async function postgresStore(url: string): Promise<Store> {
  const db = await openPostgresDatabase(url);
  return {
    name: 'PostgreSQL',
    db,
    workers: null,
    sizeMiB: async () => {
      const { rows } = await sql<{ n: string }>`SELECT pg_database_size(current_database()) AS n`.execute(db);
      return Math.round(Number(rows[0]!.n) / 1_048_576);
    },
  };
}

function print(fills: ScaleFill[], reads: ScaleRead[]): void {
  for (const f of fills)
    console.log(
      `${f.store}: ${f.results.toLocaleString('en')} results filled in ${f.fillSeconds.toFixed(0)} s, rollups in ${f.rollupSeconds.toFixed(1)} s, ${f.sizeMiB} MiB`,
    );
  const stores = [...new Set(reads.map((r) => r.store))];
  console.log(
    `${'read'.padEnd(58)}${stores.map((s) => `${s} p50 / p95 ms`.padStart(32)).join('')}   goal p95 < ${GOAL_P95_MS} ms`,
  );
  for (const name of [...new Set(reads.map((r) => r.read))]) {
    const cells = stores.map((s) => {
      const r = reads.find((x) => x.store === s && x.read === name);
      return (
        r ? `${r.p50Ms} / ${r.p95Ms}${r.p95Ms < GOAL_P95_MS ? '' : ' (NOT met)'} [${r.rows}]` : '-'
      ).padStart(32);
    });
    console.log(`${name.padEnd(58)}${cells.join('')}`);
  }
  console.log(loadAverageLine());
}

/** Fills each store, times the reads, prints the table; returns the figures. */
export async function benchResultsScale(): Promise<{ fills: ScaleFill[]; reads: ScaleRead[] }> {
  const results = Number(process.env.BENCH_RESULTS ?? 10_000_000);
  const runs = Number(process.env.BENCH_RESULTS_RUNS ?? 20);
  const stores = (process.env.BENCH_RESULTS_STORES ?? 'sqlite,postgres').split(',');
  const nowMs = Math.floor(Date.now() / DAY_MS) * DAY_MS + 12 * 3_600_000;
  const fills: ScaleFill[] = [];
  const reads: ScaleRead[] = [];
  if (stores.includes('sqlite')) {
    const kept = process.env.BENCH_RESULTS_DIR;
    const dir = kept ?? mkdtempSync(join(tmpdir(), 'outpost-scale-'));
    const store = await sqliteStore(dir);
    try {
      if (store.fresh) {
        const f = await fill(store, results, nowMs);
        fills.push({ ...f, sizeMiB: await store.sizeMiB() });
        console.log(`SQLite filled: ${JSON.stringify(fills.at(-1))}`);
      }
      reads.push(...(await timeReads(store, runs, nowMs)));
    } finally {
      await store.workers?.close();
      await store.db.destroy();
      if (!kept) rmSync(dir, { recursive: true, force: true });
    }
  }
  if (stores.includes('postgres')) {
    if (postgresBinDir() === null) console.log('PostgreSQL skipped: apt-get install postgresql');
    else {
      const cluster = await startPostgresCluster({
        durable: true,
        settings: ['shared_buffers=2GB', 'work_mem=64MB'],
      });
      const url = await createDatabase(cluster.url());
      try {
        const store = await postgresStore(url);
        try {
          const f = await fill(store, results, nowMs);
          fills.push({ ...f, sizeMiB: await store.sizeMiB() });
          console.log(`PostgreSQL filled: ${JSON.stringify(fills.at(-1))}`);
          reads.push(...(await timeReads(store, runs, nowMs)));
        } finally {
          await store.db.destroy();
        }
      } finally {
        if (process.env.BENCH_RESULTS_HOLD)
          console.log(`PostgreSQL kept for a look: ${url} (folder ${cluster.dir})`);
        else await cluster.stop();
      }
    }
  }
  print(fills, reads);
  return { fills, reads };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchResultsScale();
}
