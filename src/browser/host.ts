import type { ChildProcess } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { compiledChildPath } from '../common/compiled-child.js';
import { appendCapped, launchProcess } from '../common/process-launcher.js';
import { killGroup, removeTree, trackGroup, untrackGroup } from '../common/process-tree.js';
import type { BrowserIdentity } from './identities.js';
import { parseProcStat, readBounded, treePss } from './memory.js';

/** Agent → host command, one JSON line on the host's stdin. */
export type HostCommand =
  /** Probe the browser (open and close a context through the server) within `timeoutMs`, then answer `pong`. */
  | { t: 'ping'; id: number; timeoutMs: number }
  /**
   * The runtime's compatibility check within `timeoutMs`: a page with `data:` content, a script
   * evaluated, a screenshot; answered with `selftest`.
   */
  | { t: 'selftest'; id: number; timeoutMs: number }
  /** Close the server and Chromium, then exit. */
  | { t: 'close' };

/** Host → agent message, one JSON line on the host's fd 3. */
export type HostMessage =
  | {
      t: 'ready';
      /** `ws://127.0.0.1:<port>/<64 hex digits>`. */
      wsEndpoint: string;
      /** Chromium's version as Playwright reports it (`156.0.8078.79`). */
      browserVersion: string;
      /** The runtime's playwright-core version. */
      playwrightVersion: string;
      /** Chromium's browser process; it leads a process group of its own (Playwright starts it detached). */
      browserPid: number;
      /** Null when videos can be recorded, else why not (no ffmpeg). */
      videoNote: string | null;
    }
  | { t: 'pong'; id: number; ok: boolean; error?: string }
  /** The answer to `selftest`: the screenshot's size when it passed, else why it failed. */
  | { t: 'selftest'; id: number; ok: boolean; screenshotBytes?: number; error?: string }
  /** Chromium exited on its own (crashed, killed); the host exits next. */
  | { t: 'closed'; reason: string }
  /** The host could not start; it exits next. */
  | { t: 'error'; message: string };

/** How a process ended: `code` or `signal` as Node reports them. */
export type HostExit = { code: number | null; signal: NodeJS.Signals | null };

/** How one browser host is started. Times are milliseconds. */
export type BrowserHostOptions = {
  /** runtimes/<id>: its node_modules provides playwright-core. */
  runtimeDir: string;
  runtimeId: string;
  /** Where the host's private temp dir (HOME, TMPDIR, Chromium's profile) is created. */
  tmpRoot: string;
  /**
   * The unprivileged user and group the host and its Chromium run as (needs root), or null for
   * the agent's own. The temp dir is given to that user; the bootstrap, the runtime's
   * node_modules and CHROMIUM_PATH must be readable and executable by it.
   */
  runAs: BrowserIdentity;
  /** Chromium's executable; default env CHROMIUM_PATH, else `/usr/bin/chromium`. */
  chromiumPath?: string;
  /** Longest start (Node, Playwright, Chromium, first connection), ms. Default 45 000. */
  startTimeoutMs?: number;
  /** Time between health checks, ms. Default 2 000 (with the timeout: a hung host is noticed within 4.5 s). */
  healthIntervalMs?: number;
  /** How long a health check may take before the host counts as hung, ms. Default 2 500. */
  healthTimeoutMs?: number;
  /**
   * Called once when the host stops being usable: a health check failed or timed out, Chromium
   * or the host exited (not when {@link BrowserHost.close} was called). `reason` is one sentence.
   */
  onFailure?: (reason: string) => void;
};

/** Most bytes kept of the host's stdout and stderr together, for failure reasons. */
const MAX_OUTPUT_BYTES = 16_384;
/** Longest message line read from a host, bytes (its messages are < 1 KiB). */
const MAX_MESSAGE_BYTES = 8192;
/** How long `close` waits for the host to close Chromium itself before SIGKILL, ms. */
const GRACEFUL_CLOSE_MS = 3_000;
/** How long `close` waits for a SIGKILLed host to be reaped, ms. */
const REAP_TIMEOUT_MS = 5_000;
/** PATH of the host: Debian's chromium is a shell script that needs the basic tools. */
const HOST_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Milliseconds option: an integer from 1 to 2³¹−1, else the default. */
function ms(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isInteger(value) && value > 0 && value < 2 ** 31 ? value : fallback;
}

/**
 * One warm Chromium for one runtime, in a child process of its own (host/main.ts, launched by
 * src/common/process-launcher.ts): spawned
 * detached (its own process group), as a run user of its own (src/common/run-users.ts), in a private
 * temp dir (HOME, TMPDIR) with an environment of nothing but that, PATH and CHROMIUM_PATH.
 * Runners of browser checks connect to {@link wsEndpoint}.
 *
 * Its health is checked every `healthIntervalMs` (a context opened and closed through the
 * server, answered within `healthTimeoutMs`), so a hung host (SIGSTOP, a wedged Chromium) is
 * noticed within interval + timeout; Chromium or the host exiting is noticed at once. Either
 * calls `onFailure`; the owner (the pool) replaces the host and closes it.
 */
