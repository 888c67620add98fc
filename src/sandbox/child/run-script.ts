/** Running the one script of a script process, and what it reports when the script ends. */
import vm from 'node:vm';
import { now, stringify } from '../../common/child/channel.js';
import { installScriptConsole, type ScriptConsole } from '../../common/child/console.js';
import type { ScriptPayload } from '../messages.js';
import { describeFailure, errorText, SCRIPT_FILENAME } from './errors.js';
import { elapsedMs, finish, runState, secrets } from './report.js';
import type { ScriptModules } from './script-require.js';

/** What a warm process prepares before it says ready, so a script starts without that cost. */
export type Prepared = ScriptConsole & ScriptModules;

/**
 * Runs `payload.code` as the body of an async function with the payload's context as globals,
 * then finishes with `done` (each context global serialised once) or `failed`.
 */
export async function runScript(payload: ScriptPayload, prepared: Prepared): Promise<void> {
  if (Number.isSafeInteger(payload.maxOutputBytes) && payload.maxOutputBytes > 0) {
    // One character more than the limit: the parent sees the limit passed, not met.
    runState.maxLogChars = payload.maxOutputBytes + 1;
  }
  secrets.installEnv(payload.env, { HOME: process.cwd(), TMPDIR: process.cwd() });
  installScriptConsole(prepared);
  const globals = globalThis as Record<string, unknown>;
  const importModule = prepared.importModule;
  globals.require = prepared.require;
  for (const [name, value] of Object.entries(payload.context)) globals[name] = value;

  let script: () => Promise<unknown>;
  try {
    script = new vm.Script(`(async function () {\n${payload.code}\n})`, {
      filename: SCRIPT_FILENAME,
      lineOffset: -1,
      importModuleDynamically: importModule as unknown as vm.ScriptOptions['importModuleDynamically'],
    }).runInThisContext() as () => Promise<unknown>;
  } catch (err) {
    finish({ t: 'failed', failure: describeFailure(err, true), durationMs: 0 });
    return;
  }
  runState.startedAt = now();
  try {
    await script();
  } catch (err) {
    finish({ t: 'failed', failure: describeFailure(err), durationMs: elapsedMs() });
    return;
  }
  finishDone(payload, globals);
}

/**
 * The `done` message, assembled from each context global serialised once (a teardown's response
 * body may be megabytes); `failed` when one cannot be serialised.
 */
function finishDone(payload: ScriptPayload, globals: Record<string, unknown>): void {
  const durationMs = elapsedMs();
  const fields: string[] = [];
  for (const name of Object.keys(payload.context)) {
    try {
      fields.push(`${stringify(name)}:${stringify(globals[name]) ?? 'null'}`);
    } catch (err) {
      const error = `${name} cannot be returned: ${errorText(err)}`;
      finish({
        t: 'failed',
        failure: { code: 'THREW', error, syntax: false, line: null, column: null },
        durationMs,
      });
      return;
    }
  }
  finish(`{"t":"done","durationMs":${stringify(durationMs)},"context":{${fields.join(',')}}}`);
}
