/**
 * One account with 10,000 checks, read through the real service over HTTP on loopback (`build()` listening on
 * 127.0.0.1:0 in this process, undici as the client), against the goals of the large-accounts work:
 * - a page of 100 checks (`GET /v1/checks?limit=100&page=N`): the first, a middle and the last page, a page
 *   filtered by tag, and the same walk by cursor (`nextId`): p95 < {@link GOAL_PAGE_P95_MS} ms;
 * - `GET /v1/check-statuses` of every check: p95 < {@link GOAL_STATUSES_P95_MS} ms, read again while nothing
 *   changed (the service sends the answer it kept for the ETag) and after a result was recorded (one check's
 *   `check_last_results.revision` moved before each read: the statuses are read again); a page of 100 of them
 *   (`limit=100&page=50`): p95 < {@link GOAL_PAGE_P95_MS} ms;
 * - the whole list without `limit` (no goal: shown with its bytes, plain and compressed).
 * The store is filled fast, not through the API: one API check through the API, copied
 * through CheckQueries in one transaction (API checks, not activated,
 * named `check 00000` …, tagged `bench` and one of ten `team-N`, each subscribed to 2 of 5 alert channels made
 * through the API), then each check's latest result and 24 hourly rollup rows in SQL, as the result recorder
 * leaves them. Each read runs once to warm up, then `BENCH_LARGE_RUNS` times (default 20); p50 and p95 of
 * wall-clock time, ms, with the answer's bytes.
 *
 * Env: `BENCH_LARGE_CHECKS` (default 10000), `BENCH_LARGE_RUNS`, `BENCH_LARGE_STORES` (`sqlite,postgres`;
 * PostgreSQL needs `apt-get install postgresql`, else it is skipped). Run: `npm run bench -- large-account`.
 */
import { timeRuns } from './read-timing.js';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Kysely, sql } from 'kysely';
import { pino } from 'pino';
import { request } from 'undici';
import { build } from '../src/service/app.js';
import { CheckQueries } from '../src/service/checks/store.js';
import { createAccount, createApiKey } from '../src/service/platform/http/auth.js';
import { type Database, openSqliteDatabase } from '../src/service/platform/store/database.js';
import { isPostgres } from '../src/service/platform/store/dialect.js';
import { openPostgresDatabase } from '../src/service/platform/store/postgres.js';
import { createDatabase, postgresBinDir, startPostgresCluster } from '../test/helpers/postgres.js';
import { loadAverageLine } from './watchdog.js';

/** Goal for a page of 100 checks, p95 ms. */
export const GOAL_PAGE_P95_MS = 50;
/** Goal for `GET /v1/check-statuses` of every check, p95 ms. */
export const GOAL_STATUSES_P95_MS = 100;
const HOUR_MS = 3_600_000;

/** One timed read: wall-clock p50 and p95 over the runs, ms; `bytes` of its answer as sent; `goalMs` its p95 goal. */
export type LargeAccountRead = {
  store: string;
  read: string;
  p50Ms: number;
  p95Ms: number;
  bytes: number;
  goalMs: number | null;
};

/**
 * Inserts `count` checks in a new account of `db` (served at `base`), with 5 alert channels, each check's latest
 * result and its last 24 hours of hourly rollups. Times in epoch ms. @returns the account's API key.
 */
