import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/**
 * What a bench is doing now, for the watchdog's message: the bench's name and its scenario or
 * step (`phase`), as set by {@link benchPhase}.
 */
const current = { bench: '', phase: '' };
const children = new Set<ChildProcess>();

/** Names the step a bench is in (e.g. `'dig rate, 200 digs at 100'`); the watchdog prints it. */
export function benchPhase(phase: string): void {
  current.phase = phase;
}

/** The bench and step now running, as `name: phase`. */
export function currentBenchPhase(): string {
  return current.phase === '' ? current.bench : `${current.bench}: ${current.phase}`;
}

/** Sets the running bench's name (bench/run.ts) and clears its step. */
export function benchStarted(name: string): void {
  current.bench = name;
  current.phase = '';
}

/**
 * Registers a child process a bench started, so that {@link killBenchChildren} ends it when the
 * bench hangs or the process exits; it is forgotten when it exits. Returns the child.
 */
export function trackChild<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Every process below this one (children, their children, …), from /proc's parent ids. */
function descendants(): number[] {
  const parentOf = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // After the command name: state, then the parent's pid.
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
      parentOf.set(ppid, [...(parentOf.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const child of parentOf.get(pid) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(process.pid);
  return found;
}

/**
 * Sends SIGKILL to every tracked child still running and to every other process below this one
 * (the service, PostgreSQL, browsers other benches start), synchronously: safe in an exit handler.
 * After a bench that closed what it started, there is nothing left to kill.
 */
export function killBenchChildren(): void {
  const pids = new Set<number>();
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) pids.add(child.pid);
  }
  children.clear();
  try {
    for (const pid of descendants()) pids.add(pid);
  } catch {
    // No /proc: the tracked children only.
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/**
 * Waits for `promise` at most `timeoutMs` ms; past that, rejects with an error naming `what`
 * (the promise itself is left to settle, or not, on its own).
 */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no end within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The 1, 5 and 15 minute load averages (the machine is shared) and the Node version the bench ran on, as
 * `load average: 1.23 0.98 0.75; node v24.1.0`. The version moves ratios: an AbortController, which the agent
 * makes for every job, cost 4.4 µs of CPU on Node 20 and 0.2 µs on Node 24 (30 November, this bench's machine),
 * a third of an ICMP check's own CPU on Node 20. The agent's images run Node 24; `npm run bench` runs on the
 * Node of the PATH.
 */
export function loadAverageLine(): string {
  return `load average: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; node ${process.version}`;
}
