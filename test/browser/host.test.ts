import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import { BrowserHost } from '../../src/browser/host.js';
import { DEFAULT_BROWSER_UIDS, IdentityPool } from '../../src/browser/identities.js';
import { BrowserPool, type PooledRunner, type RunnerSpawnOptions } from '../../src/browser/pool.js';
import { compiledChildPath } from '../../src/common/compiled-child.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { killGroup } from '../../src/common/process-tree.js';
import { processes, processesUnder, until } from '../helpers/processes.js';
import {
  CHROMIUM_PATH,
  chromiumRequirement,
  missingRequirement,
  runtimeRequirement,
} from '../helpers/requirements.js';

/**
 * The browser host: one warm Chromium of runtime 2026.04 behind Playwright's `launchServer`, in a
 * child process of its own (as an unprivileged uid when the tests run as root), and how the pool
 * notices and replaces a host whose Chromium is killed or which hangs (SIGSTOP). Every test
 * checks that no process of the hosts is left.
 */
const RUNTIME_ID = '2026.04';
const RUNTIME_DIR = join(PACKAGE_ROOT, 'runtimes', RUNTIME_ID);
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement(RUNTIME_ID)]);
const isRoot = process.getuid?.() === 0;

/** The pids below `pid` (children, grandchildren, …). */
function descendants(pid: number): number[] {
  const all = processes();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const p of all) {
      if (p.ppid === parent) {
        found.push(p.pid);
        queue.push(p.pid);
      }
    }
  }
  return found;
}

