/**
 * A public status page of 5 cards × 10 services with 90 days of incidents (test/helpers/status-pages.ts:
 * made through the /v1 API, the services backdated in the store), served by `outpost service` in its own
 * process on a SQLite file store (the built CLI, dist/src/cli.js; src/cli.ts through tsx when this file runs
 * as TypeScript):
 * - TTFB of the cached page: 500 sequential GETs of `/status/{url}` (accepting gzip, as browsers do) on one
 *   keep-alive connection after one warm-up, from the request's start to its response headers; goal p95 < 20 ms;
 * - TTFB of a fresh render: 30 GETs, each after an incident update was posted (the page's version moves, so
 *   the cache misses; only the GET is timed); goal < 100 ms (median and p95 printed, p95 compared);
 * - the page loaded in Chromium (Debian's, through playwright-core) with an empty cache: the requests it made
 *   (goal ≤ 3: HTML, logo, favicon) and the bytes transferred (the sum of every response body's encoded
 *   size, as sent: the page gzipped, the badge as it is); goal ≤ 30 KB; also what it would be with every
 *   body gzipped (zlib.gzipSync of those sent uncompressed, when smaller);
 * - 1,000 confirmed subscribers mailed for one incident update: a real SMTP peer (smtp-server, in this
 *   process) as OUTPOST_SMTP_URL; the subscribers are inserted confirmed directly in the store before the
 *   measured service starts (the double opt-in skipped); the update is POSTed with `notifySubscribers`, and
 *   the time runs from the POST's start to the SMTP peer accepting the 1,000th mail; goal < 10 s.
 * Prints the figures and their ratio to the goals (goal ÷ figure: above 1 is met); returns them.
 * Run: `npm run bench -- status-pages` (or `npx tsx bench/status-pages.ts`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { Agent, request } from 'undici';
import { PACKAGE_ROOT } from '../src/common/paths.js';
import { type SmtpPeer, startSmtpPeer } from '../test/helpers/alert-peers.js';
import {
  type ApiCall,
  insertConfirmedSubscribers,
  type SeededStatusPage,
  seedStatusPage,
} from '../test/helpers/status-pages.js';

/** The goals: TTFB p95 of a cached page and of a fresh render, ms; page weight, KB; requests; mail, ms. */
const GOALS = {
  cachedP95Ms: 20,
  freshMs: 100,
  transferKb: 30,
  requests: 3,
  subscribersMs: 10_000,
} as const;
const API_KEY = `op_bench_status_${'s'.repeat(32)}`;
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Percentiles of a sample, ms. */
export type Timing = { count: number; p50Ms: number; p95Ms: number; p99Ms: number; maxMs: number };

/** The figures `benchStatusPages` measured. */
export type StatusPagesBenchReport = {
  services: number;
  incidents: number;
  /** Cached page: TTFB of the sequential GETs; the HTML's size, bytes. */
  cached: Timing & {
    /** The HTML's size, decoded, and as sent to a client accepting gzip, bytes. */
    htmlBytes: number;
    sentBytes: number;
    /** Whether the service answered gzip. */
    gzipped: boolean;
    goalP95Ms: number;
  };
  /** Fresh renders: TTFB of each GET after an update. */
  fresh: Timing & { goalMs: number };
  /** The page in Chromium: requests, bytes transferred (KB), and whether the service compressed the HTML. */
  browser: {
    requests: number;
    urls: string[];
    /** The bodies' bytes as the service sent them (Chromium's encoded sizes), KB: the figure of the goal. */
    transferKb: number;
    /** The same with every body the service sent uncompressed counted at its gzip size when smaller, KB. */
    allGzippedKb: number;
    /** Bodies the service sent uncompressed. */
    uncompressed: number;
    htmlContentEncoding: string | null;
    goalKb: number;
    goalRequests: number;
  };
  /** Subscriber mail: from the update's POST to the last of `subscribers` mails accepted, ms. */
  subscribers: {
    subscribers: number;
    accepted: number;
    /** Distinct recipients among the accepted mails. */
    recipients: number;
    postMs: number;
    lastAcceptedMs: number | null;
    goalMs: number;
  };
  /** Seeding the store, ms (not measured against a goal). */
  setupMs: number;
};

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

