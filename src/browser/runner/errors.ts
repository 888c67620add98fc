/** How a runner describes what went wrong (BrowserRunError of messages.ts) and collects it. */
import util from 'node:util';
import type { BrowserRunError, ScriptLocation } from '../messages.js';
import {
  cut,
  errors,
  MAX_DETAIL_CHARS,
  MAX_MESSAGE_CHARS,
  runState,
  SCRIPT_FILENAME,
  stripAnsi,
} from './state.js';

/** The first stack frame in the script, as the script's own 1-based line and column. */
function scriptLocation(error: unknown): ScriptLocation | null {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string') return null;
  const file = SCRIPT_FILENAME.replace('.', '\\.');
  const call = new RegExp(`(?:\\(|at |file://)${file}:(\\d+):(\\d+)`).exec(stack);
  if (call) return { line: Number(call[1]), column: Number(call[2]) };
  // A compile error starts `script.js:3` with a caret below.
  const frame = new RegExp(`^${file}:(\\d+)`, 'm').exec(stack);
  return frame ? { line: Number(frame[1]), column: 1 } : null;
}

function errorKind(error: unknown): 'ASSERTION' | 'TIMEOUT' | 'SCRIPT' {
  if (error !== null && typeof error === 'object') {
    if ('matcherResult' in error) return 'ASSERTION';
    if ((error as { name?: unknown }).name === 'TimeoutError') return 'TIMEOUT';
  }
  return 'SCRIPT';
}

/** The first line of an error's message (`TypeError: …`), without colours, at most 2 048 characters. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error || util.types.isNativeError(error)) {
    const message = stripAnsi(String(error.message ?? '')).trim();
    const first = message.split('\n')[0] ?? '';
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return cut(`${name}${first}` || 'Error', MAX_MESSAGE_CHARS);
  }
  const text = typeof error === 'string' ? error : util.inspect(error, { depth: 2, breakLength: Infinity });
  return cut(text, MAX_MESSAGE_CHARS);
}

/** A thrown value as an error of the script: ASSERTION, TIMEOUT or SCRIPT, with its stack and location. */
export function describeError(error: unknown): BrowserRunError {
  let detail: string | null = null;
  if (error instanceof Error || util.types.isNativeError(error)) {
    // A V8 stack starts with the name and whole message (Playwright's call log included).
    detail = cut(stripAnsi(String(error.stack ?? error.message ?? '')), MAX_DETAIL_CHARS);
  }
  return {
    kind: errorKind(error),
    message: errorMessage(error),
    detail,
    location: scriptLocation(error),
    url: null,
  };
}

/** Keeps an error of the run (past `maxEntries` it is only counted). */
export function addError(error: BrowserRunError): void {
  if (errors.length >= runState.maxEntries) runState.droppedErrors++;
  else errors.push(error);
}

/** Whether an error fails the run (page, console and request errors do not). */
export const failing = (error: BrowserRunError) =>
  error.kind === 'ASSERTION' || error.kind === 'SCRIPT' || error.kind === 'TIMEOUT';
