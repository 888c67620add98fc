import type { ChildProcess } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { type LineChannelOptions, readLineChannel } from './line-channel.js';
import { killGroup, type ProcessExit, removeTree, whenGroupEnds } from './process-tree.js';
import { spawnUserProcess, type UserProcessOptions } from './run-users.js';

/**
 * Launching the child processes of user code and of the browser layer (script processes, browser
 * runners, browser hosts), the one way they are all started and ended: Playwright's
 * `processLauncher` shape, launch options in, a handle with `kill` and the exit out.
 */

/** How long `dispose` waits for a SIGKILLed process to be reaped before giving up on it, ms. */
const REAP_TIMEOUT_MS = 5_000;

/** How {@link launchProcess} starts one child and what it is told of it. */
export type LaunchOptions<M> = UserProcessOptions & {
  /** How the child's fd-3 channel is read (line-channel.ts); not read when absent. */
  channel?: LineChannelOptions<M>;
  /** Each chunk of text the child writes to stdout or stderr (UTF-8), uncapped: the caller keeps what it wants. */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /** The group leader exited (its stdio may still be open): before `closed` settles. */
  onExit?: () => void;
  /** The process ended, was reaped and its stdio closed; called once, right before `closed` resolves. */
  onEnd?: () => void;
};

/** A launched child: its process group and private temp dir. */
export type LaunchedProcess = {
  child: ChildProcess;
  /** Undefined when spawning failed. */
  pid: number | undefined;
  /** The private temp dir (cwd, HOME, TMPDIR). */
  tmpDir: string;
  /** Settles when the process ended and its stdio closed; never rejects. */
  closed: Promise<ProcessExit>;
  /** True once the process ended. */
  readonly exited: boolean;
  /** SIGKILLs the whole process group. Safe to call at any time, repeatedly. */
  kill(): void;
  /** Starts the channel's total-bytes and malformed-lines counts over (line-channel.ts); a no-op without a channel. */
  restartChannelCounts(): void;
  /** Kills the process group, waits until it is reaped (at most 5 s), removes the temp dir. Idempotent; never rejects. */
  dispose(): Promise<void>;
};

/**
 * Starts a child through {@link spawnUserProcess} (a run user, a private temp dir, detached in a
 * group of its own, four pipes) and follows it: the channel, stdout and stderr, its end
 * (whenGroupEnds: what it left in its group is SIGKILLed when the leader exits).
 *
 * @returns the handle. Never rejects for a failed spawn (the handle's `closed` then settles with
 *   nulls); rejects as spawnUserProcess does (OutpostError OUTPOST_ERR_ISOLATION, the error of
 *   making or giving the temp dir).
 */
export async function launchProcess<M>(options: LaunchOptions<M>): Promise<LaunchedProcess> {
  const { child, tmpDir } = await spawnUserProcess(options);
  const pid = child.pid;
  let exited = false;
  let disposed: Promise<void> | null = null;
  const closed = whenGroupEnds(child, () => {
    exited = true;
    options.onEnd?.();
  });
  const onExit = options.onExit;
  if (onExit !== undefined) child.once('exit', () => onExit());
  const channel = child.stdio[3] as Readable | null | undefined;
  const reader = channel && options.channel ? readLineChannel<M>(channel, options.channel) : null;
  const onOutput = options.onOutput;
  if (onOutput !== undefined) {
    for (const name of ['stdout', 'stderr'] as const) {
      child[name]?.setEncoding('utf8');
      child[name]?.on('data', (text: string) => onOutput(name, text));
    }
  }
  const kill = () => {
    if (pid !== undefined && !exited) killGroup(pid);
  };
  return {
    child,
    pid,
    tmpDir,
    closed,
    get exited() {
      return exited;
    },
    kill,
    restartChannelCounts() {
      reader?.restartCounts();
    },
    dispose() {
      disposed ??= (async () => {
        kill();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          closed,
          new Promise((resolve) => {
            timer = setTimeout(resolve, REAP_TIMEOUT_MS);
            timer.unref();
          }),
        ]);
        clearTimeout(timer);
        await removeTree(tmpDir);
      })();
      return disposed;
    },
  };
}

/**
 * `current` with as much of `text` as fits in `max` characters: how the launched processes' owners
 * keep a bounded copy of stdout and stderr (Node's own start-up and fatal errors).
 */
export function appendCapped(current: string, text: string, max: number): string {
  return current.length < max ? current + text.slice(0, max - current.length) : current;
}

function nodeVersionAtLeast(major: number, minor: number): boolean {
  const [maj = 0, min = 0] = process.versions.node.split('.').map(Number);
  return maj > major || (maj === major && min >= minor);
}

/** What the Node permission model lets a sandboxed child do ({@link permissionNodeFlags}). */
export type PermissionFlagOptions = {
  /** The child's bootstrap (one self-contained `.cjs` file): readable. */
  bootstrap: string;
  /** runtimes/<id>: its node_modules is readable. */
  runtimeDir: string;
  /** The child's temp dir: readable and writable. */
  tmpDir: string;
  /** V8 old-space limit, MiB. */
  heapLimitMb: number;
  /** Where Node has no `--disable-warning`, `--no-warnings` instead (true) or nothing (false). */
  noWarningsFallback: boolean;
};

/**
 * Node flags of a sandboxed child: the permission model (`--permission` from Node 22.13,
 * `--experimental-permission` before) allowing reads of the bootstrap, the runtime's node_modules
 * and the temp dir, writes of the temp dir only, and nothing else (no child processes, workers,
 * addons, WASI); network where Node ≥ 25 restricts it (API scripts fetch tokens, Playwright's
 * client connects over a WebSocket); `--experimental-vm-modules` (dynamic import in scripts, TEST
 * scripts as ES modules); experimental warnings off; the heap limit.
 */
export function permissionNodeFlags(options: PermissionFlagOptions): string[] {
  const known = process.allowedNodeEnvironmentFlags;
  const nodeModules = join(options.runtimeDir, 'node_modules');
  // Modules are read by their real path: a symlinked node_modules is allowed where it points too.
  let realNodeModules = nodeModules;
  try {
    realNodeModules = realpathSync(nodeModules);
  } catch {
    // Not installed (yet): scripts are told how to install it.
  }
  const flags = [
    known.has('--permission') || nodeVersionAtLeast(22, 13) ? '--permission' : '--experimental-permission',
    `--allow-fs-read=${options.bootstrap}`,
    `--allow-fs-read=${nodeModules}`,
    ...(realNodeModules === nodeModules ? [] : [`--allow-fs-read=${realNodeModules}`]),
    `--allow-fs-read=${options.tmpDir}`,
    `--allow-fs-write=${options.tmpDir}`,
  ];
  if (known.has('--allow-net') || nodeVersionAtLeast(25, 0)) flags.push('--allow-net');
  flags.push('--experimental-vm-modules');
  if (known.has('--disable-warning')) flags.push('--disable-warning=ExperimentalWarning');
  else if (options.noWarningsFallback) flags.push('--no-warnings');
  flags.push(`--max-old-space-size=${options.heapLimitMb}`);
  return flags;
}
