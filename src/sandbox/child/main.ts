/**
 * The bootstrap of a script process (docs/architecture.md, "The agent"), bundled to `child.cjs`
 * (src/common/compiled-child.ts).
 *
 * ScriptSandbox starts it as `node --permission … child.cjs <runtimeDir> <runtimeId>` with the
 * process's temp dir as working directory. It prepares what every run needs, says `ready` on
 * fd 3, then reads one ScriptPayload per line from stdin and runs each script in a fresh `vm`
 * context (run-script.ts). After each run its last message (`done` or `failed`) carries the
 * run's token and `reuse`: false when the process exits right after the message; true when
 * nothing of the run is left alive, and then, once it found what it shares with runs unchanged,
 * it says `clean` with the token and waits for the next payload (else it says `unclean` with
 * what changed, and exits). A last message with `reuse` false says why in `doubt`. It also exits
 * at the end of stdin.
 *
 * Its bundle must stay self-contained: the permission model lets the process read only that
 * file, the runtime's node_modules and its temp dir. Only `node:` built-ins are imported.
 */
import fs from 'node:fs';
import nodeModule from 'node:module';
import { realExit, stringify } from '../../common/child/channel.js';
import { createScriptConsole, installScriptConsole } from '../../common/child/console.js';
import { deniedIn, lockDownProcess, requirePermissionModel } from '../../common/child/lockdown.js';
import { MAX_DOUBT_LENGTH, type ScriptPayload } from '../messages.js';
import { describeFailure, errorText } from './errors.js';
import { baselineOf } from './fingerprint.js';
import { channel, elapsedMs, emitLog, markDoubt, resetRunState, runState, secrets } from './report.js';
import { activeResources, hostGlobalsOf, type Prepared, runScript, sharedStateChange } from './run-script.js';
import { CHECKED_BUILTINS, createModuleHost } from './script-require.js';

/** Errors of what scripts may not do: `Access to … is not allowed in scripts`. */
const denied = deniedIn('scripts');

/** Longest payload line read, bytes: the parent never sends more (its own request limits). */
const MAX_PAYLOAD_BYTES = 256 * 1_048_576;

const readSync = fs.readSync;
const pause = new Int32Array(new SharedArrayBuffer(4));
let pending = Buffer.alloc(0);

/** The next line of stdin (blocking), or null at its end. */
function readLine(): string | null {
  const chunk = Buffer.allocUnsafe(65_536);
  for (;;) {
    const at = pending.indexOf(10);
    if (at !== -1) {
      const line = pending.subarray(0, at).toString('utf8');
      pending = pending.subarray(at + 1);
      return line;
    }
    if (pending.length > MAX_PAYLOAD_BYTES) return null;
    let n: number;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 5);
        continue;
      }
      return null;
    }
    if (n === 0) return null;
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}

/**
 * Process-wide settings of `process` a script could change without a trace in its properties:
 * calling one puts the run in doubt (the process is not reused).
 */
function guardProcessSettings(): void {
  const target = process as unknown as Record<string, unknown>;
  for (const name of ['setUncaughtExceptionCaptureCallback', 'setSourceMapsEnabled', 'dlopen']) {
    const real = target[name];
    if (typeof real !== 'function') continue;
    target[name] = (...args: unknown[]) => {
      markDoubt(`it called process.${name}`);
      return Reflect.apply(real, process, args);
    };
  }
  const umask = process.umask;
  target.umask = (...args: unknown[]) => {
    if (args.length > 0 && args[0] !== undefined) markDoubt('it called process.umask');
    return Reflect.apply(umask, process, args);
  };
}

