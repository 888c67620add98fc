/**
 * Browser checks on this machine, through the agent's own parts (a BrowserPool of warm Chromium
 * hosts with a pre-started runner per check, the BrowserExecutor that scrubs every trace), against
 * a loopback site the bench serves:
 *
 * 1. memory per concurrent browser check (PSS, tracing on as always) at 1, 2, 4 and 8 checks at
 *    once, for a PLAIN script, a multi-step check (TEST shape, `request` and `test.step` only) and
 *    a `test()` check with a page: every check holds on the site while the PSS of everything the
 *    pool started is read, minus the idle PSS read just before (warm host, spare runner);
 * 2. the warm overhead, job accepted → the script's first statement (`startupMs` of the result),
 *    over sequential checks, and the executor's round trip;
 * 3. browser checks per minute at `os.availableParallelism()` checks at once, through the executor
 *    (traces scrubbed) and through the pool's leases alone (traces written, not scrubbed), next to
 *    the same journeys each in a fresh `node` that launches its own Chromium (tracing on, the trace
 *    written, not scrubbed), as the peers do; with the CPU each journey took of everything the
 *    bench started, which another load on the machine does not change as it does the rates.
 *
 * Run: `npx tsc -p tsconfig.build.json && node dist/bench/browser.js [journeys]`
 * (or `npm run bench -- browser`). Needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium) and
 * runtime 2026.04's dependencies; without them it says so and measures nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { RunnerPayload } from '../src/browser/messages.js';
import { listProcesses, pssOf, readBounded, treeOf } from '../src/browser/memory.js';
import { BrowserPool } from '../src/browser/pool.js';
import { BrowserRunner } from '../src/browser/runner-process.js';
import { BrowserExecutor, type BrowserPoolPort } from '../src/checks/browser/executor.js';
import { PACKAGE_ROOT } from '../src/common/paths.js';
import type { Job, RunOutcome } from '../src/protocol/index.js';
import { benchJob, runPool } from './url.js';

/** The three script shapes measured. */
export type BrowserBenchShape = 'plain' | 'multi-step' | 'test';

/** Memory of one shape at one concurrency. */
export type BrowserMemoryCell = {
  shape: BrowserBenchShape;
  concurrent: number;
  /** PSS of everything the pool started, idle (warm host, spare runner), MiB. */
  idleMiB: number;
  /** The same while `concurrent` checks hold, MiB. */
  busyMiB: number;
  /** (busy − idle) / concurrent, MiB. */
  perCheckMiB: number;
  /** Of perCheckMiB: what the runners (Node, Playwright client) took, MiB; the rest is Chromium's. */
  runnerPerCheckMiB: number;
  goalMiB: number;
  /** Why a check of the cell did not pass, or null when all passed. */
  failure: string | null;
};

/** Median and 95th percentile of a series, ms. */
export type BrowserTiming = { p50Ms: number; p95Ms: number };

/** What {@link benchBrowser} measured. */
export type BrowserBenchReport = {
  memory: BrowserMemoryCell[];
  startup: {
    runs: number;
    /** `browserCheckResult.startupMs`: job accepted → the script's first statement. */
    toFirstStatement: BrowserTiming;
    /** Median startupMs per shape, ms. */
    perShapeP50Ms: Record<BrowserBenchShape, number>;
    /** Of toFirstStatement: the pool's acquire (a slot, a ready runner). */
    acquire: BrowserTiming;
    /**
     * Of toFirstStatement: the runner's part, payload → first statement (connecting to the warm
     * browser, a traced context, the web-vitals binding and script; the page for `page` scripts).
     */
    inRunner: BrowserTiming;
    /** executor.run called → outcome (the run, trace scrubbing, the runner disposed of). */
    roundTrip: BrowserTiming;
    /** A runner's boot alone, spawn → ready (Node started, Playwright loaded), a few times. */
    runnerBoot: BrowserTiming;
    failures: number;
    goal: { p50Ms: number; p95Ms: number };
  };
  throughput: {
    journeys: number;
    concurrency: number;
    /** Journeys per minute through the pool and the executor (traces scrubbed). */
    poolPerMinute: number;
    /** Journeys per minute through the pool's leases alone (traces written, not scrubbed). */
    leasePerMinute: number;
    leaseFailures: number;
    /** Journeys per minute, each in a fresh node that launches Chromium. */
    freshPerMinute: number;
    poolFailures: number;
    freshFailures: number;
    /**
     * CPU time per journey of the bench and all it started (hosts, Chromium, runners, scrubbing
     * workers, the fresh nodes), ms: a figure the machine's other load does not change.
     */
    cpuPerCheckMs: { pool: number; lease: number; fresh: number };
  };
};

/** Options of {@link benchBrowser}. */
export type BrowserBenchOptions = {
  /** Sequential checks timed for the warm overhead. Default 30. */
  startupRuns?: number;
  /** Journeys of the throughput comparison, each way. Default 24 (the whole bench stays near 4 minutes). */
  journeys?: number;
  /** Concurrencies of the memory measurement. Default 1, 2, 4, 8. */
  concurrencies?: number[];
};

