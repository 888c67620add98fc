import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

/** One process as /proc shows it; `state` is the letter of /proc/<pid>/stat (`Z` zombie, `T` stopped, …). */
export type Proc = { pid: number; ppid: number; uid: number; comm: string; state: string };

/** Every process alive now (zombies included), read from /proc. */
export function processes(): Proc[] {
  const list: Proc[] = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const close = stat.lastIndexOf(')');
      const [state = '', ppid = '0'] = stat.slice(close + 2).split(' ');
      list.push({
        pid: Number(name),
        ppid: Number(ppid),
        uid: statSync(`/proc/${name}`).uid,
        comm: stat.slice(stat.indexOf('(') + 1, close),
        state,
      });
    } catch {
      // Exited while listing.
    }
  }
  return list;
}

/**
 * Live processes started under `root` (a test's temp folder): their working directory or command
 * line is there (browser hosts, Chromium's profile and crashpad database, runners, stand-ins), so
 * processes of other tests on the machine are not counted. Zombies are left out.
 */
export function processesUnder(root: string): Proc[] {
  return processes().filter((p) => {
    if (p.state === 'Z') return false;
    try {
      if (readlinkSync(`/proc/${p.pid}/cwd`).startsWith(root)) return true;
      return readFileSync(`/proc/${p.pid}/cmdline`, 'latin1').includes(root);
    } catch {
      return false; // exited, or not ours to read
    }
  });
}

/**
 * Polls `condition` (which may be async: a query of the store) every 20 ms until it holds.
 * @throws Error naming `what` and `timeoutMs` after `timeoutMs`.
 */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what} (${timeoutMs} ms)`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