export class BrowserHost {
  readonly runtimeId: string;
  /** The host child's pid; it leads its process group. */
  readonly pid: number;
  /** The private temp dir (HOME, TMPDIR, Chromium's profile, recorded videos). */
  readonly tmpDir: string;
  /** `ws://127.0.0.1:<port>/<unguessable path>` for `chromium.connect`. */
  readonly wsEndpoint: string;
  readonly browserVersion: string;
  readonly playwrightVersion: string;
  /** Chromium's browser process (leader of Chromium's own process group). */
  readonly browserPid: number;
  /** Null when videos can be recorded, else why not. */
  readonly videoNote: string | null;
  /** The uid the host runs as; null for the agent's own. */
  readonly runAs: BrowserIdentity;
  /** When the host became ready, `performance.now()` milliseconds. */
  readonly startedAt: number;
  /** Settles once the host child ended and was reaped. */
  readonly exited: Promise<HostExit>;
  /** Checks run on this host so far; the pool counts them (and recycles the host after enough). */
  checksRun = 0;
  #child: ChildProcess;
  #options: BrowserHostOptions;
  #failure: string | null = null;
  #closing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | undefined;
  #nextPing = 1;
  #pings = new Map<number, (result: { ok: boolean; error?: string }) => void>();
  #pingInFlight: Promise<boolean> | null = null;
  #selfTests = new Map<number, (answer: Extract<HostMessage, { t: 'selftest' }>) => void>();
  #hasExited = false;

