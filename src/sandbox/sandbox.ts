import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutpostError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { PACKAGE_ROOT } from '../common/paths.js';
import { RunUserPool } from '../common/run-users.js';
import { childBootstrapPath } from './bootstrap.js';
import { guardInspectorSignal } from './inspector-guard.js';
import { ScriptProcess } from './script-process.js';
import { ScriptRun } from './script-run.js';
import type { ScriptRunner, ScriptRunRequest, ScriptRunResult } from './types.js';

/** Time limit of a script without `timeoutMs`, ms (docs/checks.md, "API"). */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 10_000;

/** Memory beyond the JavaScript heap a script process may map (Buffers, native memory, Node itself), MiB. */
export const OFF_HEAP_ALLOWANCE_MB = 128;

/** Options of ScriptSandbox; every one has a default. */
export type ScriptSandboxOptions = {
  /** Folder holding one `<runtimeId>/` per runtime, whose `node_modules` scripts may require. Default `<package>/runtimes`. */
  runtimesDir?: string;
  /** Started processes kept waiting per runtime id, so a script does not wait for Node to start. Default 2; 0 starts each script cold. */
  poolSize?: number;
  /** Time limit of requests without `timeoutMs`, ms. Default 10 000. */
  timeoutMs?: number;
  /**
   * JavaScript heap limit of a script process, MiB. Default 128. The whole process (heap,
   * Buffers, native memory) is capped at this plus OFF_HEAP_ALLOWANCE_MB through RLIMIT_DATA.
   */
  memoryLimitMb?: number;
  /** Most bytes of log text (UTF-8) a script may write; past it the script is killed (OUTPUT_LIMIT). Default 1 MiB (1 048 576). */
  maxOutputBytes?: number;
  /** Folder under which each script process gets its private temp dir. Default `os.tmpdir()`. */
  tmpRoot?: string;
  /**
   * Each script process runs as a run user (src/common/run-users.ts): a uid (and the same gid) of
   * its own from `first` to `first + count - 1`, never shared by two live processes and never the
   * agent's, so the kernel refuses its signals and ptrace to the agent and to other scripts
   * (EPERM); when it ends, every process and temp file of its uid is removed. Default
   * {@link DEFAULT_SCRIPT_UIDS}. Needs no user on the host: ids are numbers only. Where the agent
   * can switch to no other uid (not root, no CAP_SETUID), scripts are refused with the reason.
   */
  scriptUids?: { first: number; count: number };
  /**
   * Most scripts one process runs before it is replaced, even when each left it clean. Default
   * {@link DEFAULT_MAX_RUNS_PER_PROCESS}; 1 runs every script in a process of its own.
   */
  maxRunsPerProcess?: number;
  /** Most idle processes kept for one account (and runtime) between its scripts. Default 4. */
  maxIdlePerAccount?: number;
  /** Most idle processes kept for all accounts together; past it the longest idle goes. Default 16. */
  maxIdle?: number;
  /** How long an idle process of an account is kept for its next script, ms. Default 60 000. */
  idleTimeoutMs?: number;
  /**
   * Most processes one account (and runtime) has at once; its scripts past it wait for one of
   * them to end its run (within their time limit) instead of starting more. Default 8.
   */
  maxProcessesPerAccount?: number;
  /**
   * Where the sandbox says, at debug level, why a script process was not kept for another script
   * (`script process not reused`, with `reason`, `pid`, `accountId`, `runtimeId`, `runs`): what
   * its last run left or did (`it left a timer pending`, `it hit TIMEOUT`, `it changed
   * Buffer.prototype.(a property added since)`) or a bound of the pool (`maxRunsPerProcess
   * reached`, `idleTimeoutMs passed`). Reasons never hold script data. Default: not said.
   */
  logger?: Logger;
};

