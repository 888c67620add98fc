/**
 * Running one script of a script process in a fresh `vm` context, and deciding afterwards whether
 * the process may run another (docs/architecture.md, "API scripts").
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { now, stringify } from '../../common/child/channel.js';
import { installScriptConsole, type ScriptConsole } from '../../common/child/console.js';
import type { ScriptPayload } from '../messages.js';
import { describeFailure, errorText, SCRIPT_FILENAME } from './errors.js';
import {
  describeDifference,
  type Fingerprint,
  fingerprint,
  matchesBaseline,
  namingOf,
} from './fingerprint.js';
import { elapsedMs, markDoubt, runState, secrets } from './report.js';
import type { ModuleHost } from './script-require.js';

/** What a process prepares before it says ready, so a script starts without that cost. */
export type Prepared = ScriptConsole & {
  modules: ModuleHost;
  /** This process's own Node globals handed to each run's context (Buffer, URL, fetch, process…), by name. */
  hostGlobals: ReadonlyMap<string, unknown>;
  /** The roots of the check after each run and what the walk found before the first. */
  roots: readonly unknown[];
  /** What each root is called in a reason (`process`, `Buffer`), by index of `roots`. */
  rootNames: readonly string[];
  baseline: Fingerprint;
  /** Active resources (getActiveResourcesInfo) of the idle process, counted by type. */
  resources: ReadonlyMap<string, number>;
  /** The process's private temp dir: runs get a folder of their own in it. */
  tmpDir: string;
  /** `process.chdir` as it was before any script ran. */
  chdir: (dir: string) => void;
};

/** How one run ended: the last message (JSON, without its newline) and whether the process may run another. */
export type RunEnd = { message: string; reuse: boolean; doubt: string | null };

/** Globals of a context that stay the context's own (its intrinsics) or are made per run. */
const OWN_GLOBALS: ReadonlySet<string> = new Set([
  'global',
  'globalThis',
  'console',
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'setImmediate',
  'clearImmediate',
  // Node's experimental Web Storage is a store of the process: never handed to scripts.
  'localStorage',
  'sessionStorage',
]);

/**
 * The Node globals of this process that a fresh context lacks (Buffer, URL, fetch, process,
 * AbortController, TextEncoder, performance, crypto…), read once.
 */
export function hostGlobalsOf(): Map<string, unknown> {
  const own = new Set(
    vm.runInContext('Object.getOwnPropertyNames(globalThis)', vm.createContext({})) as string[],
  );
  const globals = new Map<string, unknown>();
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (own.has(name) || OWN_GLOBALS.has(name)) continue;
    try {
      globals.set(name, (globalThis as Record<string, unknown>)[name]);
    } catch {
      // A global that cannot be read here is not given.
    }
  }
  return globals;
}

/** Active resources by type (Timeout, TCPSocketWrap, FSReqCallback…), counted. */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** What is alive beyond `baseline`, as text (`TCPSocketWrap ×2`); empty when nothing. */
function resourcesBeyond(baseline: ReadonlyMap<string, number>): string {
  const extra: string[] = [];
  for (const [type, count] of activeResources()) {
    const more = count - (baseline.get(type) ?? 0);
    if (more > 0) extra.push(`${type} ×${more}`);
  }
  return extra.join(', ');
}

type Timer = { _destroyed?: boolean };

/**
 * The timers of one run: each made through the host's functions and remembered, so that at the
 * end of the run every one is cleared and the run knows whether any was still pending.
 */
function runTimers() {
  const made: Timer[] = [];
  const track = <T extends Timer>(timer: T): T => {
    made.push(timer);
    return timer;
  };
  const check = (callback: unknown): ((...args: unknown[]) => unknown) => {
    if (typeof callback !== 'function') {
      throw Object.assign(new TypeError('The "callback" argument must be of type function'), {
        code: 'ERR_INVALID_ARG_TYPE',
      });
    }
    return callback as (...args: unknown[]) => unknown;
  };
  const functions = {
    setTimeout: (callback: unknown, ms?: number, ...args: unknown[]) =>
      track(setTimeout(check(callback), ms, ...args) as unknown as Timer),
    setInterval: (callback: unknown, ms?: number, ...args: unknown[]) =>
      track(setInterval(check(callback), ms, ...args) as unknown as Timer),
    setImmediate: (callback: unknown, ...args: unknown[]) =>
      track(setImmediate(check(callback), ...args) as unknown as Timer),
    clearTimeout: (timer: unknown) => clearTimeout(timer as NodeJS.Timeout),
    clearInterval: (timer: unknown) => clearInterval(timer as NodeJS.Timeout),
    clearImmediate: (timer: unknown) => clearImmediate(timer as NodeJS.Immediate),
  };
  /** Clears every timer of the run; true when one was still pending (not fired, not cleared). */
  const end = (): boolean => {
    let pending = false;
    for (const timer of made) {
      if (timer._destroyed !== true) pending = true;
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as unknown as NodeJS.Immediate);
    }
    return pending;
  };
  return { functions, end };
}

