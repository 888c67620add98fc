import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutpostError } from '../common/errors.js';
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
};

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
 * Runs user scripts (setup and teardown of API checks) each in a fresh child process, never in
 * the agent (docs/architecture.md, "The agent"): its own process group killed with SIGKILL on a timeout
 * or abort, its own temp dir (cwd, HOME, TMPDIR) removed afterwards, an environment of exactly
 * the request's `env`, Node's permission model (read: the runtime's node_modules and the temp
 * dir; write: the temp dir; no child processes, workers or addons), a memory limit and an
 * output limit. `require` resolves Node built-ins and `runtimes/<runtimeId>/node_modules` only.
 *
 * A pool of `poolSize` started processes per runtime id waits for scripts, so a script starts
 * in a few milliseconds instead of the tens Node needs to boot; the pool refills in the
 * background after each run. `run` never throws: every failure is a result.
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
  #closing: Promise<void> | null = null;

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
    this.#tmpRoot = options.tmpRoot ?? tmpdir();
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
    const done = run.execute(() => this.#acquire(request.runtimeId));
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
   * A warm process of the runtime when one waits; else the oldest one starting for the pool
   * (further along than a new one, and no third Node boots on the same cores); else a new one.
   */
  async #acquire(runtimeId: string): Promise<ScriptProcess> {
    const idle = this.#idle.get(runtimeId) ?? [];
    let proc: ScriptProcess | undefined = idle.shift();
    while (proc !== undefined && !proc.alive) proc = idle.shift();
    if (proc !== undefined) return proc;
    for (const pending of this.#spawning.get(runtimeId) ?? []) {
      if (!pending.claimed) {
        pending.claimed = true;
        return pending.started;
      }
    }
    return this.#spawn(runtimeId);
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
