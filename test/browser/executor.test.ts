import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../src/browser/pool.js';
import { BrowserRunner } from '../../src/browser/runner-process.js';
import { BrowserExecutor, FINISH_RESERVE_MS } from '../../src/checks/browser/index.js';
import type { RunArtifactFile } from '../../src/checks/executor.js';
import type { Job, RunOutcome } from '../../src/protocol/index.js';
import { processesUnder } from '../helpers/processes.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import { unzip } from './formats.js';
import { type Loopback, serve } from './runner-harness.js';

/**
 * The browser executor on a real pool (warm host, pre-started runners): runs that go wrong in
 * every way a browser can — a page stuck in `while(true){}`, a server that never answers, Chromium
 * SIGKILLed and SIGSTOPped mid-run — each report by the job's deadline + 5 s (the dispatcher's
 * grace after its signal), with a partial trace where one exists; the browser is replaced and the
 * next check passes; nothing is left running at the end.
 */
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement('2026.04')]);

/** The dispatcher's grace after a job's signal (ABANDON_AFTER_ABORT_MS): the promise every run keeps. */
const REPORT_GRACE_MS = 5_000;

const PASSING = [
  "import { test, expect } from '@playwright/test';",
  "test('home', async ({ page }) => {",
  '  await page.goto(process.env.SITE + "/");',
  "  await expect(page.locator('h1')).toHaveText('Hello');",
  '});',
].join('\n');

let site: Loopback;
let root: string;
let pool: BrowserPool<BrowserRunner>;
let executor: BrowserExecutor;
const hung: NodeJS.Timeout[] = [];

function job(script: string, timeoutMs: number, n: number): Job {
  return {
    jobId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    accountId: '00000000-0000-4000-8000-00000000000a',
    check: {
      id: '00000000-0000-4000-8000-00000000000c',
      name: 'fault',
      checkType: 'BROWSER',
      request: { script, dependencies: [], sslCheckDomain: null },
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: '2026.04',
    },
    environmentVariables: [{ key: 'SITE', value: site.origin, secret: false }],
    runLocation: 'lab',
    runSource: 'TRIGGER_API',
    checkSessionId: null,
    attempt: 1,
    timeoutMs,
    leaseMs: 60_000,
  };
}

let jobs = 0;

/** Runs one job as the dispatcher does (its signal fires at timeoutMs) and reads its artifacts. */
async function run(
  script: string,
  timeoutMs: number,
  during?: () => Promise<void>,
): Promise<{ outcome: RunOutcome; elapsedMs: number; files: Map<string, Buffer> }> {
  const attached: RunArtifactFile[] = [];
  let release: () => Promise<void> = async () => {};
  const t0 = performance.now();
  const running = executor.run(job(script, timeoutMs, ++jobs), {
    signal: AbortSignal.timeout(timeoutMs),
    log: pino({ level: 'silent' }),
    attachArtifacts: (files, done) => {
      attached.push(...files);
      release = done;
    },
  });
  await during?.();
  const outcome = await running;
  const elapsedMs = performance.now() - t0;
  const files = new Map(attached.map((f) => [f.name, readFileSync(f.path)]));
  await release();
  return { outcome, elapsedMs, files };
}

/** `gone`, or the state letter of process `pid` (`Z` for a zombie, `T` for stopped, …). */
function liveState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return 'gone';
  }
}

/** The main Chromium process of the pool's current host (the one whose parent is the host child). */
function chromiumOfHost(): number {
  const host = pool.status().runtimes[0]?.hosts.find((h) => h.state === 'ready');
  if (!host?.pid) throw new Error('no ready host');
  for (const p of processesUnder(root)) {
    if (p.ppid === host.pid && readFileSync(`/proc/${p.pid}/cmdline`, 'latin1').includes('chromium'))
      return p.pid;
  }
  throw new Error(`no Chromium under host ${host.pid}`);
}

