/**
 * The bootstrap of one script process (docs/architecture.md, "The agent"), compiled to `child.cjs`.
 *
 * ScriptSandbox starts it as `node --permission … child.cjs <runtimeDir> <runtimeId>` with the
 * script's temp dir as working directory. It says `ready` on fd 3, blocks reading one
 * ScriptPayload from stdin, runs the script as the body of an async function, reports on
 * fd 3 (messages.ts) and exits. One process runs one script.
 *
 * It must stay self-contained (no imports of our other modules): the permission model lets
 * the process read only this file, the runtime's node_modules and its temp dir.
 */
import fs = require('node:fs');
import path = require('node:path');
import nodeConsole = require('node:console');
import nodeModule = require('node:module');
import os = require('node:os');
import url = require('node:url');
import util = require('node:util');
import vm = require('node:vm');
import type { ChildFailure, ChildMessage, LogLevel, ScriptPayload } from './messages.js';

/** The child → parent channel (messages.ts). */
const CHANNEL_FD = 3;
/** The file name scripts carry in stack traces; line numbers are the script's own. */
const SCRIPT_FILENAME = 'script.js';
const SECRET_PREFIX = 'SERVICE_SECRET_';
/**
 * Longest secret sent, characters: scrub.ts MAX_SECRET_LENGTH (128 KB) plus one, so that a
 * longer value still reaches the parent as too long (its scrubber then withholds the output).
 */
const MAX_SECRET_LENGTH = 131_073;
/**
 * Built-ins the permission model does not guard well enough: node:sqlite opens files itself,
 * node:ffi (Node 26) calls native code, node:inspector would open this process's inspector.
 */
const DENIED_BUILTINS: ReadonlySet<string> = new Set(['sqlite', 'ffi', 'inspector', 'inspector/promises']);

// Taken before the script runs, so a script that reassigns globals cannot break the report.
const stringify = JSON.stringify;
const bufferFrom = Buffer.from.bind(Buffer);
const writeSync = fs.writeSync;
const now = performance.now.bind(performance);
const realExit = process.exit.bind(process);
const pause = new Int32Array(new SharedArrayBuffer(4));

const runtimeDir = process.argv[2] ?? '';
const runtimeId = process.argv[3] ?? '';
const nodeModulesDir = path.join(runtimeDir, 'node_modules');

let finished = false;
let exitCalled = false;
let startedAt: number | null = null;
const reportedSecrets = new Set<string>();

/**
 * Writes one message with blocking writes: a flooding script waits here while the parent
 * reads. When the parent is gone there is nobody to run for: exit at once.
 */
function send(message: ChildMessage): void {
  sendLine(stringify(message));
}

/** `send` for a message already serialised (a large context is serialised once). */
function sendLine(json: string): void {
  const bytes = bufferFrom(`${json}\n`);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(CHANNEL_FD, bytes, offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 1);
        continue;
      }
      finished = true;
      realExit(70);
    }
  }
}

function elapsedMs(): number {
  return startedAt === null ? 0 : now() - startedAt;
}

/** The run's output limit (ScriptPayload.maxOutputBytes): no log message is longer, characters. */
let maxLogChars = 1_048_576;

function emitLog(level: LogLevel, text: string): void {
  const msg = text.endsWith('\n') ? text.slice(0, -1) : text;
  // The parent keeps at most the output limit and refuses longer messages: cut before sending.
  send({
    t: 'log',
    level,
    msg: msg.length > maxLogChars ? msg.slice(0, maxLogChars) : msg,
    time: new Date().toISOString(),
  });
}

function reportSecret(secret: unknown): void {
  if (typeof secret !== 'string' || secret === '') return;
  const value = secret.slice(0, MAX_SECRET_LENGTH);
  if (reportedSecrets.has(value)) return;
  reportedSecrets.add(value);
  send({ t: 'secret', value });
}

function sweepSecrets(...envs: unknown[]): void {
  for (const env of envs) {
    if (env === null || typeof env !== 'object') continue;
    try {
      for (const [key, value] of Object.entries(env)) {
        if (key.startsWith(SECRET_PREFIX)) reportSecret(value);
      }
    } catch {
      // A hostile process.env replacement: what was reported as it was set stays reported.
    }
  }
}

const realEnv = process.env;

