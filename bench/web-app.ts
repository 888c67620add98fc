/**
 * The web app's checks page with 1,000 checks (env `BENCH_WEB_APP_CHECKS`, e.g. 10000; results per check and
 * hour: `BENCH_WEB_APP_RUNS_PER_HOUR`, 2), in Chromium (Debian's, through playwright-core) against
 * `outpost service` (the built CLI, dist/src/cli.js, in its own process on a SQLite file store):
 * - JavaScript of the first page: `/checks` opened signed in with an empty cache; the gzip size of every
 *   script it loads (the encoded size when the service compressed it, else zlib.gzipSync of the body);
 *   goal < 200 KB;
 * - time to interactive of the checks page: from navigation start to the table's first rows drawn with their
 *   statuses (the page draws the first 100 checks before every check is in; `performance.now()` in the page,
 *   polled every animation frame), median of 5 loads with a warm HTTP cache (a returning user), and the
 *   first, cold load; goal < 1 s; also until the table holds every check ("N of N checks", the rows drawn
 *   with their statuses: every row, or the window of rows in view the page draws past 150 rows);
 * - bytes of the API answers of the first load as sent (compressed) and plain;
 * - server time of the API calls the page makes (`/v1/checks` and `/v1/check-statuses`, the first checks' and
 *   the whole lists, `/v1/check-groups`, as recorded from a real load): p50/p95 over 50 sequential calls each, on one
 *   keep-alive connection; goal p95 < 100 ms per call (see GOALS); for a list that answers an `ETag`, the same
 *   calls again with `If-None-Match` (a poll that found nothing changed: 304);
 * - the load average (os.loadavg) before and after, printed with the figures.
 * The data: 1,000 URL checks in 10 groups (950 activated every 10 minutes: the scheduler runs as usual,
 * no agent claims), created through the API, and 24 hours of results per check (2 an hour: 48,000; the
 * rollups hold one row per check, hour and location at any rate), stored before the measured service
 * starts through the service's own queue (`ResultIngest.storeServiceResult`, a service run in this process on
 * the same data folder), so the result recorders fill the rollups (`check_last_results`,
 * `check_stats_hourly`) exactly as they do for agents' results.
 * Run: `npm run bench -- web-app` (or `npx tsx bench/web-app.ts` after `npm run build`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium, type Page, type Response } from 'playwright-core';
import { Agent, request } from 'undici';
import { PACKAGE_ROOT } from '../src/common/paths.js';
import type { CheckResult } from '../src/protocol/result.js';

/** The goals: the first page's scripts gzipped, KB; time to interactive, ms; API p95 per call, ms. */
const GOALS = {
  firstPageJsKb: 200,
  interactiveMs: 1000,
  // The page loads its data before it can draw the table: the calls must leave most of the 1 s budget
  // to parsing and rendering 1,000 rows, and the statuses are polled every 10 s by every open tab. A p95
  // of 100 ms per call (a tenth of the budget) keeps a first load's calls and a poll cheap on a small host.
  apiP95Ms: 100,
} as const;
const API_KEY = `op_bench_web_${'b'.repeat(32)}`;
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The figures `benchWebApp` measured. */
export type WebAppBenchReport = {
  checks: number;
  results: number;
  /** Scripts of the first page: count and gzip size, KB. */
  firstPage: { scripts: number; gzipKb: number; rawKb: number; goalKb: number };
  /**
   * Navigation start → the table's first rows drawn, each showing its status (`*Ms`), and → the table of every
   * check, each row drawn showing its status (`*WholeMs`), ms.
   */
  interactive: {
    coldMs: number;
    coldWholeMs: number;
    medianWarmMs: number;
    medianWarmWholeMs: number;
    warmMs: number[];
    goalMs: number;
  };
  /** Per API path the page called: calls per page load and the latency of one call, ms. */
  api: {
    path: string;
    callsPerLoad: number;
    /** Size of one answer's body, bytes, plain (asked without accept-encoding). */
    bytes: number;
    /** Bytes the first load's answer(s) took on the wire (compressed as the browser asked), summed. */
    sentBytes: number;
    /** Calls with If-None-Match naming the answer's ETag (304), when it answers one: p50/p95, ms. */
    notModified: { p50Ms: number; p95Ms: number; status: number } | null;
    p50Ms: number;
    p95Ms: number;
    maxMs: number;
    goalP95Ms: number;
  }[];
  /** Creating the checks and storing the results, ms (not measured against a goal). */
  setupMs: { checks: number; results: number };
  /** os.loadavg() (1, 5, 15 minutes) before the measures and after them. */
  load: { before: number[]; after: number[] };
};

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

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const median = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

