/** The script's output and secrets, sent on the channel as they come. */
import { BROWSER_SCRIPT_SECRET_PREFIXES, createSecretTracker } from '../../common/child/secrets.js';
import type { LogLevel } from '../messages.js';
import { channel, fitJson, MAX_LINE_BYTES, runState } from './state.js';

/** Sends one log line (cut to `maxLogChars` and to a channel line); past `maxEntries` lines, nothing. */
export function emitLog(level: LogLevel, text: string): void {
  if (channel.finished) return;
  if (++runState.logCount > runState.maxEntries) return;
  const line = text.endsWith('\n') ? text.slice(0, -1) : text;
  const limited = line.length > runState.maxLogChars ? line.slice(0, runState.maxLogChars) : line;
  const msg = fitJson(limited, MAX_LINE_BYTES - 256);
  channel.send({ t: 'log', level, msg, time: new Date().toISOString() });
}

/**
 * `SERVICE_SECRET_*` and `OUTPOST_SECRET_*` values the script sets, reported at once (browser
 * scripts: two prefixes, src/common/child/secrets.ts). A secret too long for one line (escapes) is
 * cut: the agent scrubs at least that much of it.
 */
export const secrets = createSecretTracker({
  prefixes: BROWSER_SCRIPT_SECRET_PREFIXES,
  send: (value) => channel.send({ t: 'secret', value }),
  cutToLine: (value) => fitJson(value, MAX_LINE_BYTES - 64),
});
