/**
 * The wire between the sandbox (parent) and one script process (child/main.ts).
 *
 * Parent → child: one JSON `ScriptPayload` per line on the child's stdin, the next only after the
 * last message of the one before said `reuse: true`; end of file ends the process.
 * Child → parent: newline-delimited JSON `ChildMessage`s on file descriptor 3, written with
 * blocking writes, so a script that floods its console waits for the parent to read
 * (and is killed at the output limit) instead of queueing output in its own memory.
 */

/** What the child needs to run one script. */
export type ScriptPayload = {
  code: string;
  env: Record<string, string>;
  context: Record<string, unknown>;
  /** The run's output limit, bytes: the child cuts one log message to this many characters. */
  maxOutputBytes: number;
  /**
   * A random token of this run, known to the bootstrap only (never to the script): its last
   * message carries it, so a line the script forges cannot make the parent reuse the process.
   */
  run: string;
};

/** What the bootstrap adds to a run's last message (`done` or `failed`). */
export type RunEndFields = {
  /** The run's token (ScriptPayload.run); absent from a line the script forged. */
  run?: string;
  /**
   * True when nothing of the run is left alive: the process checks what it shares with runs
   * next and says `clean` (or exits). False or absent: the process ends.
   */
  reuse?: boolean;
  /**
   * With `reuse` false: why the process may not run another script (`it left a timer pending`),
   * at most 200 characters; trusted only on a line that carries the run's token.
   */
  doubt?: string;
};

/** Longest reason a script process gives for not being reusable, characters. */
export const MAX_DOUBT_LENGTH = 200;

/** Why the child says the script failed; the parent turns it into a reason. */
export type ChildFailure =
  | {
      code: 'THREW';
      /** `TypeError: x is not a function`, or the thrown value as text. */
      error: string;
      /** True for a script that does not compile. */
      syntax: boolean;
      /** Where in the script, 1-based, when a stack frame points into it. */
      line: number | null;
      column: number | null;
    }
  | { code: 'PERMISSION_DENIED'; permission: string; resource: string | null }
  | { code: 'OUT_OF_MEMORY'; error: string }
  | { code: 'SANDBOX_ERROR'; error: string };

/** Levels of script output (the result's RunLog levels). */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** One line on the child → parent channel. */
export type ChildMessage =
  /** Started and waiting for its script (warm). */
  | { t: 'ready' }
  /**
   * One piece of console or process.stdout/stderr output; `malformed` when the line was not a
   * message at all (a script writing to fd 3 itself) and is kept as output text.
   */
  | { t: 'log'; level: LogLevel; msg: string; time: string; malformed?: true }
  /** A value the script put in `process.env.SERVICE_SECRET_*`, sent at once so it is known even on a kill. */
  | { t: 'secret'; value: string }
  /** The script settled; `context` holds the final values of the globals. */
  | ({ t: 'done'; context: Record<string, unknown>; durationMs: number } & RunEndFields)
  | ({ t: 'failed'; failure: ChildFailure; durationMs: number } & RunEndFields)
  /** The process is exiting before the script settled; `called` when the script called process.exit. */
  | { t: 'exit'; code: number; called: boolean }
  /**
   * After a last message with `reuse`: the process found what it shares with runs as before the
   * first and waits for its next payload; `run` is the token of the run that ended.
   */
  | { t: 'clean'; run: string }
  /**
   * After a last message with `reuse`: the process found what it shares with runs changed and
   * exits; `doubt` says what (`it changed Buffer.prototype.(a property added since)`).
   */
  | { t: 'unclean'; run: string; doubt: string };

const LEVELS: ReadonlySet<string> = new Set(['DEBUG', 'INFO', 'WARN', 'ERROR']);
const FAILURE_CODES: ReadonlySet<string> = new Set([
  'THREW',
  'PERMISSION_DENIED',
  'OUT_OF_MEMORY',
  'SANDBOX_ERROR',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * One channel line as a ChildMessage. The script shares the process, so it can write to fd 3
 * too: a line that is not a well-formed message is kept as INFO output, never trusted.
 */
export function parseChildMessage(line: string): ChildMessage {
  let value: unknown = null;
  // Only a line that can be an object is parsed: a failed JSON.parse costs ~10 µs.
  if (line.startsWith('{')) {
    try {
      value = JSON.parse(line);
    } catch {
      value = null;
    }
  }
  // Built only for a line that is not a message: a clock read costs ~2 µs a line.
  const raw = (): ChildMessage => ({
    t: 'log',
    level: 'INFO',
    msg: line,
    time: new Date().toISOString(),
    malformed: true,
  });
  if (!isRecord(value)) return raw();
  const number = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
  const end = (): RunEndFields => ({
    ...(typeof value.run === 'string' ? { run: value.run } : {}),
    ...(value.reuse === true ? { reuse: true } : {}),
    ...(typeof value.doubt === 'string' ? { doubt: value.doubt.slice(0, MAX_DOUBT_LENGTH) } : {}),
  });
  switch (value.t) {
    case 'ready':
      return { t: 'ready' };
    case 'log':
      if (typeof value.msg !== 'string' || typeof value.level !== 'string' || !LEVELS.has(value.level)) {
        return raw();
      }
      return {
        t: 'log',
        level: value.level as LogLevel,
        msg: value.msg,
        time: typeof value.time === 'string' ? value.time : new Date().toISOString(),
      };
    case 'secret':
      return typeof value.value === 'string' ? { t: 'secret', value: value.value } : raw();
    case 'done':
      return isRecord(value.context)
        ? { t: 'done', context: value.context, durationMs: number(value.durationMs), ...end() }
        : raw();
    case 'failed':
      if (!isRecord(value.failure) || !FAILURE_CODES.has(String(value.failure.code))) return raw();
      return {
        t: 'failed',
        failure: value.failure as ChildFailure,
        durationMs: number(value.durationMs),
        ...end(),
      };
    case 'exit':
      return { t: 'exit', code: number(value.code), called: value.called === true };
    case 'clean':
      return typeof value.run === 'string' ? { t: 'clean', run: value.run } : raw();
    case 'unclean':
      return typeof value.run === 'string' && typeof value.doubt === 'string'
        ? { t: 'unclean', run: value.run, doubt: value.doubt.slice(0, MAX_DOUBT_LENGTH) }
        : raw();
    default:
      return raw();
  }
}