export async function fillLargeAccount(
  db: Kysely<Database>,
  count: number,
  nowMs: number,
  base: string,
): Promise<string> {
  const accountId = await createAccount(db, 'bench');
  const key = await createApiKey(db, accountId);
  const channels: number[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await request(`${base}/v1/alert-channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'EMAIL', config: { address: `team${i}@example.com` } }),
    });
    const body = (await res.body.json()) as { id: number };
    if (res.statusCode !== 201) throw new Error(`alert channel: ${res.statusCode} ${JSON.stringify(body)}`);
    channels.push(body.id);
  }
  // One API check made through the API (the stored document as the route completes it), copied for the rest.
  const made = await request(`${base}/v1/checks/api`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'template',
      activated: false,
      request: { url: 'https://api.example.test/health', method: 'GET' },
    }),
  });
  const { id: templateId } = (await made.body.json()) as { id: string };
  if (made.statusCode !== 201) throw new Error(`check: ${made.statusCode}`);
  const template = await new CheckQueries(db).get(accountId, templateId);
  await new CheckQueries(db).delete(accountId, templateId);
  const ids: string[] = [];
  await db.transaction().execute(async (tx) => {
    const checks = new CheckQueries(tx);
    for (let i = 0; i < count; i++) {
      const createdMs = nowMs - (count - i) * 1000;
      const doc = {
        ...structuredClone(template),
        id: randomUUID(),
        name: `check ${String(i).padStart(5, '0')}`,
        tags: ['bench', `team-${i % 10}`],
        alertChannelSubscriptions: [
          { alertChannelId: channels[i % 5]!, activated: true },
          { alertChannelId: channels[(i + 1) % 5]!, activated: true },
        ],
        created_at: new Date(createdMs).toISOString(),
      };
      await checks.insert(accountId, doc, createdMs);
      ids.push(doc.id);
    }
  });
  const firstHour = nowMs - (nowMs % HOUR_MS) - 23 * HOUR_MS;
  for (let from = 0; from < ids.length; from += 100) {
    const batch = ids.slice(from, from + 100);
    await db
      .insertInto('check_last_results')
      .values(
        batch.map((id, i) => ({
          check_id: id,
          account_id: accountId,
          result_id: `r-${from + i}`,
          check_session_id: null,
          run_location: 'eu-west-1',
          status: 'PASSED' as const,
          has_failures: 0,
          has_errors: 0,
          is_degraded: 0,
          response_time: 120,
          started_at: nowMs - 60_000,
          stopped_at: nowMs - 59_000,
        })),
      )
      .execute();
    await db
      .insertInto('check_stats_hourly')
      .values(
        batch.flatMap((id) =>
          Array.from({ length: 24 }, (_, h) => ({
            check_id: id,
            hour_start: firstHour + h * HOUR_MS,
            run_location: 'eu-west-1',
            account_id: accountId,
            runs: 6,
            failures: h === 3 ? 1 : 0,
            degraded: 0,
            response_time_sum: 720,
            response_time_max: 150,
          })),
        ),
      )
      .execute();
  }
  return key;
}

/** `GET path` with the key; the answer's status, bytes as sent and headers. */
async function get(base: string, key: string, path: string, encoding?: string) {
  const res = await request(`${base}${path}`, {
    headers: { authorization: `Bearer ${key}`, ...(encoding ? { 'accept-encoding': encoding } : {}) },
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${body.toString().slice(0, 300)}`);
  return { bytes: body.length, headers: res.headers, body };
}

async function timeRead(
  store: string,
  read: string,
  runs: number,
  goalMs: number | null,
  run: () => Promise<number>,
): Promise<LargeAccountRead> {
  const { p50Ms, p95Ms, first: bytes } = await timeRuns(runs, run);
  return { store, read, p50Ms, p95Ms, bytes, goalMs };
}

/** Fills `db` through a service built on it, then times the reads. */
async function benchStore(
  name: string,
  db: Kysely<Database>,
  count: number,
  runs: number,
): Promise<LargeAccountRead[]> {
  const service = await build({ db, log: pino({ level: 'silent' }) });
  try {
    await service.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
    const t0 = performance.now();
    const key = await fillLargeAccount(db, count, Date.now(), base);
    // The fill writes some 250,000 rows in seconds, around the API. A PostgreSQL store that grew to this size
    // through the API has its planner statistics from autovacuum, and one moved from SQLite has them from
    // `outpost migrate-store`'s ANALYZE: without them, the first minutes after a bulk load read a check's
    // hourly rollups through the account's index (26 ms instead of 0.3 ms), which no user's store does for long.
    if (isPostgres(db)) await sql`ANALYZE`.execute(db);
    console.log(`${name}: ${count} checks filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const pages = Math.ceil(count / 100);
    const page = (path: string, encoding?: string) => async () =>
      (await get(base, key, path, encoding)).bytes;
    const out: LargeAccountRead[] = [];
    const reads: [string, number | null, () => Promise<number>][] = [
      ['page of 100: first', GOAL_PAGE_P95_MS, page('/v1/checks?limit=100&page=1')],
      [
        `page of 100: middle (${Math.ceil(pages / 2)})`,
        GOAL_PAGE_P95_MS,
        page(`/v1/checks?limit=100&page=${Math.ceil(pages / 2)}`),
      ],
      [`page of 100: last (${pages})`, GOAL_PAGE_P95_MS, page(`/v1/checks?limit=100&page=${pages}`)],
      ['page of 100: tag=team-3, page 5', GOAL_PAGE_P95_MS, page('/v1/checks?limit=100&page=5&tag=team-3')],
      ['page of 100: gzip', GOAL_PAGE_P95_MS, page('/v1/checks?limit=100&page=1', 'gzip')],
    ];
    // A cursor from the middle of the list, if this service answers one (x-next-id).
    const middle = await get(base, key, `/v1/checks?limit=100&page=${Math.ceil(pages / 2) - 1}`);
    const cursor = middle.headers['x-next-id'];
    if (typeof cursor === 'string') {
      reads.push([
        'page of 100: by cursor (middle)',
        GOAL_PAGE_P95_MS,
        page(`/v1/checks?limit=100&nextId=${encodeURIComponent(cursor)}`),
      ]);
    }
    // A result recorded before each read (one check's `revision` moved, as the recorder moves it): the ETag
    // changes, so the service reads the statuses again instead of sending the answer it kept.
    const newResult = (encoding?: string) => async () => {
      await db
        .updateTable('check_last_results')
        .set((eb) => ({ revision: eb('revision', '+', 1) }))
        .where('result_id', '=', 'r-0')
        .execute();
      return page('/v1/check-statuses', encoding)();
    };
    reads.push(
      ['check statuses: every check', GOAL_STATUSES_P95_MS, page('/v1/check-statuses')],
      ['check statuses: every check, gzip', GOAL_STATUSES_P95_MS, page('/v1/check-statuses', 'gzip')],
      ['check statuses: after a new result', GOAL_STATUSES_P95_MS, newResult()],
      ['check statuses: after a new result, gzip', GOAL_STATUSES_P95_MS, newResult('gzip')],
      ['check statuses: a page of 100', GOAL_PAGE_P95_MS, page('/v1/check-statuses?limit=100&page=50')],
      ['whole list (no limit)', null, page('/v1/checks')],
      ['whole list (no limit), gzip', null, page('/v1/checks', 'gzip')],
      ['whole list (no limit), br', null, page('/v1/checks', 'br')],
    );
    for (const [read, goal, run] of reads)
      out.push(await timeRead(name, read, read.startsWith('whole') ? Math.min(runs, 5) : runs, goal, run));
    return out;
  } finally {
    await service.close();
  }
}

function print(reads: LargeAccountRead[], count: number): void {
  const stores = [...new Set(reads.map((r) => r.store))];
  console.log(`\n${count} checks in one account`);
  console.log(
    `${'read'.padEnd(40)}${stores.map((s) => `${s} p50 / p95 ms [bytes]`.padStart(40)).join('')}   goal p95`,
  );
  for (const name of [...new Set(reads.map((r) => r.read))]) {
    const goal = reads.find((r) => r.read === name)?.goalMs ?? null;
    const cells = stores.map((s) => {
      const r = reads.find((x) => x.store === s && x.read === name);
      const met = r && goal !== null && r.p95Ms >= goal ? ' (NOT met)' : '';
      return (r ? `${r.p50Ms} / ${r.p95Ms}${met} [${r.bytes.toLocaleString('en')}]` : '-').padStart(40);
    });
    console.log(`${name.padEnd(40)}${cells.join('')}   ${goal === null ? '-' : `< ${goal} ms`}`);
  }
  console.log(loadAverageLine());
}

/** Fills each store, times the reads, prints the table; returns the figures. */
export async function benchLargeAccount(): Promise<LargeAccountRead[]> {
  const count = Number(process.env.BENCH_LARGE_CHECKS ?? 10_000);
  const runs = Number(process.env.BENCH_LARGE_RUNS ?? 20);
  const stores = (process.env.BENCH_LARGE_STORES ?? 'sqlite,postgres').split(',');
  const reads: LargeAccountRead[] = [];
  if (stores.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-large-'));
    const db = await openSqliteDatabase(join(dir, 'outpost.sqlite'));
    try {
      reads.push(...(await benchStore('SQLite', db, count, runs)));
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (stores.includes('postgres')) {
    if (postgresBinDir() === null) console.log('PostgreSQL skipped: apt-get install postgresql');
    else {
      const cluster = await startPostgresCluster({ durable: true });
      try {
        const db = await openPostgresDatabase(await createDatabase(cluster.url()));
        try {
          reads.push(...(await benchStore('PostgreSQL', db, count, runs)));
        } finally {
          await db.destroy();
        }
      } finally {
        await cluster.stop();
      }
    }
  }
  print(reads, count);
  return reads;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchLargeAccount();
}