/** A deterministic pseudo-random sequence (the same data every run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Seeds the data folder `dataDir` for the account of API_KEY: a service in this process creates `checks`
 * URL checks in `groups` groups over HTTP and stores `hours` × `runsPerHour` results per check through its
 * queue (the result recorders fill the rollups as for any result: 2 % failed, 3 % degraded), then stops.
 * @returns the time each part took, ms, and the results stored.
 * @throws Error when the service does not start or refuses a call.
 */
export async function seedChecksPageData(
  dataDir: string,
  options: { checks: number; groups: number; hours: number; runsPerHour: number },
): Promise<{ checksMs: number; resultsMs: number; results: number }> {
  const { createLogger } = await import('../src/common/logger.js');
  const { parseServiceConfig } = await import('../src/service/config.js');
  const { startService } = await import('../src/service/main.js');
  const port = await freePort();
  const config = parseServiceConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    OUTPOST_DATA_DIR: dataDir,
    OUTPOST_API_KEY: API_KEY,
    LOG_LEVEL: 'WARN',
  });
  const running = await startService(config, { log: createLogger({ level: 'WARN', name: 'bench-seed' }) });
  const dispatcher = new Agent({ connections: 16 });
  try {
    const call = async (method: 'POST' | 'GET', path: string, body?: unknown) => {
      const res = await request(new URL(path, running.url), {
        method,
        headers: {
          authorization: `Bearer ${API_KEY}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        dispatcher,
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text}`);
      return JSON.parse(text) as { id: string | number };
    };
    const checksStarted = performance.now();
    const groupIds: number[] = [];
    for (let g = 0; g < options.groups; g++) {
      const group = await call('POST', '/v1/check-groups', {
        name: `Team ${g + 1}`,
        activated: true,
        apiCheckDefaults: {},
      });
      groupIds.push(Number(group.id));
    }
    const ids: string[] = new Array(options.checks);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < options.checks) {
          const i = next++;
          const created = await call('POST', '/v1/checks/url', {
            name: `Site ${String(i + 1).padStart(4, '0')} home page`,
            activated: i % 20 !== 0,
            muted: i % 50 === 1,
            frequency: 10,
            tags: [`env:${i % 3 === 0 ? 'staging' : 'production'}`, `team-${i % 7}`],
            groupId: groupIds[i % groupIds.length] ?? null,
            request: { url: `https://site-${i + 1}.example.test/`, assertions: [] },
          });
          ids[i] = String(created.id);
        }
      }),
    );
    const checksMs = performance.now() - checksStarted;

    const resultsStarted = performance.now();
    const { db, queue } = running.service.context;
    const next01 = random(13);
    const hourMs = 3_600_000;
    const now = Date.now();
    const firstHour = Math.floor(now / hourMs) * hourMs - (options.hours - 1) * hourMs;
    const stepMs = hourMs / options.runsPerHour;
    let results = 0;
    const BATCH = 20;
    for (let c = 0; c < ids.length; c += BATCH) {
      const batch = ids.slice(c, c + BATCH);
      await db.transaction().execute(async (tx) => {
        for (const checkId of batch) {
          for (let t = firstHour; t < now; t += stepMs) {
            const startedAtMs = t + Math.floor(next01() * 30_000);
            if (startedAtMs > now) break;
            const roll = next01();
            const failed = roll < 0.02;
            const degraded = !failed && roll < 0.05;
            const responseTime = Math.round((degraded ? 3200 : 60 + next01() * 340) * 10) / 10;
            const result: CheckResult = {
              status: failed ? 'FAILED' : degraded ? 'DEGRADED' : 'PASSED',
              hasFailures: failed,
              hasErrors: false,
              isDegraded: degraded,
              overMaxResponseTime: false,
              responseTime,
              startedAt: new Date(startedAtMs).toISOString(),
              stoppedAt: new Date(startedAtMs + Math.ceil(responseTime)).toISOString(),
              errorMessage: failed ? 'expected status 200, got 503' : null,
              assertions: [],
              logs: [],
              runLocation: 'eu-central-1',
              attempts: 1,
              resultType: 'FINAL',
              artifacts: [],
            };
            await queue.results.storeServiceResult(
              { accountId: running.accountId, checkId, result, nowMs: startedAtMs + 1000 },
              tx,
            );
            results += 1;
          }
        }
      });
    }
    return { checksMs, resultsMs: performance.now() - resultsStarted, results };
  } finally {
    await dispatcher.close();
    await running.stop();
  }
}