/**
 * Scripts one process runs at most before it is replaced (ScriptSandboxOptions.maxRunsPerProcess). Every run is
 * already followed by the check that the process is as it was before its first (fingerprint.ts), and a process
 * only ever runs one account's scripts: the bound is for what no check sees, and it weighs against the cost of a
 * new process, about 290 ms of CPU to its first run's end (boot, preparation, code not yet compiled) against 8 ms
 * for a run in a warm one. At 100 that was a quarter of the sandbox's CPU in a burst of one account's scripts (the
 * API bench, alternated runs: 116 and 130 checks/s with a setup script, 162 and 191/s at 500); at 500 it is
 * about 7 %.
 */
export const DEFAULT_MAX_RUNS_PER_PROCESS = 500;

/** Longest account id a request may carry, characters. */
const MAX_ACCOUNT_ID_LENGTH = 200;

/**
 * The uids (and gids) script processes run as (run users): 61 000 to 61 255, below the
 * 65 534 of `nobody` and inside the 65 536 ids a user-namespaced container maps.
 */
export const DEFAULT_SCRIPT_UIDS = { first: 61_000, count: 256 } as const;

/** A runtime id is one folder name: `2026.04`. */
const RUNTIME_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Context names become globals of the script. */
const CONTEXT_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED_NAMES: ReadonlySet<string> = new Set([
  'require',
  'console',
  'process',
  'globalThis',
  'global',
]);