const RUNTIME_ID = '2026.04';
const RUNTIME_DIR = join(PACKAGE_ROOT, 'runtimes', RUNTIME_ID);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const MiB = 1024 * 1024;
const SHAPES: BrowserBenchShape[] = ['plain', 'multi-step', 'test'];
/** Memory goals per check, MiB: a `test()` check keeps a page and the test runner's fixtures. */
const MEMORY_GOAL_MIB: Record<BrowserBenchShape, number> = { plain: 300, 'multi-step': 300, test: 650 };
const STARTUP_GOAL = { p50Ms: 100, p95Ms: 300 };
/** Longest wait for every check of a memory cell to reach its hold, ms. */
const HOLD_WAIT_MS = 90_000;
/** A hold the bench forgot is answered after this long anyway, ms (the job's own limit is longer). */
const HOLD_LIMIT_MS = 100_000;
/** The memory cells' jobs' limit, ms: 8 checks starting at once on 2 loaded cores take a while. */
const HOLD_JOB_TIMEOUT_MS = 120_000;
/** Runner boots timed alone. */
const RUNNER_BOOTS = 5;
/** A fresh-browser reference run killed after this long, ms. */
const FRESH_RUN_LIMIT_MS = 60_000;
/** The uids the bench's pool hands out when root: outside the default range other pools use. */
const BENCH_UIDS = { first: 62_700, count: 64 };
/** The uid the fresh-browser reference runs as when the bench is root (outside both ranges). */
const REFERENCE_UID = 62_990;
/** Most stderr kept of one reference run, characters. */
const MAX_REFERENCE_OUTPUT = 4_096;

// --- the loopback site ---------------------------------------------------------------------

/**
 * The bench's site: `/` (text, an input, a button submitting to `/second`), `/second` greeting
 * the name, `/api/items` and `/api/items/1` (JSON), and `/hold`, answered only on `release()`
 * (or after {@link HOLD_LIMIT_MS}) so checks hold while their memory is read.
 */
type Site = {
  origin: string;
  /** Requests to `/hold` waiting now. */
  holding(): number;
  /** Resolves once `count` requests wait at `/hold`; false after `timeoutMs`. */
  waitHolding(count: number, timeoutMs: number): Promise<boolean>;
  /** Answers every waiting `/hold`. */
  release(): void;
  close(): Promise<void>;
};

const FIRST_PAGE =
  '<!doctype html><html><head><title>Bench shop</title></head><body>' +
  '<h1>Welcome</h1><p>A small shop with a form, to be visited by browser checks. ' +
  'Nothing is sold here; the page only needs some text to lay out and paint.</p>' +
  '<ul><li>Apples</li><li>Pears</li><li>Plums</li></ul>' +
  '<form action="/second" method="get"><label>Name <input id="name" name="name"></label>' +
  '<button id="go" type="submit">Next</button></form></body></html>';

