/**
 * Analytics over a large store: inserts `rows` results of one URL check (default 1 000 000,
 * spread over the last 30 days) into a temporary SQLite file through the service's own store
 * and migrations, then times `apiCheckAnalytics` for several queries. Prints a table; returns it.
 * Run: `npm run build && node dist/bench/analytics.js` (about a minute and 2.5 GB of disk).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Insertable, type Kysely, sql } from 'kysely';
import { apiCheckAnalytics, parseMetrics } from '../src/service/analytics/api-checks.js';
import { AnalyticsWorkers } from '../src/service/analytics/workers.js';
import { explainAggregate } from '../src/service/analytics/query.js';
import { quickRangeWindow } from '../src/service/analytics/time-range.js';
import { createAccount } from '../src/service/platform/http/auth.js';
import { newCheckDoc } from '../src/service/checks/checks.js';
import { CheckQueries } from '../src/service/checks/store.js';
import type { AnalyticsQuery } from '../src/service/analytics/schema.js';
import { type Database, openSqliteDatabase } from '../src/service/platform/store/database.js';
import type { CheckResultTable } from '../src/service/platform/store/schema.js';

/** Timing of one query: wall-clock and process CPU (user + system) per run, ms. */
export type AnalyticsBenchQuery = {
  name: string;
  /** Data points answered, over all series. */
  buckets: number;
  minMs: number;
  medianMs: number;
  cpuMedianMs: number;
};

/** What benchAnalytics measured. */
export type AnalyticsBenchReport = {
  rows: number;
  insertSeconds: number;
  fileMiB: number;
  /** The query plan of the typical query (it must read only the covering index). */
  plan: string[];
  /** With the service's reader threads (AnalyticsWorkers), one part of the window per core. */
  queries: AnalyticsBenchQuery[];
  threadQueries: AnalyticsBenchQuery[];
};

const DAY_MS = 86_400_000;
const LOCATIONS = ['us-east-1', 'eu-west-1', 'eu-central-1', 'ap-southeast-1'];

/** A realistic stored URL result document (its size matters for the table, not its content). */
const DOC = JSON.stringify({
  status: 'PASSED',
  hasFailures: false,
  hasErrors: false,
  isDegraded: false,
  overMaxResponseTime: false,
  responseTime: 123.4,
  startedAt: '2025-01-01T00:00:00.000Z',
  stoppedAt: '2025-01-01T00:00:00.123Z',
  errorMessage: null,
  assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', actual: 200, error: null }],
  logs: [],
  runLocation: 'eu-west-1',
  attempts: 1,
  resultType: 'FINAL',
  artifacts: [],
  httpCheckResult: {
    request: { method: 'GET', url: 'https://api.example.com/v1/health?probe=outpost' },
    response: {
      statusCode: 200,
      statusText: 'OK',
      url: 'https://api.example.com/v1/health?probe=outpost',
      bodySizeBytes: 512,
      bodyTruncated: false,
      headers: {
        'content-type': 'application/json',
        'content-length': '512',
        date: 'Wed, 01 Jan 2025 00:00:00 GMT',
        server: 'nginx',
        'cache-control': 'no-store',
      },
    },
    timings: { socket: 0.1, lookup: 1.2, connect: 10.3, secureConnect: 30.4, response: 100.5, end: 123.4 },
    timingPhases: { wait: 0.1, dns: 1.1, tcp: 9.1, tls: 20.1, firstByte: 70.1, download: 22.9, total: 123.4 },
    redirects: [],
    certificate: null,
    resolvedIp: '203.0.113.10',
    resolver: 'dns',
    errorCode: null,
  },
});

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

