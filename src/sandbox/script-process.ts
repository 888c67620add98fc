import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { readLineChannel } from '../common/line-channel.js';
import { type RunUser, spawnUserProcess } from '../common/run-users.js';
import { killGroup, type ProcessExit, removeTree, whenGroupEnds } from '../common/process-tree.js';
import { type ChildMessage, parseChildMessage, type ScriptPayload } from './messages.js';

/**
 * What the parent reads from one script process at most (script-run.ts sets them per run). Every
 * line on the channel is parsed from at most `maxLineBytes` buffered bytes (one `done` line
 * from at most `maxDoneBytes`), and the channel as a whole carries at most `maxTotalBytes`:
 * past any of them the parent stops buffering and calls `onOverflow` (the run kills the
 * process), so a script cannot grow the agent's memory through its result channel.
 */
export type ChannelLimits = {
  /** Longest `log`, `secret`, `failed`, `exit` or other line, bytes. */
  maxLineBytes: number;
  /** Longest `done` line (the context as the script left it), bytes. */
  maxDoneBytes: number;
  /** Most bytes read from the channel in all, bytes. */
  maxTotalBytes: number;
};

/** Limits until a run sets its own: a waiting process only says `ready`. */
const IDLE_CHANNEL_LIMITS: ChannelLimits = {
  maxLineBytes: 65_536,
  maxDoneBytes: 65_536,
  maxTotalBytes: 1_048_576,
};

/**
 * Most channel lines that are not messages (a script writing to fd 3 itself) read from one
 * process; past it the run fails. Each costs a failed JSON.parse (~10 µs), so a flood of them
 * could hold the event loop; the child itself never writes one.
 */
export const MAX_MALFORMED_LINES = 100;

/** How a `done` line starts (child.cts writes it so); a forged one is held to the same cap. */
const DONE_PREFIX = Buffer.from('{"t":"done"');

/** How long `dispose` waits for a SIGKILLed process to be reaped before giving up on it, ms. */
const REAP_TIMEOUT_MS = 5_000;

/** How one script process is started. */
export type ScriptProcessOptions = {
  /** The child bootstrap (child.cjs). */
  bootstrap: string;
  /** runtimes/<id>: its node_modules is what scripts may require. */
  runtimeDir: string;
  runtimeId: string;
  /** Where the process's private temp dir is created. */
  tmpRoot: string;
  /** V8 heap limit (old space), MiB. */
  heapLimitMb: number;
  /** RLIMIT_DATA of the process (heap, Buffers, native memory), MiB. */
  dataLimitMb: number;
  /**
   * The run user the process runs as (src/common/run-users.ts: setpriv switches to it, with no
   * capabilities and no_new_privs). Its temp dir is given to that user; the bootstrap, the
   * runtime's node_modules and the folders above them must be readable by it (mode o+rx).
   */
  runAs: ScriptIdentity;
};

/** A uid and gid a script process runs as. */
export type ScriptIdentity = RunUser;

/** How a process ended (see process-tree.ts). */
export type { ProcessExit } from '../common/process-tree.js';

function nodeVersionAtLeast(major: number, minor: number): boolean {
  const [maj = 0, min = 0] = process.versions.node.split('.').map(Number);
  return maj > major || (maj === major && min >= minor);
}

/**
 * Node flags of a script process: the permission model (`--permission` from Node 22.13,
 * `--experimental-permission` before) allowing reads of the bootstrap, the runtime's
 * node_modules and the temp dir, writes of the temp dir only, and nothing else (no child
 * processes, workers, addons, WASI); network where Node ≥ 25 restricts it; the heap limit.
 */
function nodeFlags(options: ScriptProcessOptions, tmpDir: string): string[] {
  const known = process.allowedNodeEnvironmentFlags;
  const flags = [
    known.has('--permission') || nodeVersionAtLeast(22, 13) ? '--permission' : '--experimental-permission',
    `--allow-fs-read=${options.bootstrap}`,
    `--allow-fs-read=${join(options.runtimeDir, 'node_modules')}`,
    `--allow-fs-read=${tmpDir}`,
    `--allow-fs-write=${tmpDir}`,
  ];
  // API scripts fetch tokens: from Node 25 the permission model also guards the network.
  if (known.has('--allow-net') || nodeVersionAtLeast(25, 0)) flags.push('--allow-net');
  // import() in scripts goes through vm's dynamic-import callback, which needs this flag.
  flags.push('--experimental-vm-modules');
  if (known.has('--disable-warning')) flags.push('--disable-warning=ExperimentalWarning');
  flags.push(`--max-old-space-size=${options.heapLimitMb}`);
  return flags;
}

/**
 * One child process that runs one script: spawned detached (its own process group), in a
 * private temp dir it also uses as HOME and TMPDIR, with an environment of nothing but those
 * two, so no variable of the agent (API_KEY, …) ever reaches it. Resource limits are applied
 * by `/bin/sh` (`ulimit -d`: data segment; `ulimit -c 0`: no core files) before it execs node.
 */
