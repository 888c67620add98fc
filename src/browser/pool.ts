import { existsSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { abortedError, raceAbort } from '../common/abort.js';
import { OutpostError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { PACKAGE_ROOT } from '../common/paths.js';
import { BrowserHost } from './host.js';
import { type BrowserIdentity, DEFAULT_BROWSER_UIDS, IdentityPool } from './identities.js';
import { readHeadroom } from './memory.js';

/** What the pool needs of a runner process (BrowserRunner of runner-process.ts). */
export type PooledRunner = {
  /** True once the runner loaded Playwright and waits for its payload; false when it ended first. */
  readonly ready: Promise<boolean>;
  /** False once the process ended. */
  readonly alive: boolean;
  readonly pid: number | undefined;
  /** Kills the runner's process group, waits until it is reaped, removes its temp dir. Idempotent. */
  dispose(): Promise<void>;
  /** Names the warm browser early, so the runner connects and prepares its context while it waits. */
  prepare?(wsEndpoint: string): void;
};

/** How the pool asks for one runner process (BrowserRunner.spawn takes the same). */
export type RunnerSpawnOptions = {
  /** runtimes/<id>. */
  runtimeDir: string;
  runtimeId: string;
  /** Where the runner's private temp dir is created. */
  tmpRoot: string;
  /** The uid and gid it runs as; null for the agent's own (the agent is not root). */
  runAs: BrowserIdentity;
};

/** Starts one runner process; rejects when it cannot be spawned at all. */
export type RunnerFactory<R extends PooledRunner> = (options: RunnerSpawnOptions) => Promise<R>;

/** Options of {@link BrowserPool}. Sizes in MiB, times in milliseconds. */
export type BrowserPoolOptions<R extends PooledRunner> = {
  /** Starts runner processes (`(o) => BrowserRunner.spawn(o)`). */
  createRunner: RunnerFactory<R>;
  /** Folder holding one `<runtimeId>/` per runtime. Default `<package>/runtimes`. */
  runtimesDir?: string;
  /** Folder of the hosts' and runners' private temp dirs. Default `os.tmpdir()`. */
  tmpRoot?: string;
  /** Chromium's executable. Default env CHROMIUM_PATH, else `/usr/bin/chromium`. */
  chromiumPath?: string;
  /** Browser checks running at once, all runtimes together. Default `os.availableParallelism()`. */
  browserConcurrency?: number;
  /**
   * Runners kept started and waiting per runtime in use, so back-to-back checks never wait for Node
   * to boot (~1 s on 2 cores under load). Default `browserConcurrency`; each waits with ~80 MiB.
   */
  spareRunners?: number;
  /** Memory a check is expected to take (its runner, its browser context and renderers), MiB. Default 300. */
  memoryPerCheckMiB?: number;
  /** Memory left free on top of the checks admitted, MiB. Default 256. */
  memoryReserveMiB?: number;
  /**
   * How long a check that started counts as not yet visible in the headroom (its processes still
   * growing), ms: each such check, and each admitted one still starting, is added to the memory
   * the next one needs. Default 5 000.
   */
  memorySettleMs?: number;
  /** How often a check waiting for memory reads the headroom again, ms. Default 1 000. */
  memoryRetryMs?: number;
  /** Reads the memory headroom, bytes (null: unknown, admit by concurrency alone). Default {@link readHeadroom}. */
  readHeadroom?: () => Promise<number | null>;
  /** A host whose processes' PSS passes this is replaced (after its checks finish), MiB. Default 1 024. */
  maxHostPssMiB?: number;
  /** A host is replaced after this many checks. Default 200. */
  maxChecksPerHost?: number;
  /** How often each host's PSS is measured, ms. Default 10 000. */
  pssIntervalMs?: number;
  /** Between a host's health checks, ms. Default 2 000. */
  healthIntervalMs?: number;
  /** Longest health check before a host counts as hung, ms. Default 2 500. */
  healthTimeoutMs?: number;
  /** Longest host start, ms. Default 45 000. */
  hostStartTimeoutMs?: number;
  /** Longest compatibility check of a runtime, after its host started, ms. Default 20 000. */
  compatibilityTimeoutMs?: number;
  /**
   * Browser hosts alive at once, all runtimes and accounts together (draining ones not counted).
   * Each account has a host of its own; when this many are up and another account needs one, the
   * least recently used idle host is closed first, or, when every host runs checks, the check waits
   * until one is idle. Default 4 (each idle host keeps ~150 MiB).
   */
  maxHosts?: number;
  /** An account's host that ran no check for this long is closed, ms. Default 60 000. */
  hostIdleMs?: number;
  /**
   * The uids (run users) hosts and runners run as, one per live process. Default
   * {@link DEFAULT_BROWSER_UIDS}. An agent that can switch to no other uid runs no browser check.
   */
  browserUids?: { first: number; count: number };
  /** Where host replacements and failures are logged. */
  logger?: Logger;
};

/** One check's share of the pool: a browser to connect to and a warm runner. Release it once, always. */
export type BrowserLease<R extends PooledRunner> = {
  runtimeId: string;
  /** The host's `ws://127.0.0.1:<port>/<path>`, for the runner's payload. */
  wsEndpoint: string;
  browserVersion: string;
  playwrightVersion: string;
  /** Ready and waiting for its payload; the lease disposes of it on release. */
  runner: R;
  /**
   * Ends the lease: disposes of the runner, frees the slot, and (when the check saw the browser
   * fail: a lost connection, a launch error) checks the host's health at once. Idempotent.
   */
  release(outcome: { browserFailed: boolean }): Promise<void>;
};

/** One host of the pool as /health shows it. */
export type BrowserHostStatus = {
  pid: number | null;
  /** Chromium's browser process; null while starting. */
  browserPid: number | null;
  /**
   * The account whose checks it serves; null for a host that served none yet (the runtime's
   * compatibility check started it; the first account that needs a host gets it).
   */
  accountId: string | null;
  state: 'starting' | 'ready' | 'draining';
  /** Why it is being replaced, while draining. */
  reason: string | null;
  checksRun: number;
  runningChecks: number;
  /** Last measured PSS of its processes, bytes; null before the first measurement. */
  pssBytes: number | null;
};

/** One runtime as /health shows it. */
export type BrowserRuntimeStatus = {
  runtimeId: string;
  /** False when its compatibility check failed: its jobs are not claimed. */
  available: boolean;
  /** Why it is unavailable; null when available. */
  reason: string | null;
  browserVersion: string | null;
  playwrightVersion: string | null;
  hosts: BrowserHostStatus[];
  /** PSS of all its hosts together, bytes (last measurements). */
  pssBytes: number;
  running: number;
  waiting: number;
  /** Hosts replaced so far (unhealthy, crashed, too big, too many checks). */
  replacements: number;
  /** The last host start or runner start that failed; null when none has. */
  lastError: string | null;
};

/** The pool as /health shows it. */
export type BrowserPoolStatus = {
  concurrency: number;
  /** Hosts up or starting (not draining), all runtimes and accounts, and their bound (`maxHosts`). */
  liveHosts: number;
  maxHosts: number;
  running: number;
  waiting: number;
  /** Waiting checks held back by memory rather than by concurrency. */
  waitingForMemory: boolean;
  runtimes: BrowserRuntimeStatus[];
};

/** The outcome of {@link BrowserPool.checkRuntime}. */
export type RuntimeCheck = {
  runtimeId: string;
  ok: boolean;
  /** Why it failed; null when it passed. */
  reason: string | null;
  browserVersion: string | null;
  playwrightVersion: string | null;
  durationMs: number;
};

const MIB = 1024 * 1024;
/** A runtime id is one folder name: `2026.04`. */
const RUNTIME_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A host that failed sooner than this after it started is replaced on demand only (no restart loop), ms. */
const EAGER_REPLACE_AFTER_MS = 30_000;
/** Tries to get a started runner (or a healthy host) before a lease fails. */
const ATTEMPTS = 3;

type HostSlot = {
  runtimeId: string;
  identity: BrowserIdentity;
  starting: Promise<BrowserHost>;
  host: BrowserHost | null;
  /** Checks holding a lease on it. */
  active: number;
  /** Why it is being replaced; null while it is current. */
  retired: string | null;
  closing: Promise<void> | null;
  pssBytes: number | null;
  /** The account whose checks it serves; null until one is given it (the compatibility check's host). */
  accountId: string | null;
  /** Checks waiting for it to start (not idle meanwhile: it is not closed to make room). */
  waiting: number;
  /** `performance.now()` when a check last took or left it. */
  lastUsedAt: number;
  /** Closes it once it has been idle for `hostIdleMs`. */
  idleTimer: NodeJS.Timeout | undefined;
};

/**
 * A spare runner: started before a job came, and prepared (connected to a host, a context open)
 * for the account whose check made it start, once it is ready. A prepared spare is handed only to a
 * check on the host it was prepared for: it never serves another account, since it held a
 * connection to that account's browser.
 */
type SpareEntry<R> = {
  started: Spare<R>;
  /** The account to prepare it for once ready; null: not prepared (any account may take it). */
  account: string | null;
  /** The host it was prepared for; null while it is not. */
  preparedFor: HostSlot | null;
  /** Taken by a check: no longer prepared. */
  taken: boolean;
};

type Spare<R> = Promise<{ runner: R; identity: BrowserIdentity }>;

type RuntimeState<R> = {
  id: string;
  dir: string;
  /** Each account's host in service, by account id. */
  current: Map<string, HostSlot>;
  /** The compatibility check's host, until an account is given it. */
  unassigned: HostSlot | null;
  hosts: Set<HostSlot>;
  /** Runners started and waiting (oldest first). */
  spares: SpareEntry<R>[];
  unavailable: string | null;
  lastError: string | null;
  browserVersion: string | null;
  playwrightVersion: string | null;
  running: number;
  replacements: number;
};

type Waiter = {
  state: RuntimeState<PooledRunner>;
  admit: () => void;
  reject: (err: Error) => void;
};

function integerOption(name: string, value: number | undefined, fallback: number, min: number, max: number) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new OutpostError(
      'OUTPOST_ERR_CONFIG',
      `BrowserPool option ${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The agent's browsers (docs/architecture.md, "Browser checks"): one warm Chromium host per
 * account and runtime in use, started on its first check (each host its own uid: the browser of one
 * account can read nothing of another's), and `spareRunners` started runners per runtime kept
 * spare, so a check neither waits for Node to boot nor, once its account ran one, for Chromium.
 * At most `maxHosts` hosts are up at once; an account's host idle for `hostIdleMs` is closed.
 *
 * {@link acquire} admits a check when fewer than `browserConcurrency` run AND the memory
 * headroom covers `memoryPerCheckMiB` (plus the checks started moments ago, plus a reserve);
 * otherwise it waits, first come first served. A host is replaced when it fails a health check,
 * crashes, passes `maxHostPssMiB` or has run `maxChecksPerHost` checks; the replaced one drains
 * (its running checks finish) and is then closed. A runtime whose compatibility check
 * ({@link checkRuntime}) failed is unavailable: acquiring it fails with the reason.
 */
export class BrowserPool<R extends PooledRunner> {
  readonly #createRunner: RunnerFactory<R>;
  readonly #runtimesDir: string;
  readonly #tmpRoot: string;
  readonly #chromiumPath: string | undefined;
  readonly #concurrency: number;
  readonly #spareRunners: number;
  readonly #memoryPerCheckBytes: number;
  readonly #memoryReserveBytes: number;
  readonly #memorySettleMs: number;
  readonly #memoryRetryMs: number;
  readonly #readHeadroom: () => Promise<number | null>;
  readonly #maxHostPssBytes: number;
  readonly #maxChecksPerHost: number;
  readonly #pssIntervalMs: number;
  readonly #healthIntervalMs: number;
  readonly #healthTimeoutMs: number;
  readonly #hostStartTimeoutMs: number;
  readonly #compatibilityTimeoutMs: number;
  readonly #maxHosts: number;
  readonly #hostIdleMs: number;
  readonly #identities: IdentityPool;
  readonly #logger: Logger | undefined;
  readonly #runtimes = new Map<string, RuntimeState<R>>();
  readonly #waiters: Waiter[] = [];
  /** `performance.now()` of recently started checks, for the memory not yet visible in the headroom. */
  #recentStarts: number[] = [];
  /** Checks admitted whose host or runner is still starting: their memory is not visible yet either. */
  #admittedNotStarted = 0;
  #running = 0;
  #pumping = false;
  #pumpAgain = false;
  #memoryTimer: NodeJS.Timeout | undefined;
  #waitingForMemory = false;
  #pssTimer: NodeJS.Timeout | undefined;
  #closing: Promise<void> | null = null;
  /** Checks waiting for a host to be closed or to become idle (all `maxHosts` busy). */
  readonly #hostRoomWaiters = new Set<() => void>();
  /** Runners of leases not yet released, killed by `close`. */
  readonly #leasedRunners = new Set<R>();

  /** @throws OutpostError OUTPOST_ERR_CONFIG naming the option when one is out of range. */
  constructor(options: BrowserPoolOptions<R>) {
    this.#createRunner = options.createRunner;
    this.#runtimesDir = options.runtimesDir ?? join(PACKAGE_ROOT, 'runtimes');
    this.#tmpRoot = options.tmpRoot ?? tmpdir();
    this.#chromiumPath = options.chromiumPath;
    this.#concurrency = integerOption(
      'browserConcurrency',
      options.browserConcurrency,
      availableParallelism(),
      1,
      1024,
    );
    this.#spareRunners = integerOption('spareRunners', options.spareRunners, this.#concurrency, 1, 64);
    this.#memoryPerCheckBytes =
      integerOption('memoryPerCheckMiB', options.memoryPerCheckMiB, 300, 0, 1_048_576) * MIB;
    this.#memoryReserveBytes =
      integerOption('memoryReserveMiB', options.memoryReserveMiB, 256, 0, 1_048_576) * MIB;
    this.#memorySettleMs = integerOption('memorySettleMs', options.memorySettleMs, 5_000, 0, 600_000);
    this.#memoryRetryMs = integerOption('memoryRetryMs', options.memoryRetryMs, 1_000, 10, 600_000);
    this.#readHeadroom = options.readHeadroom ?? (() => readHeadroom());
    this.#maxHostPssBytes = integerOption('maxHostPssMiB', options.maxHostPssMiB, 1024, 1, 1_048_576) * MIB;
    this.#maxChecksPerHost = integerOption('maxChecksPerHost', options.maxChecksPerHost, 200, 1, 1_000_000);
    this.#pssIntervalMs = integerOption('pssIntervalMs', options.pssIntervalMs, 10_000, 100, 3_600_000);
    this.#healthIntervalMs = integerOption('healthIntervalMs', options.healthIntervalMs, 2_000, 50, 600_000);
    this.#healthTimeoutMs = integerOption('healthTimeoutMs', options.healthTimeoutMs, 2_500, 50, 600_000);
    this.#hostStartTimeoutMs = integerOption(
      'hostStartTimeoutMs',
      options.hostStartTimeoutMs,
      45_000,
      1_000,
      600_000,
    );
    this.#compatibilityTimeoutMs = integerOption(
      'compatibilityTimeoutMs',
      options.compatibilityTimeoutMs,
      20_000,
      1_000,
      600_000,
    );
    this.#maxHosts = integerOption('maxHosts', options.maxHosts, 4, 1, 256);
    this.#hostIdleMs = integerOption('hostIdleMs', options.hostIdleMs, 60_000, 10, 86_400_000);
    const uids = options.browserUids ?? DEFAULT_BROWSER_UIDS;
    this.#identities = new IdentityPool(uids);
    this.#logger = options.logger;
    if (!existsSync(this.#tmpRoot)) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `BrowserPool option tmpRoot must be an existing folder, got ${this.#tmpRoot}`,
      );
    }
  }

  /**
   * Waits for a slot and memory, then leases the browser of `runtimeId` that serves
   * `options.accountId` (its host is started when the account has none: a few seconds; when
   * `maxHosts` are up, the least recently used idle one is closed first, or the check waits until
   * one is idle) and a started runner, one prepared for that host when there is one.
   *
   * @param options.accountId the account whose check runs: checks of one account share a host,
   *   checks of different accounts never do. Checks acquired without one share a host of their own.
   * @throws OutpostError OUTPOST_ERR_ABORTED when `signal` aborts first or the pool closes.
   * @throws OutpostError OUTPOST_ERR_CONFIG when `runtimeId` is not an installed runtime.
   * @throws Error when the runtime is unavailable (its compatibility check failed), or its
   *   host or a runner could not start; the message says why.
   */
  async acquire(
    runtimeId: string,
    options: { signal?: AbortSignal; accountId?: string } = {},
  ): Promise<BrowserLease<R>> {
    const { signal } = options;
    const account = options.accountId ?? '';
    if (this.#closing !== null) throw abortedError(signal, 'the browser pool is closed');
    if (signal?.aborted) throw abortedError(signal, 'acquiring a browser was aborted');
    const state = this.#runtime(runtimeId);
    if (state.unavailable !== null) {
      throw new Error(`runtime ${runtimeId} is unavailable: ${state.unavailable}`);
    }
    this.#ensureSpare(state, account);
    await this.#admit(state, signal);
    let slot: HostSlot | null = null;
    try {
      slot = await this.#hostFor(state, account, signal);
      const { runner, identity } = await this.#takeRunner(state, slot, signal);
      const host = slot.host as BrowserHost;
      const leased = slot;
      let released: Promise<void> | null = null;
      this.#leasedRunners.add(runner);
      this.#admittedNotStarted--;
      this.#recentStarts.push(performance.now());
      return {
        runtimeId,
        wsEndpoint: host.wsEndpoint,
        browserVersion: host.browserVersion,
        playwrightVersion: host.playwrightVersion,
        runner,
        release: (outcome) => {
          released ??= (async () => {
            await runner.dispose().catch(() => {});
            this.#leasedRunners.delete(runner);
            this.#identities.release(identity);
            this.#leaveHost(state, leased, outcome.browserFailed);
            this.#finish(state);
          })();
          return released;
        },
      };
    } catch (err) {
      if (slot !== null) this.#leaveHost(state, slot, false);
      this.#admittedNotStarted--;
      this.#finish(state);
      throw err;
    }
  }

  /**
   * The runtime's start-up compatibility check: starts its host (which becomes the runtime's
   * warm host when the check passes), opens a page with `data:` content, evaluates a script
   * and takes a screenshot. A runtime failing it is marked unavailable with the reason (its
   * jobs should not be claimed); passing clears an earlier failure. Never throws.
   */
  async checkRuntime(runtimeId: string): Promise<RuntimeCheck> {
    const t0 = performance.now();
    const result = (reason: string | null, host: BrowserHost | null): RuntimeCheck => ({
      runtimeId,
      ok: reason === null,
      reason,
      browserVersion: host?.browserVersion ?? null,
      playwrightVersion: host?.playwrightVersion ?? null,
      durationMs: performance.now() - t0,
    });
    let state: RuntimeState<R>;
    try {
      state = this.#runtime(runtimeId);
    } catch (err) {
      return result((err as Error).message, null);
    }
    if (this.#closing !== null) return result('the browser pool is closed', null);
    // A host not yet given to an account, else any of the runtime's, else a new one (which the
    // first account needing a host gets: it served no other).
    let slot: HostSlot | null =
      state.unassigned ?? [...state.current.values()].find((s) => s.retired === null) ?? null;
    let host: BrowserHost | null = null;
    try {
      if (slot === null || slot.retired !== null) {
        this.#makeRoomNow();
        slot = this.#startHost(state, null);
      }
      host = await slot.starting;
      await host.selfTest(this.#compatibilityTimeoutMs);
      state.unavailable = null;
      if (slot.active === 0) this.#armIdle(state, slot);
      // The runtime's first check should not wait for Node to boot either.
      this.#ensureSpare(state, null);
      return result(null, host);
    } catch (err) {
      const reason = (err as Error).message;
      state.unavailable = reason;
      this.#logger?.error({ runtimeId, reason }, 'browser runtime failed its compatibility check');
      if (slot !== null && state.hosts.has(slot))
        this.#retire(state, slot, `the compatibility check failed: ${reason}`);
      // Checks already waiting for this runtime would only fail one by one: fail them now.
      for (const waiter of [...this.#waiters]) {
        if (waiter.state === (state as RuntimeState<PooledRunner>)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.reject(new Error(`runtime ${runtimeId} is unavailable: ${reason}`));
        }
      }
      return result(reason, host);
    }
  }

  /**
   * Whether a browser check of `runtimeId` would be admitted at once: the runtime is not
   * unavailable, no check waits, a slot is free and the memory headroom covers one more. For
   * the claim loop, which claims browser jobs only while this holds (one headroom read).
   *
   * @param runtimeId a runtime id; unknown or not installed ones answer false.
   */
  async hasCapacity(runtimeId: string): Promise<boolean> {
    if (this.#closing !== null) return false;
    const state = this.#runtimes.get(runtimeId);
    if (state === undefined) {
      try {
        this.#runtime(runtimeId);
      } catch {
        return false;
      }
    } else if (state.unavailable !== null) {
      return false;
    }
    if (this.#waiters.length > 0 || this.#running >= this.#concurrency) return false;
    return this.#memoryCoversOneMore();
  }

  /** The pool for /health: per runtime its availability, versions, hosts, PSS, running and waiting checks. */
  status(): BrowserPoolStatus {
    const runtimes: BrowserRuntimeStatus[] = [];
    for (const state of this.#runtimes.values()) {
      const hosts = [...state.hosts].map(
        (slot): BrowserHostStatus => ({
          pid: slot.host?.pid ?? null,
          browserPid: slot.host?.browserPid ?? null,
          accountId: slot.accountId,
          state: slot.retired !== null ? 'draining' : slot.host === null ? 'starting' : 'ready',
          reason: slot.retired,
          checksRun: slot.host?.checksRun ?? 0,
          runningChecks: slot.active,
          pssBytes: slot.pssBytes,
        }),
      );
      runtimes.push({
        runtimeId: state.id,
        available: state.unavailable === null,
        reason: state.unavailable,
        browserVersion: state.browserVersion,
        playwrightVersion: state.playwrightVersion,
        hosts,
        pssBytes: hosts.reduce((sum, h) => sum + (h.pssBytes ?? 0), 0),
        running: state.running,
        waiting: this.#waiters.filter((w) => w.state === (state as RuntimeState<PooledRunner>)).length,
        replacements: state.replacements,
        lastError: state.lastError,
      });
    }
    return {
      concurrency: this.#concurrency,
      liveHosts: this.#liveHosts(),
      maxHosts: this.#maxHosts,
      running: this.#running,
      waiting: this.#waiters.length,
      waitingForMemory: this.#waitingForMemory,
      runtimes,
    };
  }

  /**
   * Fails waiting checks (OUTPOST_ERR_ABORTED), kills every host and runner (spare or leased),
   * and waits until they are reaped and their temp dirs removed. Leases still out may be
   * released after (it does nothing more then).
   * Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#pssTimer);
      clearTimeout(this.#memoryTimer);
      for (const waiter of this.#waiters.splice(0)) {
        waiter.reject(abortedError(undefined, 'the browser pool closed while a check waited for a browser'));
      }
      this.#notifyHostRoom();
      const work: Promise<unknown>[] = [...this.#leasedRunners].map((runner) =>
        runner.dispose().catch(() => {}),
      );
      for (const state of this.#runtimes.values()) {
        for (const spare of state.spares.splice(0)) work.push(this.#disposeSpare(spare.started));
        for (const slot of state.hosts) {
          clearTimeout(slot.idleTimer);
          work.push(this.#closeSlot(state, slot));
        }
      }
      await Promise.allSettled(work);
      // Every run user reaped: no process or temp file of a browser check outlives the pool.
      await this.#identities.settled();
    })();
    return this.#closing;
  }

  /** The state of a runtime, created on first use. */
  #runtime(runtimeId: string): RuntimeState<R> {
    let state = this.#runtimes.get(runtimeId);
    if (state !== undefined) return state;
    if (typeof runtimeId !== 'string' || !RUNTIME_ID.test(runtimeId)) {
      throw new OutpostError('OUTPOST_ERR_CONFIG', `${JSON.stringify(runtimeId)} is not a runtime name`);
    }
    const dir = join(this.#runtimesDir, runtimeId);
    if (!existsSync(dir)) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `runtime ${runtimeId} is not installed (no folder ${dir})`,
      );
    }
    state = {
      id: runtimeId,
      dir,
      current: new Map(),
      unassigned: null,
      hosts: new Set(),
      spares: [],
      unavailable: null,
      lastError: null,
      browserVersion: null,
      playwrightVersion: null,
      running: 0,
      replacements: 0,
    };
    this.#runtimes.set(runtimeId, state);
    return state;
  }

  /** Resolves once the check may run (a slot and memory), or rejects on abort or close. */
  #admit(state: RuntimeState<R>, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.#waiters.indexOf(waiter);
        if (at === -1) return;
        this.#waiters.splice(at, 1);
        reject(abortedError(signal, 'acquiring a browser was aborted'));
      };
      const waiter: Waiter = {
        state: state as RuntimeState<PooledRunner>,
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#pump();
    });
  }

  /**
   * Admits waiting checks, first come first served, while a slot is free and the headroom
   * covers one more. Runs one at a time (the headroom read is async); a call meanwhile makes
   * it go round once more.
   */
  #pump(): void {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    void (async () => {
      try {
        do {
          this.#pumpAgain = false;
          while (this.#waiters.length > 0 && this.#running < this.#concurrency && this.#closing === null) {
            if (!(await this.#memoryCoversOneMore())) {
              this.#waitingForMemory = true;
              clearTimeout(this.#memoryTimer);
              this.#memoryTimer = setTimeout(() => this.#pump(), this.#memoryRetryMs);
              this.#memoryTimer.unref();
              break;
            }
            this.#waitingForMemory = false;
            const waiter = this.#waiters.shift();
            // Aborted while the headroom was read.
            if (waiter === undefined) break;
            this.#running++;
            waiter.state.running++;
            this.#admittedNotStarted++;
            waiter.admit();
          }
          if (this.#waiters.length === 0) this.#waitingForMemory = false;
        } while (this.#pumpAgain);
      } finally {
        this.#pumping = false;
      }
    })();
  }

  /**
   * Whether the headroom covers one more check: `memoryPerCheckMiB` for it and for every check
   * admitted or started moments ago (not yet visible in the headroom), plus the reserve. True
   * when the headroom is unknown.
   */
  async #memoryCoversOneMore(): Promise<boolean> {
    const now = performance.now();
    this.#recentStarts = this.#recentStarts.filter((t) => now - t < this.#memorySettleMs);
    const unsettled = this.#recentStarts.length + this.#admittedNotStarted;
    const needed = this.#memoryPerCheckBytes * (1 + unsettled) + this.#memoryReserveBytes;
    const headroom = await this.#readHeadroom().catch(() => null);
    return headroom === null || headroom >= needed;
  }

  /** Gives back an admission. */
  #finish(state: RuntimeState<R>): void {
    this.#running--;
    state.running--;
    this.#pump();
  }

  /** A healthy, started host serving `account` with one more check counted on it. */
  async #hostFor(
    state: RuntimeState<R>,
    account: string,
    signal: AbortSignal | undefined,
  ): Promise<HostSlot> {
    let lastFailure = '';
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (this.#closing !== null) throw abortedError(signal, 'the browser pool is closed');
      let slot = state.current.get(account) ?? null;
      if (slot === null || slot.retired !== null) {
        slot =
          this.#claimUnassigned(state, account) ?? (await this.#startHostWithRoom(state, account, signal));
      }
      slot.waiting++;
      let host: BrowserHost;
      try {
        host = await raceAbort(slot.starting, signal, 'acquiring a browser was aborted');
      } finally {
        slot.waiting--;
      }
      if (slot.retired !== null || !host.healthy) {
        lastFailure = slot.retired ?? host.failure ?? 'unhealthy';
        continue;
      }
      slot.active++;
      slot.lastUsedAt = performance.now();
      clearTimeout(slot.idleTimer);
      host.checksRun++;
      if (host.checksRun >= this.#maxChecksPerHost) {
        this.#retire(state, slot, `it ran ${host.checksRun} checks`);
      }
      return slot;
    }
    throw new Error(`no healthy browser host for runtime ${state.id}: ${lastFailure}`);
  }

  /** Gives the runtime's host that served no account yet to `account`; null when there is none. */
  #claimUnassigned(state: RuntimeState<R>, account: string): HostSlot | null {
    const slot = state.unassigned;
    if (slot === null || slot.retired !== null) return null;
    state.unassigned = null;
    slot.accountId = account;
    clearTimeout(slot.idleTimer);
    state.current.set(account, slot);
    return slot;
  }

  /** Hosts up or starting and not draining, all runtimes and accounts. */
  #liveHosts(): number {
    let live = 0;
    for (const state of this.#runtimes.values()) {
      for (const slot of state.hosts) if (slot.retired === null) live++;
    }
    return live;
  }

  /** Closes the least recently used idle host (started, no check on it or waiting for it); false when none is idle. */
  #closeLeastRecentlyUsedIdle(): boolean {
    let oldest: { state: RuntimeState<R>; slot: HostSlot } | null = null;
    for (const state of this.#runtimes.values()) {
      for (const slot of state.hosts) {
        if (slot.retired !== null || slot.host === null || slot.active > 0 || slot.waiting > 0) continue;
        if (oldest === null || slot.lastUsedAt < oldest.slot.lastUsedAt) oldest = { state, slot };
      }
    }
    if (oldest === null) return false;
    this.#retire(
      oldest.state,
      oldest.slot,
      `another account needed a browser and ${this.#maxHosts} hosts were up`,
      false,
    );
    return true;
  }

  /** Closes idle hosts until fewer than `maxHosts` are up, as far as idle ones allow. */
  #makeRoomNow(): void {
    while (this.#liveHosts() >= this.#maxHosts && this.#closeLeastRecentlyUsedIdle()) {
      // Each round retired one idle host.
    }
  }

  /**
   * Starts a host for `account` once fewer than `maxHosts` are up: closes the least recently used
   * idle host when needed, else waits until a host is closed or idle. Another check of the same
   * account that started one meanwhile shares it.
   */
  async #startHostWithRoom(
    state: RuntimeState<R>,
    account: string,
    signal: AbortSignal | undefined,
  ): Promise<HostSlot> {
    for (;;) {
      if (this.#closing !== null) throw abortedError(signal, 'the browser pool is closed');
      const existing = state.current.get(account);
      if (existing !== undefined && existing.retired === null) return existing;
      this.#makeRoomNow();
      if (this.#liveHosts() < this.#maxHosts) return this.#startHost(state, account);
      await this.#hostRoom(signal);
    }
  }

  /** Resolves when a host was closed, failed, or became idle; rejects when `signal` aborts. */
  #hostRoom(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#hostRoomWaiters.delete(wake);
        reject(abortedError(signal, 'acquiring a browser was aborted'));
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#hostRoomWaiters.add(wake);
    });
  }

  /** Wakes the checks waiting for a host. */
  #notifyHostRoom(): void {
    const waiters = [...this.#hostRoomWaiters];
    this.#hostRoomWaiters.clear();
    for (const wake of waiters) wake();
  }

  /** Closes `slot` once it has been idle for `hostIdleMs`. */
  #armIdle(state: RuntimeState<R>, slot: HostSlot): void {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.retired === null && slot.active === 0 && slot.waiting === 0 && this.#closing === null) {
        this.#retire(state, slot, `it ran no check for ${this.#hostIdleMs} ms`, false);
      }
    }, this.#hostIdleMs);
    slot.idleTimer.unref();
  }

  /**
   * Starts a host that becomes `account`'s current one (null: a host for the compatibility check,
   * which the first account needing one gets).
   */
  #startHost(state: RuntimeState<R>, account: string | null): HostSlot {
    const identity = this.#identities.take();
    const slot: HostSlot = {
      runtimeId: state.id,
      identity,
      starting: Promise.resolve(null as unknown as BrowserHost),
      host: null,
      active: 0,
      retired: null,
      closing: null,
      pssBytes: null,
      accountId: account,
      waiting: 0,
      lastUsedAt: performance.now(),
      idleTimer: undefined,
    };
    slot.starting = BrowserHost.start({
      runtimeDir: state.dir,
      runtimeId: state.id,
      tmpRoot: this.#tmpRoot,
      runAs: identity,
      ...(this.#chromiumPath === undefined ? {} : { chromiumPath: this.#chromiumPath }),
      startTimeoutMs: this.#hostStartTimeoutMs,
      healthIntervalMs: this.#healthIntervalMs,
      healthTimeoutMs: this.#healthTimeoutMs,
      onFailure: (reason) => {
        this.#logger?.warn({ runtimeId: state.id, reason }, 'browser host failed; replacing it');
        const lived = slot.host === null ? 0 : performance.now() - slot.host.startedAt;
        this.#retire(state, slot, reason);
        // A host that ran a while is replaced at once (when there is room); one failing right after
        // it started is replaced when the next check asks, so a broken Chromium does not restart in a loop.
        const owner = slot.accountId;
        if (
          lived >= EAGER_REPLACE_AFTER_MS &&
          this.#closing === null &&
          owner !== null &&
          !state.current.has(owner) &&
          this.#liveHosts() < this.#maxHosts
        ) {
          this.#startHost(state, owner).starting.catch(() => {});
        }
      },
    }).then(
      (host) => {
        slot.host = host;
        state.browserVersion = host.browserVersion;
        state.playwrightVersion = host.playwrightVersion;
        this.#startPssTimer();
        if (this.#closing !== null) void this.#closeSlot(state, slot);
        return host;
      },
      (err: Error) => {
        this.#identities.release(identity);
        state.hosts.delete(slot);
        this.#forget(state, slot);
        state.lastError = err.message;
        this.#logger?.error({ runtimeId: state.id, err }, 'browser host could not start');
        this.#notifyHostRoom();
        throw err;
      },
    );
    // Whoever waits on it sees the failure; nobody waiting is no unhandled rejection.
    slot.starting.catch(() => {});
    if (account === null) state.unassigned = slot;
    else state.current.set(account, slot);
    state.hosts.add(slot);
    return slot;
  }

  /** `slot` is no longer the host in service of its account (or the unassigned one). */
  #forget(state: RuntimeState<R>, slot: HostSlot): void {
    if (slot.accountId !== null && state.current.get(slot.accountId) === slot)
      state.current.delete(slot.accountId);
    if (state.unassigned === slot) state.unassigned = null;
  }

  /**
   * Takes a host out of service: no new checks; closed once its running checks finished. Spares
   * prepared for it are disposed of. `replaced`: it failed or wore out (counted, logged as a
   * replacement); else it was idle.
   */
  #retire(state: RuntimeState<R>, slot: HostSlot, reason: string, replaced = true): void {
    if (slot.retired !== null) return;
    slot.retired = reason;
    clearTimeout(slot.idleTimer);
    this.#forget(state, slot);
    if (replaced) {
      state.replacements++;
      this.#logger?.info({ runtimeId: state.id, reason, running: slot.active }, 'browser host replaced');
    } else {
      this.#logger?.info({ runtimeId: state.id, reason }, 'browser host closed');
    }
    const prepared = state.spares.filter((spare) => spare.preparedFor === slot);
    if (prepared.length > 0) {
      state.spares = state.spares.filter((spare) => spare.preparedFor !== slot);
      for (const spare of prepared) void this.#disposeSpare(spare.started);
      this.#ensureSpare(state, null);
    }
    if (slot.active === 0 || slot.host?.exited === undefined) void this.#closeSlot(state, slot);
    else void slot.host.exited.then(() => this.#closeSlot(state, slot));
    this.#notifyHostRoom();
  }

  /**
   * A check left `slot`: close it when it is retired and was the last; probe it when the check saw
   * it fail; start its idle time when it was the last.
   */
  #leaveHost(state: RuntimeState<R>, slot: HostSlot, browserFailed: boolean): void {
    slot.active--;
    slot.lastUsedAt = performance.now();
    if (slot.retired !== null) {
      if (slot.active === 0) void this.#closeSlot(state, slot);
      return;
    }
    if (browserFailed) void slot.host?.checkHealth();
    if (slot.active === 0) {
      this.#armIdle(state, slot);
      this.#notifyHostRoom();
    }
  }

  /** Closes a host (once), then forgets it and gives its uid back. */
  #closeSlot(state: RuntimeState<R>, slot: HostSlot): Promise<void> {
    slot.closing ??= (async () => {
      clearTimeout(slot.idleTimer);
      this.#forget(state, slot);
      const host = await slot.starting.catch(() => null);
      if (host !== null) await host.close();
      state.hosts.delete(slot);
      if (host !== null) this.#identities.release(slot.identity);
      this.#notifyHostRoom();
    })();
    return slot.closing;
  }

  /** Measures every ready host's PSS every `pssIntervalMs`; a host past the bound is replaced. */
  #startPssTimer(): void {
    if (this.#pssTimer !== undefined || this.#closing !== null) return;
    let measuring = false;
    this.#pssTimer = setInterval(() => {
      if (measuring) return;
      measuring = true;
      void this.#measure().finally(() => {
        measuring = false;
      });
    }, this.#pssIntervalMs);
    this.#pssTimer.unref();
  }

  async #measure(): Promise<void> {
    for (const state of this.#runtimes.values()) {
      for (const slot of [...state.hosts]) {
        if (slot.host === null || slot.closing !== null) continue;
        slot.pssBytes = await slot.host.pssBytes();
        if (slot.retired === null && slot.pssBytes !== null && slot.pssBytes > this.#maxHostPssBytes) {
          this.#retire(
            state,
            slot,
            `its processes use ${Math.round(slot.pssBytes / MIB)} MiB (PSS), more than ${this.#maxHostPssBytes / MIB} MiB`,
          );
        }
      }
    }
  }

  /**
   * Starts spare runners for the runtime until `spareRunners` are waiting or starting; each is
   * prepared for `account`'s host once ready (null: not prepared).
   */
  #ensureSpare(state: RuntimeState<R>, account: string | null): void {
    if (this.#closing !== null) return;
    while (state.spares.length < this.#spareRunners) {
      // Set right below: the runner, once ready, is prepared through its entry.
      const entry: SpareEntry<R> = {
        started: undefined as unknown as Spare<R>,
        account,
        preparedFor: null,
        taken: false,
      };
      entry.started = this.#spawnRunner(state, entry);
      state.spares.push(entry);
    }
  }

  #spawnRunner(state: RuntimeState<R>, entry: SpareEntry<R> | null): Spare<R> {
    let identity: BrowserIdentity;
    try {
      identity = this.#identities.take();
    } catch (err) {
      const failed = Promise.reject(err as Error);
      // Whoever takes it sees the failure; a spare nobody takes is no unhandled rejection.
      failed.catch(() => {});
      return failed;
    }
    const spawned = this.#createRunner({
      runtimeDir: state.dir,
      runtimeId: state.id,
      tmpRoot: this.#tmpRoot,
      runAs: identity,
    }).then(
      (runner) => {
        if (entry !== null) void this.#prepareSpare(state, entry, runner);
        return { runner, identity };
      },
      (err: Error) => {
        this.#identities.release(identity);
        state.lastError = `a browser runner could not start: ${err.message}`;
        throw err;
      },
    );
    spawned.catch(() => {});
    return spawned;
  }

  /**
   * Once a spare runner is ready, names its account's current browser to it, so its connection
   * and context are made before a job comes; from then on only a check on that host takes it. Left
   * unprepared when it has no account, the account has no host up, it was taken meanwhile, or all
   * spares but one are prepared already (one stays for an account that has none). Never throws.
   */
  async #prepareSpare(state: RuntimeState<R>, entry: SpareEntry<R>, runner: R): Promise<void> {
    if (typeof runner.prepare !== 'function' || !(await runner.ready.catch(() => false))) return;
    if (entry.taken || entry.account === null) return;
    const slot = state.current.get(entry.account);
    if (slot === undefined || slot.retired !== null) return;
    const host = await slot.starting.catch(() => null);
    if (host === null || slot.retired !== null || !runner.alive || entry.taken) return;
    const prepared = state.spares.filter((spare) => spare.preparedFor !== null).length;
    if (this.#spareRunners > 1 && prepared >= this.#spareRunners - 1) return;
    if (!state.spares.includes(entry)) return;
    entry.preparedFor = slot;
    runner.prepare(host.wsEndpoint);
  }

  async #disposeSpare(spare: Spare<R>): Promise<void> {
    const started = await spare.catch(() => null);
    if (started === null) return;
    await started.runner.dispose().catch(() => {});
    this.#identities.release(started.identity);
  }

  /**
   * A spare runner for a check on `slot`, ready: one prepared for that host first, else the oldest
   * unprepared one (never one prepared for another host), else a new one; a new spare starts at
   * once in the background.
   */
  async #takeRunner(
    state: RuntimeState<R>,
    slot: HostSlot,
    signal: AbortSignal | undefined,
  ): Promise<{ runner: R; identity: BrowserIdentity }> {
    let lastFailure = 'it ended before it was ready';
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (this.#closing !== null) throw abortedError(signal, 'the browser pool is closed');
      const mine = state.spares.findIndex((spare) => spare.preparedFor === slot);
      const at = mine !== -1 ? mine : state.spares.findIndex((spare) => spare.preparedFor === null);
      const entry = at === -1 ? null : (state.spares.splice(at, 1)[0] ?? null);
      if (entry !== null) entry.taken = true;
      const pending = entry?.started ?? this.#spawnRunner(state, null);
      this.#ensureSpare(state, slot.accountId);
      let started: { runner: R; identity: BrowserIdentity };
      try {
        started = await raceAbort(pending, signal, 'acquiring a browser was aborted');
      } catch (err) {
        // Aborted: the runner still starting is disposed of once it is there.
        void this.#disposeSpare(pending);
        if (signal?.aborted) throw err;
        lastFailure = (err as Error).message;
        continue;
      }
      let ready = false;
      try {
        ready = await raceAbort(started.runner.ready, signal, 'acquiring a browser was aborted');
      } catch (err) {
        void this.#disposeSpare(Promise.resolve(started));
        throw err;
      }
      if (ready && started.runner.alive) return started;
      await this.#disposeSpare(Promise.resolve(started));
    }
    throw new Error(`no browser runner could be started for runtime ${state.id}: ${lastFailure}`);
  }
}
