import type { ProcessExit } from '../common/process-tree.js';
import { type LaunchedProcess, launchProcess, permissionNodeFlags } from '../common/process-launcher.js';
import type { RunUser } from '../common/run-users.js';
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

/** How a `done` line starts (child/report.ts writes it so); a forged one is held to the same cap. */
const DONE_PREFIX = Buffer.from('{"t":"done"');

/** How one script process is started. */
export type ScriptProcessOptions = {
  /** The child bootstrap (child.cjs, bundled from child/main.ts). */
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

/**
 * One child process that runs scripts of one account, one at a time (child/main.ts), launched by
 * src/common/process-launcher.ts: spawned detached (its own process group), in a
 * private temp dir it also uses as HOME and TMPDIR, with an environment of nothing but those
 * two, so no variable of the agent (API_KEY, …) ever reaches it. Resource limits are applied
 * by `/bin/sh` (`ulimit -d`: data segment; `ulimit -c 0`: no core files) before it execs node.
 * Node runs with `--frozen-intrinsics`: the intrinsics of the process's own realm, which every
 * run's context can reach through the Node objects it is given, cannot be changed.
 */
export class ScriptProcess {
  /** Undefined when spawning failed. */
  readonly pid: number | undefined;
  readonly tmpDir: string;
  /** The runtime whose dependencies its scripts require (ScriptProcessOptions.runtimeId). */
  readonly runtimeId: string;
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
  /** The process ended (before `closed` settles for others); set by whoever runs the script. */
  onClosed: () => void = () => {};
  /** What is read from the channel at most; set by whoever runs the script, before `start`. */
  channelLimits: ChannelLimits = IDLE_CHANNEL_LIMITS;
  /**
   * The account whose scripts this process runs: set by the sandbox when a run takes it, never
   * changed (a process never runs scripts of two accounts).
   */
  account: string | null = null;
  /** Scripts given to this process so far. */
  runs = 0;
  /** Bytes written to stdout or stderr past Node's start-up (fd 1/2 writes that bypass the console). */
  rawOutputBytes = 0;
  #startupOutput = '';
  #launched: LaunchedProcess;
  #started = false;
  #ready = false;

  private constructor(launched: LaunchedProcess, ready: Promise<boolean>, runtimeId: string) {
    this.#launched = launched;
    this.runtimeId = runtimeId;
    this.pid = launched.pid;
    this.tmpDir = launched.tmpDir;
    this.ready = ready;
    void ready.then((said) => {
      this.#ready = said;
    });
    this.closed = launched.closed.then((exit) => {
      this.onClosed();
      return exit;
    });
  }

  /**
   * Between runs: the process waits for its next script and says nothing. Any output or message
   * now is not of a run: the process is killed (it leaves its pool when it ends).
   */
  idle(): void {
    this.onMessage = () => this.kill();
    this.onOutput = () => this.kill();
    this.onOverflow = () => this.kill();
    this.onClosed = () => {};
    this.channelLimits = IDLE_CHANNEL_LIMITS;
  }

  /** Creates the temp dir and spawns the process; never throws for a spawn failure (see `ready`). */
  static async spawn(options: ScriptProcessOptions): Promise<ScriptProcess> {
    let markReady: (ready: boolean) => void = () => {};
    const ready = new Promise<boolean>((resolve) => {
      markReady = resolve;
    });
    // Set right after the launch, before any of the child's events can be delivered.
    let self: ScriptProcess | null = null;
    const launched = await launchProcess<ChildMessage>({
      runAs: options.runAs,
      tmpRoot: options.tmpRoot,
      tmpPrefix: 'outpost-script-',
      nodeArgs: (dir) => [
        ...permissionNodeFlags({
          bootstrap: options.bootstrap,
          runtimeDir: options.runtimeDir,
          tmpDir: dir,
          heapLimitMb: options.heapLimitMb,
          noWarningsFallback: false,
        }),
        ...(process.allowedNodeEnvironmentFlags.has('--frozen-intrinsics') ? ['--frozen-intrinsics'] : []),
        options.bootstrap,
        options.runtimeDir,
        options.runtimeId,
      ],
      env: (dir) => ({ HOME: dir, TMPDIR: dir }),
      limits: `ulimit -d ${options.dataLimitMb * 1024} 2>/dev/null`,
      onEnd: () => markReady(false),
      // Read within `channelLimits` (line-channel.ts): `ready` resolves `ready`, the rest go to `onMessage`.
      channel: {
        limits: () => {
          const { maxLineBytes, maxDoneBytes, maxTotalBytes } = self?.channelLimits ?? IDLE_CHANNEL_LIMITS;
          return { maxLineBytes, maxBigLineBytes: maxDoneBytes, maxTotalBytes };
        },
        bigLinePrefix: DONE_PREFIX,
        parse: parseChildMessage,
        isMalformed: (message) => message.t === 'log' && message.malformed === true,
        maxMalformedLines: MAX_MALFORMED_LINES,
        receiver: 'the sandbox',
        onMessage: (message) => {
          if (message.t === 'ready') markReady(true);
          else self?.onMessage(message);
        },
        onOverflow: (what) => self?.onOverflow(what),
      },
      onOutput: (name, text) => {
        if (self !== null) self.#output(name, text);
      },
    });
    self = new ScriptProcess(launched, ready, options.runtimeId);
    return self;
  }

  #output(name: 'stdout' | 'stderr', text: string): void {
    if (this.#started) {
      this.rawOutputBytes += text.length;
      this.onOutput(name, text);
    } else if (this.#startupOutput.length < 16_384) this.#startupOutput += text.slice(0, 16_384);
  }

  /** Output before a script was given (Node start-up errors), at most 16 KiB, for SANDBOX_ERROR reasons. */
  get startupOutput(): string {
    return this.#startupOutput;
  }

  /** False once the process ended. */
  get alive(): boolean {
    return !this.#launched.exited;
  }

  /** True once the child said `ready` (as `ready` resolves) and while it lives: a script given now starts at once. */
  get isReady(): boolean {
    return this.#ready && this.alive;
  }

  /**
   * Gives the process its next script (one line on stdin), after the last message of the one
   * before said `reuse`; returns the payload's size, bytes (UTF-8). The channel's caps count
   * from here.
   */
  start(payload: ScriptPayload): number {
    this.#started = true;
    this.runs++;
    this.#launched.restartChannelCounts();
    const json = JSON.stringify(payload);
    this.#launched.child.stdin?.write(`${json}\n`);
    return Buffer.byteLength(json, 'utf8');
  }

  /** SIGKILLs the whole process group. Safe to call at any time, repeatedly. */
  kill(): void {
    this.#launched.kill();
  }

  /** Kills the process group, waits until it is reaped (at most 5 s), removes the temp dir. Idempotent. */
  dispose(): Promise<void> {
    return this.#launched.dispose();
  }
}