/** A stand-in runner: one `sleep` process, detached and of its uid like a real runner. */
class SleepRunner implements PooledRunner {
  readonly pid: number | undefined;
  readonly ready: Promise<boolean>;
  #child: ChildProcess;
  #exited = false;
  #closed: Promise<void>;
  constructor(options: RunnerSpawnOptions) {
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

describe.skipIf(skip)('browser host of runtime 2026.04', () => {
  const runtimeRequire = createRequire(join(RUNTIME_DIR, 'package.json'));
  let chromium: PlaywrightCore.BrowserType;
  let tmpRoot: string;
  const identities = new IdentityPool(DEFAULT_BROWSER_UIDS);

  beforeAll(() => {
    chromium = (runtimeRequire('playwright-core') as typeof PlaywrightCore).chromium;
    tmpRoot = mkdtempSync(join(tmpdir(), 'outpost-host-test-'));
    // The hosts' uids must reach their temp dirs inside it.
    chmodSync(tmpRoot, 0o755);
  });

  afterAll(() => {
    rmSync(tmpRoot, { recursive: true, force: true });
  });

  afterEach(async () => {
    await until('no host process is left', () => processesUnder(tmpRoot).length === 0, 5_000).catch(() => {});
    expect(processesUnder(tmpRoot), 'processes of browser hosts left behind').toEqual([]);
    expect(readdirSync(tmpRoot), 'temp dirs left behind').toEqual([]);
  });

  async function startHost(): Promise<{ host: BrowserHost; failures: string[] }> {
    const failures: string[] = [];
    const runAs = identities.take();
    const host = await BrowserHost.start({
      runtimeDir: RUNTIME_DIR,
      runtimeId: RUNTIME_ID,
      tmpRoot,
      runAs,
      onFailure: (reason) => failures.push(reason),
    });
    void host.exited.then(() => identities.release(runAs));
    return { host, failures };
  }

  it('starts Chromium as an unprivileged user; a client connects to wsEndpoint, runs a page and records a video', async () => {
    const t0 = performance.now();
    const { host, failures } = await startHost();
    try {
      console.info(`host ready in ${Math.round(performance.now() - t0)} ms, Chromium ${host.browserVersion}`);
      expect(host.wsEndpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{64}$/);
      expect(host.playwrightVersion).toBe(
        (runtimeRequire('playwright-core/package.json') as { version: string }).version,
      );
      if (isRoot) {
        expect(statSync(`/proc/${host.pid}`).uid).toBe(host.runAs?.uid);
        expect(statSync(`/proc/${host.browserPid}`).uid).toBe(host.runAs?.uid);
        expect(host.runAs?.uid).toBeGreaterThanOrEqual(DEFAULT_BROWSER_UIDS.first);
      }
      // Only what Chromium needs reaches the host: no variable of the agent.
      const env = readFileSync(`/proc/${host.pid}/environ`, 'latin1').split('\0').filter(Boolean);
      const names = env.map((e) => e.split('=')[0]).filter((name) => name !== 'PWD'); // PWD: /bin/sh's own
      expect(names.sort()).toEqual(['CHROMIUM_PATH', 'HOME', 'PATH', 'TMPDIR']);

      const browser = await chromium.connect(host.wsEndpoint);
      try {
        expect(browser.version()).toBe(host.browserVersion);
        const videos = mkdtempSync(join(tmpdir(), 'outpost-host-video-'));
        try {
          const video = existsSync('/usr/bin/ffmpeg');
          const context = await browser.newContext(
            video ? { recordVideo: { dir: videos, size: { width: 320, height: 240 } } } : {},
          );
          const page = await context.newPage();
          await page.goto('data:text/html,<h1 id="h">hello</h1>');
          expect(await page.textContent('#h')).toBe('hello');
          await page.waitForTimeout(300);
          await context.close();
          if (video) {
            expect(host.videoNote).toBeNull();
            const saved = join(videos, 'saved.webm');
            await page.video()?.saveAs(saved);
            // WebM (Matroska) starts with the EBML magic number.
            expect(readFileSync(saved).subarray(0, 4).toString('hex')).toBe('1a45dfa3');
          } else {
            console.warn('skipping the video part: /usr/bin/ffmpeg is missing (apt-get install ffmpeg)');
          }
        } finally {
          rmSync(videos, { recursive: true, force: true });
        }
      } finally {
        await browser.close();
      }
      await expect(host.selfTest(10_000)).resolves.toBeUndefined();
      expect(await host.checkHealth()).toBe(true);
      const pss = await host.pssBytes();
      console.info(`host PSS ${Math.round((pss ?? 0) / 1048576)} MiB`);
      expect(pss).toBeGreaterThan(20 * 1048576);
      expect(pss).toBeLessThan(2048 * 1048576);
      expect(failures).toEqual([]);
    } finally {
      await host.close();
    }
    expect(failures).toEqual([]);
    expect(existsSync(host.tmpDir)).toBe(false);
  });

  it('refuses a connection at another path, and does not tell its path over HTTP', async () => {
    const { host } = await startHost();
    try {
      const url = new URL(host.wsEndpoint);
      await expect(
        chromium.connect(`ws://${url.host}/${'0'.repeat(64)}`, { timeout: 5_000 }),
      ).rejects.toThrow(/400|Bad Request|closed|socket/i);
      for (const path of ['/json', '/', url.pathname]) {
        const response = await fetch(`http://${url.host}${path}`);
        const body = await response.text();
        expect(response.status, `GET ${path}`).toBe(404);
        expect(body).not.toContain(url.pathname.slice(1));
      }
      // The host still serves the right path after the refusals.
      const browser = await chromium.connect(host.wsEndpoint);
      await browser.close();
    } finally {
      await host.close();
    }
  });

  it("keeps a connection away from other connections' pages (no browser-wide CDP or tracing, no Target commands)", async () => {
    const { host } = await startHost();
    const victim = await chromium.connect(host.wsEndpoint);
    const attacker = await chromium.connect(host.wsEndpoint);
    try {
      const page = await (await victim.newContext()).newPage();
      await page.goto('data:text/html,<input id="pw" value="SECRET-VALUE">');
      expect(attacker.contexts()).toEqual([]);
      await expect(attacker.newBrowserCDPSession()).rejects.toThrow(/not available: the browser is shared/);
      await expect(attacker.startTracing()).rejects.toThrow(/not available/);
      const own = await (await attacker.newContext()).newPage();
      const session = await own.context().newCDPSession(own);
      // Its own page's CDP works …
      const evaluated = await session.send('Runtime.evaluate', { expression: '6 * 7', returnByValue: true });
      expect(evaluated.result.value).toBe(42);
      // … but nothing reaching other targets or the whole browser.
      for (const method of ['Target.getTargets', 'Target.attachToBrowserTarget', 'Browser.crash'] as const) {
        await expect(session.send(method), method).rejects.toThrow(/not available: the browser is shared/);
      }
      await expect(session.send('Storage.getCookies', {})).rejects.toThrow(/not available/);
      expect(await page.inputValue('#pw')).toBe('SECRET-VALUE');
      expect(await host.checkHealth()).toBe(true);
    } finally {
      await attacker.close();
      await victim.close();
      await host.close();
    }
  });

  it('close leaves no process of the host, Chromium or its helpers, even when Chromium was busy', async () => {
    const { host } = await startHost();
    const browser = await chromium.connect(host.wsEndpoint);
    const page = await browser.newPage();
    await page.goto('data:text/html,<h1>busy</h1>');
    const pids = [host.pid, ...descendants(host.pid)];
    expect(pids.length).toBeGreaterThan(3);
    expect(processesUnder(tmpRoot).length).toBeGreaterThan(3);
    const t0 = performance.now();
    await host.close();
    console.info(`closed in ${Math.round(performance.now() - t0)} ms`);
    const t1 = performance.now();
    await browser.close().catch(() => {});
    console.info(`client closed in ${Math.round(performance.now() - t1)} ms`);
    const alive = new Set(
      processes()
        .filter((p) => p.state !== 'Z')
        .map((p) => p.pid),
    );
    expect(pids.filter((pid) => alive.has(pid))).toEqual([]);
    expect(await host.checkHealth()).toBe(false);
  });

  it('closes Chromium and exits when its stdin ends (the agent died)', async () => {
    const bootstrap = await compiledChildPath(
      new URL('../../src/browser/host.ts', import.meta.url).href,
      'host-child',
    );
    const dir = mkdtempSync(join(tmpRoot, 'outpost-browser-host-'));
    const runAs = identities.take();
    if (runAs !== null) chownSync(dir, runAs.uid, runAs.gid);
    const child = spawn(process.execPath, [bootstrap, RUNTIME_DIR], {
      cwd: dir,
      env: { HOME: dir, TMPDIR: dir, PATH: '/usr/bin:/bin', CHROMIUM_PATH },
      stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
      detached: true,
      ...(runAs === null ? {} : { uid: runAs.uid, gid: runAs.gid }),
    });
    try {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let text = '';
        child.stdio[3]?.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          const line = text.split('\n')[0] as string;
          if (text.includes('\n')) resolve(JSON.parse(line) as Record<string, unknown>);
        });
        child.once('exit', () => reject(new Error('the host exited before it was ready')));
      });
      expect(ready.t).toBe('ready');
      const chromium = ready.browserPid as number;
      expect(descendants(child.pid as number)).toContain(chromium);
      const t0 = performance.now();
      child.stdin?.end();
      expect(await exited).toBe(0);
      console.info(`host exited ${Math.round(performance.now() - t0)} ms after the end of its stdin`);
      await until('Chromium is gone', () => processesUnder(tmpRoot).length === 0, 5_000);
    } finally {
      if (child.pid !== undefined) killGroup(child.pid);
      identities.release(runAs);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('in the pool', () => {
    let pool: BrowserPool<SleepRunner>;

    afterEach(async () => {
      await pool?.close();
    });

    function newPool(): BrowserPool<SleepRunner> {
      return new BrowserPool<SleepRunner>({
        createRunner: async (options) => new SleepRunner(options),
        tmpRoot,
        browserConcurrency: 2,
        readHeadroom: async () => null,
      });
    }

    async function connects(wsEndpoint: string): Promise<boolean> {
      const browser = await chromium.connect(wsEndpoint, { timeout: 10_000 });
      try {
        const page = await browser.newPage();
        return (await page.evaluate(() => 6 * 7)) === 42;
      } finally {
        await browser.close();
      }
    }

    it('notices Chromium SIGKILLed and replaces the host', async () => {
      pool = newPool();
      const first = await pool.acquire(RUNTIME_ID);
      await first.release({ browserFailed: false });
      const hostPid = pool.status().runtimes[0]?.hosts[0]?.pid as number;
      const chromiumPids = descendants(hostPid).filter((pid) =>
        readFileSync(`/proc/${pid}/stat`, 'latin1').includes('(chromium)'),
      );
      expect(chromiumPids.length).toBeGreaterThan(0);
      const t0 = performance.now();
      for (const pid of chromiumPids) process.kill(pid, 'SIGKILL');
      await until('the pool replaced the host', () => pool.status().runtimes[0]?.replacements === 1);
      console.info(`Chromium killed: noticed in ${Math.round(performance.now() - t0)} ms`);
      const second = await pool.acquire(RUNTIME_ID);
      expect(second.wsEndpoint).not.toBe(first.wsEndpoint);
      expect(await connects(second.wsEndpoint)).toBe(true);
      await second.release({ browserFailed: false });
      await until(
        'the old host is gone',
        () => !processes().some((p) => p.pid === hostPid && p.state !== 'Z'),
      );
      expect(pool.status().runtimes[0]?.hosts).toHaveLength(1);
    });

    it('notices the host process SIGKILLed, kills its Chromium and replaces the host', async () => {
      pool = newPool();
      const first = await pool.acquire(RUNTIME_ID);
      await first.release({ browserFailed: false });
      const hostPid = pool.status().runtimes[0]?.hosts[0]?.pid as number;
      const chromiumPids = descendants(hostPid);
      expect(chromiumPids.length).toBeGreaterThan(0);
      process.kill(hostPid, 'SIGKILL');
      await until('the pool replaced the host', () => pool.status().runtimes[0]?.replacements === 1);
      // Chromium leads a process group of its own: it is killed with the host all the same.
      await until('its Chromium is gone', () => {
        const alive = new Set(
          processes()
            .filter((p) => p.state !== 'Z')
            .map((p) => p.pid),
        );
        return chromiumPids.every((pid) => !alive.has(pid));
      });
      const second = await pool.acquire(RUNTIME_ID);
      expect(await connects(second.wsEndpoint)).toBe(true);
      await second.release({ browserFailed: false });
    });

    it('notices a hung host (SIGSTOP) within 5 s and replaces it', async () => {
      pool = newPool();
      const first = await pool.acquire(RUNTIME_ID);
      await first.release({ browserFailed: false });
      const hostPid = pool.status().runtimes[0]?.hosts[0]?.pid as number;
      const t0 = performance.now();
      process.kill(hostPid, 'SIGSTOP');
      await until('the pool replaced the host', () => pool.status().runtimes[0]?.replacements === 1, 8_000);
      const noticedMs = performance.now() - t0;
      console.info(`host stopped: noticed in ${Math.round(noticedMs)} ms`);
      expect(noticedMs).toBeLessThan(5_000);
      expect(pool.status().runtimes[0]?.hosts.find((h) => h.pid === hostPid)?.reason ?? 'closed').toMatch(
        /health check|closed/,
      );
      const second = await pool.acquire(RUNTIME_ID);
      expect(second.wsEndpoint).not.toBe(first.wsEndpoint);
      expect(await connects(second.wsEndpoint)).toBe(true);
      await second.release({ browserFailed: false });
      // The stopped host is killed (SIGKILL ends a stopped process too) with its Chromium.
      await until(
        'the stopped host is gone',
        () => !processes().some((p) => p.pid === hostPid && p.state !== 'Z'),
      );
    });
  });
});