async function startSite(): Promise<Site> {
  const sockets = new Set<Socket>();
  const held: ServerResponse[] = [];
  let onHold: (() => void) | null = null;
  const answerHold = (res: ServerResponse) => {
    if (res.writableEnded) return;
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
    res.end('released');
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/hold') {
      held.push(res);
      const timer = setTimeout(() => answerHold(res), HOLD_LIMIT_MS);
      res.on('close', () => {
        clearTimeout(timer);
        const at = held.indexOf(res);
        if (at >= 0) held.splice(at, 1);
      });
      onHold?.();
      return;
    }
    if (url.pathname === '/api/items' || url.pathname === '/api/items/1') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        url.pathname === '/api/items'
          ? JSON.stringify({ items: [{ id: 1, name: 'apple', price: 3 }] })
          : JSON.stringify({ id: 1, name: 'apple', price: 3 }),
      );
      return;
    }
    if (url.pathname === '/second') {
      const name = (url.searchParams.get('name') ?? '').replace(/[^A-Za-z0-9 ]/g, '').slice(0, 64);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Second</title><h1 id="done">Hello ${name}</h1><p>Thanks.</p>`);
      return;
    }
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(FIRST_PAGE);
      return;
    }
    res.writeHead(404).end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holding: () => held.length,
    waitHolding(count, timeoutMs) {
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => finish(false), timeoutMs);
        const finish = (ok: boolean) => {
          clearTimeout(timer);
          onHold = null;
          resolve(ok);
        };
        onHold = () => {
          if (held.length >= count) finish(true);
        };
        onHold();
      });
    },
    release() {
      for (const res of [...held]) answerHold(res);
    },
    close: async () => {
      for (const res of [...held]) answerHold(res);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// --- the checks ----------------------------------------------------------------------------

/** The script of one shape: the journey, then (when `hold`) a request to `/hold` that waits. */
function script(shape: BrowserBenchShape, origin: string, hold: boolean): string {
  // A fetch from the page keeps the page (its renderer) alive and loaded while the check holds.
  const pageHold = "await page.evaluate(() => fetch('/hold').then((r) => r.text()));";
  if (shape === 'plain') {
    return [
      `await page.goto('${origin}/');`,
      "await page.fill('#name', 'ada');",
      "await page.click('#go');",
      "await page.waitForSelector('#done');",
      hold ? pageHold : '',
    ].join('\n');
  }
  if (shape === 'multi-step') {
    return [
      "import { test, expect } from '@playwright/test';",
      "test('api journey', async ({ request }) => {",
      "  await test.step('list', async () => {",
      `    expect((await request.get('${origin}/api/items')).ok()).toBe(true);`,
      '  });',
      "  await test.step('item', async () => {",
      `    expect(await (await request.get('${origin}/api/items/1')).json()).toMatchObject({ id: 1 });`,
      '  });',
      hold
        ? `  await test.step('hold', async () => { await request.get('${origin}/hold', { timeout: 0 }); });`
        : '',
      '});',
    ].join('\n');
  }
  return [
    "import { test, expect } from '@playwright/test';",
    "test('journey', async ({ page }) => {",
    "  await test.step('open', async () => {",
    `    await page.goto('${origin}/');`,
    "    await expect(page.locator('h1')).toHaveText('Welcome');",
    '  });',
    "  await test.step('submit', async () => {",
    "    await page.fill('#name', 'ada');",
    "    await page.click('#go');",
    "    await expect(page.locator('#done')).toHaveText('Hello ada');",
    '  });',
    hold ? `  ${pageHold}` : '',
    '});',
  ].join('\n');
}

function job(shape: BrowserBenchShape, origin: string, hold: boolean): Job {
  const base = benchJob(shape === 'multi-step' ? 'MULTI_STEP' : 'BROWSER', {
    script: script(shape, origin, hold),
    dependencies: [],
    sslCheckDomain: null,
  });
  return {
    ...base,
    jobId: `bench-${Math.random().toString(16).slice(2, 10)}`,
    timeoutMs: hold ? HOLD_JOB_TIMEOUT_MS : 60_000,
  };
}

/** Runs a job as the dispatcher would (a signal at its `timeoutMs`); returns the outcome and the round trip. */
async function runJob(
  executors: Record<'BROWSER' | 'MULTI_STEP', BrowserExecutor>,
  j: Job,
): Promise<{ outcome: RunOutcome; roundTripMs: number }> {
  const executor = executors[j.check.checkType as 'BROWSER' | 'MULTI_STEP'];
  const t0 = performance.now();
  const outcome = await executor.run(j, {
    signal: AbortSignal.timeout(j.timeoutMs),
    log: pino({ level: 'silent' }),
  });
  return { outcome, roundTripMs: performance.now() - t0 };
}

/** A runner payload as the executor builds one (no variables, no secrets), 60 s to run. */
function runnerPayload(wsEndpoint: string, code: string): RunnerPayload {
  return {
    wsEndpoint,
    checkType: 'BROWSER',
    code,
    shape: null,
    env: {},
    secrets: [],
    timeoutMs: 56_000,
    captureMarginMs: 5_000,
    video: false,
    maxLogChars: 10_000,
    maxEntries: 100,
  };
}

function failureOf(outcome: RunOutcome): string | null {
  return outcome.status === 'PASSED' ? null : (outcome.errorMessage ?? 'FAILED without a message');
}

// --- memory --------------------------------------------------------------------------------

/**
 * PSS of every process the bench started (the trees below its children: hosts, their Chromium,
 * runners, spare) plus those that left the tree but work in `tmpRoot` (Chromium's crashpad
 * handler double-forks away from its parent), bytes; `runnerBytes` is the runners' share.
 */
async function ourPss(tmpRoot: string): Promise<{ bytes: number; runnerBytes: number; processes: number }> {
  const processes = (await listProcesses()).filter((p) => p.state !== 'Z');
  const roots = processes.filter((p) => p.ppid === process.pid).map((p) => p.pid);
  const treePids = new Set(treeOf(processes, roots));
  const runnerRoots: number[] = [];
  for (const pid of roots) {
    const cmdline = await readBounded(`/proc/${pid}/cmdline`);
    if (cmdline?.includes('runner-child')) runnerRoots.push(pid);
  }
  for (const p of processes) {
    if (treePids.has(p.pid) || p.pid === process.pid) continue;
    const cmdline = await readBounded(`/proc/${p.pid}/cmdline`);
    if (cmdline?.includes(tmpRoot)) treePids.add(p.pid);
  }
  const runnerPids = treeOf(processes, runnerRoots);
  const [bytes, runnerBytes] = await Promise.all([pssOf([...treePids]), pssOf(runnerPids)]);
  return { bytes: bytes ?? 0, runnerBytes: runnerBytes ?? 0, processes: treePids.size };
}

/** PSS of the bench's processes, bytes, and the runners' share of it. */
type PssReading = { bytes: number; runnerBytes: number };

/** The median of three readings 300 ms apart (a reading catches Chromium mid-allocation now and then). */
async function steadyPss(tmpRoot: string): Promise<PssReading> {
  const readings: PssReading[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(300);
    readings.push(await ourPss(tmpRoot));
  }
  readings.sort((a, b) => a.bytes - b.bytes);
  return readings[1] as PssReading;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on every Linux build in use). */
const TICKS_PER_SECOND = 100;
/** How often orphans of the bench's uids are sampled during a throughput run, ms. */
const ORPHAN_SAMPLE_MS = 500;

/** utime + stime + cutime + cstime of a process, ticks; null when it cannot be read. */
async function cpuTicks(pid: number): Promise<number | null> {
  const text = await readBounded(`/proc/${pid}/stat`, 1024);
  if (text === null) return null;
  // Fields 14 to 17 of stat, counted from the state that follows the name.
  const rest = text
    .slice(text.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/);
  return [11, 12, 13, 14].reduce((sum, at) => sum + (Number(rest[at]) || 0), 0);
}

/**
 * CPU time used by the bench and everything it started, in a window (a throughput run), ms.
 * Two parts: the tree below the bench (each live process's time plus what its exited children
 * used: a child's time moves to its parent's `cutime` once reaped, so nothing counts twice), and
 * the orphans of the bench's uids (ppid 1: Chromium's zygotes and crashpad handlers leave their
 * parent at birth, so their time and their renderers' never reach the tree), sampled every
 * {@link ORPHAN_SAMPLE_MS} because an orphan's time is lost once init reaps it. Under a shared
 * machine's load the wall-clock rate says little; CPU per check does not depend on other load.
 */
class CpuWindow {
  readonly #uids: (uid: number) => boolean;
  readonly #orphanStart = new Map<number, number>();
  readonly #orphanLast = new Map<number, number>();
  #treeStart = 0;
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> = Promise.resolve();

  constructor(uids: (uid: number) => boolean) {
    this.#uids = uids;
  }

  async start(): Promise<void> {
    this.#treeStart = await treeTicks();
    await this.#sampleOrphans(true);
    this.#timer = setInterval(() => {
      this.#sampling = this.#sampling.then(() => this.#sampleOrphans(false));
    }, ORPHAN_SAMPLE_MS);
  }

  /** Stops sampling; the CPU used since {@link start}, ms. */
  async stop(): Promise<number> {
    clearInterval(this.#timer);
    await this.#sampling;
    await this.#sampleOrphans(false);
    let ticks = (await treeTicks()) - this.#treeStart;
    for (const [pid, last] of this.#orphanLast) ticks += last - (this.#orphanStart.get(pid) ?? 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  }

  async #sampleOrphans(baseline: boolean): Promise<void> {
    for (const p of await listProcesses()) {
      if (p.ppid !== 1) continue;
      const owner = await stat(`/proc/${p.pid}`).catch(() => null);
      if (owner === null || !this.#uids(owner.uid)) continue;
      const ticks = await cpuTicks(p.pid);
      if (ticks === null) continue;
      if (baseline) this.#orphanStart.set(p.pid, ticks);
      this.#orphanLast.set(p.pid, Math.max(ticks, this.#orphanLast.get(p.pid) ?? 0));
    }
  }
}

/** CPU ticks so far of the bench itself and the live tree below it (with their reaped children). */
async function treeTicks(): Promise<number> {
  const processes = await listProcesses();
  const roots = processes.filter((p) => p.ppid === process.pid).map((p) => p.pid);
  let ticks = 0;
  for (const pid of [process.pid, ...treeOf(processes, roots)]) ticks += (await cpuTicks(pid)) ?? 0;
  return ticks;
}

/** True for the uids the bench's processes run as (the pool's and the reference's); any when not root. */
function benchUid(uid: number): boolean {
  if (process.getuid?.() !== 0) return uid === process.getuid?.();
  return (uid >= BENCH_UIDS.first && uid < BENCH_UIDS.first + BENCH_UIDS.count) || uid === REFERENCE_UID;
}

/**
 * One memory cell: `concurrent` checks of `shape` started at once, the PSS read while all hold,
 * then the idle PSS again once they ended. The idle figure of the cell is the mean of the one
 * before and the one after: Chromium gives back a closed context's memory over a few seconds, so
 * a single idle reading drifts by tens of MiB.
 *
 * @param idleBefore the idle reading before the cell (the previous cell's `idleAfter`).
 */
async function measureMemory(
  executors: Record<'BROWSER' | 'MULTI_STEP', BrowserExecutor>,
  site: Site,
  tmpRoot: string,
  shape: BrowserBenchShape,
  concurrent: number,
  idleBefore: PssReading,
): Promise<{ cell: BrowserMemoryCell; idleAfter: PssReading }> {
  const runs = Array.from({ length: concurrent }, () => runJob(executors, job(shape, site.origin, true)));
  const allHolding = await site.waitHolding(concurrent, HOLD_WAIT_MS);
  let busy = idleBefore;
  if (allHolding) {
    await sleep(1_000);
    busy = await steadyPss(tmpRoot);
  }
  site.release();
  const outcomes = await Promise.all(runs);
  const idleAfter = await idlePss(tmpRoot);
  const failed = outcomes.map((o) => failureOf(o.outcome)).find((f) => f !== null) ?? null;
  const failure = allHolding
    ? failed
    : `only ${site.holding()} of ${concurrent} checks reached their hold in ${HOLD_WAIT_MS} ms${failed ? `: ${failed}` : ''}`;
  const idle = {
    bytes: (idleBefore.bytes + idleAfter.bytes) / 2,
    runnerBytes: (idleBefore.runnerBytes + idleAfter.runnerBytes) / 2,
  };
  return {
    cell: {
      shape,
      concurrent,
      idleMiB: idle.bytes / MiB,
      busyMiB: busy.bytes / MiB,
      perCheckMiB: (busy.bytes - idle.bytes) / MiB / concurrent,
      runnerPerCheckMiB: (busy.runnerBytes - idle.runnerBytes) / MiB / concurrent,
      goalMiB: MEMORY_GOAL_MIB[shape],
      failure,
    },
    idleAfter,
  };
}

/** The idle PSS once the last check's context has been given back (warm host, spare runner). */
async function idlePss(tmpRoot: string): Promise<PssReading> {
  await sleep(1_500);
  return steadyPss(tmpRoot);
}

// --- the fresh-browser reference -----------------------------------------------------------

/** One journey in a fresh node: launch Chromium, trace, the PLAIN journey, save the trace, close. */
const REFERENCE_SCRIPT = `
import { createRequire } from 'node:module';
import { join } from 'node:path';
const [runtimeDir, chromiumPath, origin] = process.argv.slice(2);
const { chromium } = createRequire(join(runtimeDir, 'package.json'))('playwright-core');
const browser = await chromium.launch({ executablePath: chromiumPath });
try {
  const context = await browser.newContext();
  await context.tracing.start({ screenshots: true, snapshots: true, sources: false });
  const page = await context.newPage();
  await page.goto(origin + '/');
  await page.fill('#name', 'ada');
  await page.click('#go');
  await page.waitForSelector('#done');
  await context.tracing.stop({ path: join(process.cwd(), 'trace.zip') });
  await context.close();
} finally {
  await browser.close();
}
`;

/**
 * Runs the reference journey in a fresh `node` (as {@link REFERENCE_UID} when root, like the
 * pool's browsers never run as root), in a private dir; kills what it left after
 * {@link FRESH_RUN_LIMIT_MS}. Resolves with the failure, or null when it passed.
 */
async function freshJourney(scriptPath: string, origin: string, dir: string): Promise<string | null> {
  await mkdir(dir, { recursive: true });
  const runAs = process.getuid?.() === 0 ? { uid: REFERENCE_UID, gid: REFERENCE_UID } : null;
  if (runAs) await chown(dir, runAs.uid, runAs.gid);
  try {
    return await new Promise<string | null>((resolve) => {
      const child = spawn(process.execPath, [scriptPath, RUNTIME_DIR, CHROMIUM, origin], {
        cwd: dir,
        env: { HOME: dir, TMPDIR: dir, PATH: '/usr/bin:/bin' },
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
        ...(runAs ?? {}),
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        if (stderr.length < MAX_REFERENCE_OUTPUT) stderr += chunk.toString('utf8');
      });
      const timer = setTimeout(() => killGroup(child.pid), FRESH_RUN_LIMIT_MS);
      child.once('error', (err) => {
        clearTimeout(timer);
        resolve(err.message);
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        resolve(code === 0 ? null : `exit ${signal ?? code}: ${stderr.slice(0, 300)}`);
      });
    });
  } finally {
    // Playwright starts Chromium in a process group of its own: a killed node leaves it behind.
    await killWorkingIn(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** SIGKILLs every process whose command line names `dir` (a Chromium profile inside it). */
async function killWorkingIn(dir: string): Promise<void> {
  for (const p of await listProcesses()) {
    if (p.pid === process.pid) continue;
    const cmdline = await readBounded(`/proc/${p.pid}/cmdline`);
    if (cmdline?.includes(dir)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
    }
  }
}

// --- the bench -----------------------------------------------------------------------------

function timing(values: number[]): BrowserTiming {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50Ms: round1(at(0.5)), p95Ms: round1(at(0.95)) };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Measures browser checks (see the file comment), prints the figures with the goals met or not,
 * and returns them; null (with a message) when Chromium or the runtime is missing.
 *
 * @throws Error when the runtime's compatibility check fails (the pool could run no check).
 */
export async function benchBrowser(options: BrowserBenchOptions = {}): Promise<BrowserBenchReport | null> {
  const startupRuns = options.startupRuns ?? 30;
  const journeys = options.journeys ?? 24;
  const concurrencies = options.concurrencies ?? [1, 2, 4, 8];
  if (!existsSync(CHROMIUM) || !existsSync(join(RUNTIME_DIR, 'node_modules', 'playwright-core'))) {
    console.log(
      `browser bench skipped: needs Chromium at ${CHROMIUM} (apt-get install chromium) and runtime ${RUNTIME_ID}'s dependencies (npm ci --prefix runtimes/${RUNTIME_ID})`,
    );
    return null;
  }
  const tmpRoot = await mkdtemp(join(tmpdir(), 'outpost-bench-browser-'));
  // The browser uids must reach their temp dirs inside it.
  await chmod(tmpRoot, 0o755);
  const site = await startSite();
  const pool = new BrowserPool<BrowserRunner>({
    createRunner: (o) => BrowserRunner.spawn(o),
    chromiumPath: CHROMIUM,
    tmpRoot,
    browserConcurrency: Math.max(...concurrencies, availableParallelism()),
    // A host past the default 1 GiB is replaced once its checks end; the memory cells read one host.
    maxHostPssMiB: 16_384,
    // Not the default uids: a host kills every process of its uid it does not know (strays), so
    // another pool on this machine (a test, an agent) handing out the same uids kills ours.
    browserUids: BENCH_UIDS,
  });
  // The executors reach the pool through this port, which only times each acquire: the startup
  // figure splits into the wait for a slot and a ready runner, and the runner's own part.
  const acquireMs: number[] = [];
  const timedPool: BrowserPoolPort = {
    async acquire(runtimeId, o) {
      const t0 = performance.now();
      const lease = await pool.acquire(runtimeId, o);
      acquireMs.push(performance.now() - t0);
      return lease;
    },
  };
  const executors = {
    BROWSER: new BrowserExecutor({ checkType: 'BROWSER', pool: timedPool, tmpRoot }),
    MULTI_STEP: new BrowserExecutor({ checkType: 'MULTI_STEP', pool: timedPool, tmpRoot }),
  };
  const started = performance.now();
  try {
    const check = await pool.checkRuntime(RUNTIME_ID);
    if (!check.ok) throw new Error(`runtime ${RUNTIME_ID} failed its compatibility check: ${check.reason}`);
    console.log(
      `browser checks: Chromium ${check.browserVersion}, Playwright ${check.playwrightVersion}, ${availableParallelism()} cores, host started and checked in ${Math.round(check.durationMs)} ms`,
    );
    // One untimed check per shape: the first loads the runtime's modules from disk.
    for (const shape of SHAPES) {
      const { outcome } = await runJob(executors, job(shape, site.origin, false));
      const failed = failureOf(outcome);
      if (failed !== null) throw new Error(`the ${shape} warm-up check failed: ${failed}`);
    }

    const memoryStarted = performance.now();
    const memory: BrowserMemoryCell[] = [];
    let idle = await idlePss(tmpRoot);
    for (const shape of SHAPES) {
      for (const k of concurrencies) {
        const measured = await measureMemory(executors, site, tmpRoot, shape, k, idle);
        idle = measured.idleAfter;
        memory.push(measured.cell);
        printMemoryCell(measured.cell);
      }
    }

    const toStart: number[] = [];
    const roundTrips: number[] = [];
    const perShape: Record<BrowserBenchShape, number[]> = { plain: [], 'multi-step': [], test: [] };
    const memoryMs = performance.now() - memoryStarted;
    const startupStarted = performance.now();
    const acquireWaits: number[] = [];
    const inRunner: number[] = [];
    let startupFailures = 0;
    for (let i = 0; i < startupRuns; i++) {
      const shape = SHAPES[i % SHAPES.length] as BrowserBenchShape;
      acquireMs.length = 0;
      const { outcome, roundTripMs } = await runJob(executors, job(shape, site.origin, false));
      const startupMs = outcome.browserCheckResult?.startupMs;
      if (failureOf(outcome) !== null || startupMs === null || startupMs === undefined) {
        startupFailures++;
        continue;
      }
      toStart.push(startupMs);
      const waited = acquireMs[0] ?? 0;
      acquireWaits.push(waited);
      inRunner.push(startupMs - waited);
      perShape[shape].push(startupMs);
      roundTrips.push(roundTripMs);
    }

    // How long a runner takes to boot (Node, Playwright loaded) when nothing else of the bench
    // runs: once it exceeds a check's round trip, back-to-back checks wait for the spare.
    const boots: number[] = [];
    for (let i = 0; i < RUNNER_BOOTS; i++) {
      const t0 = performance.now();
      const runner = await BrowserRunner.spawn({
        runtimeDir: RUNTIME_DIR,
        runtimeId: RUNTIME_ID,
        tmpRoot,
        runAs: { uid: REFERENCE_UID, gid: REFERENCE_UID },
      });
      const ready = await runner.ready;
      if (ready) boots.push(performance.now() - t0);
      await runner.dispose();
    }
    const sectionsMs = { memory: memoryMs, startup: performance.now() - startupStarted, throughput: 0 };

    const concurrency = availableParallelism();
    let poolFailures = 0;
    const poolCpu = new CpuWindow(benchUid);
    await poolCpu.start();
    const poolStarted = performance.now();
    await runPool(journeys, concurrency, async () => {
      const { outcome } = await runJob(executors, job('plain', site.origin, false));
      if (failureOf(outcome) !== null) poolFailures++;
    });
    const poolMs = performance.now() - poolStarted;
    const poolCpuMs = await poolCpu.stop();

    // The same journeys straight through a lease's runner: the trace is written but not scrubbed,
    // as in the fresh-browser reference, so the two differ only by the warm browser and runner.
    let leaseFailures = 0;
    const leaseCpu = new CpuWindow(benchUid);
    await leaseCpu.start();
    const leaseStarted = performance.now();
    await runPool(journeys, concurrency, async () => {
      const lease = await pool.acquire(RUNTIME_ID);
      let failed = true;
      try {
        const run = await lease.runner.run(
          runnerPayload(lease.wsEndpoint, script('plain', site.origin, false)),
        );
        failed = run.report?.status !== 'PASSED';
      } finally {
        await lease.release({ browserFailed: false });
      }
      if (failed) leaseFailures++;
    });
    const leaseMs = performance.now() - leaseStarted;
    const leaseCpuMs = await leaseCpu.stop();

    const referenceScript = join(tmpRoot, 'fresh-journey.mjs');
    await writeFile(referenceScript, REFERENCE_SCRIPT, { mode: 0o644 });
    let freshFailures = 0;
    let freshIndex = 0;
    let firstFreshFailure: string | null = null;
    const freshCpu = new CpuWindow(benchUid);
    await freshCpu.start();
    const freshStarted = performance.now();
    await runPool(journeys, concurrency, async () => {
      const failed = await freshJourney(referenceScript, site.origin, join(tmpRoot, `fresh-${freshIndex++}`));
      if (failed !== null) {
        freshFailures++;
        firstFreshFailure ??= failed;
      }
    });
    const freshMs = performance.now() - freshStarted;
    const freshCpuMs = await freshCpu.stop();
    sectionsMs.throughput = performance.now() - poolStarted;
    if (firstFreshFailure !== null) console.log(`a fresh-browser journey failed: ${firstFreshFailure}`);

    const report: BrowserBenchReport = {
      memory,
      startup: {
        runs: startupRuns,
        toFirstStatement: timing(toStart),
        perShapeP50Ms: {
          plain: timing(perShape.plain).p50Ms,
          'multi-step': timing(perShape['multi-step']).p50Ms,
          test: timing(perShape.test).p50Ms,
        },
        acquire: timing(acquireWaits),
        inRunner: timing(inRunner),
        roundTrip: timing(roundTrips),
        runnerBoot: timing(boots),
        failures: startupFailures,
        goal: STARTUP_GOAL,
      },
      throughput: {
        journeys,
        concurrency,
        poolPerMinute: round1((journeys - poolFailures) / (poolMs / 60_000)),
        leasePerMinute: round1((journeys - leaseFailures) / (leaseMs / 60_000)),
        leaseFailures,
        freshPerMinute: round1((journeys - freshFailures) / (freshMs / 60_000)),
        poolFailures,
        freshFailures,
        cpuPerCheckMs: {
          pool: Math.round(poolCpuMs / journeys),
          lease: Math.round(leaseCpuMs / journeys),
          fresh: Math.round(freshCpuMs / journeys),
        },
      },
    };
    print(report);
    const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
    console.log(
      `browser bench took ${seconds(performance.now() - started)} (memory ${seconds(sectionsMs.memory)}, ` +
        `warm overhead ${seconds(sectionsMs.startup)}, checks per minute ${seconds(sectionsMs.throughput)})`,
    );
    return report;
  } finally {
    await pool.close();
    await site.close();
    const left = (await listProcesses()).filter((p) => p.ppid === process.pid && p.state !== 'Z');
    if (left.length > 0) console.log(`warning: ${left.length} child processes outlived the pool`);
    await rm(tmpRoot, { recursive: true, force: true });
  }
}

