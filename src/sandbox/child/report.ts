/**
 * What a script process reports: the channel (src/common/child/channel.ts), log lines, secrets,
 * and the state of the run under way.
 */
import { now, openChannel } from '../../common/child/channel.js';
import { API_SCRIPT_SECRET_PREFIXES, createSecretTracker } from '../../common/child/secrets.js';
import type { ChildMessage, LogLevel } from '../messages.js';

/** The channel to the sandbox (messages.ts). */
export const channel = openChannel<ChildMessage>();

/** What the run under way changes as it goes; reset at the start of each run. */
export const runState = {
  /** When the script's body started, `performance.now()` ms; null before. */
  startedAt: null as number | null,
  /** True once the script called `process.exit`. */
  exitCalled: false,
  /** The run's output limit (ScriptPayload.maxOutputBytes): no log message is longer, characters. */
  maxLogChars: 1_048_576,
  /** Why this process must not run another script after this run; null while nothing says so. */
  doubt: null as string | null,
};

/** Resets {@link runState} for a new run. */
export function resetRunState(): void {
  runState.startedAt = null;
  runState.exitCalled = false;
  runState.maxLogChars = 1_048_576;
  runState.doubt = null;
}

/** Records why the process must not run another script (the first reason is kept). */
export function markDoubt(why: string): void {
  runState.doubt ??= why;
}

/** `SERVICE_SECRET_*` values the script sets, reported at once (API scripts: one prefix, secrets.ts). */
export const secrets = createSecretTracker({
  prefixes: API_SCRIPT_SECRET_PREFIXES,
  send: (value) => channel.send({ t: 'secret', value }),
});

/** Milliseconds since the script's body started; 0 before. */
export function elapsedMs(): number {
  return runState.startedAt === null ? 0 : now() - runState.startedAt;
}

/** Sends one log line, cut to the run's output limit (the parent refuses longer messages). */
export function emitLog(level: LogLevel, text: string): void {
  const msg = text.endsWith('\n') ? text.slice(0, -1) : text;
  channel.send({
    t: 'log',
    level,
    msg: msg.length > runState.maxLogChars ? msg.slice(0, runState.maxLogChars) : msg,
    time: new Date().toISOString(),
  });
}