/** Sends the last message and ends the process; later calls do nothing. */
function finish(message: ChildMessage | string): void {
  if (finished) return;
  sweepSecrets(realEnv, process.env);
  finished = true;
  sendLine(typeof message === 'string' ? message : stringify(message));
  realExit(0);
}

/** The environment becomes exactly `env`, plus HOME and TMPDIR pointing at the temp dir. */
function installEnv(env: Record<string, string>): void {
  for (const key of Object.keys(realEnv)) delete realEnv[key];
  Object.assign(realEnv, env, { HOME: process.cwd(), TMPDIR: process.cwd() });
  // Every way to put a value in the environment reports SERVICE_SECRET_* values at once (set,
  // Reflect.set, Object.assign, Object.defineProperty, delete then set, a whole new
  // process.env), so the parent knows them even when the script is then killed.
  const secretKey = (key: string | symbol) => typeof key === 'string' && key.startsWith(SECRET_PREFIX);
  const tracking: ProxyHandler<Record<string, unknown>> = {
    set(target, key, value) {
      const ok = Reflect.set(target, key, value);
      if (secretKey(key)) reportSecret(Reflect.get(target, key));
      return ok;
    },
    defineProperty(target, key, descriptor) {
      if (secretKey(key) && 'value' in descriptor) reportSecret(descriptor.value);
      const ok = Reflect.defineProperty(target, key, descriptor);
      if (secretKey(key)) reportSecret(Reflect.get(target, key));
      return ok;
    },
  };
  let current: unknown = new Proxy(realEnv, tracking);
  Object.defineProperty(process, 'env', {
    get: () => current,
    set: (value: unknown) => {
      sweepSecrets(value);
      current = value !== null && typeof value === 'object' ? new Proxy(value, tracking) : value;
    },
    enumerable: true,
    configurable: false,
  });
}

/** console.log/info → INFO, warn → WARN, error/trace/assert → ERROR, debug → DEBUG; stdout/stderr writes too. */
function createConsole(): Pick<Prepared, 'console' | 'stdoutWrite' | 'stderrWrite'> {
  const sink = (level: LogLevel) => ({
    write(chunk: unknown): boolean {
      emitLog(level, typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return true;
    },
  });
  const make = (stdout: 'DEBUG' | 'INFO' | 'WARN', stderr: 'DEBUG' | 'WARN' | 'ERROR') =>
    new nodeConsole.Console({
      stdout: sink(stdout) as unknown as NodeJS.WritableStream,
      stderr: sink(stderr) as unknown as NodeJS.WritableStream,
      ignoreErrors: false,
      colorMode: false,
    });
  const scriptConsole = make('INFO', 'ERROR');
  scriptConsole.debug = make('DEBUG', 'DEBUG').log;
  scriptConsole.warn = make('WARN', 'WARN').warn;
  const streamWrite = (level: 'INFO' | 'ERROR') =>
    ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
      sink(level).write(chunk);
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    }) as typeof process.stdout.write;
  // Creating process.stdout and process.stderr costs tens of milliseconds: pay it while warm.
  void process.stdout;
  void process.stderr;
  return { console: scriptConsole, stdoutWrite: streamWrite('INFO'), stderrWrite: streamWrite('ERROR') };
}

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

/** Longest error text reported, characters: a reason is one line, and the parent caps messages. */
const MAX_ERROR_CHARS = 65_536;