/**
 * Empties the process's temp dir, the cwd (the run's folder and whatever the run wrote beside
 * it); false when something could not be removed.
 */
function emptyTmpDir(): boolean {
  try {
    for (const entry of fs.readdirSync('.'))
      fs.rmSync(entry, { recursive: true, force: true, maxRetries: 0 });
    return fs.readdirSync('.').length === 0;
  } catch {
    return false;
  }
}

/**
 * Runs `payload.code` as the body of an async function in a fresh context, with the payload's
 * context as globals, `require` of its own, tracked timers and a folder of its own as cwd, HOME
 * and TMPDIR. `settle` is called once with the last message (a `done` line, each context global
 * serialised once, or `failed`); the returned promise then says whether the process may run
 * another script: only when the script settled, left no timer, handle or request alive, no
 * temp file that cannot be removed, no change to what it shared with the process, and used
 * nothing that puts that in doubt.
 *
 * @param settled resolves with the last message when an uncaught error ends the run first.
 */
export async function runScript(
  payload: ScriptPayload,
  prepared: Prepared,
  runNumber: number,
  settled: Promise<string>,
): Promise<RunEnd> {
  if (Number.isSafeInteger(payload.maxOutputBytes) && payload.maxOutputBytes > 0) {
    // One character more than the limit: the parent sees the limit passed, not met.
    runState.maxLogChars = payload.maxOutputBytes + 1;
  }
  // Relative to the process's temp dir (its cwd between runs): the folders above it may not be
  // searchable by the run user.
  const runName = `run-${runNumber}`;
  let runDir = path.join(prepared.tmpDir, runName);
  let entered = false;
  try {
    fs.mkdirSync(runName, { mode: 0o700 });
    prepared.chdir(runName);
    entered = true;
  } catch {
    // The permission model refuses paths it cannot resolve (a temp root the run user cannot
    // search): the run uses the process's temp dir, and the process ends with it.
    markDoubt('its temp folder could not be made');
    runDir = prepared.tmpDir;
  }
  if (!secrets.installEnv(payload.env, { HOME: runDir, TMPDIR: runDir })) {
    markDoubt('its environment could not be emptied');
  }
  installScriptConsole(prepared);
  performance.clearMarks();
  performance.clearMeasures();

  const timers = runTimers();
  const context = vm.createContext({}, { name: 'script' });
  const contextGlobal = vm.runInContext('globalThis', context) as Record<string, unknown>;
  const define = (name: string, value: unknown) =>
    Object.defineProperty(contextGlobal, name, {
      value,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  for (const [name, value] of prepared.hostGlobals) define(name, value);
  define('global', contextGlobal);
  define('console', prepared.console);
  for (const [name, fn] of Object.entries(timers.functions)) define(name, fn);
  // Callbacks of these run after the run ended, whenever the engine gets to them.
  (
    vm.runInContext(
      `(doubt) => {
        const wrap = (owner, name) => {
          const real = owner[name];
          if (typeof real !== 'function') return;
          owner[name] = new Proxy(real, {
            apply(target, self, args) { doubt('it used ' + name); return Reflect.apply(target, self, args); },
            construct(target, args, newTarget) { doubt('it used ' + name); return Reflect.construct(target, args, newTarget); },
          });
        };
        wrap(globalThis, 'FinalizationRegistry');
        if (typeof WebAssembly === 'object') {
          for (const name of ['compile', 'instantiate', 'compileStreaming', 'instantiateStreaming']) wrap(WebAssembly, name);
        }
        if (typeof Atomics === 'object') wrap(Atomics, 'waitAsync');
        Error.stackTraceLimit = 30;
      }`,
      context,
    ) as (doubt: (why: string) => void) => void
  )(markDoubt);
  const abortSignal = prepared.hostGlobals.get('AbortSignal');
  if (typeof abortSignal === 'function') {
    define(
      'AbortSignal',
      new Proxy(abortSignal, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver) as unknown;
          if (key === 'timeout' && typeof value === 'function') {
            return (...args: unknown[]) => {
              markDoubt('it used AbortSignal.timeout');
              return Reflect.apply(value, target, args);
            };
          }
          return value;
        },
      }),
    );
  }
  const modules = prepared.modules.forRun(context, markDoubt, { timers: { ...timers.functions } });
  define('require', modules.require);
  const parse = vm.runInContext('JSON.parse', context) as (text: string) => unknown;
  for (const [name, value] of Object.entries(payload.context)) define(name, parse(stringify(value)));

  const message = await Promise.race([
    settled,
    execute(payload, context, contextGlobal, modules.importModule),
  ]);
  // The values left in the environment are secrets of this run's result.
  secrets.sweep(secrets.realEnv, process.env);
  if (timers.end()) markDoubt('it left a timer pending');
  // What the script queued (microtasks, nextTicks, immediates of I/O that just ended) runs now.
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (timers.end()) markDoubt('it left a timer pending');
  const alive = resourcesBeyond(prepared.resources);
  if (alive !== '') markDoubt(`it left ${alive} open`);
  try {
    // Back to the process's temp dir, by the absolute path (a script may have changed directory).
    if (entered || process.cwd() !== prepared.tmpDir) prepared.chdir(prepared.tmpDir);
  } catch {
    markDoubt('it left its working directory');
  }
  if (!emptyTmpDir()) markDoubt('its temp files could not be removed');
  return { message, reuse: runState.doubt === null, doubt: runState.doubt };
}