function printMemoryCell(c: BrowserMemoryCell): void {
  const met = c.failure === null && c.perCheckMiB <= c.goalMiB;
  console.log(
    `  ${c.shape.padEnd(11)}${String(c.concurrent).padStart(3)} at once: idle ${c.idleMiB.toFixed(0).padStart(5)} MiB, busy ${c.busyMiB.toFixed(0).padStart(5)} MiB, ` +
      `${c.perCheckMiB.toFixed(1).padStart(6)} MiB per check (runner ${c.runnerPerCheckMiB.toFixed(1)}, Chromium ${(c.perCheckMiB - c.runnerPerCheckMiB).toFixed(1)}); ` +
      `goal ≤ ${c.goalMiB}: ${met ? 'met' : 'NOT met'}${c.failure ? ` (${c.failure})` : ''}`,
  );
}

function print(r: BrowserBenchReport): void {
  console.log(
    '\nmemory per concurrent browser check, PSS of hosts + runners − idle (host, spare runner), tracing on',
  );
  console.log(
    `${''.padEnd(12)}${[...new Set(r.memory.map((c) => c.concurrent))].map((k) => `${k} at once`.padStart(12)).join('')}${'goal'.padStart(10)}`,
  );
  for (const shape of SHAPES) {
    const cells = r.memory.filter((c) => c.shape === shape);
    const allMet = cells.every((c) => c.failure === null && c.perCheckMiB <= c.goalMiB);
    console.log(
      `${shape.padEnd(12)}${cells.map((c) => `${c.perCheckMiB.toFixed(0)} MiB${c.failure ? '!' : ''}`.padStart(12)).join('')}` +
        `${`≤ ${MEMORY_GOAL_MIB[shape]}`.padStart(10)}  ${allMet ? 'met' : 'NOT met'}`,
    );
  }
  console.log(
    'peers per check, for context: the market leader 1.5 GB, Datadog 1 GiB (! = a check of the cell failed)',
  );
  const s = r.startup;
  console.log(
    `\nwarm overhead, job accepted → first statement (${s.runs} sequential checks, shapes in turn${s.failures ? `, ${s.failures} failed` : ''})`,
  );
  console.log(
    `  p50 ${s.toFirstStatement.p50Ms} ms (goal ≤ ${s.goal.p50Ms}: ${s.toFirstStatement.p50Ms <= s.goal.p50Ms ? 'met' : 'NOT met'}), ` +
      `p95 ${s.toFirstStatement.p95Ms} ms (goal ≤ ${s.goal.p95Ms}: ${s.toFirstStatement.p95Ms <= s.goal.p95Ms ? 'met' : 'NOT met'})`,
  );
  console.log(
    `  of which acquire (slot, ready runner): p50 ${s.acquire.p50Ms} ms, p95 ${s.acquire.p95Ms} ms; ` +
      `in the runner (connect, traced context, page): p50 ${s.inRunner.p50Ms} ms, p95 ${s.inRunner.p95Ms} ms`,
  );
  console.log(
    `  p50 by shape: plain ${s.perShapeP50Ms.plain} ms, multi-step ${s.perShapeP50Ms['multi-step']} ms, test() ${s.perShapeP50Ms.test} ms`,
  );
  console.log(
    `  executor.run round trip (run, trace scrubbed, runner disposed of): p50 ${s.roundTrip.p50Ms} ms, p95 ${s.roundTrip.p95Ms} ms`,
  );
  console.log(
    `  a runner's boot alone (spawn → ready, ${RUNNER_BOOTS} times): p50 ${s.runnerBoot.p50Ms} ms, p95 ${s.runnerBoot.p95Ms} ms` +
      (s.runnerBoot.p50Ms > s.roundTrip.p50Ms
        ? ': longer than a check; the pool keeps one spare per browser slot so checks do not wait for it'
        : ''),
  );
  const t = r.throughput;
  console.log(`\nbrowser checks per minute (${t.journeys} journeys, ${t.concurrency} at once, tracing on)`);
  const cores = t.concurrency;
  const row = (label: string, perMinute: number, failures: number, cpuMs: number) =>
    console.log(
      `  ${label.padEnd(44)}${String(perMinute).padStart(7)} /min${String(cpuMs).padStart(9)} ms` +
        `${String(Math.round((cores * 60_000) / cpuMs)).padStart(10)} /min${failures ? `  (${failures} failed)` : ''}`,
    );
  console.log(
    `  ${''.padEnd(44)}${'measured'.padStart(12)}${'CPU/check'.padStart(12)}${`${cores} cores busy`.padStart(15)}`,
  );
  row('warm pool + executor (trace scrubbed)', t.poolPerMinute, t.poolFailures, t.cpuPerCheckMs.pool);
  row('warm pool, the runner alone (not scrubbed)', t.leasePerMinute, t.leaseFailures, t.cpuPerCheckMs.lease);
  row('fresh node + chromium.launch per check', t.freshPerMinute, t.freshFailures, t.cpuPerCheckMs.fresh);
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log(
    `  ratio to fresh, measured: pool + executor ${ratio(t.poolPerMinute, t.freshPerMinute)}×, runner alone ${ratio(t.leasePerMinute, t.freshPerMinute)}×; ` +
      `by CPU per check: pool + executor ${ratio(t.cpuPerCheckMs.fresh, t.cpuPerCheckMs.pool)}×, runner alone ${ratio(t.cpuPerCheckMs.fresh, t.cpuPerCheckMs.lease)}×`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const journeys = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
  await benchBrowser(journeys === undefined ? {} : { journeys });
}
