import type { ChildProcess } from 'node:child_process';
import { chmod, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Process groups of sandboxed children (script processes, browser runners, the browser host)
 * and their private temp dirs. Each child is spawned detached, so it leads its own process group
 * and whatever it starts belongs to that group: one SIGKILL to the group ends them all.
 */

/** Process groups alive now, killed if this process exits first (the agent crashing must not leave children running). */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/**
 * SIGKILLs the process group led by `pid` (a detached child's pid). Never throws: a group that is
 * gone already (ESRCH) is fine.
 *
 * @param pid the group leader's pid, a positive integer.
 */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * Registers the process group led by `pid` as alive: if this process exits before
 * {@link untrackGroup} is called for it, the group is SIGKILLed from the `exit` hook.
 *
 * @param pid the group leader's pid (a child spawned with `detached: true`).
 */
export function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const group of liveGroups) killGroup(group);
    });
  }
}

/**
 * Forgets the process group led by `pid` (its leader was reaped), so the exit hook does not
 * signal a pid that may have been reused.
 *
 * @param pid the group leader's pid given to {@link trackGroup}.
 */
export function untrackGroup(pid: number): void {
  liveGroups.delete(pid);
}

/**
 * Removes a directory tree even when a child made parts of it unreadable (chmod 000): on a first
 * failure it opens up every directory's mode (0700) and tries again. Never throws.
 *
 * @param dir absolute path of the directory to remove.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
    return;
  } catch {
    // Fall through: open up the modes, then try again.
  }
  const open = async (path: string): Promise<void> => {
    await chmod(path, 0o700).catch(() => {});
    const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isDirectory()) await open(join(path, entry.name));
  };
  await open(dir);
  await rm(dir, { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
}

/** How a process ended: `code` or `signal` as Node reports them (both null for a failed spawn). */
export type ProcessExit = { code: number | null; signal: NodeJS.Signals | null };

/**
 * Resolves once `child`, a group leader spawned detached, ended and its stdio closed (a failed
 * spawn, which may never emit `close`, resolves with nulls). When the leader exits, whatever it
 * left in its group is SIGKILLed; once it is reaped the group is untracked and `onEnd` runs
 * (before the promise resolves). Never rejects.
 *
 * @param child the spawned process (stdio errors are swallowed here: a closed pipe is an end, not a crash).
 * @param onEnd called once, when the process ended.
 */
export function whenGroupEnds(child: ChildProcess, onEnd: () => void = () => {}): Promise<ProcessExit> {
  for (const stream of child.stdio) stream?.on('error', () => {});
  return new Promise((resolve) => {
    let settled = false;
    const done = (exit: ProcessExit) => {
      if (settled) return;
      settled = true;
      if (child.pid !== undefined) untrackGroup(child.pid);
      onEnd();
      resolve(exit);
    };
    child.once('close', (code, signal) => done({ code, signal }));
    // A failed spawn (EAGAIN, EMFILE) may never emit 'close'.
    child.on('error', () => {
      if (child.pid === undefined) done({ code: null, signal: null });
    });
    // Anything left in the group once its leader is gone dies with it.
    child.once('exit', () => {
      if (child.pid !== undefined) killGroup(child.pid);
    });
  });
}