export class ScriptProcess {
  /** Undefined when spawning failed. */
  readonly pid: number | undefined;
  readonly tmpDir: string;
  /** True once the child said `ready`; false when it ended before. */
  readonly ready: Promise<boolean>;
  /** Settles when the process ended and its stdio closed. */
  readonly closed: Promise<ProcessExit>;
  /** Channel messages after `ready`; set by whoever runs the script. */
  onMessage: (message: ChildMessage) => void = () => {};
  /** Raw stdout/stderr text (writes to fd 1/2 that bypass process.stdout, Node's own fatal errors). */
  onOutput: (stream: 'stdout' | 'stderr', text: string) => void = () => {};
  /** A channel line or the channel as a whole went past `channelLimits`; what it says is why. */
  onOverflow: (what: string) => void = () => {};
  /** What is read from the channel at most; set by whoever runs the script, before `start`. */
  channelLimits: ChannelLimits = IDLE_CHANNEL_LIMITS;
  #startupOutput = '';
  #child: ChildProcess;
  #exited = false;
  #started = false;
  #disposed: Promise<void> | null = null;

  private constructor(child: ChildProcess, tmpDir: string) {
    this.#child = child;
    this.pid = child.pid;
    this.tmpDir = tmpDir;
    let markReady: (ready: boolean) => void = () => {};
    this.ready = new Promise((resolve) => {
      markReady = resolve;
    });
    this.closed = whenGroupEnds(child, () => {
      this.#exited = true;
      markReady(false);
    });
    this.#readChannel(markReady);
    for (const name of ['stdout', 'stderr'] as const) {
      child[name]?.setEncoding('utf8');
      child[name]?.on('data', (text: string) => {
        if (this.#started) this.onOutput(name, text);
        else if (this.#startupOutput.length < 16_384) this.#startupOutput += text.slice(0, 16_384);
      });
    }
  }

  /** Creates the temp dir and spawns the process; never throws for a spawn failure (see `ready`). */
  static async spawn(options: ScriptProcessOptions): Promise<ScriptProcess> {
    const { child, tmpDir } = await spawnUserProcess({
      runAs: options.runAs,
      tmpRoot: options.tmpRoot,
      tmpPrefix: 'outpost-script-',
      nodeArgs: (dir) => [
        ...nodeFlags(options, dir),
        options.bootstrap,
        options.runtimeDir,
        options.runtimeId,
      ],
      env: (dir) => ({ HOME: dir, TMPDIR: dir }),
      limits: `ulimit -d ${options.dataLimitMb * 1024} 2>/dev/null`,
    });
    return new ScriptProcess(child, tmpDir);
  }

  /** Reads the channel within `channelLimits` (line-channel.ts): `ready` resolves `ready`, the rest go to `onMessage`. */
  #readChannel(markReady: (ready: boolean) => void): void {
    const channel = this.#child.stdio[3] as Readable | null | undefined;
    if (!channel) return;
    readLineChannel<ChildMessage>(channel, {
      limits: () => {
        const { maxLineBytes, maxDoneBytes, maxTotalBytes } = this.channelLimits;
        return { maxLineBytes, maxBigLineBytes: maxDoneBytes, maxTotalBytes };
      },
      bigLinePrefix: DONE_PREFIX,
      parse: parseChildMessage,
      isMalformed: (message) => message.t === 'log' && message.malformed === true,
      maxMalformedLines: MAX_MALFORMED_LINES,
      receiver: 'the sandbox',
      onMessage: (message) => {
        if (message.t === 'ready') markReady(true);
        else this.onMessage(message);
      },
      onOverflow: (what) => this.onOverflow(what),
    });
  }

  /** Output before a script was given (Node start-up errors), at most 16 KiB, for SANDBOX_ERROR reasons. */
  get startupOutput(): string {
    return this.#startupOutput;
  }

  /** False once the process ended. */
  get alive(): boolean {
    return !this.#exited;
  }

  /** Gives the process its script (once); returns the payload's size, bytes (UTF-8). */
  start(payload: ScriptPayload): number {
    this.#started = true;
    const json = JSON.stringify(payload);
    this.#child.stdin?.end(json);
    return Buffer.byteLength(json, 'utf8');
  }

  /** SIGKILLs the whole process group. Safe to call at any time, repeatedly. */
  kill(): void {
    if (this.pid !== undefined && !this.#exited) killGroup(this.pid);
  }

  /** Kills the process group, waits until it is reaped (at most 5 s), removes the temp dir. Idempotent. */
  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      this.kill();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.closed,
        new Promise((resolve) => {
          timer = setTimeout(resolve, REAP_TIMEOUT_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
      await removeTree(this.tmpDir);
    })();
    return this.#disposed;
  }
}
