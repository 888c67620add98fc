import { randomUUID } from 'node:crypto';
import type { RunLog } from '../protocol/index.js';
import type { ChildFailure, ChildMessage } from './messages.js';
import { MAX_SECRET_LENGTH } from '../common/scrub.js';
import type { ChannelLimits, ProcessExit, ScriptProcess } from './script-process.js';
import type { ScriptFailureCode, ScriptRunRequest, ScriptRunResult } from './types.js';

/** The limits one run is held to. */
export type RunLimits = {
  /** ms, counted from the `run()` call. */
  timeoutMs: number;
  /** Total bytes of log text (UTF-8). */
  maxOutputBytes: number;
  /** MiB, for reasons only (enforced by the process's flags). */
  heapLimitMb: number;
  dataLimitMb: number;
};

/** Longest a process may take, after a run's result, to say it is clean, ms; past it, it is killed. */
export const CLEAN_TIMEOUT_MS = 10_000;

/** Longest reason kept, characters: a reason is one line of the result's errorMessage. */
const MAX_REASON_LENGTH = 1_000;

/** Node's own report of memory exhaustion, on stderr: of the process (RLIMIT_DATA) or of the heap. */
const MEMORY_EXHAUSTED = /JavaScript heap out of memory|Fatal process out of memory/;
/** V8 says `Reached heap limit` or `Ineffective mark-compacts near heap limit`; the rest are failed mappings. */
const HEAP_LIMIT_REACHED = /heap limit/;
/** Where that report starts: what the script wrote to stderr before it is kept as logs. */
const FATAL_REPORT_START = /^(<--- Last few GCs --->|FATAL ERROR:|#\s*Fatal)/;

/** Most log lines a run keeps (each costs the agent memory beyond its text); past it, OUTPUT_LIMIT. */
export const MAX_LOG_LINES = 20_000;
/** Bytes of the stderr tail kept to recognise Node's fatal memory report. */
const STDERR_TAIL_BYTES = 65_536;

/**
 * The caps of what the agent reads from one script process (ChannelLimits), from the run's
 * output limit and the size of the payload it sent:
 * - a line other than `done` holds at most one log message of `maxOutputBytes` characters
 *   (child/report.ts cuts longer ones), JSON-escaped at most 6 bytes a character, plus its frame: 6 × + 4 KiB;
 * - a `done` line holds the context the script was given as it left it: twice the payload
 *   sent plus 1 MiB (a teardown may grow a body; it cannot make the agent hold more than that);
 * - the channel in all: one `done` line plus 8 × `maxOutputBytes` of framed log lines.
 */
export function channelLimits(maxOutputBytes: number, payloadBytes: number): ChannelLimits {
  const maxLineBytes = 6 * maxOutputBytes + 4_096;
  const maxDoneBytes = 2 * payloadBytes + 1_048_576;
  return { maxLineBytes, maxDoneBytes, maxTotalBytes: maxDoneBytes + 8 * maxOutputBytes + 1_048_576 };
}

type Stop = { code: 'TIMEOUT' | 'ABORTED' | 'OUTPUT_LIMIT'; reason: string };

/**
 * `text` on one line (whitespace around each line break becomes one space), at most
 * MAX_REASON_LENGTH characters. Linear in the text: no regex backtracks over runs of spaces.
 */
export function oneLine(text: string): string {
  const parts: string[] = [];
  let length = 0;
  let start = 0;
  while (start <= text.length && length <= MAX_REASON_LENGTH) {
    const at = text.indexOf('\n', start);
    const end = at === -1 ? text.length : at;
    // Only the first MAX_REASON_LENGTH characters after leading whitespace can be kept.
    const part = text.slice(start, end).trim();
    if (part !== '') {
      parts.push(part.length > MAX_REASON_LENGTH ? part.slice(0, MAX_REASON_LENGTH + 1) : part);
      length += part.length + 1;
    }
    if (at === -1) break;
    start = at + 1;
  }
  const line = parts.join(' ');
  return line.length > MAX_REASON_LENGTH ? `${line.slice(0, MAX_REASON_LENGTH - 1)}…` : line;
}

/** The first `bytes` bytes of `text` as UTF-8, without a broken character at the end. */
function truncateUtf8(text: string, bytes: number): string {
  // At most `bytes` characters can fit: the rest is never encoded.
  return Buffer.from(text.slice(0, bytes), 'utf8')
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

/**
 * Splits a raw stream into lines, stamped with the time the chunk completing them arrived.
 * O(chunk) per chunk: only the new text is searched; an unfinished line is kept as pieces
 * and joined once, when its end arrives.
 */
class LineSplitter {
  #pieces: string[] = [];

  push(text: string, line: (msg: string, time: string) => void): void {
    let start = 0;
    let time: string | null = null;
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', start)) {
      const tail = text.slice(start, at);
      const msg = this.#pieces.length === 0 ? tail : this.#pieces.join('') + tail;
      this.#pieces = [];
      time ??= new Date().toISOString();
      line(msg, time);
      start = at + 1;
    }
    if (start < text.length) this.#pieces.push(text.slice(start));
  }

  flush(line: (msg: string, time: string) => void): void {
    if (this.#pieces.length > 0) line(this.#pieces.join(''), new Date().toISOString());
    this.#pieces = [];
  }
}

function failureReason(name: string, failure: ChildFailure, limits: RunLimits): string {
  switch (failure.code) {
    case 'THREW': {
      if (failure.syntax) {
        return `${name} has a syntax error: ${failure.error}${failure.line === null ? '' : ` (line ${failure.line})`}`;
      }
      const where =
        failure.line === null
          ? ''
          : ` (line ${failure.line}${failure.column === null ? '' : `, column ${failure.column}`})`;
      return `${name} threw ${failure.error}${where}`;
    }
    case 'PERMISSION_DENIED':
      return `${name} was denied ${failure.permission}${failure.resource === null ? '' : `: ${failure.resource}`}`;
    case 'OUT_OF_MEMORY':
      return `${name} ran out of memory: its process may use ${limits.dataLimitMb} MiB (${failure.error})`;
    case 'SANDBOX_ERROR':
      return `${name} could not run: ${failure.error}`;
  }
}

function exitText(exit: ProcessExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/**
 * One script run from the `run()` call to the result: takes a process, gives it the script,
 * collects logs and secrets, enforces the time and output limits (killing the process group),
 * and turns what happened into a ScriptRunResult. Never throws.
 */
export class ScriptRun {
  readonly #request: ScriptRunRequest;
  readonly #limits: RunLimits;
  readonly #t0: number;
  readonly #logs: RunLog[] = [];
  readonly #secrets = new Set<string>();
  readonly #stderr: RunLog[] = [];
  /** The last STDERR_TAIL_BYTES or so of stderr, as pieces (joined once, at the end). */
  #stderrTail: string[] = [];
  /** Index of the oldest piece of #stderrTail still kept. */
  #stderrTailHead = 0;
  #stderrTailLength = 0;
  #outputBytes = 0;
  #stop: Stop | null = null;
  #final: Extract<ChildMessage, { t: 'done' | 'failed' }> | null = null;
  #exitMessage: Extract<ChildMessage, { t: 'exit' }> | null = null;
  #process: ScriptProcess | null = null;
  /** The run's token (ScriptPayload.run): only the bootstrap's own last message carries it. */
  readonly #token = randomUUID();
  /** Raw fd 1/2 bytes the process had written when this run started. */
  #rawOutputAtStart = 0;
  /** True once the bootstrap's last message said the process is fit for another run. */
  #reusable = false;
  #markEnded: () => void = () => {};
  /** Resolves when the bootstrap's last message said `reuse` (the process lives on). */
  readonly #ended = new Promise<void>((resolve) => {
    this.#markEnded = resolve;
  });
  #markClean: (notReused: string | null) => void = () => {};
  /**
   * After `reuse`: null once the bootstrap said `clean` with the run's token; why not when the
   * process found what it shares changed (`unclean`), ended, wrote anything else, or said
   * nothing within CLEAN_TIMEOUT_MS.
   */
  readonly #clean = new Promise<string | null>((resolve) => {
    this.#markClean = resolve;
  });
  /** Why the process of this run may not run another script, once that is known; null while it may. */
  #notReused: string | null = null;
  #sentAt: number | null = null;
  #wake: (value: null) => void = () => {};
  /** Resolves (null) when the run is stopped. */
  readonly #stopped = new Promise<null>((resolve) => {
    this.#wake = resolve;
  });

  /** @param t0 - `performance.now()` at the `run()` call: the time limit counts from there. */
  constructor(request: ScriptRunRequest, limits: RunLimits, t0: number) {
    this.#request = request;
    this.#limits = limits;
    this.#t0 = t0;
  }

  /** The script's name, as reasons start. */
  get name(): string {
    return this.#request.name;
  }

  /**
   * Ends the run early: the process group is killed and the result carries `code`, with
   * `reason` or a standard one. First call wins; no effect once the script settled.
   */
  stop(code: Stop['code'], reason = ''): void {
    if (this.#stop !== null || this.#final !== null) return;
    this.#stop = { code, reason };
    this.#process?.kill();
    this.#wake(null);
  }

  /**
   * Runs the script in the process `acquire` gives (warm or freshly spawned). When the run ended
   * with the bootstrap saying nothing of it is left alive (its token, `reuse`), no limit was hit
   * and nothing was written past the console, the process is handed to `release` alive with a
   * promise of whether it then said `clean` (null: it may run the account's next script; else
   * why not, and it was killed); otherwise it is killed and disposed of here, and `replaced` is
   * told why (`it left a timer pending`, `it hit TIMEOUT`). A process that comes only after the
   * run was stopped (it waited past its time limit) is handed to `release` unused, as clean.
   */
  async execute(
    acquire: () => Promise<ScriptProcess>,
    release: (proc: ScriptProcess, clean: Promise<string | null>) => void = (proc) => void proc.dispose(),
    replaced: (proc: ScriptProcess, reason: string) => void = () => {},
  ): Promise<ScriptRunResult> {
    const remainingMs = Math.max(0, this.#limits.timeoutMs - (performance.now() - this.#t0));
    const timer = setTimeout(() => this.stop('TIMEOUT'), remainingMs);
    const signal = this.#request.signal;
    const onAbort = () => this.stop('ABORTED');
    signal?.addEventListener('abort', onAbort, { once: true });
    let exit: ProcessExit = { code: null, signal: null };
    let ready = false;
    let proc: ScriptProcess | null = null;
    try {
      // A process that takes longer to come than the time limit is not waited for. When it
      // comes, it ran nothing of this run: it goes back as it came (the account's next script
      // takes it), instead of a burst's waiting scripts each costing a process.
      const acquiring = acquire();
      proc = await Promise.race([acquiring, this.#stopped]);
      if (proc === null) {
        acquiring
          .then((late) => {
            late.idle();
            release(late, Promise.resolve(null));
          })
          .catch(() => {});
        return this.#result(null, false, exit);
      }
      this.#process = proc;
      if (this.#stop !== null) proc.kill();
      this.#attach(proc);
      ready = await proc.ready;
      if (ready && this.#stop === null) {
        this.#sentAt = performance.now();
        const { code, env, context } = this.#request;
        const maxOutputBytes = this.#limits.maxOutputBytes;
        this.#rawOutputAtStart = proc.rawOutputBytes;
        const payloadBytes = proc.start({
          code,
          env: env ?? {},
          context: context ?? {},
          maxOutputBytes,
          run: this.#token,
        });
        proc.channelLimits = channelLimits(maxOutputBytes, payloadBytes);
      }
      const ended = await Promise.race([proc.closed, this.#ended.then(() => null)]);
      if (ended === null) {
        // Output written to fd 1/2 just before the last message is read in this turn of the loop.
        await new Promise((resolve) => setImmediate(resolve));
        if (!this.#fitForReuse(proc)) proc.kill();
      }
      if (ended !== null || !proc.alive || !this.#fitForReuse(proc)) exit = await proc.closed;
    } catch (err) {
      return this.#failed('SANDBOX_ERROR', `${this.#request.name} could not run: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (proc !== null) {
        proc.onClosed();
        if (this.#reusable && proc.alive && this.#fitForReuse(proc)) {
          release(proc, this.#awaitClean(proc));
        } else {
          replaced(proc, this.#whyNotReused(proc, ready));
          await proc.dispose();
        }
      }
    }
    return this.#result(proc, ready, exit);
  }

  /**
   * Between the result and `clean`: the process may say nothing else and write nothing; it
   * is killed when it does, and the promise gives why when it does, says `unclean`, ends, or
   * takes longer than CLEAN_TIMEOUT_MS; null when it said `clean`.
   */
  #awaitClean(proc: ScriptProcess): Promise<string | null> {
    const token = this.#token;
    const unfit = (why: string) => {
      proc.kill();
      this.#markClean(why);
    };
    proc.onMessage = (message) => {
      if (message.t === 'clean' && message.run === token) this.#markClean(null);
      else if (message.t === 'unclean' && message.run === token) unfit(message.doubt);
      else unfit('it wrote a message after its result');
    };
    proc.onOutput = () => unfit('it wrote output after its result');
    proc.onOverflow = () => unfit('it wrote past the channel limits after its result');
    proc.onClosed = () => this.#markClean('its process ended before it said clean');
    if (!proc.alive) this.#markClean('its process ended before it said clean');
    const timer = setTimeout(
      () => unfit(`it did not say clean within ${CLEAN_TIMEOUT_MS} ms`),
      CLEAN_TIMEOUT_MS,
    );
    timer.unref();
    return this.#clean.then((notReused) => {
      clearTimeout(timer);
      if (notReused === null) proc.idle();
      return notReused;
    });
  }

  /** Why the process of a run that ended without `reuse` (or past it) is not reused. */
  #whyNotReused(proc: ScriptProcess, ready: boolean): string {
    if (this.#notReused !== null) return this.#notReused;
    if (this.#stop !== null) return `it hit ${this.#stop.code}`;
    if (!ready) return 'its process ended before it was ready';
    if (this.#final !== null && this.#reusable) {
      return proc.rawOutputBytes === this.#rawOutputAtStart
        ? 'its process ended after its result'
        : 'it wrote to stdout or stderr past the console';
    }
    if (this.#final === null) {
      if (this.#exitMessage?.called) return 'it called process.exit';
      return 'its process ended before the script settled';
    }
    return 'its last message did not say the process could be reused';
  }

  /** The run ended clean and the process wrote nothing past the console. */
  #fitForReuse(proc: ScriptProcess): boolean {
    return this.#reusable && this.#stop === null && proc.rawOutputBytes === this.#rawOutputAtStart;
  }

  #attach(proc: ScriptProcess): void {
    const stdout = new LineSplitter();
    const stderr = new LineSplitter();
    proc.onMessage = (message) => this.#message(message);
    proc.channelLimits = channelLimits(this.#limits.maxOutputBytes, 0);
    proc.onOverflow = (what) => this.stop('OUTPUT_LIMIT', `${this.#request.name} ${what}`);
    // Raw fd 1/2 output counts against the output limit as it arrives (each byte once), so an
    // unfinished line can never hold more than the limit; lines are then kept as they end.
    const keep = (into: RunLog[], level: 'INFO' | 'ERROR') => (msg: string, time: string) => {
      if (this.#final !== null) return;
      if (into.length + this.#logs.length >= MAX_LOG_LINES) {
        this.stop('OUTPUT_LIMIT', `${this.#request.name} wrote more than ${MAX_LOG_LINES} lines of output`);
        return;
      }
      into.push({ time, level, msg });
    };
    const stdoutLine = keep(this.#logs, 'INFO');
    const stderrLine = keep(this.#stderr, 'ERROR');
    proc.onOutput = (stream, text) => {
      if (this.#final !== null || (this.#stop !== null && this.#stop.code !== 'OUTPUT_LIMIT')) return;
      if (stream === 'stderr') this.#tailStderr(text);
      if (this.#stop !== null) return;
      const room = this.#limits.maxOutputBytes - this.#outputBytes;
      const fits = this.#count(text) ? text : truncateUtf8(text, room);
      if (stream === 'stdout') stdout.push(fits, stdoutLine);
      else stderr.push(fits, stderrLine);
    };
    proc.onClosed = () => {
      stdout.flush(stdoutLine);
      stderr.flush(stderrLine);
    };
  }

  /** Keeps the last STDERR_TAIL_BYTES of stderr in O(chunk) per chunk. */
  #tailStderr(text: string): void {
    this.#stderrTail.push(text.length > STDERR_TAIL_BYTES ? text.slice(-STDERR_TAIL_BYTES) : text);
    this.#stderrTailLength += Math.min(text.length, STDERR_TAIL_BYTES);
    const tail = this.#stderrTail;
    while (this.#stderrTailLength - (tail[this.#stderrTailHead]?.length ?? 0) >= STDERR_TAIL_BYTES) {
      this.#stderrTailLength -= tail[this.#stderrTailHead]?.length ?? 0;
      this.#stderrTailHead++;
    }
    // Compacted once half of the pieces are dropped: amortised O(1) per piece.
    if (this.#stderrTailHead > 64 && this.#stderrTailHead * 2 > tail.length) {
      this.#stderrTail = tail.slice(this.#stderrTailHead);
      this.#stderrTailHead = 0;
    }
  }

  #message(message: ChildMessage): void {
    // May arrive while the run is still handing its result over.
    if (message.t === 'clean' || message.t === 'unclean') {
      if (this.#reusable && message.run === this.#token) {
        this.#markClean(message.t === 'clean' ? null : message.doubt);
      }
      return;
    }
    // A secret is kept whatever happened before it arrived (a timeout, the output limit, the
    // end of the script): output read before it may hold it, and the caller scrubs with it.
    // Every one is kept (their bytes are bounded by the channel's limits): the caller's scrubber
    // decides, and one too many or too long makes it withhold the run's output, never leak it.
    // A value longer than the scrubber takes is kept one character too long, so it is refused.
    if (message.t === 'secret') {
      const secret = message.value.slice(0, MAX_SECRET_LENGTH + 1);
      if (secret !== '') this.#secrets.add(secret);
      // Secrets count towards the output limit: a script cannot grow this process through them.
      if (this.#stop === null && this.#final === null) this.#count(secret);
      return;
    }
    if (this.#stop !== null || this.#final !== null) return;
    switch (message.t) {
      case 'log':
        this.#log({ time: message.time, level: message.level, msg: message.msg });
        return;
      case 'exit':
        this.#exitMessage = message;
        return;
      case 'done':
      case 'failed':
        this.#final = message;
        if (message.run === this.#token && message.reuse === true) {
          // The bootstrap cleared what the run left and found the process as it was before.
          this.#reusable = true;
          this.#markEnded();
          return;
        }
        // Only the bootstrap's own line (with the token) says why; a forged one says nothing.
        this.#notReused =
          message.run !== this.#token
            ? 'its last message lacked the run token'
            : (message.doubt ?? 'its last message did not say the process could be reused');
        // The script settled: nothing it left running (timers, sockets) may go on.
        this.#process?.kill();
        return;
      case 'ready':
        return;
    }
  }

  /** Counts `text` towards the output limit: true when it fits; else stops the run (OUTPUT_LIMIT). */
  #count(text: string): boolean {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (this.#outputBytes + bytes <= this.#limits.maxOutputBytes) {
      this.#outputBytes += bytes;
      return true;
    }
    this.stop('OUTPUT_LIMIT');
    return false;
  }

  /** Keeps a log line within the output limit; past it, keeps what fits and stops the run. */
  #log(line: RunLog, into: RunLog[] = this.#logs): void {
    if (this.#stop !== null || this.#final !== null) return;
    if (this.#logs.length + this.#stderr.length >= MAX_LOG_LINES) {
      this.stop('OUTPUT_LIMIT', `${this.#request.name} wrote more than ${MAX_LOG_LINES} lines of output`);
      return;
    }
    const room = this.#limits.maxOutputBytes - this.#outputBytes;
    if (this.#count(line.msg)) into.push(line);
    else if (room > 0) into.push({ ...line, msg: truncateUtf8(line.msg, room) });
  }

  #durationMs(): number {
    if (this.#final !== null) return this.#final.durationMs;
    return this.#sentAt === null ? 0 : performance.now() - this.#sentAt;
  }

  #failed(code: ScriptFailureCode, reason: string): ScriptRunResult {
    return {
      ok: false,
      code,
      reason: oneLine(reason),
      logs: this.#logs,
      secrets: [...this.#secrets],
      durationMs: this.#durationMs(),
    };
  }

  #result(proc: ScriptProcess | null, ready: boolean, exit: ProcessExit): ScriptRunResult {
    const name = this.#request.name;
    const stderrTail = this.#stderrTail.slice(this.#stderrTailHead).join('');
    const memoryExhausted = this.#final === null && MEMORY_EXHAUSTED.test(stderrTail);
    // What the script wrote to stderr stays a log; Node's own fatal report does not.
    let stderr = this.#stderr;
    if (memoryExhausted) {
      const cut = stderr.findIndex((line) => FATAL_REPORT_START.test(line.msg));
      if (cut !== -1) stderr = stderr.slice(0, cut);
    }
    this.#logs.push(...stderr.filter((line) => line.msg !== ''));
    if (this.#final?.t === 'done') {
      return {
        ok: true,
        context: this.#final.context,
        logs: this.#logs,
        secrets: [...this.#secrets],
        durationMs: this.#final.durationMs,
      };
    }
    if (this.#final?.t === 'failed') {
      return this.#failed(this.#final.failure.code, failureReason(name, this.#final.failure, this.#limits));
    }
    if (this.#stop !== null) {
      const { code, reason } = this.#stop;
      if (reason !== '') return this.#failed(code, reason);
      if (code === 'TIMEOUT') {
        return this.#failed(code, `${name} timed out after ${this.#limits.timeoutMs} ms`);
      }
      if (code === 'OUTPUT_LIMIT') {
        return this.#failed(code, `${name} wrote more than ${this.#limits.maxOutputBytes} bytes of output`);
      }
      return this.#failed(code, `${name} was aborted`);
    }
    if (memoryExhausted) {
      const limit = HEAP_LIMIT_REACHED.test(stderrTail)
        ? `its JavaScript heap may use ${this.#limits.heapLimitMb} MiB`
        : `its process may use ${this.#limits.dataLimitMb} MiB`;
      return this.#failed('OUT_OF_MEMORY', `${name} ran out of memory: ${limit}`);
    }
    if (!ready) {
      const output = oneLine(proc?.startupOutput ?? '');
      return this.#failed(
        'SANDBOX_ERROR',
        `${name} could not run: its process ended before it was ready (${exitText(exit)})${output === '' ? '' : `: ${output}`}`,
      );
    }
    if (this.#exitMessage?.called) {
      return this.#failed('EXITED', `${name} called process.exit(${this.#exitMessage.code})`);
    }
    if (this.#exitMessage !== null) {
      return this.#failed(
        'EXITED',
        `${name} ended before it finished (exit code ${this.#exitMessage.code}): nothing was left to run while it awaited a promise`,
      );
    }
    return this.#failed('EXITED', `${name} ended with ${exitText(exit)} before it finished`);
  }
}
