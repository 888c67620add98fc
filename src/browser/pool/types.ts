import type { Logger } from '../../common/logger.js';
import type { BrowserIdentity } from '../identities.js';

/**
 * The public shapes of `BrowserPool` (../pool.ts): what it needs of a runner process, its
 * options, a lease, and what /health shows of it.
 */

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

/** Options of `BrowserPool` (../pool.ts). Sizes in MiB, times in milliseconds. */
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
  /** Reads the memory headroom, bytes (null: unknown, admit by concurrency alone). Default `readHeadroom` (../memory.ts). */
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
   * `DEFAULT_BROWSER_UIDS` (../identities.ts). An agent that can switch to no other uid runs no browser check.
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

/** The outcome of `BrowserPool.checkRuntime`. */
export type RuntimeCheck = {
  runtimeId: string;
  ok: boolean;
  /** Why it failed; null when it passed. */
  reason: string | null;
  browserVersion: string | null;
  playwrightVersion: string | null;
  durationMs: number;
};
