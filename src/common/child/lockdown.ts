/**
 * What the Node permission model leaves open to a child process of user code, closed before the
 * code runs. Shared by the script processes (src/sandbox/child) and the browser runners
 * (src/browser/runner).
 *
 * Bundled into the children: it may import only `node:` built-ins.
 */
import nodeModule from 'node:module';
import os from 'node:os';

/**
 * Built-ins the permission model does not guard well enough: node:sqlite opens files itself,
 * node:ffi (Node 26) calls native code, node:inspector would open this process's inspector.
 */
export const DENIED_BUILTINS: ReadonlySet<string> = new Set([
  'sqlite',
  'ffi',
  'inspector',
  'inspector/promises',
]);

/** Makes an error shaped like the permission model's own (`ERR_ACCESS_DENIED`, `permission`, `resource`). */
export type Denied = (permission: string, resource: string) => Error;

/**
 * The {@link Denied} of one kind of child: `Access to <resource> is not allowed in <where>`, with
 * `code: 'ERR_ACCESS_DENIED'`, so it is reported as a permission failure.
 *
 * @param where what runs the code, plural (`scripts`, `checks`).
 */
export function deniedIn(where: string): Denied {
  return (permission, resource) =>
    Object.assign(new Error(`Access to ${resource} is not allowed in ${where}`), {
      code: 'ERR_ACCESS_DENIED',
      permission,
      resource,
    });
}

/**
 * Whether `id` names a built-in module (`fs`, `node:fs`).
 *
 * @throws the `denied('Module', 'node:<name>')` error for a {@link DENIED_BUILTINS} one.
 */
export function checkBuiltin(id: string, denied: Denied): boolean {
  const bare = id.startsWith('node:') ? id.slice(5) : id;
  if (DENIED_BUILTINS.has(bare)) throw denied('Module', `node:${bare}`);
  return nodeModule.isBuiltin(id);
}

/** Makes `process.getBuiltinModule` (Node 20.16+) refuse the {@link DENIED_BUILTINS} too; a no-op without it. */
export function guardGetBuiltinModule(denied: Denied): void {
  const target = process as { getBuiltinModule?: (id: string) => unknown };
  const getBuiltin = target.getBuiltinModule;
  if (typeof getBuiltin === 'function') {
    target.getBuiltinModule = (id: string) => {
      checkBuiltin(id, denied);
      return getBuiltin(id);
    };
  }
}

/**
 * A pid argument converted exactly once: a primitive integer number, or a string of decimal
 * digits (`'-12'`); anything else (objects with `valueOf`/`toString`/`Symbol.toPrimitive`,
 * Proxies, floats, NaN, booleans) is null. The caller passes the returned number on, never the
 * argument: an object could answer one value to the check and another to the kill.
 */
export function pidOf(value: unknown): number | null {
  let pid: number;
  if (typeof value === 'number') pid = value;
  else if (typeof value === 'string' && /^-?\d{1,10}$/.test(value)) pid = Number(value);
  else return null;
  return Number.isSafeInteger(pid) ? pid : null;
}

/** A signal argument converted once to its number (`'SIGTERM'` → 15, default SIGTERM), or null. */
export function signalOf(value: unknown): number | null {
  if (value === undefined) return os.constants.signals.SIGTERM;
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 64 ? value : null;
  if (typeof value !== 'string') return null;
  const signals = os.constants.signals as Readonly<Record<string, number>>;
  return Object.hasOwn(signals, value) ? (signals[value] ?? null) : null;
}

/** What a denied pid argument is called in the reason, without calling into the argument. */
export function pidText(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string' ? String(value).slice(0, 40) : typeof value;
}

/**
 * Closes what the permission model leaves open to a process of the agent's user: signals to
 * other processes (SIGUSR1 or `process._debugProcess` would open the agent's inspector, SIGKILL
 * would end it), the inspector of this process, raw bindings, and the scheduling priority of
 * other processes. Only this process (`process.pid`, `0`) and its own process group
 * (`-process.pid`: it is spawned detached, as the group leader) stay reachable. Every argument is
 * converted once (pidOf, signalOf) and the NUMBER goes to the raw binding, so an argument cannot
 * answer the check and the kill differently. Scripts cannot reach the raw bindings themselves
 * (process.binding is denied by the permission model; internalBinding is not exposed). The
 * kernel is the second wall: the agent runs user code under a uid of its own
 * (src/common/run-users.ts), so a signal to the agent fails with EPERM even past this guard.
 *
 * @param denied makes the errors thrown for a refused call.
 */
export function lockDownProcess(denied: Denied): void {
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

/**
 * Ends the process with code 78 (and a line on stderr) unless the permission model is active and
 * denies child processes, workers and writes to /proc: user code never runs without it (a wrong
 * flag for this Node version).
 *
 * @param what names the process in the line (`script process`, `runner process`).
 * @param exit the `process.exit` taken before user code could replace it.
 */
export function requirePermissionModel(what: string, exit: (code: number) => never): void {
  const permission = (process as { permission?: { has(scope: string, reference?: string): boolean } })
    .permission;
  if (
    !permission ||
    permission.has('child') ||
    permission.has('worker') ||
    permission.has('fs.write', '/proc')
  ) {
    process.stderr.write(`the Node permission model is not active in this ${what}\n`);
    exit(78);
  }
}
