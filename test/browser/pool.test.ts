import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import { IdentityPool } from '../../src/browser/identities.js';
import {
  type BrowserLease,
  BrowserPool,
  type BrowserPoolOptions,
  type PooledRunner,
  type RunnerSpawnOptions,
} from '../../src/browser/pool.js';
import { BrowserRunner } from '../../src/browser/runner-process.js';
import { hasCode } from '../../src/common/errors.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { processesUnder, until } from '../helpers/processes.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import { payloadFor } from './runner-harness.js';

/**
 * The agent's browser pool with real hosts (Chromium of runtime 2026.04): admission by
 * concurrency and by memory headroom, host recycling with draining, the spare runner, the
 * runtime compatibility check, aborts, and many leases leaving no process behind. Runners are
 * stand-ins (one `sleep` process each, spawned like a runner) except where the real
 * BrowserRunner runs a check through a lease.
 */
const RUNTIME_ID = '2026.04';
const RUNTIME_DIR = join(PACKAGE_ROOT, 'runtimes', RUNTIME_ID);
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement(RUNTIME_ID)]);
const MiB = 1024 * 1024;

/** Settles to 'pending' when `promise` has not settled within `ms`. */
async function stateAfter<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([
    promise,
    new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms)),
  ]);
}

/** A stand-in runner: one `sleep` process, detached and of its uid like a real runner. */
class SleepRunner implements PooledRunner {
  static started = 0;
  readonly pid: number | undefined;
  readonly ready: Promise<boolean>;
  #child: ChildProcess;
  #exited = false;
  #closed: Promise<void>;
  constructor(options: RunnerSpawnOptions) {
    SleepRunner.started++;
    this.#child = spawn('sleep', ['300'], {
      // In the test's folder, by which the test finds its processes.
      cwd: options.tmpRoot,
      detached: true,
      stdio: 'ignore',
      ...(options.runAs === null ? {} : { uid: options.runAs.uid, gid: options.runAs.gid }),
    });
    this.pid = this.#child.pid;
    this.#closed = new Promise((resolve) => this.#child.once('close', () => resolve()));
    void this.#closed.then(() => {
      this.#exited = true;
    });
    this.ready = new Promise((resolve) => {
      this.#child.once('spawn', () => resolve(true));
      this.#child.once('error', () => resolve(false));
    });
  }
  get alive(): boolean {
    return !this.#exited;
  }
  async dispose(): Promise<void> {
    if (this.pid !== undefined && !this.#exited) {
      try {
        process.kill(-this.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await this.#closed;
  }
}

describe('browser identities', () => {
  it.skipIf(process.getuid?.() !== 0)(
    'hands out each uid of the range once until it is released and reaped, then fails clearly',
    async () => {
      const ids = new IdentityPool({ first: 63_900, count: 3 });
      const taken = [ids.take(), ids.take(), ids.take()];
      expect(taken.map((id) => id?.uid).sort()).toEqual([63_900, 63_901, 63_902]);
      expect(taken.every((id) => id?.gid === id?.uid)).toBe(true);
      expect(() => ids.take()).toThrow(/all 3 browser uids from 63900 are in use/);
      await ids.release(taken.find((id) => id?.uid === 63_901) ?? null);
      expect(ids.take()?.uid).toBe(63_901);
      expect(ids.inUse).toBe(3);
      // Never root's, the agent's or a system account's uid.
      expect(() => new IdentityPool({ first: 0, count: 1 })).toThrow(/integers from 1000/);
    },
  );

  it.skipIf(process.getuid?.() !== 0)(
    'skips a uid that a live process of someone else has (another pool)',
    async () => {
      // Whoever closes a host or a suite kills every process of its uid: two pools must not share one.
      const other = spawn('sleep', ['30'], { uid: 63_950, gid: 63_950, stdio: 'ignore' });
      try {
        await new Promise((resolve) => other.once('spawn', resolve));
        const ids = new IdentityPool({ first: 63_950, count: 2 });
        expect(ids.take()?.uid).toBe(63_951);
        expect(() => ids.take()).toThrow(/all 2 browser uids from 63950 are in use/);
      } finally {
        other.kill('SIGKILL');
      }
    },
  );
});

describe.skipIf(skip)('browser pool', () => {
  const runtimeRequire = createRequire(join(RUNTIME_DIR, 'package.json'));
  let chromium: PlaywrightCore.BrowserType;
  let tmpRoot: string;
  let pool: BrowserPool<PooledRunner> | null = null;

  beforeAll(() => {
    chromium = (runtimeRequire('playwright-core') as typeof PlaywrightCore).chromium;
    tmpRoot = mkdtempSync(join(tmpdir(), 'outpost-pool-test-'));
    // The browser uids must reach their temp dirs inside it.
    chmodSync(tmpRoot, 0o755);
  });

  afterAll(() => {
    rmSync(tmpRoot, { recursive: true, force: true });
  });

  afterEach(async () => {
    await pool?.close();
    pool = null;
    await until('no process of the pool is left', () => processesUnder(tmpRoot).length === 0, 5_000).catch(
      () => {},
    );
    expect(processesUnder(tmpRoot), 'processes of the pool left behind').toEqual([]);
    expect(readdirSync(tmpRoot), 'temp dirs left behind').toEqual([]);
  });

  function newPool(options: Partial<BrowserPoolOptions<PooledRunner>> = {}): BrowserPool<PooledRunner> {
    pool = new BrowserPool<PooledRunner>({
      createRunner: async (o) => new SleepRunner(o),
      tmpRoot,
      readHeadroom: async () => null,
      // One spare, so the counts of started runners below are exact (the default is one per slot).
      spareRunners: 1,
      ...options,
    });
    return pool;
  }

  async function pageWorks(wsEndpoint: string): Promise<boolean> {
    const browser = await chromium.connect(wsEndpoint, { timeout: 10_000 });
    try {
      const page = await browser.newPage();
      await page.goto('data:text/html,<p id="p">ok</p>');
      return (await page.textContent('#p')) === 'ok';
    } finally {
      await browser.close();
    }
  }

  it('passes the compatibility check of runtime 2026.04 and runs a check through a lease with a real runner', async () => {
    const runners: BrowserRunner[] = [];
    const p = newPool({
      createRunner: async (o) => {
        const runner = await BrowserRunner.spawn(o);
        runners.push(runner);
        return runner;
      },
    });
    const check = await p.checkRuntime(RUNTIME_ID);
    console.info(`compatibility check of ${RUNTIME_ID}: ${Math.round(check.durationMs)} ms`);
    expect(check).toMatchObject({ ok: true, reason: null, runtimeId: RUNTIME_ID });
    expect(check.browserVersion).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const lease = (await p.acquire(RUNTIME_ID)) as BrowserLease<BrowserRunner>;
    // The host started by the check is the one leased: no second Chromium.
    expect(p.status().runtimes[0]?.hosts).toHaveLength(1);
    const outcome = await lease.runner.run(
      payloadFor(
        lease.wsEndpoint,
        "await page.goto('data:text/html,<h1>pooled</h1>'); expect(await page.textContent('h1')).toBe('pooled');",
      ),
    );
    expect(outcome.report?.status, JSON.stringify(outcome).slice(0, 2000)).toBe('PASSED');
    expect(outcome.report?.versions.browser).toBe(lease.browserVersion);
    await lease.release({ browserFailed: false });
    // A spare runner was started as the lease was taken: the next check does not wait for Node.
    expect(runners).toHaveLength(2);
    const spare = runners.find((runner) => runner !== lease.runner);
    expect(await spare?.ready).toBe(true);
    const t0 = performance.now();
    const next = (await p.acquire(RUNTIME_ID)) as BrowserLease<BrowserRunner>;
    const waitedMs = performance.now() - t0;
    console.info(`second lease (spare runner) in ${Math.round(waitedMs)} ms`);
    expect(next.runner).toBe(spare);
    expect(waitedMs).toBeLessThan(100);
    expect(next.runner.alive).toBe(true);
    await next.release({ browserFailed: false });
  });

  it('admits at most browserConcurrency checks; the next waits for a release', async () => {
    const p = newPool({ browserConcurrency: 2 });
    const a = await p.acquire(RUNTIME_ID);
    const b = await p.acquire(RUNTIME_ID);
    const third = p.acquire(RUNTIME_ID);
    const fourth = p.acquire(RUNTIME_ID);
    expect(await stateAfter(third, 300)).toBe('pending');
    expect(p.status()).toMatchObject({ concurrency: 2, running: 2, waiting: 2 });
    expect(await p.hasCapacity(RUNTIME_ID)).toBe(false);
    await a.release({ browserFailed: false });
    const c = await third;
    expect(await stateAfter(fourth, 200)).toBe('pending');
    await b.release({ browserFailed: false });
    const d = await fourth;
    expect(p.status()).toMatchObject({ running: 2, waiting: 0 });
    // Every lease of the runtime shares its one warm host.
    expect(new Set([a, b, c, d].map((l) => l.wsEndpoint)).size).toBe(1);
    await c.release({ browserFailed: false });
    await d.release({ browserFailed: false });
    expect(p.status()).toMatchObject({ running: 0, waiting: 0 });
    expect(await p.hasCapacity(RUNTIME_ID)).toBe(true);
    expect(await p.hasCapacity('not-installed')).toBe(false);
  });

  it('waits for memory headroom, then admits once there is enough', async () => {
    let headroom = 400 * MiB; // less than 300 MiB per check + 256 MiB reserve
    const p = newPool({
      readHeadroom: async () => headroom,
      memoryRetryMs: 50,
      memorySettleMs: 0,
    });
    const pending = p.acquire(RUNTIME_ID);
    expect(await stateAfter(pending, 300)).toBe('pending');
    expect(p.status()).toMatchObject({ running: 0, waiting: 1, waitingForMemory: true });
    expect(await p.hasCapacity(RUNTIME_ID)).toBe(false);
    headroom = 600 * MiB;
    const lease = await pending;
    expect(p.status()).toMatchObject({ running: 1, waiting: 0, waitingForMemory: false });
    await lease.release({ browserFailed: false });
    expect(await p.hasCapacity(RUNTIME_ID)).toBe(true);
    headroom = 500 * MiB;
    expect(await p.hasCapacity(RUNTIME_ID)).toBe(false);
  });

  it('counts checks admitted moments ago against the headroom', async () => {
    const p = newPool({ readHeadroom: async () => 700 * MiB, memoryRetryMs: 50, memorySettleMs: 800 });
    // 700 MiB covers one check (300 + 256 reserve) but not a second (600 + 256) before the first shows up in it.
    const first = await p.acquire(RUNTIME_ID);
    const t0 = performance.now();
    const second = await p.acquire(RUNTIME_ID);
    expect(performance.now() - t0).toBeGreaterThan(500);
    await first.release({ browserFailed: false });
    await second.release({ browserFailed: false });
  });

  it('recycles a host after maxChecksPerHost while its running leases keep working', async () => {
    const p = newPool({ maxChecksPerHost: 2, browserConcurrency: 4 });
    const one = await p.acquire(RUNTIME_ID);
    const two = await p.acquire(RUNTIME_ID);
    expect(two.wsEndpoint).toBe(one.wsEndpoint);
    const three = await p.acquire(RUNTIME_ID);
    expect(three.wsEndpoint).not.toBe(one.wsEndpoint);
    const status = p.status().runtimes[0];
    expect(status?.hosts.map((h) => h.state).sort()).toEqual(['draining', 'ready']);
    expect(status?.hosts.find((h) => h.state === 'draining')?.reason).toMatch(/ran 2 checks/);
    // The draining host still serves the checks on it.
    expect(await pageWorks(one.wsEndpoint)).toBe(true);
    expect(await pageWorks(three.wsEndpoint)).toBe(true);
    await one.release({ browserFailed: false });
    expect(await pageWorks(two.wsEndpoint)).toBe(true);
    await two.release({ browserFailed: false });
    await until('the drained host is closed', () => p.status().runtimes[0]?.hosts.length === 1);
    await expect(chromium.connect(one.wsEndpoint, { timeout: 2_000 })).rejects.toThrow();
    await three.release({ browserFailed: false });
  });

  it('replaces a host whose PSS passes maxHostPssMiB', async () => {
    const p = newPool({ maxHostPssMiB: 1, pssIntervalMs: 200 });
    const lease = await p.acquire(RUNTIME_ID);
    await until('the host was replaced for its PSS', () => (p.status().runtimes[0]?.replacements ?? 0) >= 1);
    const draining = p.status().runtimes[0]?.hosts.find((h) => h.state === 'draining');
    expect(draining?.reason).toMatch(/PSS/);
    expect(draining?.pssBytes).toBeGreaterThan(MiB);
    await lease.release({ browserFailed: false });
  });

  it('rejects a waiting acquire when its signal aborts, and a runtime that failed its compatibility check', async () => {
    const p = newPool({ browserConcurrency: 1 });
    const held = await p.acquire(RUNTIME_ID);
    const controller = new AbortController();
    const waiting = p.acquire(RUNTIME_ID, { signal: controller.signal });
    expect(await stateAfter(waiting, 100)).toBe('pending');
    controller.abort(new Error('job cancelled'));
    const err = await waiting.catch((e: unknown) => e);
    expect(hasCode(err, 'OUTPOST_ERR_ABORTED')).toBe(true);
    expect(p.status().waiting).toBe(0);
    await held.release({ browserFailed: false });

    // A runtime without Playwright: its host cannot start.
    const runtimes = join(tmpRoot, 'runtimes');
    mkdirSync(join(runtimes, 'broken', 'node_modules'), { recursive: true });
    chmodSync(runtimes, 0o755);
    try {
      const other = new BrowserPool<PooledRunner>({
        createRunner: async (o) => new SleepRunner(o),
        runtimesDir: runtimes,
        tmpRoot,
        readHeadroom: async () => null,
      });
      try {
        const check = await other.checkRuntime('broken');
        expect(check.ok).toBe(false);
        expect(check.reason).toMatch(/playwright-core/);
        expect(other.status().runtimes[0]).toMatchObject({ runtimeId: 'broken', available: false });
        expect(await other.hasCapacity('broken')).toBe(false);
        await expect(other.acquire('broken')).rejects.toThrow(
          /runtime broken is unavailable: .*playwright-core/,
        );
        await expect(other.acquire('missing')).rejects.toThrow(/not installed/);
      } finally {
        await other.close();
      }
    } finally {
      rmSync(runtimes, { recursive: true, force: true });
    }
  });

  it('keeps spareRunners started runners (the default is one per browser slot), so back-to-back checks do not wait for Node', async () => {
    const startedBefore = SleepRunner.started;
    const p = newPool({ browserConcurrency: 2, spareRunners: 2 });
    const first = await p.acquire(RUNTIME_ID);
    // The runner handed out, and two spares started behind it.
    await until('two spares started', () => SleepRunner.started - startedBefore === 3, 5_000);
    const second = await p.acquire(RUNTIME_ID);
    expect(second.runner).not.toBe(first.runner);
    expect(await second.runner.ready).toBe(true);
    await Promise.all([first.release({ browserFailed: false }), second.release({ browserFailed: false })]);
  });

  it('gives each account a host of its own, keeps at most maxHosts up and closes one idle for hostIdleMs', async () => {
    const p = newPool({ browserConcurrency: 4, maxHosts: 2, hostIdleMs: 1_500 });
    const a = await p.acquire(RUNTIME_ID, { accountId: 'a' });
    const b = await p.acquire(RUNTIME_ID, { accountId: 'b' });
    const b2 = await p.acquire(RUNTIME_ID, { accountId: 'b' });
    expect(b2.wsEndpoint).toBe(b.wsEndpoint);
    expect(a.wsEndpoint).not.toBe(b.wsEndpoint);
    // Both hosts run checks and the bound is reached: a third account waits for one to be idle.
    const c = p.acquire(RUNTIME_ID, { accountId: 'c' });
    expect(await stateAfter(c, 500)).toBe('pending');
    expect(p.status()).toMatchObject({ liveHosts: 2, maxHosts: 2 });
    await a.release({ browserFailed: false });
    // a's host, idle now and the least recently used, is closed to make room.
    const leaseC = await c;
    const serving = () =>
      (p.status().runtimes[0]?.hosts ?? [])
        .filter((h) => h.state !== 'draining')
        .map((h) => h.accountId)
        .sort();
    expect(serving()).toEqual(['b', 'c']);
    await expect(chromium.connect(a.wsEndpoint, { timeout: 2_000 })).rejects.toThrow();
    await Promise.all([b, b2, leaseC].map((lease) => lease.release({ browserFailed: false })));
    // Closed once idle for hostIdleMs; not counted as replacements.
    await until('idle hosts are closed', () => p.status().runtimes[0]?.hosts.length === 0, 10_000);
    expect(p.status().runtimes[0]?.replacements).toBe(0);
    // The next check of an account starts a host again.
    const again = await p.acquire(RUNTIME_ID, { accountId: 'a' });
    expect(await pageWorks(again.wsEndpoint)).toBe(true);
    await again.release({ browserFailed: false });
  });

  it('prepares a spare runner for its account only, and never hands it to another account', async () => {
    const prepared = new Map<PooledRunner, string>();
    const p = newPool({
      spareRunners: 2,
      createRunner: async (o) => {
        const runner = new SleepRunner(o) as SleepRunner & { prepare(ws: string): void };
        runner.prepare = (ws) => prepared.set(runner, ws);
        return runner;
      },
    });
    const a = await p.acquire(RUNTIME_ID, { accountId: 'a' });
    await a.release({ browserFailed: false });
    await until(
      'a spare is prepared for account a',
      () => [...prepared.values()].includes(a.wsEndpoint),
      5_000,
    );
    const b = await p.acquire(RUNTIME_ID, { accountId: 'b' });
    expect(prepared.get(b.runner)).toBeUndefined();
    const a2 = await p.acquire(RUNTIME_ID, { accountId: 'a' });
    expect(prepared.get(a2.runner)).toBe(a.wsEndpoint);
    await Promise.all([b, a2].map((lease) => lease.release({ browserFailed: false })));
  });

  it('100 acquire/release cycles with host recycling leave no process behind', async () => {
    const startedBefore = SleepRunner.started;
    const p = newPool({ browserConcurrency: 4, maxChecksPerHost: 40 });
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < 100) {
        next++;
        const lease = await p.acquire(RUNTIME_ID);
        await new Promise((resolve) => setTimeout(resolve, 5));
        await lease.release({ browserFailed: false });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    console.info(`100 leases in ${Math.round(performance.now() - t0)} ms`);
    expect(p.status().runtimes[0]?.replacements).toBe(2);
    // One runner per lease, plus the spare.
    expect(SleepRunner.started - startedBefore).toBe(101);
    await until('drained hosts are closed', () => p.status().runtimes[0]?.hosts.length === 1);
    await p.close();
    // afterEach checks that no process and no temp dir is left.
  });
});