  private constructor(
    child: ChildProcess,
    tmpDir: string,
    ready: Extract<HostMessage, { t: 'ready' }>,
    options: BrowserHostOptions,
    exited: Promise<HostExit>,
    onMessage: { set: (handler: (message: HostMessage) => void) => void },
  ) {
    this.#child = child;
    this.#options = options;
    this.runtimeId = options.runtimeId;
    this.pid = child.pid as number;
    this.tmpDir = tmpDir;
    this.wsEndpoint = ready.wsEndpoint;
    this.browserVersion = ready.browserVersion;
    this.playwrightVersion = ready.playwrightVersion;
    this.browserPid = ready.browserPid;
    this.videoNote = ready.videoNote;
    this.runAs = options.runAs;
    this.startedAt = performance.now();
    this.exited = exited;
    onMessage.set((message) => {
      if (message.t === 'pong') {
        this.#pings.get(message.id)?.({ ok: message.ok, ...(message.error ? { error: message.error } : {}) });
      } else if (message.t === 'selftest') {
        this.#selfTests.get(message.id)?.(message);
      } else if (message.t === 'closed') {
        this.#fail(`the browser host's ${message.reason}`);
      }
    });
    void exited.then((exit) => {
      this.#hasExited = true;
      this.#fail(`the browser host exited (${exit.signal ?? `code ${exit.code}`})`);
    });
    const interval = ms(options.healthIntervalMs, 2_000);
    this.#timer = setInterval(() => {
      if (this.#pingInFlight === null) void this.checkHealth();
    }, interval);
    this.#timer.unref();
  }

  /**
   * Starts a host and resolves once Chromium is up and its server answers.
   *
   * @throws Error saying why the host could not start (the host's own error, its output, or a
   *   timeout); everything it started is killed and its temp dir removed first.
   */
  static async start(options: BrowserHostOptions): Promise<BrowserHost> {
    const bootstrap = await compiledChildPath(import.meta.url, 'host-child');
    const chromiumPath = options.chromiumPath ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    let browserPid: number | null = null;
    let output = '';
    let handler: (message: HostMessage) => void = () => {};
    let pid: number | undefined;
    const launched = await launchProcess<HostMessage | null>({
      runAs: options.runAs,
      tmpRoot: options.tmpRoot,
      tmpPrefix: 'outpost-browser-host-',
      nodeArgs: () => [bootstrap, options.runtimeDir],
      env: (dir) => ({ HOME: dir, TMPDIR: dir, PATH: HOST_PATH, CHROMIUM_PATH: chromiumPath }),
      // Something left holding the host's pipes would delay 'close': Chromium's group dies at 'exit'
      // (the host's own group is killed by the launcher then).
      onExit: () => {
        if (browserPid !== null) killGroup(browserPid);
      },
      // Anything left in the group once its leader is gone dies with it, and Chromium's group too.
      onEnd: () => {
        if (pid !== undefined) killGroup(pid);
        if (browserPid !== null) {
          killGroup(browserPid);
          untrackGroup(browserPid);
        }
      },
      onOutput: (_name, text) => {
        output = appendCapped(output, text, MAX_OUTPUT_BYTES);
      },
      channel: {
        // The host is our own code, but its channel is still read within bounds.
        limits: () => ({
          maxLineBytes: MAX_MESSAGE_BYTES,
          maxBigLineBytes: MAX_MESSAGE_BYTES,
          maxTotalBytes: Number.MAX_SAFE_INTEGER,
        }),
        bigLinePrefix: Buffer.from('{"t":"ready"'),
        parse: parseHostMessage,
        isMalformed: (message) => message === null,
        maxMalformedLines: 10,
        receiver: 'the agent',
        onMessage: (message) => {
          if (message !== null) handler(message);
        },
        onOverflow: () => {
          if (pid !== undefined) killGroup(pid);
        },
      },
    });
    const { child, tmpDir } = launched;
    pid = launched.pid;
    const exited: Promise<HostExit> = launched.closed;
    const first = new Promise<HostMessage | null>((resolve) => {
      handler = resolve;
      void exited.then(() => resolve(null));
    });
    const startTimeoutMs = ms(options.startTimeoutMs, 45_000);
    let timer: NodeJS.Timeout | undefined;
    const message = await Promise.race([
      first,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), startTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    const giveUp = async (why: string): Promise<never> => {
      if (pid !== undefined) killGroup(pid);
      if (browserPid !== null) killGroup(browserPid);
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, REAP_TIMEOUT_MS).unref())]);
      await sweep(tmpDir, options.runAs);
      await removeTree(tmpDir);
      const detail = output.trim().split('\n').slice(-5).join('\n').slice(0, 2048);
      throw new Error(`${why}${detail === '' ? '' : `; its output: ${detail}`}`);
    };
    if (message === 'timeout') return giveUp(`the browser host did not start within ${startTimeoutMs} ms`);
    if (message === null) return giveUp('the browser host exited before it was ready');
    if (message.t === 'error') return giveUp(`the browser host could not start Chromium: ${message.message}`);
    if (message.t !== 'ready') return giveUp(`the browser host sent ${message.t} before ready`);
    // Chromium's group is killed with the host's only if it is really the host's child: a pid
    // taken from the host's word is checked against /proc before it is ever signalled.
    const parent = await readBounded(`/proc/${message.browserPid}/stat`, 1024);
    if (parent === null || parseProcStat(parent)?.ppid !== pid) {
      return giveUp(`the browser host named process ${message.browserPid} as Chromium, not its child`);
    }
    browserPid = message.browserPid;
    trackGroup(browserPid);
    return new BrowserHost(child, tmpDir, message, options, exited, { set: (h) => (handler = h) });
  }

  /** False once a health check failed or the host or Chromium exited. */
  get healthy(): boolean {
    return this.#failure === null;
  }

  /** Why the host is not healthy; null while it is. */
  get failure(): string | null {
    return this.#failure;
  }

  /**
   * Checks health now (one probe at a time: a call during a probe shares it): resolves true
   * when the host answered within `healthTimeoutMs` that it opened and closed a context. A
   * failure marks the host unhealthy and calls `onFailure`.
   */
  checkHealth(): Promise<boolean> {
    if (this.#failure !== null || this.#closing !== null) return Promise.resolve(false);
    this.#pingInFlight ??= this.#ping().finally(() => {
      this.#pingInFlight = null;
    });
    return this.#pingInFlight;
  }

  async #ping(): Promise<boolean> {
    const timeoutMs = ms(this.#options.healthTimeoutMs, 2_500);
    const id = this.#nextPing++;
    let timer: NodeJS.Timeout | undefined;
    const answer = await new Promise<{ ok: boolean; error?: string } | 'timeout'>((resolve) => {
      this.#pings.set(id, resolve);
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
      // The probe itself gets a little less than the deadline, so a slow probe still answers.
      const command: HostCommand = { t: 'ping', id, timeoutMs: Math.max(1, timeoutMs - 250) };
      this.#child.stdin?.write(`${JSON.stringify(command)}\n`);
    });
    clearTimeout(timer);
    this.#pings.delete(id);
    if (this.#closing !== null || this.#failure !== null) return this.#failure === null;
    if (answer === 'timeout') {
      this.#fail(`the browser host did not answer a health check within ${timeoutMs} ms`);
      return false;
    }
    if (!answer.ok) {
      this.#fail(`the browser host failed a health check: ${answer.error ?? 'no reason given'}`);
      return false;
    }
    return true;
  }

  /**
   * The runtime's compatibility check, run by the host on its own browser (no Playwright client
   * is loaded into the agent): a page with `data:` content, a script evaluated, a screenshot.
   *
   * @param timeoutMs how long it may take, ms.
   * @throws Error saying what failed (or that it took longer than `timeoutMs`).
   */
  async selfTest(timeoutMs: number): Promise<void> {
    if (this.#failure !== null) throw new Error(this.#failure);
    const id = this.#nextPing++;
    let timer: NodeJS.Timeout | undefined;
    const answer = await new Promise<Extract<HostMessage, { t: 'selftest' }> | 'timeout' | 'closed'>(
      (resolve) => {
        this.#selfTests.set(id, resolve);
        timer = setTimeout(() => resolve('timeout'), timeoutMs + 1_000);
        void this.exited.then(() => resolve('closed'));
        const command: HostCommand = { t: 'selftest', id, timeoutMs };
        this.#child.stdin?.write(`${JSON.stringify(command)}\n`);
      },
    );
    clearTimeout(timer);
    this.#selfTests.delete(id);
    if (answer === 'timeout') throw new Error(`the compatibility check took longer than ${timeoutMs} ms`);
    if (answer === 'closed') throw new Error(this.#failure ?? 'the browser host exited');
    if (!answer.ok) throw new Error(answer.error ?? 'the compatibility check failed');
  }

  #fail(reason: string): void {
    if (this.#failure !== null || this.#closing !== null) return;
    this.#failure = reason;
    clearInterval(this.#timer);
    this.#options.onFailure?.(reason);
  }

  /**
   * The proportional set size of the host and everything it started (Chromium and its
   * helpers) together, bytes, from `/proc/<pid>/smaps_rollup` (async, bounded reads).
   *
   * @returns bytes, or null when it cannot be measured (no /proc, the host exited).
   */
  pssBytes(): Promise<number | null> {
    if (this.#hasExited) return Promise.resolve(null);
    return treePss([this.pid, this.browserPid]);
  }

  /**
   * Closes the host: asks a healthy one to close Chromium, SIGKILLs what is left after a moment (its group,
   * Chromium's group, and any process of its uid or naming its temp dir), waits until it is
   * reaped, removes the temp dir. Never calls `onFailure`. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#timer);
      for (const resolve of this.#pings.values()) resolve({ ok: false, error: 'closing' });
      // A failed host (hung, half-crashed) is not trusted to close itself: it is killed at once.
      if (!this.#hasExited && this.#failure === null) {
        const command: HostCommand = { t: 'close' };
        this.#child.stdin?.end(`${JSON.stringify(command)}\n`);
        await waitFor(this.exited, GRACEFUL_CLOSE_MS);
      }
      killGroup(this.pid);
      killGroup(this.browserPid);
      await waitFor(this.exited, REAP_TIMEOUT_MS);
      await sweep(this.tmpDir, this.runAs);
      await removeTree(this.tmpDir);
    })();
    return this.#closing;
  }
}

function waitFor(promise: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Processes that belong to a host but may have left its process groups (Chromium's crashpad
 * handler double-forks to init): every process of its own uid when it has one, else every
 * process whose command line names its temp dir (Chromium's `--user-data-dir` and crashpad's
 * `--database` both sit there).
 */
async function strays(tmpDir: string, runAs: BrowserIdentity | null): Promise<number[]> {
  const names = await readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    if (runAs !== null) {
      const owner = await stat(`/proc/${name}`).catch(() => null);
      if (owner?.uid === runAs.uid) found.push(pid);
      continue;
    }
    const cmdline = await readBounded(`/proc/${name}/cmdline`, 4096);
    if (cmdline?.includes(`${tmpDir}/`)) found.push(pid);
  }
  return found;
}

/** SIGKILLs the host's {@link strays}. */
async function sweep(tmpDir: string, runAs: BrowserIdentity | null): Promise<void> {
  for (const pid of await strays(tmpDir, runAs)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Exited meanwhile.
    }
  }
}

/** One line of the host's channel as a message; null when it is not one. */
export function parseHostMessage(line: string): HostMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  const m = value as Record<string, unknown>;
  switch (m.t) {
    case 'ready':
      return typeof m.wsEndpoint === 'string' &&
        typeof m.browserVersion === 'string' &&
        typeof m.playwrightVersion === 'string' &&
        Number.isInteger(m.browserPid) &&
        (m.browserPid as number) > 1 &&
        (m.videoNote === null || typeof m.videoNote === 'string')
        ? (m as HostMessage)
        : null;
    case 'pong':
      return Number.isInteger(m.id) && typeof m.ok === 'boolean' ? (m as HostMessage) : null;
    case 'selftest':
      return Number.isInteger(m.id) && typeof m.ok === 'boolean' ? (m as HostMessage) : null;
    case 'closed':
      return typeof m.reason === 'string' ? (m as HostMessage) : null;
    case 'error':
      return typeof m.message === 'string' ? (m as HostMessage) : null;
    default:
      return null;
  }
}