function timing(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    count: samples.length,
    p50Ms: round(quantile(sorted, 0.5)),
    p95Ms: round(quantile(sorted, 0.95)),
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

/** The command that runs `outpost service`: the build, or the sources through tsx when this file is TypeScript. */
function serviceCommand(): string[] {
  if (fileURLToPath(import.meta.url).endsWith('.ts')) {
    return ['--import', 'tsx', join(PACKAGE_ROOT, 'src/cli.ts'), 'service'];
  }
  const cli = join(PACKAGE_ROOT, 'dist/src/cli.js');
  if (!existsSync(cli)) throw new Error('dist/src/cli.js is missing: run npm run build first');
  return [cli, 'service'];
}

/** `outpost service` on `dataDir` in its own process, resolved once it listens. */
async function startServiceProcess(
  dataDir: string,
  port: number,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; output(): string }> {
  const child = spawn(process.execPath, serviceCommand(), {
    cwd: PACKAGE_ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      PORT: String(port),
      HOST: '127.0.0.1',
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: API_KEY,
      OUTPOST_APP_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'WARN',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (c: Buffer) => {
    if (out.length < 64 * 1024) out += c.toString('utf8');
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const deadline = Date.now() + 60_000;
  while (!/service is listening/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`outpost service did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, output: () => out };
}

/**
 * Seeds `dataDir` with a service in this process (stopped before the measured one starts): the page, whose
 * logo and favicon are its own badge on `measuredOrigin`, and `subscribers` confirmed subscribers.
 */
async function seed(
  dataDir: string,
  measuredOrigin: string,
  subscribers: number,
): Promise<{ seeded: SeededStatusPage; accountId: string }> {
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
  const dispatcher = new Agent({ connections: 8 });
  try {
    const api: ApiCall = async (method, path, body) => {
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
      return { status: res.statusCode, json: text ? JSON.parse(text) : null };
    };
    const badge = `${measuredOrigin}/status/acme-cloud/badge.svg`;
    const db = running.service.context.db;
    const seeded = await seedStatusPage(api, { db, page: { logo: badge, favicon: badge } });
    await insertConfirmedSubscribers(
      db,
      { pageId: seeded.pageId, accountId: running.accountId },
      subscribers,
    );
    return { seeded, accountId: running.accountId };
  } finally {
    await dispatcher.close();
    await running.stop();
  }
}

/**
 * Measures the status page (see the file comment); prints the table with the ratio to each goal and returns
 * the figures.
 * @param options `cachedGets` (default 500), `freshGets` (default 30), `subscribers` (default 1,000),
 *   `mailTimeoutMs`: how long to wait for the mails (default 60 s; the figure is then "not all accepted").
 * @throws Error when the service does not start, the page does not answer 200, or Chromium is missing.
 */
export async function benchStatusPages(
  options: { cachedGets?: number; freshGets?: number; subscribers?: number; mailTimeoutMs?: number } = {},
): Promise<StatusPagesBenchReport> {
  const cachedGets = options.cachedGets ?? 500;
  const freshGets = options.freshGets ?? 30;
  const subscriberCount = options.subscribers ?? 1000;
  const mailTimeoutMs = options.mailTimeoutMs ?? 60_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-bench-status-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let smtp: SmtpPeer | undefined;
  let service: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
  const dispatcher = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  try {
    const setupStarted = performance.now();
    const { seeded } = await seed(dataDir, base, subscriberCount);
    smtp = await startSmtpPeer();
    service = await startServiceProcess(dataDir, port, {
      OUTPOST_SMTP_URL: smtp.url,
      OUTPOST_SMTP_FROM: 'Acme Cloud Status <status@acme.example.test>',
    });
    const setupMs = performance.now() - setupStarted;
    const pagePath = `/status/${seeded.url}`;

    /**
     * GETs `path` as a browser would (accepting gzip); resolves with the time to the response headers (ms),
     * the status, the body (decoded) and its size as sent.
     */
    const timedGet = async (path: string) => {
      const started = performance.now();
      const res = await request(new URL(path, base), {
        method: 'GET',
        headers: { accept: 'text/html', 'accept-encoding': 'gzip' },
        dispatcher,
      });
      const ttfb = performance.now() - started;
      const sent = Buffer.from(await res.body.arrayBuffer());
      const gzipped = res.headers['content-encoding'] === 'gzip';
      const body = (gzipped ? gunzipSync(sent) : sent).toString('utf8');
      return { ttfb, status: res.statusCode, body, sentBytes: sent.length, gzipped };
    };
    const api = async (method: 'POST', path: string, body: unknown) => {
      const res = await request(new URL(path, base), {
        method,
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        dispatcher,
      });
      const text = await res.body.text();
      if (res.statusCode !== 201) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text}`);
      return JSON.parse(text) as unknown;
    };

    // Cached page: one warm-up, then sequential GETs.
    const warm = await timedGet(pagePath);
    if (warm.status !== 200)
      throw new Error(`${pagePath} answered ${warm.status}: ${warm.body.slice(0, 500)}`);
    const cachedMs: number[] = [];
    for (let i = 0; i < cachedGets; i++) {
      const r = await timedGet(pagePath);
      if (r.status !== 200) throw new Error(`${pagePath} answered ${r.status}`);
      cachedMs.push(r.ttfb);
    }

    // Fresh renders: an update on an open incident before each GET.
    const open = seeded.incidents.find((i) => i.stoppedAtMs === null)!;
    const freshMs: number[] = [];
    for (let i = 0; i < freshGets; i++) {
      await api('POST', `/v1/incidents/${open.id}/updates`, {
        status: 'MONITORING',
        description: `Still watching the fix (${i + 1}).`,
      });
      const r = await timedGet(pagePath);
      if (r.status !== 200) throw new Error(`${pagePath} answered ${r.status}`);
      if (!r.body.includes(`Still watching the fix (${i + 1}).`))
        throw new Error(`the GET after update ${i + 1} did not show it: served from a stale cache`);
      freshMs.push(r.ttfb);
    }

    // The page in Chromium, with an empty cache.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const finished: Promise<{ url: string; encoded: number; gzipped: number; encoding: string | null }>[] =
      [];
    page.on('requestfinished', (req) => {
      finished.push(
        (async () => {
          const response = await req.response();
          const sizes = await req.sizes();
          const encoding = response ? ((await response.allHeaders())['content-encoding'] ?? null) : null;
          const body = response ? await response.body().catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
          // What a body sent uncompressed would weigh gzipped (when that is smaller).
          const gzipped = encoding
            ? sizes.responseBodySize
            : Math.min(sizes.responseBodySize, gzipSync(body).length);
          return { url: req.url(), encoded: sizes.responseBodySize, gzipped, encoding };
        })(),
      );
    });
    const failed: string[] = [];
    page.on('requestfailed', (req) => failed.push(req.url()));
    await page.goto(`${base}${pagePath}`, { waitUntil: 'networkidle' });
    const loaded = await Promise.all(finished);
    await context.close();
    const all = [...loaded.map((l) => l.url), ...failed];
    const htmlEncoding = loaded.find((l) => l.url === `${base}${pagePath}`)?.encoding ?? null;
    const transferBytes = loaded.reduce((sum, l) => sum + l.encoded, 0);
    const allGzippedBytes = loaded.reduce((sum, l) => sum + l.gzipped, 0);

    // Subscriber mail: one update with notifySubscribers; until the last mail is accepted.
    const mailStarted = performance.now();
    await api('POST', `/v1/incidents/${open.id}/updates`, {
      status: 'IDENTIFIED',
      description: 'The cause is found; a fix is being deployed.',
      notifySubscribers: true,
    });
    const postMs = performance.now() - mailStarted;
    let lastAcceptedMs: number | null = null;
    while (performance.now() - mailStarted < mailTimeoutMs) {
      if (smtp.mails.length >= subscriberCount) {
        lastAcceptedMs = performance.now() - mailStarted;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const recipients = new Set(smtp.mails.flatMap((m) => m.to)).size;

    const report: StatusPagesBenchReport = {
      services: seeded.services.length,
      incidents: seeded.incidents.length,
      cached: {
        ...timing(cachedMs),
        htmlBytes: Buffer.byteLength(warm.body),
        sentBytes: warm.sentBytes,
        gzipped: warm.gzipped,
        goalP95Ms: GOALS.cachedP95Ms,
      },
      fresh: { ...timing(freshMs), goalMs: GOALS.freshMs },
      browser: {
        requests: all.length,
        urls: all,
        transferKb: Math.round((transferBytes / 1024) * 10) / 10,
        allGzippedKb: Math.round((allGzippedBytes / 1024) * 10) / 10,
        uncompressed: loaded.filter((l) => l.encoding === null).length,
        htmlContentEncoding: htmlEncoding,
        goalKb: GOALS.transferKb,
        goalRequests: GOALS.requests,
      },
      subscribers: {
        subscribers: subscriberCount,
        accepted: smtp.mails.length,
        recipients,
        postMs: Math.round(postMs),
        lastAcceptedMs: lastAcceptedMs === null ? null : Math.round(lastAcceptedMs),
        goalMs: GOALS.subscribersMs,
      },
      setupMs: Math.round(setupMs),
    };
    print(report);
    return report;
  } finally {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      const timer = setTimeout(() => service?.child.kill('SIGKILL'), 5000);
      await once(service.child, 'exit');
      clearTimeout(timer);
    }
    await browser.close();
    await smtp?.close();
    await dispatcher.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function print(r: StatusPagesBenchReport): void {
  const ratio = (goal: number, figure: number) =>
    `×${(goal / Math.max(figure, 0.001)).toFixed(2)}`.padStart(8);
  const row = (what: string, figure: string, goal: string, ratioText: string) =>
    `${what.padEnd(52)}|${figure.padStart(12)} | ${goal.padEnd(10)} |${ratioText}`;
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  console.log(
    `status-pages: outpost service process (SQLite file store), a page of ${r.services} services × 90 days with ` +
      `${r.incidents} incidents; setup ${r.setupMs} ms; HTML ${(r.cached.htmlBytes / 1024).toFixed(1)} KB, ` +
      `sent as ${(r.cached.sentBytes / 1024).toFixed(1)} KB (${r.cached.gzipped ? 'gzip' : 'uncompressed'}) to a client accepting gzip`,
  );
  console.log(row('scenario', 'figure', 'goal', ' ratio'));
  console.log(
    row(
      `cached page TTFB p95 (${r.cached.count} GETs)`,
      ms(r.cached.p95Ms),
      `< ${r.cached.goalP95Ms} ms`,
      ratio(r.cached.goalP95Ms, r.cached.p95Ms),
    ),
  );
  console.log(
    `${'  p50 / p99 / max'.padEnd(52)}| ${ms(r.cached.p50Ms)} / ${ms(r.cached.p99Ms)} / ${ms(r.cached.maxMs)}`,
  );
  console.log(
    row(
      `fresh render TTFB p95 (${r.fresh.count} GETs after an update)`,
      ms(r.fresh.p95Ms),
      `< ${r.fresh.goalMs} ms`,
      ratio(r.fresh.goalMs, r.fresh.p95Ms),
    ),
  );
  console.log(`${'  median / max'.padEnd(52)}| ${ms(r.fresh.p50Ms)} / ${ms(r.fresh.maxMs)}`);
  console.log(
    row(
      'page in Chromium: bytes transferred',
      `${r.browser.transferKb.toFixed(1)} KB`,
      `≤ ${r.browser.goalKb} KB`,
      ratio(r.browser.goalKb, r.browser.transferKb),
    ),
  );
  console.log(
    row(
      'page in Chromium: requests',
      String(r.browser.requests),
      `≤ ${r.browser.goalRequests}`,
      ratio(r.browser.goalRequests, r.browser.requests),
    ),
  );
  console.log(
    `${'  HTML content-encoding'.padEnd(52)}| ${r.browser.htmlContentEncoding ?? 'none'}; ${r.browser.uncompressed} of ${r.browser.requests} bodies sent uncompressed; ${r.browser.allGzippedKb.toFixed(1)} KB were every body gzipped`,
  );
  for (const url of r.browser.urls) console.log(`${''.padEnd(52)}| ${url}`);
  const s = r.subscribers;
  console.log(
    row(
      `${s.subscribers} subscribers: last mail accepted after the POST`,
      s.lastAcceptedMs === null ? 'not all' : ms(s.lastAcceptedMs),
      `< ${s.goalMs} ms`,
      s.lastAcceptedMs === null ? '  NOT met' : ratio(s.goalMs, s.lastAcceptedMs),
    ),
  );
  console.log(
    `${'  accepted / recipients / POST answered'.padEnd(52)}| ${s.accepted} mails / ${s.recipients} addresses / ${s.postMs} ms`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchStatusPages();
}