async function insertResults(
  db: Kysely<Database>,
  accountId: string,
  checkId: string,
  rows: number,
  nowMs: number,
) {
  const rnd = random(42);
  const batch = 1000; // 23 columns × 1000 rows stays under SQLite's 32 766 bound parameters
  for (let start = 0; start < rows; start += 50_000) {
    await db.transaction().execute(async (tx) => {
      for (let i = start; i < Math.min(start + 50_000, rows); i += batch) {
        const values: Insertable<CheckResultTable>[] = [];
        for (let j = i; j < Math.min(i + batch, rows); j++) {
          const startedAt = nowMs - 30 * DAY_MS + Math.floor((j * 30 * DAY_MS) / rows);
          const u = rnd();
          const failed = u < 0.02;
          const dns = 1 + rnd() * 20;
          const tcp = 5 + rnd() * 40;
          const firstByte = 20 + -Math.log(1 - rnd()) * 80; // exponential tail
          const download = rnd() * 30;
          values.push({
            id: randomUUID(),
            account_id: accountId,
            check_id: checkId,
            job_id: randomUUID(),
            check_session_id: null,
            run_location: LOCATIONS[j % LOCATIONS.length]!,
            status: failed ? 'FAILED' : u < 0.03 ? 'DEGRADED' : 'PASSED',
            has_failures: failed ? 1 : 0,
            has_errors: 0,
            is_degraded: !failed && u < 0.03 ? 1 : 0,
            response_time: 0.2 + dns + tcp + firstByte + download,
            result_type: 'FINAL',
            started_at: startedAt,
            stopped_at: startedAt + 200,
            doc: DOC,
            created_at: startedAt,
            phase_wait: 0.2,
            phase_dns: dns,
            phase_tcp: tcp,
            phase_first_byte: firstByte,
            phase_download: download,
            status_code: failed ? 503 : 200,
            attempts: failed ? 2 : 1,
          });
        }
        await tx.insertInto('check_results').values(values).execute();
      }
    });
  }
}

const QUERIES: [name: string, query: Omit<AnalyticsQuery, 'metrics'> & { metrics: string }][] = [
  [
    'typical: last30Days p95/avg/availability, 1 day',
    {
      quickRange: 'last30Days',
      aggregationInterval: 1440,
      metrics: 'responseTime_avg,responseTime_p95,availability',
    },
  ],
  [
    'same, grouped by runLocation',
    {
      quickRange: 'last30Days',
      aggregationInterval: 1440,
      groupBy: 'runLocation',
      metrics: 'responseTime_avg,responseTime_p95,availability',
    },
  ],
  [
    'last30Days all phases avg + p99, 1 day',
    {
      quickRange: 'last30Days',
      aggregationInterval: 1440,
      metrics: 'wait,dns,tcp,firstByte_p99,download,responseTime_p99,retries',
    },
  ],
  [
    'last30Days every stat of responseTime, 1 hour',
    {
      quickRange: 'last30Days',
      aggregationInterval: 60,
      metrics:
        'responseTime_avg,responseTime_min,responseTime_max,responseTime_median,responseTime_p90,responseTime_p99,responseTime_stddev,responseTime_sum',
    },
  ],
  [
    'last30Days p95, 1 minute buckets',
    { quickRange: 'last30Days', aggregationInterval: 1, metrics: 'responseTime_p95' },
  ],
  [
    'last7Days by statusCode, failures only',
    {
      quickRange: 'last7Days',
      aggregationInterval: 1440,
      groupBy: 'statusCode',
      filterByStatus: ['failure'],
      metrics: 'responseTime_avg,retries',
    },
  ],
  ['default last24Hours, one bucket', { metrics: 'responseTime_p95,availability' }],
];

async function timeQueries(
  db: Kysely<Database>,
  accountId: string,
  checkId: string,
  nowMs: number,
  runs: number,
  workers: AnalyticsWorkers | null,
) {
  const out: AnalyticsBenchQuery[] = [];
  for (const [name, q] of QUERIES) {
    const query = { ...q, metrics: [q.metrics] } as AnalyticsQuery;
    const warm = await apiCheckAnalytics(db, accountId, checkId, query, { nowMs, workers }); // warm-up: page cache, JIT
    const buckets = warm.series.reduce((n, s) => n + s.data.length, 0);
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await apiCheckAnalytics(db, accountId, checkId, query, { nowMs, workers });
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    wall.sort((a, b) => a - b);
    cpu.sort((a, b) => a - b);
    const round = (v: number) => Math.round(v * 10) / 10;
    out.push({
      name,
      buckets,
      minMs: round(wall[0]!),
      medianMs: round(wall[runs >> 1]!),
      cpuMedianMs: round(cpu[runs >> 1]!),
    });
  }
  return out;
}