function errorText(error: unknown): string {
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

function describeFailure(error: unknown, syntax = false): ChildFailure {
  const denied = accessDenied(error);
  if (denied) return denied;
  // Node 20: "Array buffer allocation failed"; Node 24: "Failed to allocate memory".
  if (error instanceof RangeError && /allocation failed|failed to allocate/i.test(error.message)) {
    return { code: 'OUT_OF_MEMORY', error: errorText(error) };
  }
  return { code: 'THREW', error: errorText(error), syntax, ...scriptLocation(error, syntax) };
}

/** An error shaped like the permission model's own, so it is reported as PERMISSION_DENIED. */
function denied(permission: string, resource: string): Error {
  return Object.assign(new Error(`Access to ${resource} is not allowed in scripts`), {
    code: 'ERR_ACCESS_DENIED',
    permission,
    resource,
  });
}

/**
 * A pid argument converted exactly once: a primitive integer number, or a string of decimal
 * digits (`'-12'`); anything else (objects with `valueOf`/`toString`/`Symbol.toPrimitive`,
 * Proxies, floats, NaN, booleans) is null. The caller passes the returned number on, never the
 * argument: an object could answer one value to the check and another to the kill.
 */
function pidOf(value: unknown): number | null {
  let pid: number;
  if (typeof value === 'number') pid = value;
  else if (typeof value === 'string' && /^-?\d{1,10}$/.test(value)) pid = Number(value);
  else return null;
  return Number.isSafeInteger(pid) ? pid : null;
}

/** A signal argument converted once to its number (`'SIGTERM'` → 15, default SIGTERM), or null. */
function signalOf(value: unknown): number | null {
  if (value === undefined) return os.constants.signals.SIGTERM;
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 64 ? value : null;
  if (typeof value !== 'string') return null;
  const signals = os.constants.signals as Readonly<Record<string, number>>;
  return Object.hasOwn(signals, value) ? (signals[value] ?? null) : null;
}

/** What a denied pid argument is called in the reason, without calling into the argument. */
function pidText(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string' ? String(value).slice(0, 40) : typeof value;
}

/**
 * Closes what the permission model leaves open to a process of the agent's user: signals to
 * other processes (SIGUSR1 or `process._debugProcess` would open the agent's inspector, SIGKILL
 * would end it), the inspector of this process, and the scheduling priority of other
 * processes. Only this process (`process.pid`, `0`) and its own process group (`-process.pid`:
 * it is spawned detached, as the group leader) stay reachable. Every argument is converted
 * once (pidOf, signalOf) and the NUMBER goes to the raw binding, so an argument cannot answer
 * the check and the kill differently. Scripts cannot reach the raw bindings themselves
 * (process.binding is denied by the permission model; internalBinding is not exposed). The
 * kernel is the second wall: as root the agent runs scripts under a uid of their own
 * (script-process.ts), so a signal to the agent fails with EPERM even past this guard.
 */
function lockDownProcess(): void {
  const ownPid = process.pid;
  const own = (pid: number) => pid === 0 || pid === ownPid || pid === -ownPid;
  const rawKill = (process as unknown as { _kill: (pid: number, signal: number) => number })._kill;
  const nodeKill = process.kill;
  /** The pid and signal as numbers, converted once; throws unless the pid is this process or its group. */
  const checked = (pid: unknown, signal: unknown): [number, number] => {
    const number = pidOf(pid);
    if (number === null || !own(number)) throw denied('Signal', `pid ${pidText(pid)}`);
    const sig = signalOf(signal);
    if (sig === null) {
      throw Object.assign(new TypeError(`Unknown signal: ${pidText(signal)}`), {
        code: 'ERR_UNKNOWN_SIGNAL',
      });
    }
    return [number, sig];
  };
  const lock = (name: string, value: unknown) =>
    Object.defineProperty(process, name, { value, writable: false, configurable: false });
  lock('_kill', (pid: unknown, signal: unknown) => rawKill.call(process, ...checked(pid, signal)));
  // Node's process.kill looks process._kill up (guarded above) at each call; it only gets numbers.
  lock('kill', (pid: unknown, signal?: unknown) => nodeKill.call(process, ...checked(pid, signal)));
  for (const name of ['_debugProcess', '_debugEnd']) {
    lock(name, (pid: unknown) => {
      throw denied('Inspector', `pid ${pidText(pid)}`);
    });
  }
  for (const name of ['binding', '_linkedBinding']) {
    lock(name, () => {
      throw denied('Binding', `process.${name}`);
    });
  }
  const setPriority = os.setPriority.bind(os);
  os.setPriority = ((pidOrPriority: unknown, priority?: unknown) => {
    if (priority === undefined) return setPriority(pidOf(pidOrPriority) ?? Number.NaN);
    const pid = pidOf(pidOrPriority);
    if (pid === null || !own(pid)) throw denied('Signal', `pid ${pidText(pidOrPriority)}`);
    return setPriority(pid, pidOf(priority) ?? Number.NaN);
  }) as typeof os.setPriority;
}

function notInstalled(id: string): Error {
  return Object.assign(
    new Error(
      `Cannot find module '${id}': the dependencies of runtime ${runtimeId} are not installed (run npm ci --prefix ${runtimeDir})`,
    ),
    { code: 'MODULE_NOT_FOUND' },
  );
}

type Resolver = { _resolveFilename(request: string, parent: nodeModule): string };

/**
 * `require` for scripts: Node built-ins (but node:sqlite), and packages from the runtime's
 * node_modules only, never from folders above it.
 */
function createScriptRequire(): {
  require: NodeJS.Require;
  importModule: (specifier: string) => Promise<unknown>;
} {
  // Looked up on first use: a warm process may start before `npm ci` of the runtime ends.
  let installedCache: boolean | null = null;
  const installed = () => {
    installedCache ??= fs.existsSync(nodeModulesDir);
    return installedCache;
  };
  const anchor = new nodeModule(path.join(nodeModulesDir, SCRIPT_FILENAME));
  anchor.filename = anchor.id;
  anchor.paths = [nodeModulesDir];
  const builtin = (id: string): string | null => {
    const bare = id.startsWith('node:') ? id.slice(5) : id;
    if (DENIED_BUILTINS.has(bare)) throw denied('Module', `node:${bare}`);
    return nodeModule.isBuiltin(id) ? id : null;
  };
  const resolve = (id: string): string => {
    const found = builtin(id);
    if (found !== null) return found;
    if (!installed()) throw notInstalled(id);
    return (nodeModule as unknown as Resolver)._resolveFilename(id, anchor);
  };
  const scriptRequire = ((id: string) => {
    if (typeof id !== 'string') throw new TypeError(`require needs a module name, got ${typeof id}`);
    if (builtin(id) !== null) return require(id);
    if (!installed()) throw notInstalled(id);
    return anchor.require(id);
  }) as NodeJS.Require;
  scriptRequire.resolve = Object.assign((id: string) => resolve(id), { paths: () => [nodeModulesDir] });
  scriptRequire.cache = require.cache;
  const getBuiltin = process.getBuiltinModule;
  if (typeof getBuiltin === 'function') {
    process.getBuiltinModule = ((id: string) => {
      builtin(id);
      return getBuiltin(id);
    }) as typeof process.getBuiltinModule;
  }
  const importModule = (specifier: string) => {
    const target = resolve(specifier);
    return import(path.isAbsolute(target) ? url.pathToFileURL(target).href : target);
  };
  return { require: scriptRequire, importModule };
}

/** What a warm process prepares before it says ready, so a script starts without that cost. */
type Prepared = {
  console: Console;
  stdoutWrite: typeof process.stdout.write;
  stderrWrite: typeof process.stderr.write;
  require: NodeJS.Require;
  importModule: (specifier: string) => Promise<unknown>;
};

async function runScript(payload: ScriptPayload, prepared: Prepared): Promise<void> {
  if (Number.isSafeInteger(payload.maxOutputBytes) && payload.maxOutputBytes > 0) {
    // One character more than the limit: the parent sees the limit passed, not met.
    maxLogChars = payload.maxOutputBytes + 1;
  }
  installEnv(payload.env);
  globalThis.console = prepared.console;
  process.stdout.write = prepared.stdoutWrite;
  process.stderr.write = prepared.stderrWrite;
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
  startedAt = now();
  try {
    await script();
  } catch (err) {
    finish({ t: 'failed', failure: describeFailure(err), durationMs: elapsedMs() });
    return;
  }
  const durationMs = elapsedMs();
  // The `done` message is assembled from each global serialised once: a teardown's response
  // body may be megabytes.
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

function main(): void {
  // Never run a script without the permission model (a wrong flag for this Node version).
  const permission = process.permission;
  if (
    !permission ||
    permission.has('child') ||
    permission.has('worker') ||
    permission.has('fs.write', '/proc')
  ) {
    process.stderr.write('the Node permission model is not active in this script process\n');
    realExit(78);
  }
  Error.stackTraceLimit = 30;
  process.exit = ((code?: number | string | null) => {
    exitCalled = true;
    return realExit(code);
  }) as typeof process.exit;
  process.on('exit', (code) => {
    if (finished) return;
    sweepSecrets(realEnv, process.env);
    finished = true;
    send({ t: 'exit', code, called: exitCalled });
  });
  process.on('uncaughtException', (err) => {
    finish({ t: 'failed', failure: describeFailure(err), durationMs: elapsedMs() });
  });
  lockDownProcess();
  const prepared: Prepared = { ...createConsole(), ...createScriptRequire() };
  send({ t: 'ready' });
  let input = '';
  try {
    input = fs.readFileSync(0, 'utf8');
  } catch {
    // The sandbox closed or died while this process waited.
  }
  if (input === '') {
    finished = true;
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