/**
 * The second half of the check after a run, made once its result is sent (off the script's
 * round trip): null when what the process shares with runs is as it was before the first run
 * (fingerprint.ts) and the environment could be emptied; else why the process must end
 * (`it changed process.env.FOO`).
 */
export function sharedStateChange(prepared: Prepared): string | null {
  prepared.modules.forgetResolutions();
  if (!sharesBaseline(prepared)) {
    // A third walk, naming what it finds, only to say where (the process ends anyway).
    return (
      describeDifference(
        prepared.baseline,
        fingerprint(
          prepared.roots,
          namingOf(prepared.baseline, prepared.rootNames),
          prepared.baseline.sealed,
        ),
      ) ?? 'what it shares changed while it was checked'
    );
  }
  return secrets.installEnv({}, {}) ? null : 'its environment could not be emptied';
}

/**
 * Whether what the process shares with runs is as the baseline recorded it. When the walk finds a difference it
 * is made again: a getter the walk called may have settled a cache the run filled. The first walk stops at the
 * difference, so a whole walk calls every getter once before the second; what counts is that the state is the
 * baseline's when checked after that.
 */
function sharesBaseline(prepared: Prepared): boolean {
  if (matchesBaseline(prepared.roots, prepared.baseline)) return true;
  fingerprint(prepared.roots, undefined, prepared.baseline.sealed);
  return matchesBaseline(prepared.roots, prepared.baseline);
}

/** Compiles and runs the script; resolves the last message. */
async function execute(
  payload: ScriptPayload,
  context: vm.Context,
  globals: Record<string, unknown>,
  importModule: (specifier: string) => Promise<unknown>,
): Promise<string> {
  let script: () => Promise<unknown>;
  try {
    script = new vm.Script(`(async function () {\n${payload.code}\n})`, {
      filename: SCRIPT_FILENAME,
      lineOffset: -1,
      importModuleDynamically: importModule as unknown as vm.ScriptOptions['importModuleDynamically'],
    }).runInContext(context) as () => Promise<unknown>;
  } catch (err) {
    return stringify({ t: 'failed', failure: describeFailure(err, true), durationMs: 0 });
  }
  runState.startedAt = now();
  try {
    await script();
  } catch (err) {
    const failure = describeFailure(err);
    // A limit the script hit (the permission model, memory) ends its process too.
    if (failure.code !== 'THREW') markDoubt(`it failed with ${failure.code}`);
    return stringify({ t: 'failed', failure, durationMs: elapsedMs() });
  }
  return doneMessage(payload, globals);
}

/**
 * The `done` message, assembled from each context global serialised once (a teardown's response
 * body may be megabytes); `failed` when one cannot be serialised.
 */
function doneMessage(payload: ScriptPayload, globals: Record<string, unknown>): string {
  const durationMs = elapsedMs();
  const fields: string[] = [];
  for (const name of Object.keys(payload.context)) {
    try {
      fields.push(`${stringify(name)}:${stringify(globals[name]) ?? 'null'}`);
    } catch (err) {
      const error = `${name} cannot be returned: ${errorText(err)}`;
      return stringify({
        t: 'failed',
        failure: { code: 'THREW', error, syntax: false, line: null, column: null },
        durationMs,
      });
    }
  }
  return `{"t":"done","durationMs":${stringify(durationMs)},"context":{${fields.join(',')}}}`;
}