/**
 * Builds the store, times the queries (`runs` each after one warm-up) without and with a
 * 2 GiB `mmap_size`, prints the table and removes the temporary file.
 * @param options.rows - results stored for the check. Default 1 000 000.
 * @param options.runs - timed runs per query. Default 7.
 * @param options.file - keep the store at this path and reuse it on the next run (default: a
 *   temporary file, removed at the end).
 */
export async function benchAnalytics(
  options: { rows?: number; runs?: number; file?: string } = {},
): Promise<AnalyticsBenchReport> {
  const rows = options.rows ?? 1_000_000;
  const runs = options.runs ?? 7;
  const dir = options.file ? undefined : mkdtempSync(join(tmpdir(), 'outpost-analytics-'));
  const file = options.file ?? join(dir!, 'store.sqlite');
  const db = await openSqliteDatabase(file);
  try {
    let insertSeconds = 0;
    let check = await db.selectFrom('checks').select(['id', 'account_id', 'created_at']).executeTakeFirst();
    if (!check) {
      const nowMs = Date.now();
      const accountId = await createAccount(db, 'bench');
      const url = { url: 'https://api.example.com/v1/health' };
      const doc = newCheckDoc('URL', { name: 'bench', request: url, frequency: 1 }, new Date(nowMs));
      await new CheckQueries(db).insert(accountId, doc, nowMs);
      const t0 = performance.now();
      await insertResults(db, accountId, doc.id, rows, nowMs);
      insertSeconds = Math.round((performance.now() - t0) / 100) / 10;
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
      await sql`ANALYZE`.execute(db);
      check = { id: doc.id, account_id: accountId, created_at: nowMs };
    }
    const { id: checkId, account_id: accountId, created_at: nowMs } = check;
    const stored = await db
      .selectFrom('check_results')
      .select((e) => e.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const fileMiB = Math.round(statSync(file).size / 1_048_576);
    const plan = await explainAggregate(db, {
      checkId,
      window: quickRangeWindow('last30Days', nowMs),
      intervalMs: DAY_MS,
      metrics: parseMetrics(['responseTime_avg,responseTime_p95,availability']),
      groupBy: null,
      statuses: [],
    });
    const queries = await timeQueries(db, accountId, checkId, nowMs, runs, null);
    const workers = AnalyticsWorkers.for(file);
    const threadQueries = workers ? await timeQueries(db, accountId, checkId, nowMs, runs, workers) : queries;
    await workers?.close();
    const report = { rows: Number(stored.n), insertSeconds, fileMiB, plan, queries, threadQueries };
    print(report);
    return report;
  } finally {
    await db.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

function print(r: AnalyticsBenchReport): void {
  console.log(
    `analytics over ${r.rows} results of one check: inserted in ${r.insertSeconds} s, store ${r.fileMiB} MiB`,
  );
  console.log(`plan: ${r.plan.join('; ')}`);
  console.log(
    `${'query'.padEnd(52)}${'buckets'.padStart(8)}${'min ms'.padStart(9)}${'median'.padStart(9)}${'cpu'.padStart(8)}${'threads med'.padStart(12)}${'threads cpu'.padStart(12)}`,
  );
  r.queries.forEach((q, i) => {
    const m = r.threadQueries[i]!;
    console.log(
      `${q.name.padEnd(52)}${String(q.buckets).padStart(8)}${String(q.minMs).padStart(9)}${String(q.medianMs).padStart(9)}` +
        `${String(q.cpuMedianMs).padStart(8)}${String(m.medianMs).padStart(12)}${String(m.cpuMedianMs).padStart(12)}`,
    );
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchAnalytics();
}