/** `outpost service` from the build on `dataDir`, resolved once it listens. */
async function startServiceProcess(dataDir: string, port: number): Promise<ChildProcess> {
  const cli = join(PACKAGE_ROOT, 'dist/src/cli.js');
  const child = spawn(process.execPath, [cli, 'service'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      PORT: String(port),
      HOST: '127.0.0.1',
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: API_KEY,
      LOG_LEVEL: 'WARN',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (c: Buffer) => {
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
  return child;
}

/**
 * The line of the API table an API call (path and query) is counted on: one per list and query, a page-numbered
 * list's pages together (`page` left out), a `checkId` list shown by its number of ids.
 */
function apiCallKey(call: string): string {
  const [pathname = '', search = ''] = call.split('?');
  const params = new URLSearchParams(search);
  params.delete('page');
  const ids = params.get('checkId');
  if (ids !== null) params.set('checkId', `(${ids.split(',').length} ids)`);
  return params.size > 0 ? `${pathname}?${decodeURIComponent(params.toString())}` : pathname;
}

/** When a load of the checks page showed its first rows, and every check, with statuses, ms since navigation start. */
type LoadTimes = { rowsMs: number; wholeMs: number };

/**
 * Loads `/checks` in `page` and resolves with `performance.now()` (ms since navigation start) at the first
 * animation frame where the table's first rows are drawn (10, or all of them when fewer), each showing its
 * status badge, and at the first where the count line names every one of `rows` checks ("N of N checks": the
 * page draws the first checks before every check is in), every row drawn showing its badge.
 * @throws Error when the rows do not show within 120 s.
 */
async function loadChecksPage(page: Page, base: string, rows: number): Promise<LoadTimes> {
  await page.goto(`${base}/checks`, { waitUntil: 'commit' });
  const handle = await page.waitForFunction(
    (wanted: number) => {
      const g = globalThis as unknown as {
        document: {
          querySelector(s: string): { textContent: string | null } | null;
          querySelectorAll(s: string): { length: number };
        };
        performance: { now(): number };
        outpostBenchRowsAt?: number;
      };
      const now = g.performance.now();
      // The rows drawn: all of them, or (past 150) the window in view; the count line names them all.
      const drawn = g.document.querySelectorAll('main table tbody tr:not(.checks-spacer)').length;
      const badges = g.document.querySelectorAll('main table tbody tr .badge').length;
      if (g.outpostBenchRowsAt === undefined) {
        if (drawn < Math.min(wanted, 10) || badges < drawn) return false;
        g.outpostBenchRowsAt = now;
      }
      const count = g.document.querySelector('main .checks-count')?.textContent ?? '';
      if (!count.startsWith(`${wanted} of ${wanted} checks`) || badges < drawn) return false;
      return { rowsMs: g.outpostBenchRowsAt, wholeMs: now };
    },
    rows,
    { polling: 'raf', timeout: 120_000 },
  );
  return (await handle.jsonValue()) as LoadTimes;
}

/**
 * Measures the checks page with `checks` checks (see the file comment); prints the table with the ratio
 * to each goal (goal ÷ figure: above 1 is met) and returns the figures.
 * @throws Error when dist/ is not built, Chromium is missing, or the page does not show the rows.
 */
export async function benchWebApp(
  options: { checks?: number; runsPerHour?: number; loads?: number; calls?: number } = {},
): Promise<WebAppBenchReport> {
  const checks = options.checks ?? 1000;
  const loadBefore = loadavg();
  const loads = options.loads ?? 5;
  const calls = options.calls ?? 50;
  if (!existsSync(join(PACKAGE_ROOT, 'dist/app/index.html'))) {
    throw new Error('dist/app is missing: run npm run build first');
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-bench-web-'));
  let service: ChildProcess | undefined;
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  try {
    const seeded = await seedChecksPageData(dataDir, {
      checks,
      groups: 10,
      hours: 24,
      runsPerHour: options.runsPerHour ?? 2,
    });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = await startServiceProcess(dataDir, port);

    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const signedIn = await context.request.post(`${base}/auth/session`, { data: { apiKey: API_KEY } });
    if (!signedIn.ok()) throw new Error(`sign-in answered ${signedIn.status()}: ${await signedIn.text()}`);

    // The first, cold load: every script it fetches, and the API calls it makes.
    const page = await context.newPage();
    const scripts: Promise<{ url: string; raw: number; gzip: number }>[] = [];
    const apiCalls: string[] = [];
    const sent: Promise<{ path: string; bytes: number }>[] = [];
    const onResponse = (response: Response) => {
      const req = response.request();
      const url = new URL(response.url());
      if (url.pathname.startsWith('/v1/')) {
        apiCalls.push(url.pathname + url.search);
        const path = apiCallKey(url.pathname + url.search);
        sent.push(req.sizes().then((sizes) => ({ path, bytes: sizes.responseBodySize })));
      }
      if (req.resourceType() !== 'script' && !/\.m?js$/.test(url.pathname)) return;
      scripts.push(
        (async () => {
          const body = await response.body();
          const encoding = (await response.headerValue('content-encoding')) ?? '';
          const sizes = await req.sizes();
          const gzip = /gzip|br|zstd/.test(encoding) ? sizes.responseBodySize : gzipSync(body).length;
          return { url: url.pathname, raw: body.length, gzip };
        })(),
      );
    };
    page.on('response', onResponse);
    const cold = await loadChecksPage(page, base, checks);
    // The lists still on their way (group names) are part of the first load too.
    await page.waitForLoadState('networkidle');
    page.off('response', onResponse);
    const loaded = await Promise.all(scripts);
    const sentByPath = new Map<string, number>();
    for (const { path, bytes } of await Promise.all(sent)) {
      sentByPath.set(path, (sentByPath.get(path) ?? 0) + bytes);
    }
    const gzipKb = loaded.reduce((sum, s) => sum + s.gzip, 0) / 1024;
    const rawKb = loaded.reduce((sum, s) => sum + s.raw, 0) / 1024;
    await page.close();

    const warm: LoadTimes[] = [];
    for (let i = 0; i < loads; i++) {
      const p = await context.newPage();
      warm.push(await loadChecksPage(p, base, checks));
      await p.close();
    }
    await context.close();

    // The API calls of the page, each replayed `calls` times one after another.
    const dispatcher = new Agent({ connections: 1 });
    const byPath = new Map<string, string[]>();
    for (const call of apiCalls) {
      const key = apiCallKey(call);
      if (!byPath.has(key)) byPath.set(key, []);
      byPath.get(key)!.push(call);
    }
    const api: WebAppBenchReport['api'] = [];
    try {
      for (const [path, urls] of byPath) {
        const samples: number[] = [];
        let bytes = 0;
        let etag: string | undefined;
        for (let i = 0; i < calls; i++) {
          // A page-numbered list is called once per page: each replay walks the URLs the page asked for.
          const url = urls[i % urls.length]!;
          const started = performance.now();
          const res = await request(`${base}${url}`, {
            headers: { authorization: `Bearer ${API_KEY}` },
            dispatcher,
          });
          bytes = (await res.body.arrayBuffer()).byteLength;
          samples.push(performance.now() - started);
          if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}`);
          const tag = res.headers.etag;
          etag = urls.length === 1 && typeof tag === 'string' ? tag : undefined;
        }
        const sorted = samples.sort((a, b) => a - b);
        // A poll that finds nothing changed: the same call naming the ETag it got.
        let notModified: WebAppBenchReport['api'][number]['notModified'] = null;
        if (etag) {
          const polls: number[] = [];
          let status = 0;
          for (let i = 0; i < calls; i++) {
            const started = performance.now();
            const res = await request(`${base}${urls[0]!}`, {
              headers: { authorization: `Bearer ${API_KEY}`, 'if-none-match': etag },
              dispatcher,
            });
            await res.body.arrayBuffer();
            polls.push(performance.now() - started);
            status = res.statusCode;
          }
          polls.sort((a, b) => a - b);
          notModified = { p50Ms: quantile(polls, 0.5), p95Ms: quantile(polls, 0.95), status };
        }
        api.push({
          path,
          callsPerLoad: urls.length,
          bytes,
          sentBytes: sentByPath.get(path) ?? 0,
          notModified,
          p50Ms: quantile(sorted, 0.5),
          p95Ms: quantile(sorted, 0.95),
          maxMs: sorted[sorted.length - 1]!,
          goalP95Ms: GOALS.apiP95Ms,
        });
      }
    } finally {
      await dispatcher.close();
    }

    const report: WebAppBenchReport = {
      checks,
      results: seeded.results,
      firstPage: { scripts: loaded.length, gzipKb, rawKb, goalKb: GOALS.firstPageJsKb },
      interactive: {
        coldMs: cold.rowsMs,
        coldWholeMs: cold.wholeMs,
        medianWarmMs: median(warm.map((w) => w.rowsMs)),
        medianWarmWholeMs: median(warm.map((w) => w.wholeMs)),
        warmMs: warm.map((w) => w.rowsMs),
        goalMs: GOALS.interactiveMs,
      },
      api,
      setupMs: { checks: Math.round(seeded.checksMs), results: Math.round(seeded.resultsMs) },
      load: { before: loadBefore, after: loadavg() },
    };
    print(report);
    return report;
  } finally {
    await browser.close();
    if (service && service.exitCode === null) {
      service.kill('SIGTERM');
      const timer = setTimeout(() => service?.kill('SIGKILL'), 5000);
      await once(service, 'exit');
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function print(r: WebAppBenchReport): void {
  const ratio = (goal: number, figure: number) =>
    `×${(goal / Math.max(figure, 0.001)).toFixed(2)}`.padStart(8);
  const row = (what: string, figure: string, goal: string, ratioText: string) =>
    `${what.padEnd(52)}|${figure.padStart(12)} | ${goal.padEnd(10)} |${ratioText}`;
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(
    `web app: checks page with ${r.checks} checks and ${r.results} results (24 h) in Chromium against an ` +
      `outpost service process (SQLite file store); setup: checks ${r.setupMs.checks} ms, results ${r.setupMs.results} ms`,
  );
  console.log(row('measure', 'figure', 'goal', ' ratio'));
  console.log(
    row(
      `first page JS, gzipped (${r.firstPage.scripts} scripts, ${r.firstPage.rawKb.toFixed(0)} KB raw)`,
      `${r.firstPage.gzipKb.toFixed(1)} KB`,
      `< ${r.firstPage.goalKb} KB`,
      ratio(r.firstPage.goalKb, r.firstPage.gzipKb),
    ),
  );
  console.log(
    row(
      `time to the first rows of ${r.checks}, median of ${r.interactive.warmMs.length} (warm cache)`,
      ms(r.interactive.medianWarmMs),
      `< ${r.interactive.goalMs} ms`,
      ratio(r.interactive.goalMs, r.interactive.medianWarmMs),
    ),
  );
  console.log(
    row(
      `time to the first rows of ${r.checks}, first load (cold cache)`,
      ms(r.interactive.coldMs),
      `< ${r.interactive.goalMs} ms`,
      ratio(r.interactive.goalMs, r.interactive.coldMs),
    ),
  );
  console.log(
    row(
      `  … every check in, median (cold: ${r.interactive.coldWholeMs.toFixed(0)} ms)`,
      ms(r.interactive.medianWarmWholeMs),
      '-',
      '-',
    ),
  );
  for (const a of r.api) {
    console.log(
      row(
        `GET ${a.path} p95 (${a.callsPerLoad} call(s) per load)`,
        ms(a.p95Ms),
        `< ${a.goalP95Ms} ms`,
        ratio(a.goalP95Ms, a.p95Ms),
      ),
    );
    console.log(
      `${'  p50 / max; answer plain; first load on the wire'.padEnd(52)}|${ms(a.p50Ms).padStart(12)} / ${ms(a.maxMs)}; ${(a.bytes / 1024).toFixed(0)} KB; ${(a.sentBytes / 1024).toFixed(0)} KB`,
    );
    if (a.notModified) {
      console.log(
        `${`  with If-None-Match (${a.notModified.status}) p50 / p95`.padEnd(52)}|${ms(a.notModified.p50Ms).padStart(12)} / ${ms(a.notModified.p95Ms)}`,
      );
    }
  }
  console.log(`${'warm loads'.padEnd(52)}| ${r.interactive.warmMs.map((n) => n.toFixed(0)).join(', ')} ms`);
  const load = (l: number[]) => l.map((n) => n.toFixed(2)).join(' ');
  console.log(`load average (1 5 15 min): before ${load(r.load.before)}, after ${load(r.load.after)}`);
}

/**
 * The bench's options from the environment: `BENCH_WEB_APP_CHECKS` (checks, default 1,000) and
 * `BENCH_WEB_APP_RUNS_PER_HOUR` (results per check and hour, default 2).
 * @throws Error when one is not a positive integer.
 */
export function webAppBenchOptions(env: NodeJS.ProcessEnv = process.env): {
  checks: number;
  runsPerHour: number;
} {
  const positive = (name: string, fallback: number) => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name} must be a positive integer, not ${text}`);
    return value;
  };
  return {
    checks: positive('BENCH_WEB_APP_CHECKS', 1000),
    runsPerHour: positive('BENCH_WEB_APP_RUNS_PER_HOUR', 2),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchWebApp(webAppBenchOptions());
}