describe.skipIf(skip !== null)('browser executor: runs that go wrong still report', () => {
  beforeAll(async () => {
    site = await serve((req, res) => {
      if (req.url === '/never') {
        // Holds the request open: the page's navigation never completes.
        hung.push(setTimeout(() => res.end(), 120_000));
        return;
      }
      if (req.url === '/spin') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><h1>Spinning</h1><script>setTimeout(() => { while (true) {} }, 50)</script>');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Home</title><h1>Hello</h1>');
    });
    // The pool's processes run as other uids when this is root: their temp dirs' parent must be open to them.
    root = mkdtempSync(join(tmpdir(), 'outpost-executor-'));
    chmodSync(root, 0o755);
    pool = new BrowserPool<BrowserRunner>({
      createRunner: (options) => BrowserRunner.spawn(options),
      tmpRoot: root,
      browserConcurrency: 2,
      readHeadroom: async () => null,
    });
    executor = new BrowserExecutor({ checkType: 'BROWSER', pool, tmpRoot: root });
    expect((await pool.checkRuntime('2026.04')).ok).toBe(true);
  }, 60_000);

  afterAll(async () => {
    for (const timer of hung) clearTimeout(timer);
    await pool?.close();
    await site?.close();
    // Every host, Chromium and runner of the pool ran with its temp dir under root: none is left.
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  it('a passing check: PASSED with a trace', async () => {
    const { outcome, files } = await run(PASSING, 30_000);
    expect(outcome.status, outcome.errorMessage ?? '').toBe('PASSED');
    expect(outcome.browserCheckResult?.startupMs).toEqual(expect.any(Number));
    expect(unzip(files.get('trace.zip') ?? Buffer.alloc(0)).has('trace.trace')).toBe(true);
  }, 60_000);

  it.each([
    ['a page stuck in while(true){}', '/spin', 'await page.waitForTimeout(60_000);'],
    ['a server that never answers', '/never', ''],
  ])(
    '%s: FAILED, timed out, by the deadline + 5 s, with a partial trace',
    async (_name, path, then) => {
      const script = `await page.goto(process.env.SITE + '${path}');\n${then}`;
      const timeoutMs = 12_000;
      const { outcome, elapsedMs, files } = await run(script, timeoutMs);
      expect(elapsedMs).toBeLessThan(timeoutMs + REPORT_GRACE_MS);
      expect(outcome.status).toBe('FAILED');
      expect(outcome.browserCheckResult?.timedOut).toBe(true);
      expect(outcome.errorMessage).toMatch(/timed? ?out|Timeout/i);
      expect(unzip(files.get('trace.zip') ?? Buffer.alloc(0)).has('trace.trace')).toBe(true);
      // The next check on the same pool still passes.
      expect((await run(PASSING, 30_000)).outcome.status).toBe('PASSED');
    },
    90_000,
  );

  it('Chromium SIGKILLed mid-run: the run reports an error by its deadline + 5 s, the browser is replaced', async () => {
    const replacedBefore = pool.status().runtimes[0]?.replacements ?? 0;
    const timeoutMs = 15_000;
    const { outcome, elapsedMs } = await run(
      "await page.goto(process.env.SITE + '/');\nawait page.waitForTimeout(60_000);",
      timeoutMs,
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        process.kill(chromiumOfHost(), 'SIGKILL');
      },
    );
    expect(elapsedMs).toBeLessThan(timeoutMs + REPORT_GRACE_MS);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.errorMessage).toMatch(/closed|disconnected|crash|browser/i);
    const next = (await run(PASSING, 30_000)).outcome;
    expect(next.status, `${next.errorMessage} ${JSON.stringify(next.browserCheckResult?.errors)}`).toBe(
      'PASSED',
    );
    expect(pool.status().runtimes[0]?.replacements).toBeGreaterThan(replacedBefore);
  }, 90_000);

  it('Chromium SIGSTOPped mid-run: the run reports by its deadline + 5 s, a fresh browser runs the next check', async () => {
    const replacedBefore = pool.status().runtimes[0]?.replacements ?? 0;
    const timeoutMs = 12_000;
    let stopped = 0;
    const { outcome, elapsedMs } = await run(
      "await page.goto(process.env.SITE + '/');\nawait page.waitForTimeout(60_000);",
      timeoutMs,
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        stopped = chromiumOfHost();
        process.kill(stopped, 'SIGSTOP');
      },
    );
    expect(elapsedMs).toBeLessThan(timeoutMs + REPORT_GRACE_MS);
    expect(outcome.status).toBe('FAILED');
    expect((await run(PASSING, 30_000)).outcome.status).toBe('PASSED');
    expect(pool.status().runtimes[0]?.replacements).toBeGreaterThan(replacedBefore);
    // The stopped browser was killed with its host when it was replaced: gone, or a zombie left for
    // init to reap (its parent, the host, died first; in the images tini reaps it).
    await expect.poll(() => liveState(stopped), { timeout: 10_000 }).toMatch(/^(gone|Z)$/);
  }, 90_000);

  it('withholds the whole output, artifacts included, of a run with more secrets than the scrubber can search', async () => {
    const many = job(
      `console.log(process.env.S_0); await page.goto(process.env.SITE + '/');`,
      30_000,
      ++jobs,
    );
    many.environmentVariables.push(
      ...Array.from({ length: 300 }, (_, i) => ({
        key: `S_${i}`,
        value: `planted-secret-${i}-xyz`,
        secret: true,
      })),
    );
    const attached: RunArtifactFile[] = [];
    const outcome = await executor.run(many, {
      signal: AbortSignal.timeout(30_000),
      log: pino({ level: 'silent' }),
      attachArtifacts: (files, release) => {
        attached.push(...files);
        void release();
      },
    });
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: true });
    expect(outcome.errorMessage).toMatch(/^output withheld/);
    expect(attached).toEqual([]);
    expect(JSON.stringify(outcome)).not.toContain('planted-secret-0-xyz');
  }, 60_000);

  it('keeps FINISH_RESERVE_MS for capture and scrubbing within the dispatcher grace', () => {
    expect(FINISH_RESERVE_MS).toBeLessThan(REPORT_GRACE_MS);
  });
});