function integerOption(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new OutpostError(
      'OUTPOST_ERR_CONFIG',
      `ScriptSandbox option ${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * Runs user scripts (setup and teardown of API checks) in child processes, never in the agent
 * (docs/architecture.md, "The agent"): each its own process group under a run user of its own,
 * killed with SIGKILL on a timeout or abort, with a private temp dir, an environment of exactly
 * the request's `env`, Node's permission model (read: the runtime's node_modules and the temp
 * dir; write: the temp dir; no child processes, workers or addons), a memory limit and an
 * output limit. `require` resolves Node built-ins and `runtimes/<runtimeId>/node_modules` only.
 *
 * A process belongs to one account (the request's `accountId`) and runtime once it ran a script
 * of theirs, and runs one script at a time, each in a fresh `vm` context with a folder of its own
 * (cwd, HOME, TMPDIR) removed after it. When a run ends clean (the bootstrap found nothing of it
 * alive and nothing it shares changed: child/run-script.ts), the process waits for the account's
 * next script: at most `maxIdlePerAccount` per account, `maxIdle` in all, each for
 * `idleTimeoutMs`, and for `maxRunsPerProcess` runs. After a limit is hit, or anything else, the
 * process is killed and replaced. A pool of `poolSize` started processes per runtime id that
 * belong to no account yet waits for scripts, so a script starts in a few milliseconds instead
 * of the tens Node needs to boot; the pool refills in the background after each run. `run`
 * never throws: every failure is a result.
 */
export class ScriptSandbox implements ScriptRunner {
  readonly #runtimesDir: string;
  readonly #poolSize: number;
  readonly #timeoutMs: number;
  readonly #heapLimitMb: number;
  readonly #maxOutputBytes: number;
  readonly #tmpRoot: string;
  /** The run users script processes run as. */
  readonly #runUsers: RunUserPool;
  readonly #idle = new Map<string, ScriptProcess[]>();
  /** Processes starting for the pool; a run finding no idle process claims the oldest. */
  readonly #spawning = new Map<string, Set<{ started: Promise<ScriptProcess>; claimed: boolean }>>();
  readonly #active = new Set<{ run: ScriptRun; done: Promise<unknown> }>();
  readonly #maxRunsPerProcess: number;
  readonly #maxIdlePerAccount: number;
  readonly #maxIdle: number;
  readonly #idleTimeoutMs: number;
  /** Idle processes that ran scripts of an account, by `account\0runtime`, oldest first. */
  readonly #accountIdle = new Map<string, IdleEntry[]>();
  /**
   * Processes whose run ended, checking that they are clean; a run of the same account with no warm
   * process of the pool to take may claim one (it waits the few milliseconds the check takes).
   */
  readonly #checking = new Map<
    ScriptProcess,
    { key: string; clean: Promise<string | null>; claimed: boolean }
  >();
  readonly #maxProcessesPerAccount: number;
  /** Live processes of each account (and runtime), by `account\0runtime`. */
  readonly #owned = new Map<string, number>();
  /** Runs waiting for a process of their account: handed one, or null when one of its processes ended. */
  readonly #waiting = new Map<string, ((proc: ScriptProcess | null) => void)[]>();
  /** Processes started so far (for the bench and tests). */
  #started = 0;
  #closing: Promise<void> | null = null;
  readonly #logger: Logger | null;

  /** @throws OutpostError OUTPOST_ERR_CONFIG naming the option when one is out of range. */
  constructor(options: ScriptSandboxOptions = {}) {
    this.#runtimesDir = options.runtimesDir ?? join(PACKAGE_ROOT, 'runtimes');
    this.#poolSize = integerOption('poolSize', options.poolSize, 2, 0, 32);
    this.#timeoutMs = integerOption(
      'timeoutMs',
      options.timeoutMs,
      DEFAULT_SCRIPT_TIMEOUT_MS,
      1,
      2_147_483_647,
    );
    this.#heapLimitMb = integerOption('memoryLimitMb', options.memoryLimitMb, 128, 16, 65_536);
    this.#maxOutputBytes = integerOption(
      'maxOutputBytes',
      options.maxOutputBytes,
      1_048_576,
      1,
      1_073_741_824,
    );
    this.#maxRunsPerProcess = integerOption(
      'maxRunsPerProcess',
      options.maxRunsPerProcess,
      DEFAULT_MAX_RUNS_PER_PROCESS,
      1,
      1_000_000,
    );
    this.#maxIdlePerAccount = integerOption('maxIdlePerAccount', options.maxIdlePerAccount, 4, 0, 256);
    this.#maxIdle = integerOption('maxIdle', options.maxIdle, 16, 0, 4_096);
    this.#idleTimeoutMs = integerOption('idleTimeoutMs', options.idleTimeoutMs, 60_000, 1, 86_400_000);
    this.#maxProcessesPerAccount = integerOption(
      'maxProcessesPerAccount',
      options.maxProcessesPerAccount,
      8,
      1,
      1_024,
    );
    this.#tmpRoot = options.tmpRoot ?? tmpdir();
    this.#logger = options.logger ?? null;
    const uids = options.scriptUids ?? DEFAULT_SCRIPT_UIDS;
    integerOption('scriptUids.first', uids.first, 0, 1, 4_294_967_294 - uids.count);
    integerOption('scriptUids.count', uids.count, 0, 1, 65_536);
    this.#runUsers = new RunUserPool(
      { first: uids.first, count: uids.count },
      { what: 'script', extraDirs: [this.#tmpRoot] },
    );
    guardInspectorSignal();
    if (!existsSync(this.#tmpRoot)) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `ScriptSandbox option tmpRoot must be an existing folder, got ${this.#tmpRoot}`,
      );
    }
  }

  /** Runs one script; resolves its result, never rejects. */
  async run(request: ScriptRunRequest): Promise<ScriptRunResult> {
    const t0 = performance.now();
    const name = typeof request.name === 'string' && request.name !== '' ? request.name : 'script';
    const fail = (code: 'SANDBOX_ERROR' | 'ABORTED', reason: string): ScriptRunResult => ({
      ok: false,
      code,
      reason: `${name} ${reason}`,
      logs: [],
      secrets: [],
      durationMs: 0,
    });
    const problem = this.#problem(request);
    if (problem !== null) return fail('SANDBOX_ERROR', `could not run: ${problem}`);
    if (request.signal?.aborted) return fail('ABORTED', 'was aborted');
    const limits = {
      timeoutMs: Math.min(request.timeoutMs ?? this.#timeoutMs, 2_147_483_647),
      maxOutputBytes: this.#maxOutputBytes,
      heapLimitMb: this.#heapLimitMb,
      dataLimitMb: await this.#dataLimitMb(),
    };
    const run = new ScriptRun({ ...request, name }, limits, t0);
    const done = run.execute(
      () => this.#acquire(request.accountId, request.runtimeId),
      (proc, clean) => this.#afterRun(proc, clean, request.accountId, request.runtimeId),
      (proc, reason) => this.#notReused(proc, reason),
    );
    const entry = { run, done };
    this.#active.add(entry);
    try {
      return await done;
    } catch (err) {
      return fail('SANDBOX_ERROR', `could not run: ${(err as Error).message}`);
    } finally {
      this.#active.delete(entry);
      // Refilled after the run, not during it: spawn() blocks this event loop for milliseconds
      // and a booting Node competes for the CPU with the script.
      this.#refill(request.runtimeId);
    }
  }

  /**
   * Starts the pool of `runtimeId` and resolves once its processes are ready (or failed to
   * start: `run` then reports why). Optional: the pool also fills on first use.
   * @throws OutpostError OUTPOST_ERR_CONFIG when runtimeId is not an installed runtime.
   */
  async warm(runtimeId: string): Promise<void> {
    const problem = this.#runtimeProblem(runtimeId);
    if (problem !== null) throw new OutpostError('OUTPOST_ERR_CONFIG', problem);
    this.#refill(runtimeId);
    await Promise.allSettled([...(this.#spawning.get(runtimeId) ?? [])].map((p) => p.started));
    await Promise.all((this.#idle.get(runtimeId) ?? []).map((p) => p.ready));
  }

  /** How many script processes this sandbox started so far (pool and cold starts). */
  get processesStarted(): number {
    return this.#started;
  }

  /** Stops running scripts (ABORTED), kills the warm processes and removes their temp dirs. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const { run } of this.#active) {
        run.stop('ABORTED', `${run.name} was aborted: the script sandbox closed`);
      }
      const starting = [...this.#spawning.values()].flatMap((set) => [...set].map((p) => p.started));
      for (const started of await Promise.allSettled(starting)) {
        if (started.status === 'fulfilled') await started.value.dispose();
      }
      const idle = [...this.#idle.values()].flat();
      this.#idle.clear();
      for (const entries of this.#accountIdle.values()) {
        for (const { proc, timer } of entries) {
          clearTimeout(timer);
          idle.push(proc);
        }
      }
      this.#accountIdle.clear();
      idle.push(...this.#checking.keys());
      this.#checking.clear();
      for (const waiting of this.#waiting.values()) for (const wake of waiting) wake(null);
      this.#waiting.clear();
      await Promise.all(idle.map((p) => p.dispose()));
      await Promise.allSettled([...this.#active].map(({ done }) => done));
      // Every run user reaped: no process or temp file of a script outlives the sandbox.
      await this.#runUsers.settled();
    })();
    return this.#closing;
  }

  #runtimeProblem(runtimeId: unknown): string | null {
    if (typeof runtimeId !== 'string' || !RUNTIME_ID.test(runtimeId)) {
      return `runtime id ${JSON.stringify(runtimeId)} is not a runtime name`;
    }
    const dir = join(this.#runtimesDir, runtimeId);
    return existsSync(dir) ? null : `runtime ${runtimeId} is not installed (no folder ${dir})`;
  }

  #problem(request: ScriptRunRequest): string | null {
    if (this.#closing !== null) return 'the script sandbox is closed';
    if (typeof request.code !== 'string') return 'the script has no code';
    if (
      typeof request.accountId !== 'string' ||
      request.accountId === '' ||
      request.accountId.length > MAX_ACCOUNT_ID_LENGTH
    ) {
      return `accountId must name the account whose script this is (1 to ${MAX_ACCOUNT_ID_LENGTH} characters)`;
    }
    const runtime = this.#runtimeProblem(request.runtimeId);
    if (runtime !== null) return runtime;
    if (request.timeoutMs !== undefined && !(request.timeoutMs > 0)) {
      return `timeoutMs must be a positive number of milliseconds, got ${String(request.timeoutMs)}`;
    }
    for (const name of Object.keys(request.context ?? {})) {
      if (!CONTEXT_NAME.test(name) || RESERVED_NAMES.has(name)) {
        return `context name ${name} cannot be a global`;
      }
    }
    return null;
  }

  async #spawn(runtimeId: string): Promise<ScriptProcess> {
    const bootstrap = await childBootstrapPath();
    const dataLimitMb = await this.#dataLimitMb();
    const runAs = this.#runUsers.take();
    this.#started++;
    let proc: ScriptProcess;
    try {
      proc = await ScriptProcess.spawn({
        bootstrap,
        runtimeDir: join(this.#runtimesDir, runtimeId),
        runtimeId,
        tmpRoot: this.#tmpRoot,
        heapLimitMb: this.#heapLimitMb,
        dataLimitMb,
        runAs,
      });
    } catch (err) {
      void this.#runUsers.release(runAs);
      throw err;
    }
    // The run ends with its process: whatever it started and left in the temp folders goes too.
    void proc.closed.then(() => this.#runUsers.release(runAs));
    return proc;
  }

  /**
   * The data-segment limit of a script process, MiB: what this Node version maps before any
   * script runs ({@link nodeBaselineDataMb}; 47 MiB on Node 20, 562 MiB on Node 24, whose V8
   * reserves its code range and cage as data) plus the heap limit plus OFF_HEAP_ALLOWANCE_MB.
   * A fixed limit would either not bound Buffers on Node 20 or stop Node 24 from starting.
   */
  async #dataLimitMb(): Promise<number> {
    return (await nodeBaselineDataMb(this.#heapLimitMb)) + this.#heapLimitMb + OFF_HEAP_ALLOWANCE_MB;
  }

  /**
   * An idle process of the account and runtime when one waits (the most recently used); else one
   * of the runtime's pool, which then belongs to the account.
   */
  async #acquire(accountId: string, runtimeId: string): Promise<ScriptProcess> {
    const own = this.#accountIdle.get(accountKey(accountId, runtimeId));
    // The most recently used first: its code and data are the warmest.
    while (own !== undefined && own.length > 0) {
      const entry = own.pop() as IdleEntry;
      clearTimeout(entry.timer);
      if (entry.proc.alive && entry.proc.account === accountId) return entry.proc;
      void entry.proc.dispose();
    }
    const key = accountKey(accountId, runtimeId);
    // Scripts of the account already waiting come first (#release hands them what is checked
    // clean): a burst's next script taking the process its last one just left would starve them.
    const queued = (this.#waiting.get(key)?.length ?? 0) > 0;
    // A process of the account still checking is clean a few milliseconds from now. The warm process of the
    // pool that #fromPool gives next, when it is ready now (one still preparing takes longer than a check),
    // serves this run at once instead, while the account holds fewer processes than it may keep idle (all of
    // them are kept after): back-to-back scripts of one account then alternate between processes, each checked
    // while another runs, and none waits for a check.
    const spare =
      !queued &&
      (this.#owned.get(key) ?? 0) < Math.min(this.#maxIdlePerAccount, this.#maxProcessesPerAccount) &&
      this.#nextWarm(runtimeId)?.isReady === true;
    for (const [checking, entry] of this.#checking) {
      if (queued || spare) break;
      if (entry.key !== key || entry.claimed) continue;
      entry.claimed = true;
      if ((await entry.clean) === null && checking.alive && checking.account === accountId) return checking;
      void checking.dispose();
      break;
    }
    while ((this.#owned.get(key) ?? 0) >= this.#maxProcessesPerAccount && this.#closing === null) {
      const handed = await new Promise<ScriptProcess | null>((resolve) => {
        const waiting = this.#waiting.get(key) ?? [];
        waiting.push(resolve);
        this.#waiting.set(key, waiting);
      });
      if (handed?.alive && handed.account === accountId) return handed;
    }
    // Counted from now, not once the process came: runs arriving while it starts wait too.
    this.#owned.set(key, (this.#owned.get(key) ?? 0) + 1);
    const ended = () => {
      const left = (this.#owned.get(key) ?? 1) - 1;
      if (left > 0) this.#owned.set(key, left);
      else this.#owned.delete(key);
      this.#waiting.get(key)?.shift()?.(null);
    };
    let proc: ScriptProcess;
    try {
      proc = await this.#fromPool(runtimeId);
    } catch (err) {
      ended();
      throw err;
    }
    // A process never runs scripts of two accounts: one that already has an account is not given out.
    if (proc.account !== null && proc.account !== accountId) {
      ended();
      void proc.dispose();
      throw new Error('a process of another account was offered');
    }
    proc.account = accountId;
    void proc.closed.then(ended);
    return proc;
  }

  /** Keeps the process once it said it is clean (#release); disposes of it when it did not. */
  #afterRun(proc: ScriptProcess, clean: Promise<string | null>, accountId: string, runtimeId: string): void {
    if (this.#closing !== null || proc.runs >= this.#maxRunsPerProcess) {
      if (this.#closing === null) this.#notReused(proc, 'maxRunsPerProcess reached');
      void proc.dispose();
      return;
    }
    const entry = { key: accountKey(accountId, runtimeId), clean, claimed: false };
    this.#checking.set(proc, entry);
    void clean.then((notReused) => {
      this.#checking.delete(proc);
      if (notReused !== null) {
        this.#notReused(proc, notReused);
        void proc.dispose();
      } else if (!entry.claimed) this.#release(proc, accountId, runtimeId);
    });
  }

  /** Says at debug level why `proc` runs no further script (ScriptSandboxOptions.logger). */
  #notReused(proc: ScriptProcess, reason: string): void {
    if (this.#closing !== null) return;
    this.#logger?.debug(
      { reason, pid: proc.pid, accountId: proc.account, runtimeId: proc.runtimeId, runs: proc.runs },
      'script process not reused',
    );
  }

  /**
   * Keeps a process that ended its run clean for the account's next script, within the bounds
   * (maxRunsPerProcess, maxIdlePerAccount, maxIdle: the longest idle of any account makes room);
   * else disposes of it.
   */
  #release(proc: ScriptProcess, accountId: string, runtimeId: string): void {
    if (
      this.#closing !== null ||
      !proc.alive ||
      proc.account !== accountId ||
      proc.runs >= this.#maxRunsPerProcess ||
      this.#maxIdle === 0
    ) {
      if (proc.alive && proc.runs >= this.#maxRunsPerProcess)
        this.#notReused(proc, 'maxRunsPerProcess reached');
      else if (proc.alive && this.#maxIdle === 0) this.#notReused(proc, 'maxIdle is 0');
      void proc.dispose();
      return;
    }
    const key = accountKey(accountId, runtimeId);
    const waiter = this.#waiting.get(key)?.shift();
    if (waiter !== undefined) {
      waiter(proc);
      return;
    }
    const own = this.#accountIdle.get(key) ?? [];
    if (own.length >= this.#maxIdlePerAccount) {
      this.#notReused(proc, 'maxIdlePerAccount processes of its account were idle already');
      void proc.dispose();
      return;
    }
    let total = 0;
    for (const entries of this.#accountIdle.values()) total += entries.length;
    if (total >= this.#maxIdle) this.#evictLongestIdle();
    const entry: IdleEntry = {
      proc,
      since: performance.now(),
      timer: setTimeout(() => {
        const at = own.indexOf(entry);
        if (at !== -1) own.splice(at, 1);
        if (own.length === 0 && this.#accountIdle.get(key) === own) this.#accountIdle.delete(key);
        this.#notReused(proc, 'idleTimeoutMs passed');
        void proc.dispose();
      }, this.#idleTimeoutMs),
    };
    entry.timer.unref();
    own.push(entry);
    this.#accountIdle.set(key, own);
    // One that dies while it waits leaves at once.
    proc.onClosed = () => {
      const at = own.indexOf(entry);
      if (at !== -1) {
        own.splice(at, 1);
        clearTimeout(entry.timer);
        this.#notReused(proc, 'its process ended while idle');
      }
      void proc.dispose();
    };
  }

  /** Disposes of the idle process of any account that has waited longest. */
  #evictLongestIdle(): void {
    let oldest: { list: IdleEntry[]; key: string; since: number } | null = null;
    for (const [key, list] of this.#accountIdle) {
      const first = list[0];
      if (first !== undefined && (oldest === null || first.since < oldest.since)) {
        oldest = { list, key, since: first.since };
      }
    }
    const entry = oldest?.list.shift();
    if (entry === undefined || oldest === null) return;
    clearTimeout(entry.timer);
    if (oldest.list.length === 0) this.#accountIdle.delete(oldest.key);
    this.#notReused(entry.proc, 'maxIdle processes were idle: the longest idle made room');
    void entry.proc.dispose();
  }

  /**
   * A warm process of the runtime's pool when one waits; else the oldest one starting for the pool
   * (further along than a new one, and no third Node boots on the same cores); else a new one.
   */
  async #fromPool(runtimeId: string): Promise<ScriptProcess> {
    const proc = this.#nextWarm(runtimeId);
    if (proc !== undefined) {
      this.#idle.get(runtimeId)?.shift();
      return proc;
    }
    for (const pending of this.#spawning.get(runtimeId) ?? []) {
      if (!pending.claimed) {
        pending.claimed = true;
        return pending.started;
      }
    }
    return this.#spawn(runtimeId);
  }

  /**
   * The warm process of the runtime's pool that #fromPool gives next, left in the pool; undefined when none
   * waits. Processes that ended while they waited are dropped from the pool on the way.
   */
  #nextWarm(runtimeId: string): ScriptProcess | undefined {
    const idle = this.#idle.get(runtimeId);
    while (idle !== undefined && idle.length > 0 && !(idle[0] as ScriptProcess).alive) idle.shift();
    return idle?.[0];
  }

  /** Starts processes in the background until `poolSize` wait (or are starting) for the runtime. */
  #refill(runtimeId: string): void {
    if (this.#closing !== null) return;
    const idle = this.#idle.get(runtimeId) ?? [];
    this.#idle.set(runtimeId, idle);
    const spawning = this.#spawning.get(runtimeId) ?? new Set();
    this.#spawning.set(runtimeId, spawning);
    const unclaimed = [...spawning].filter((p) => !p.claimed).length;
    for (let n = idle.length + unclaimed; n < this.#poolSize; n++) {
      const pending = { started: this.#spawn(runtimeId), claimed: false };
      spawning.add(pending);
      pending.started.then(
        (proc) => {
          spawning.delete(pending);
          // Claimed while it started: the run that took it disposes of it.
          if (pending.claimed) return;
          if (this.#closing !== null) {
            void proc.dispose();
            return;
          }
          idle.push(proc);
          // A warm process that dies while it waits leaves the pool; the next run starts another.
          void proc.closed.then(() => {
            const at = idle.indexOf(proc);
            if (at !== -1) idle.splice(at, 1);
            void proc.dispose();
          });
        },
        () => spawning.delete(pending),
      );
    }
  }
}

/** An idle process of an account, since when it waits (`performance.now()`, ms), and its reaping timer. */
type IdleEntry = { proc: ScriptProcess; since: number; timer: NodeJS.Timeout };

/** The key of an account's idle processes of one runtime. */
function accountKey(accountId: string, runtimeId: string): string {
  return `${accountId}\0${runtimeId}`;
}

const baselines = new Map<number, Promise<number>>();

/**
 * VmData of a fresh `node` (this process's binary, with `--max-old-space-size=heapLimitMb`) after
 * start-up, MiB, measured once per heap limit (one short-lived process, ≈ 40 ms, off the event
 * loop) and cached. 0 when it cannot be measured (no /proc): the limit then falls back to heap +
 * off-heap allowance.
 */
export function nodeBaselineDataMb(heapLimitMb: number): Promise<number> {
  let baseline = baselines.get(heapLimitMb);
  if (baseline === undefined) {
    baseline = new Promise<number>((resolve) => {
      execFile(
        process.execPath,
        [
          `--max-old-space-size=${heapLimitMb}`,
          '-e',
          "process.stdout.write(/VmData:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status','utf8'))?.[1] ?? '')",
        ],
        { env: {}, encoding: 'utf8', timeout: 10_000 },
        (err, stdout) => {
          const kb = Number(stdout);
          resolve(err === null && Number.isFinite(kb) && kb > 0 ? Math.ceil(kb / 1024) : 0);
        },
      );
    });
    baselines.set(heapLimitMb, baseline);
  }
  return baseline;
}
