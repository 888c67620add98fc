/** How a script process describes a script's failure (ChildFailure of messages.ts). */
import util from 'node:util';
import type { ChildFailure } from '../messages.js';

/** The file name scripts carry in stack traces; line numbers are the script's own. */
export const SCRIPT_FILENAME = 'script.js';

/** Longest error text reported, characters: a reason is one line, and the parent caps messages. */
const MAX_ERROR_CHARS = 65_536;

function accessDenied(error: unknown): ChildFailure | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; permission?: unknown; resource?: unknown; cause?: unknown };
    if (e.code === 'ERR_ACCESS_DENIED') {
      return {
        code: 'PERMISSION_DENIED',
        permission: typeof e.permission === 'string' && e.permission !== '' ? e.permission : 'access',
        resource: typeof e.resource === 'string' && e.resource !== '' ? e.resource : null,
      };
    }
    current = e.cause;
  }
  return null;
}

/** `Name: message` of an error (anything else inspected), at most 65 536 characters. */
export function errorText(error: unknown): string {
  const text = fullErrorText(error);
  return text.length > MAX_ERROR_CHARS ? text.slice(0, MAX_ERROR_CHARS) : text;
}

function fullErrorText(error: unknown): string {
  if (util.types.isNativeError(error) || error instanceof Error) {
    const name = error.name || 'Error';
    return error.message ? `${name}: ${error.message}` : name;
  }
  return typeof error === 'string'
    ? error
    : util.inspect(error, { depth: 2, breakLength: Number.POSITIVE_INFINITY });
}

/** The first stack frame in the script, as the script's own 1-based line and column. */
function scriptLocation(error: unknown, syntax: boolean): { line: number | null; column: number | null } {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string') return { line: null, column: null };
  const file = SCRIPT_FILENAME.replace('.', '\\.');
  // A compile error starts `script.js:3` with a caret below; a runtime frame reads `(script.js:3:9)`.
  const frame = syntax ? new RegExp(`^${file}:(\\d+)`, 'm').exec(stack) : null;
  if (frame) return { line: Number(frame[1]), column: null };
  const call = new RegExp(`(?:\\(|at )${file}:(\\d+):(\\d+)`).exec(stack);
  return call ? { line: Number(call[1]), column: Number(call[2]) } : { line: null, column: null };
}

/**
 * What a thrown value means: PERMISSION_DENIED (an ERR_ACCESS_DENIED error or cause),
 * OUT_OF_MEMORY (an allocation RangeError), else THREW with the script's line and column.
 *
 * @param syntax true for an error of compiling the script.
 */
export function describeFailure(error: unknown, syntax = false): ChildFailure {
  const denied = accessDenied(error);
  if (denied) return denied;
  // Node 20: "Array buffer allocation failed"; Node 24: "Failed to allocate memory".
  if (
    (error instanceof RangeError || (util.types.isNativeError(error) && error.name === 'RangeError')) &&
    /allocation failed|failed to allocate/i.test(error.message)
  ) {
    return { code: 'OUT_OF_MEMORY', error: errorText(error) };
  }
  return { code: 'THREW', error: errorText(error), syntax, ...scriptLocation(error, syntax) };
}
