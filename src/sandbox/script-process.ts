import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
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

/** Channel lines read in one turn of the event loop (each costs ~1-2 µs to parse and handle). */
const LINES_PER_TURN = 512;

/** How a `done` line starts (child.cts writes it so); a forged one is held to the same cap. */
const DONE_PREFIX = Buffer.from('{"t":"done"');

/** How long `dispose` waits for a SIGKILLed process to be reaped before giving up on it, ms. */
const REAP_TIMEOUT_MS = 5_000;

/** The shell that applies resource limits before exec-ing node; absent in distroless images. */
const SHELL = '/bin/sh';

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
   * The unprivileged user and group the process runs as (spawn's uid/gid; needs root), or null
   * to run as the agent's own user. Its temp dir is given to that user; the bootstrap, the
   * runtime's node_modules and the folders above them must be readable by it (mode o+rx).
   */
  runAs: ScriptIdentity | null;
};

/** A uid and gid a script process runs as. */
export type ScriptIdentity = { uid: number; gid: number };

/** How a process ended: `code` or `signal` as Node reports them. */
export type ProcessExit = { code: number | null; signal: NodeJS.Signals | null };

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

/** Process groups alive now, killed if this process exits first (the agent crashing must not leave scripts running). */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is gone already.
  }
}

/** Removes a temp dir even when a script made parts of it unreadable (chmod 000). */
async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
    return;
  } catch {
    // Fall through: open up the modes, then try again.
  }
  const open = async (path: string): Promise<void> => {
    await chmod(path, 0o700).catch(() => {});
    const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isDirectory()) await open(join(path, entry.name));
  };
  await open(dir);
  await rm(dir, { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
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
    this.closed = new Promise((resolve) => {
      let settled = false;
      const done = (exit: ProcessExit) => {
        if (settled) return;
        settled = true;
        this.#exited = true;
        if (child.pid !== undefined) liveGroups.delete(child.pid);
        markReady(false);
        resolve(exit);
      };
      child.once('close', (code, signal) => done({ code, signal }));
      // A failed spawn (EAGAIN, EMFILE) may never emit 'close'.
      child.on('error', () => {
        if (child.pid === undefined) done({ code: null, signal: null });
      });
      // Anything left in the group once its leader is gone dies with it.
      child.once('exit', () => {
        if (child.pid !== undefined) killGroup(child.pid);
      });
    });
    for (const stream of child.stdio) stream?.on('error', () => {});
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
    const tmpDir = await realpath(await mkdtemp(join(options.tmpRoot, 'outpost-script-')));
    if (options.runAs !== null) {
      try {
        await chown(tmpDir, options.runAs.uid, options.runAs.gid);
      } catch (err) {
        await removeTree(tmpDir);
        throw err;
      }
    }
    const node = [...nodeFlags(options, tmpDir), options.bootstrap, options.runtimeDir, options.runtimeId];
    const limits = `ulimit -d ${options.dataLimitMb * 1024} 2>/dev/null; ulimit -c 0 2>/dev/null; exec "$0" "$@"`;
    const [command, args] = existsSync(SHELL)
      ? [SHELL, ['-c', limits, process.execPath, ...node]]
      : [process.execPath, node];
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        cwd: tmpDir,
        env: { HOME: tmpDir, TMPDIR: tmpDir },
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
        detached: true,
        ...(options.runAs === null ? {} : { uid: options.runAs.uid, gid: options.runAs.gid }),
      });
    } catch (err) {
      await removeTree(tmpDir);
      throw err;
    }
    if (child.pid !== undefined) {
      liveGroups.add(child.pid);
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        process.once('exit', () => {
          for (const pid of liveGroups) killGroup(pid);
        });
      }
    }
    return new ScriptProcess(child, tmpDir);
  }

  /**
   * Splits the channel into lines in O(chunk) per chunk (only the new chunk is searched),
   * buffering at most one line's cap; past a cap (or the total) the rest is dropped unread.
   */
  #readChannel(markReady: (ready: boolean) => void): void {
    const channel = this.#child.stdio[3] as Readable | null | undefined;
    if (!channel) return;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    /** Whether the line being buffered is a `done` line; null until it passes maxLineBytes. */
    let doneLine: boolean | null = null;
    let totalBytes = 0;
    let malformed = 0;
    let overflowed = false;
    const overflow = (what: string) => {
      overflowed = true;
      pending = [];
      pendingBytes = 0;
      // The rest is read and dropped (a paused pipe would block the child's kill-free exit).
      channel.removeAllListeners('data');
      channel.on('data', () => {});
      channel.resume();
      this.onOverflow(what);
    };
    /** The first bytes of the line being buffered plus `part` (O(prefix), not O(line)). */
    const startsDone = (part: Buffer): boolean => {
      const head: Buffer[] = [];
      let length = 0;
      for (const piece of [...pending.slice(0, DONE_PREFIX.length), part]) {
        if (length >= DONE_PREFIX.length) break;
        head.push(piece);
        length += piece.length;
      }
      return Buffer.concat(head).subarray(0, DONE_PREFIX.length).equals(DONE_PREFIX);
    };
    /** Adds part of a line; when `complete`, parses the line. False once past a cap. O(part). */
    const take = (part: Buffer, complete: boolean): boolean => {
      const limits = this.channelLimits;
      const bytes = pendingBytes + part.length;
      if (bytes > limits.maxLineBytes) {
        doneLine ??= startsDone(part);
        const cap = doneLine ? Math.max(limits.maxDoneBytes, limits.maxLineBytes) : limits.maxLineBytes;
        if (bytes > cap) {
          overflow(`sent a message larger than ${cap} bytes`);
          return false;
        }
      }
      if (!complete) {
        // A copy: a subarray would keep the whole chunk alive.
        pending.push(Buffer.from(part));
        pendingBytes = bytes;
        return true;
      }
      const text =
        pending.length === 0 ? part.toString('utf8') : Buffer.concat([...pending, part]).toString('utf8');
      pending = [];
      pendingBytes = 0;
      doneLine = null;
      // The child never writes an empty line: nothing to parse or keep.
      if (text === '') return true;
      const message = parseChildMessage(text);
      if (message.t === 'log' && message.malformed === true && ++malformed > MAX_MALFORMED_LINES) {
        overflow(`wrote more than ${MAX_MALFORMED_LINES} lines that are not messages to the sandbox`);
        return false;
      }
      if (message.t === 'ready') markReady(true);
      else this.onMessage(message);
      return !overflowed;
    };
    /** Reads lines of `chunk` from `from`, at most LINES_PER_TURN, then lets the event loop turn. */
    const read = (chunk: Buffer, from: number): void => {
      let start = from;
      let lines = 0;
      for (let at = chunk.indexOf(10, start); at !== -1; at = chunk.indexOf(10, start)) {
        // An empty line (the child never writes one) costs nothing.
        if (at > start || pending.length > 0) {
          if (!take(chunk.subarray(start, at), true)) return;
        }
        start = at + 1;
        if (++lines >= LINES_PER_TURN && start < chunk.length) {
          // libuv hands over up to 32 reads of a pipe in one turn of the event loop: the rest
          // of this chunk, and the chunks after it, wait for the next turn.
          channel.pause();
          setImmediate(() => {
            if (overflowed) return;
            read(chunk, start);
            if (!overflowed && !waiting) channel.resume();
          });
          waiting = true;
          return;
        }
      }
      waiting = false;
      if (start < chunk.length) take(chunk.subarray(start), false);
    };
    let waiting = false;
    channel.on('data', (chunk: Buffer) => {
      if (overflowed) return;
      totalBytes += chunk.length;
      const { maxTotalBytes } = this.channelLimits;
      if (totalBytes > maxTotalBytes) {
        overflow(`sent more than ${maxTotalBytes} bytes to the sandbox`);
        return;
      }
      read(chunk, 0);
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