function prepare(): Prepared {
  const tmpDir = process.cwd();
  const chdir = process.chdir.bind(process);
  guardProcessSettings();
  const modules = createModuleHost(denied);
  // Node ≥ 21 deprecates some of them at load (punycode, DEP0040): a warning printed now would
  // reach the first run's logs, and its printing changes process.stderr after the baseline.
  const settings = process as { noDeprecation?: boolean | undefined };
  const noDeprecation = settings.noDeprecation;
  settings.noDeprecation = true;
  const builtins = CHECKED_BUILTINS.map((id) => require(`node:${id}`) as unknown);
  settings.noDeprecation = noDeprecation;
  const hostGlobals = hostGlobalsOf();
  const scriptConsole = createScriptConsole(emitLog);
  installScriptConsole(scriptConsole);
  secrets.installEnv({}, {});
  // The prototypes of the timer objects a run is handed.
  // Node appends to this list as it loads its own modules, during runs too: scripts get a frozen copy.
  const loaded = Object.getOwnPropertyDescriptor(process, 'moduleLoadList');
  if (loaded?.configurable === true && Array.isArray(loaded.value)) {
    Object.defineProperty(process, 'moduleLoadList', { ...loaded, value: Object.freeze([...loaded.value]) });
  }
  const timeout = setTimeout(() => {}, 1);
  const immediate = setImmediate(() => {});
  clearTimeout(timeout);
  clearImmediate(immediate);
  const named: [string, unknown][] = [
    ['globalThis', globalThis],
    ['process', process],
    ['process.stdout', process.stdout],
    ['process.stderr', process.stderr],
    ['console', scriptConsole],
    ['Timeout.prototype', Object.getPrototypeOf(timeout)],
    ['Immediate.prototype', Object.getPrototypeOf(immediate)],
    ['module', nodeModule],
    // Reached through getters, which the walk does not follow.
    ['http.globalAgent', (require('node:http') as typeof import('node:http')).globalAgent],
    ['https.globalAgent', (require('node:https') as typeof import('node:https')).globalAgent],
    ...CHECKED_BUILTINS.map((id, i): [string, unknown] => [id, builtins[i]]),
    ...hostGlobals,
  ];
  const roots = named.map(([, root]) => root);
  return {
    ...scriptConsole,
    modules,
    hostGlobals,
    roots,
    rootNames: named.map(([name]) => name),
    baseline: baselineOf(roots),
    resources: activeResources(),
    tmpDir,
    chdir,
  };
}

/** Settles the run under way with an uncaught error; null between runs. */
let settleRun: ((message: string) => void) | null = null;

function main(): void {
  // Never run a script without the permission model (a wrong flag for this Node version).
  requirePermissionModel('script process', realExit);
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
    markDoubt('an error was not caught');
    if (settleRun === null) realExit(70);
    settleRun?.(stringify({ t: 'failed', failure: describeFailure(err), durationMs: elapsedMs() }));
  });
  lockDownProcess(denied);
  // Prepared once this bundle finished loading (its module says `loaded` from then on).
  setImmediate(() => {
    const prepared = prepare();
    channel.finished = true;
    channel.send({ t: 'ready' });
    void serve(prepared);
  });
}

/** Runs the scripts of stdin one after the other while each leaves the process as it found it. */
async function serve(prepared: Prepared): Promise<void> {
  for (let runNumber = 1; ; runNumber++) {
    const line = readLine();
    if (line === null || line === '') realExit(0);
    let payload: ScriptPayload;
    resetRunState();
    channel.finished = false;
    try {
      payload = JSON.parse(line as string) as ScriptPayload;
    } catch (err) {
      channel.sendLine(
        stringify({ t: 'failed', failure: { code: 'SANDBOX_ERROR', error: errorText(err) }, durationMs: 0 }),
      );
      channel.finished = true;
      realExit(0);
    }
    const token = typeof payload.run === 'string' ? payload.run : '';
    const settled = new Promise<string>((resolve) => {
      settleRun = resolve;
    });
    let end: Awaited<ReturnType<typeof runScript>>;
    try {
      end = await runScript(payload, prepared, runNumber, settled);
    } catch (err) {
      end = {
        message: stringify({
          t: 'failed',
          failure: { code: 'SANDBOX_ERROR', error: errorText(err) },
          durationMs: 0,
        }),
        reuse: false,
        doubt: 'the run failed',
      };
    }
    const reuse = end.reuse && runState.doubt === null && !runState.exitCalled;
    settleRun = null;
    channel.finished = true;
    // The token and `reuse` close the object: a script cannot forge them without the token.
    const why = reuse
      ? ''
      : `,"doubt":${stringify((end.doubt ?? runState.doubt ?? 'it called process.exit').slice(0, MAX_DOUBT_LENGTH))}`;
    channel.sendLine(`${end.message.slice(0, -1)},"run":${stringify(token)},"reuse":${reuse}${why}}`);
    if (!reuse) realExit(0);
    // The result is out; the rest of the check does not hold up the script's caller.
    const change = sharedStateChange(prepared);
    if (change !== null) {
      channel.sendLine(
        `{"t":"unclean","run":${stringify(token)},"doubt":${stringify(change.slice(0, MAX_DOUBT_LENGTH))}}`,
      );
      realExit(0);
    }
    channel.sendLine(`{"t":"clean","run":${stringify(token)}}`);
  }
}

main();
