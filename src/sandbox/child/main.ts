/**
 * The bootstrap of one script process (docs/architecture.md, "The agent"), bundled to `child.cjs`
 * (src/common/compiled-child.ts).
 *
 * ScriptSandbox starts it as `node --permission … child.cjs <runtimeDir> <runtimeId>` with the
 * script's temp dir as working directory. It says `ready` on fd 3, blocks reading one
 * ScriptPayload from stdin, runs the script as the body of an async function, reports on
 * fd 3 (messages.ts) and exits. One process runs one script.
 *
 * Its bundle must stay self-contained: the permission model lets the process read only that
 * file, the runtime's node_modules and its temp dir. Only `node:` built-ins are imported.
 */
import fs from 'node:fs';
import { realExit } from '../../common/child/channel.js';
import { createScriptConsole } from '../../common/child/console.js';
import { deniedIn, lockDownProcess, requirePermissionModel } from '../../common/child/lockdown.js';
import type { ScriptPayload } from '../messages.js';
import { describeFailure, errorText } from './errors.js';
import { channel, elapsedMs, emitLog, finish, runState, secrets } from './report.js';
import { type Prepared, runScript } from './run-script.js';
import { createScriptRequire } from './script-require.js';

/** Errors of what scripts may not do: `Access to … is not allowed in scripts`. */
const denied = deniedIn('scripts');

function main(): void {
  // Never run a script without the permission model (a wrong flag for this Node version).
  requirePermissionModel('script process', realExit);
  Error.stackTraceLimit = 30;
  process.exit = ((code?: number | string | null) => {
    runState.exitCalled = true;
    return realExit(code as number);
  }) as typeof process.exit;
  process.on('exit', (code) => {
    if (channel.finished) return;
    secrets.sweep(secrets.realEnv, process.env);
    channel.finished = true;
    channel.send({ t: 'exit', code, called: runState.exitCalled });
  });
  process.on('uncaughtException', (err) => {
    finish({ t: 'failed', failure: describeFailure(err), durationMs: elapsedMs() });
  });
  lockDownProcess(denied);
  const prepared: Prepared = { ...createScriptConsole(emitLog), ...createScriptRequire(denied) };
  channel.send({ t: 'ready' });
  let input = '';
  try {
    input = fs.readFileSync(0, 'utf8');
  } catch {
    // The sandbox closed or died while this process waited.
  }
  if (input === '') {
    channel.finished = true;
    realExit(0);
  }
  let payload: ScriptPayload;
  try {
    payload = JSON.parse(input) as ScriptPayload;
  } catch (err) {
    finish({ t: 'failed', failure: { code: 'SANDBOX_ERROR', error: errorText(err) }, durationMs: 0 });
    return;
  }
  void runScript(payload, prepared);
}

main();
