import { compiledChildPath } from '../common/compiled-child.js';
import {
  appendCapped,
  type LaunchedProcess,
  launchProcess,
  permissionNodeFlags,
} from '../common/process-launcher.js';
import type { ProcessExit } from '../common/process-tree.js';
import type { RunUser } from '../common/run-users.js';
import type {
  BrowserRunReport,
  BrowserStep,
  LogLevel,
  RunnerArtifact,
  RunnerMessage,
  RunnerPayload,
} from './messages.js';
import { parseRunnerMessage } from './runner-messages.js';
import type { BrowserToolName, ToolAnswer, ToolSessionInit } from './tool-messages.js';

/**
 * A tool session on a runner ({@link BrowserRunner.toolSession}): one call at a time, each answered
 * by the runner or failed by the agent's deadline.
 */
export type RunnerToolSession = {
  /**
   * Runs one tool in the runner. Resolves with its answer; with `ok: false` and the reason when the
   * runner did not answer within `timeoutMs` (the runner is then killed: the session is over) or has
   * ended. Never rejects.
   */
  call(
    tool: BrowserToolName | 'run_code',
    args: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<ToolAnswer>;
  /** False once the runner ended (killed, crashed, a channel cap passed). */
  readonly alive: boolean;
  /** Ends the session (end of stdin: the runner closes its context and exits) and waits for the exit, at most 5 s. */
  close(): Promise<void>;
};

/** Longest channel line but `done`, bytes. */
const MAX_LINE_BYTES = 256 * 1024;
/** Longest `done` line (the report), bytes. */
const MAX_DONE_BYTES = 4 * 1024 * 1024;
/** Most bytes read from one runner's channel in all, bytes. */
const MAX_TOTAL_BYTES = 16 * 1024 * 1024;
/** Channel lines that are not messages accepted from one runner; past it the runner is killed. */
const MAX_MALFORMED_LINES = 100;
/** Most log lines, steps, artifacts and secrets kept from one run each (the runner caps by `maxEntries` too). */
const MAX_ENTRIES = 10_000;
/** Most stdout/stderr text kept (Node's own fatal errors), characters. */
const MAX_OUTPUT_CHARS = 16_384;
/** How a `done` line starts (runner/capture.ts writes it so); a forged one is held to the same cap. */
const DONE_PREFIX = Buffer.from('{"t":"done"');
/** How long a runner that said `done` or `error` may take to exit before it is killed, ms. */
const EXIT_GRACE_MS = 2_000;
/** Default time past the run's `timeoutMs` before the process group is killed, ms. */
const DEFAULT_KILL_AFTER_MS = 2_000;
/** Default V8 old-space limit of a runner, MiB. */
const DEFAULT_HEAP_LIMIT_MB = 512;
/** How one browser runner process is started. */
export type BrowserRunnerOptions = {
  /** runtimes/<id>: its node_modules holds playwright-core, @playwright/test and what scripts import. */
  runtimeDir: string;
  runtimeId: string;
  /** Where the runner's private temp dir is created. */
  tmpRoot: string;
  /**
   * The run user the runner runs as (src/common/run-users.ts). The temp dir is given to it; the
   * bootstrap, the runtime's node_modules and the folders above them must be readable by it
   * (mode o+rx).
   */
  runAs: RunUser;
  /** V8 old-space limit, MiB; default 512. */
  heapLimitMb?: number;
  /** Time past the payload's `timeoutMs` before the process group is SIGKILLed, ms; default 2000. */
  killAfterMs?: number;
};

/** How a process ended: `code` or `signal` as Node reports them. */
export type RunnerExit = ProcessExit;

/** A log line of the script (console, stdout/stderr) as the runner sent it. */
export type RunnerLog = { level: LogLevel; msg: string; time: string };

/** What one run produced: never thrown, whatever the script or the runner did. */
export type BrowserRunOutcome = {
  /** The runner's `done` report; null when the runner could not finish (killed, crashed, `error`). */
  report: BrowserRunReport | null;
  /**
   * Why there is no report, in words (`the runner was killed at the deadline`, `the runner
   * exited with signal SIGKILL`, the runner's own `error` message); null with a report.
   */
  failure: string | null;
  /** Script output in order, at most 10 000 lines; `droppedLogs` counts the rest. */
  logs: RunnerLog[];
  droppedLogs: number;
  /** Steps as they ended (a killed run keeps those it finished). */
  steps: BrowserStep[];
  /** Files announced in the temp dir (read them before `dispose`). */
  artifacts: RunnerArtifact[];
  /** Values the script put in `SERVICE_SECRET_*` / `OUTPOST_SECRET_*`: scrub them from everything. */
  secrets: string[];
  /** True when the agent killed the runner (deadline, abort, a channel cap). */
  killed: boolean;
  exit: RunnerExit;
  /** Wall time from the payload's delivery to the process's end, ms. */
  elapsedMs: number;
  /** Text the process wrote to stdout/stderr outside the channel (Node's fatal errors), at most 16 KiB. */
  output: string;
};

/** An answer the agent makes up for a call the runner could not answer. */
function failedAnswer(id: number, why: string): ToolAnswer {
  return { t: 'tool', id, ok: false, output: `Error: ${why}`, code: null, url: '' };
}

/**
 * Node flags of a runner (process-launcher.ts): the permission model allowing reads of the
 * bootstrap, the runtime's node_modules and the temp dir and writes of the temp dir only; no child
 * processes, workers, addons or WASI. Playwright's client needs nothing more: it loads from the
 * runtime's node_modules, connects over a WebSocket (network, granted with `--allow-net` where
 * Node ≥ 25 guards it), writes traces and screenshots where it is told (the temp dir), and makes
 * the stack file of a trace under `os.tmpdir()`: with TMPDIR elsewhere `tracing.start` fails with
 * "Access to this API has been restricted", so the runner pins `os.tmpdir()` to the temp dir.
 * It never launches a browser or ffmpeg (videos are recorded by the browser host's side).
 * `--experimental-vm-modules` runs TEST scripts as ES modules.
 */
function nodeFlags(bootstrap: string, options: BrowserRunnerOptions, tmpDir: string): string[] {
  return permissionNodeFlags({
    bootstrap,
    runtimeDir: options.runtimeDir,
    tmpDir,
    heapLimitMb: options.heapLimitMb ?? DEFAULT_HEAP_LIMIT_MB,
    noWarningsFallback: true,
  });
}

/**
 * One pre-started runner process for one browser or multi-step check (runner/main.ts), launched
 * by src/common/process-launcher.ts: spawned
 * detached (its own process group), in a private temp dir (mode 0700, given to `runAs`) that is
 * also its HOME and TMPDIR, with an environment of nothing else, core dumps off (`ulimit -c 0`).
 * It loads Playwright, says `ready`, and waits for its payload ({@link BrowserRunner.run}).
 */
export class BrowserRunner {
  /** Undefined when spawning failed. */
  readonly pid: number | undefined;
  readonly tmpDir: string;
  /** True once the runner said `ready`; false when it ended before. */
  readonly ready: Promise<boolean>;
  /** Settles when the process ended and its stdio closed. */
  readonly closed: Promise<RunnerExit>;
  /** The Playwright version the runner loaded (its `ready`), or null before. */
  playwrightVersion: string | null = null;
  readonly #launched: LaunchedProcess;
  readonly #killAfterMs: number;
  #started = false;
  #prepared = false;
  #output = '';
  #onMessage: (message: RunnerMessage) => void = () => {};
  #onOverflow: (what: string) => void = () => {};
  #overflow: string | null = null;

  private constructor(launched: LaunchedProcess, ready: Promise<boolean>, killAfterMs: number) {
    this.#launched = launched;
    this.pid = launched.pid;
    this.tmpDir = launched.tmpDir;
    this.#killAfterMs = killAfterMs;
    this.ready = ready;
    this.closed = launched.closed;
  }

  /**
   * Creates the runner's temp dir and spawns it (process-launcher.ts). Never throws for a failed
   * spawn (then `ready` is false); rejects when the temp dir cannot be made or given to `runAs`,
   * or the bootstrap cannot be compiled.
   */
  static async spawn(options: BrowserRunnerOptions): Promise<BrowserRunner> {
    const bootstrap = await compiledChildPath(import.meta.url, 'runner-child');
    let markReady: (ready: boolean) => void = () => {};
    const ready = new Promise<boolean>((resolve) => {
      markReady = resolve;
    });
    // Set right after the launch, before any of the child's events can be delivered.
    let self: BrowserRunner | null = null;
    const launched = await launchProcess<RunnerMessage>({
      runAs: options.runAs,
      tmpRoot: options.tmpRoot,
      tmpPrefix: 'outpost-runner-',
      nodeArgs: (dir) => [
        ...nodeFlags(bootstrap, options, dir),
        bootstrap,
        options.runtimeDir,
        options.runtimeId,
      ],
      env: (dir) => ({ HOME: dir, TMPDIR: dir }),
      onEnd: () => markReady(false),
      onOutput: (_name, text) => {
        if (self !== null) self.#output = appendCapped(self.#output, text, MAX_OUTPUT_CHARS);
      },
      channel: {
        limits: () => ({
          maxLineBytes: MAX_LINE_BYTES,
          maxBigLineBytes: MAX_DONE_BYTES,
          maxTotalBytes: MAX_TOTAL_BYTES,
        }),
        bigLinePrefix: DONE_PREFIX,
        parse: parseRunnerMessage,
        isMalformed: (message) => message.t === 'log' && message.malformed === true,
        maxMalformedLines: MAX_MALFORMED_LINES,
        receiver: 'the agent',
        onMessage: (message) => {
          if (self === null) return;
          if (message.t === 'ready' && self.playwrightVersion === null) {
            self.playwrightVersion = message.playwright;
            markReady(true);
          } else self.#onMessage(message);
        },
        onOverflow: (what) => {
          if (self === null) return;
          self.#overflow = what;
          self.kill();
          self.#onOverflow(what);
        },
      },
    });
    self = new BrowserRunner(launched, ready, options.killAfterMs ?? DEFAULT_KILL_AFTER_MS);
    return self;
  }

  /** Text the process wrote to stdout/stderr outside the channel (Node's start-up and fatal errors), at most 16 KiB. */
  get output(): string {
    return this.#output;
  }

  /** False once the process ended. */
  get alive(): boolean {
    return !this.#launched.exited;
  }

  /**
   * Gives the runner its payload (once) and collects what it reports until it exits. Kills the
   * process group at `payload.timeoutMs + killAfterMs` when no `done` came by then, and at once
   * when `signal` aborts or a channel cap is passed. Never rejects for what the script or the
   * runner did: a failing script is a FAILED report, a runner that could not finish is a null
   * report with `failure` saying why.
   *
   * @throws Error when called a second time (one runner runs one check).
   * @param payload the check to run (messages.ts).
   * @param options.signal aborts the run (the process group is killed).
   */
  async run(payload: RunnerPayload, options: { signal?: AbortSignal } = {}): Promise<BrowserRunOutcome> {
    const logs: RunnerLog[] = [];
    const steps: BrowserStep[] = [];
    const artifacts: RunnerArtifact[] = [];
    const secrets: string[] = [];
    let droppedLogs = 0;
    let report: BrowserRunReport | null = null;
    let runnerError: string | null = null;
    let killedBecause: string | null = null;
    const startedAt = performance.now();
    // A programming error of the caller, not of the script: the one thing run() throws for.
    if (this.#started) throw new Error('a browser runner runs one check');
    this.#started = true;
    let graceTimer: NodeJS.Timeout | undefined;
    // A runner that reported but does not exit (a script's handles) is ended: not a failed run.
    const endSoon = () => {
      graceTimer ??= setTimeout(() => this.kill(), EXIT_GRACE_MS);
    };
    this.#onMessage = (message) => {
      switch (message.t) {
        case 'log':
          if (logs.length < MAX_ENTRIES)
            logs.push({ level: message.level, msg: message.msg, time: message.time });
          else droppedLogs++;
          break;
        case 'secret':
          if (secrets.length < MAX_ENTRIES && !secrets.includes(message.value)) secrets.push(message.value);
          break;
        case 'step':
          if (steps.length < MAX_ENTRIES) steps.push(message.step);
          break;
        case 'artifact':
          if (artifacts.length < MAX_ENTRIES && !artifacts.some((a) => a.name === message.artifact.name)) {
            artifacts.push(message.artifact);
          }
          break;
        case 'done':
          report ??= message.report;
          endSoon();
          break;
        case 'error':
          runnerError ??= message.message;
          endSoon();
          break;
        default:
          break;
      }
    };
    this.#onOverflow = (what) => {
      killedBecause ??= `the runner ${what}`;
    };
    if (this.#overflow !== null) killedBecause = `the runner ${this.#overflow}`;
    const deadline = setTimeout(() => {
      if (report !== null || runnerError !== null) return;
      killedBecause ??= 'the runner was killed at the deadline';
      this.kill();
    }, Math.max(0, payload.timeoutMs) + this.#killAfterMs);
    const abort = () => {
      killedBecause ??= 'the run was aborted';
      this.kill();
    };
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    this.#launched.child.stdin?.end(JSON.stringify(payload));
    const exit = await this.closed;
    clearTimeout(deadline);
    clearTimeout(graceTimer);
    options.signal?.removeEventListener('abort', abort);
    const finalReport = report as BrowserRunReport | null;
    let failure: string | null = null;
    if (finalReport === null) {
      failure =
        killedBecause ??
        runnerError ??
        (exit.signal !== null
          ? `the runner exited with signal ${exit.signal}`
          : `the runner exited with code ${exit.code} before it reported`);
    }
    // Announced in the report or before it: the report's list is the runner's last word.
    for (const artifact of finalReport?.artifacts ?? []) {
      if (!artifacts.some((a) => a.name === artifact.name) && artifacts.length < MAX_ENTRIES)
        artifacts.push(artifact);
    }
    return {
      report: finalReport,
      failure,
      logs,
      droppedLogs,
      steps: finalReport !== null && finalReport.steps.length >= steps.length ? finalReport.steps : steps,
      artifacts,
      secrets,
      killed: killedBecause !== null,
      exit,
      elapsedMs: performance.now() - startedAt,
      output: this.#output,
    };
  }

  /**
   * Starts a tool session instead of a run (tool-messages.ts): the runner connects to `init.wsEndpoint`,
   * opens a fresh page and answers tool calls until {@link RunnerToolSession.close}. One runner runs
   * one check or one session; `signal` kills the runner.
   *
   * @throws Error when the runner already ran or started a session.
   */
  toolSession(init: Omit<ToolSessionInit, 't'>, options: { signal?: AbortSignal } = {}): RunnerToolSession {
    if (this.#started) throw new Error('a browser runner runs one check');
    this.#started = true;
    const waiting = new Map<number, (answer: ToolAnswer) => void>();
    let nextId = 1;
    let ended: string | null = null;
    const endAll = (why: string) => {
      ended ??= why;
      for (const [id, resolve] of waiting)
        resolve(failedAnswer(id, `the browser tool session ended: ${why}`));
      waiting.clear();
    };
    this.#onMessage = (message) => {
      if (message.t === 'tool') {
        const resolve = waiting.get(message.id);
        waiting.delete(message.id);
        resolve?.(message);
      } else if (message.t === 'error') endAll(message.message);
    };
    this.#onOverflow = (what) => endAll(`the runner ${what}`);
    void this.closed.then((exit) =>
      endAll(exit.signal !== null ? `the runner exited with signal ${exit.signal}` : 'the runner exited'),
    );
    const abort = () => {
      endAll('the run was aborted');
      this.kill();
    };
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    const stdin = this.#launched.child.stdin;
    stdin?.on('error', () => {});
    stdin?.write(`${JSON.stringify({ t: 'tools', ...init })}\n`);
    return {
      call: (tool, args, timeoutMs) => {
        const id = nextId++;
        if (ended !== null || !this.alive)
          return Promise.resolve(
            failedAnswer(id, `the browser tool session ended: ${ended ?? 'the runner exited'}`),
          );
        return new Promise<ToolAnswer>((resolve) => {
          const timer = setTimeout(() => {
            if (!waiting.has(id)) return;
            endAll(`the tool ${tool} did not answer within ${timeoutMs} ms`);
            this.kill();
          }, timeoutMs);
          waiting.set(id, (answer) => {
            clearTimeout(timer);
            resolve(answer);
          });
          stdin?.write(`${JSON.stringify({ t: 'call', id, tool, args })}\n`);
        });
      },
      get alive() {
        return ended === null;
      },
      close: async () => {
        options.signal?.removeEventListener('abort', abort);
        stdin?.end();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          this.closed,
          new Promise((resolve) => {
            timer = setTimeout(resolve, 5_000);
          }),
        ]);
        clearTimeout(timer);
        this.kill();
      },
    };
  }

  /**
   * Names the warm browser before the payload comes: the runner connects and prepares its traced
   * context (and first page) while it waits, so the run starts at once. Only before `run`; a runner
   * given another browser's payload later connects to that one instead. Never throws.
   *
   * @param wsEndpoint the browser host's `ws://127.0.0.1:<port>/<path>`.
   */
  prepare(wsEndpoint: string): void {
    if (this.#started || this.#prepared || this.#launched.exited) return;
    this.#prepared = true;
    this.#launched.child.stdin?.write(`${JSON.stringify({ t: 'prepare', wsEndpoint })}\n`);
  }

  /** SIGKILLs the whole process group. Safe to call at any time, repeatedly. */
  kill(): void {
    this.#launched.kill();
  }

  /**
   * Kills the process group, waits until it is reaped (at most 5 s), removes the temp dir with
   * its artifacts (read them before). Idempotent.
   */
  dispose(): Promise<void> {
    return this.#launched.dispose();
  }
}
