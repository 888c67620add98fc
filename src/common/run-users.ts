import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, realpath } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutpostError } from './errors.js';
import { removeTree, trackGroup } from './process-tree.js';

/**
 * Privilege separation of user code (docs/security.md): API setup and teardown scripts, browser and
 * multi-step scripts, Playwright check suites and the Chromium that runs them. Written once here
 * and used by the script sandbox (src/sandbox) and the browser layer (src/browser):
 *
 * - every process of user code runs as a **run user**, a uid (and the same gid) of its own handed
 *   out by a {@link RunUserPool}, never the agent's uid and never root, with no supplementary
 *   groups, no capabilities and `no_new_privs` (a file capability or set-uid binary gives it
 *   nothing);
 * - the switch is made by util-linux's `setpriv` between fork and exec ({@link runAsRunUser}), so
 *   it needs only `CAP_SETUID` and `CAP_SETGID` in the agent: an agent that is root, or a non-root
 *   agent holding those capabilities (the images' entrypoint, `outpost-entrypoint`, starts it so);
 * - when a run ends, every process of its uid is SIGKILLed (`kill(-1)` as that uid, repeated
 *   until none is left: atomic against a process that forks while it is being killed) and every
 *   file the uid owns in the world-writable temp folders is removed ({@link reapRunUser}), before
 *   the uid is handed out again.
 *
 * Where none of that is possible (a non-root agent without the capabilities), {@link userCodeIsolation}
 * says why, and the agent refuses user code with that reason instead of running it as itself.
 */

/** A uid and gid one run's processes have (both the same number; no user needs to exist). */
export type RunUser = { uid: number; gid: number };

/**
 * Capabilities (bit numbers of `capabilities(7)`) the agent needs to run user code apart:
 * switch to a run user (SETUID, SETGID), kill its processes (KILL), hand it its temp folder
 * (CHOWN), and read and remove what it wrote there (DAC_OVERRIDE, FOWNER). All six are in
 * Docker's default set and allowed by the Kubernetes *baseline* Pod Security Standard.
 */
export const RUN_USER_CAPABILITIES = {
  CHOWN: 0,
  DAC_OVERRIDE: 1,
  FOWNER: 3,
  KILL: 5,
  SETGID: 6,
  SETUID: 7,
} as const;

/** How this process can run user code apart from itself. */
export type UserCodeIsolation =
  | {
      available: true;
      /** `root`: the agent is uid 0; `capabilities`: a non-root agent holding {@link RUN_USER_CAPABILITIES}. */
      mode: 'root' | 'capabilities';
      /** util-linux's setpriv, which switches a child to its run user. */
      setprivPath: string;
    }
  | {
      available: false;
      /** One sentence: what is missing and how to provide it. */
      reason: string;
    };

/** Where util-linux installs setpriv on Debian and most distributions. */
const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'] as const;

/**
 * The effective capabilities of this process (`CapEff` of /proc/self/status) as a bit set, or
 * null where /proc cannot be read.
 */
function effectiveCapabilities(): bigint | null {
  try {
    const match = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match?.[1] === undefined ? null : BigInt(`0x${match[1]}`);
  } catch {
    return null;
  }
}

/**
 * Decides how user code can run apart from this process, from its uid, its effective
 * capabilities and whether setpriv is installed. Pure: `probe` supplies the facts.
 *
 * @param probe `uid`: this process's effective uid; `capabilities`: its CapEff bits (null:
 *   unknown); `setprivPath`: setpriv's path, or null when it is not installed.
 */
export function decideIsolation(probe: {
  uid: number;
  capabilities: bigint | null;
  setprivPath: string | null;
}): UserCodeIsolation {
  const howTo =
    'run the agent as root, or as a non-root user holding CAP_SETUID, CAP_SETGID, CAP_KILL, CAP_CHOWN, ' +
    'CAP_DAC_OVERRIDE and CAP_FOWNER (the images do this through outpost-entrypoint; docs/security.md)';
  if (probe.setprivPath === null) {
    return {
      available: false,
      reason:
        'user code cannot run apart from the agent: setpriv is not installed (apt-get install util-linux)',
    };
  }
  if (probe.capabilities === null) {
    return {
      available: false,
      reason: `user code cannot run apart from the agent: its capabilities cannot be read from /proc; ${howTo}`,
    };
  }
  const missing = Object.entries(RUN_USER_CAPABILITIES)
    .filter(([, bit]) => (probe.capabilities! & (1n << BigInt(bit))) === 0n)
    .map(([name]) => `CAP_${name}`);
  if (missing.length > 0) {
    return {
      available: false,
      reason:
        `user code cannot run apart from the agent: ${probe.uid === 0 ? 'root without' : `uid ${probe.uid} lacks`} ` +
        `${missing.join(', ')}, so scripts, browser checks and check suites would run as the agent itself; ${howTo}`,
    };
  }
  return { available: true, mode: probe.uid === 0 ? 'root' : 'capabilities', setprivPath: probe.setprivPath };
}

let cachedIsolation: UserCodeIsolation | undefined;

/**
 * How this process can run user code apart from itself: read once (uid, capabilities, setpriv)
 * and cached, since none of it changes while the process runs.
 */
export function userCodeIsolation(): UserCodeIsolation {
  cachedIsolation ??= decideIsolation({
    uid: process.geteuid?.() ?? -1,
    capabilities: effectiveCapabilities(),
    setprivPath: SETPRIV_PATHS.find((path) => existsSync(path)) ?? null,
  });
  return cachedIsolation;
}

/**
 * The options of setpriv that make its command a process of `user` alone: its uid and gid, no
 * supplementary groups, no inheritable or ambient capabilities (so a non-root agent's
 * capabilities do not pass to it), and `no_new_privs` (no set-uid binary or file capability
 * raises it again).
 */
function setprivOptions(user: RunUser): string[] {
  return [
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--ambient-caps=-all',
    '--no-new-privs',
  ];
}

/**
 * The command line that runs `command args` as `user`: setpriv switches to the run user and
 * then execs the command, so the spawned pid is the command's own (a detached spawn still
 * leads its process group). Spawn the result without `uid`/`gid` options.
 *
 * @returns `{ command, args }` to pass to `child_process.spawn`.
 * @throws OutpostError OUTPOST_ERR_ISOLATION with the reason when user code cannot run apart
 *   here ({@link userCodeIsolation}), or when `user` is root or this process's own uid.
 */
export function runAsRunUser(
  user: RunUser,
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  const isolation = userCodeIsolation();
  if (!isolation.available) throw new OutpostError('OUTPOST_ERR_ISOLATION', isolation.reason);
  assertRunUser(user);
  return { command: isolation.setprivPath, args: [...setprivOptions(user), '--', command, ...args] };
}

/** @throws OutpostError OUTPOST_ERR_ISOLATION for uid or gid 0 or this process's own uid. */
function assertRunUser(user: RunUser): void {
  const own = process.geteuid?.();
  if (
    !Number.isInteger(user.uid) ||
    !Number.isInteger(user.gid) ||
    user.uid <= 0 ||
    user.gid <= 0 ||
    user.uid === own
  ) {
    throw new OutpostError(
      'OUTPOST_ERR_ISOLATION',
      `uid ${user.uid} cannot be a run user: user code never runs as root or as the agent`,
    );
  }
}

/** The world-writable folders a run user can leave files in (besides its own temp folder). */
export const SHARED_TEMP_DIRS: readonly string[] = ['/tmp', '/var/tmp', '/dev/shm'];

/** Longest one shell of a reap may take before it is given up (the uid then stays out of use), ms. */
const REAP_TIMEOUT_MS = 30_000;

/**
 * Ends a run: SIGKILLs every process of `user`'s uid ({@link killRunUser}), then removes every
 * file and folder it owns under {@link SHARED_TEMP_DIRS}, the OS temp folder and `extraDirs` (not
 * crossing into other file systems, never following a link), by a shell running *as* the run
 * user: it can remove nothing the run user could not.
 *
 * @param user the run user; never root or this process's uid.
 * @param extraDirs further folders to clean (for example the pool's temp root).
 * @returns true once nothing of the run is left; false when a process of the uid outlived every
 *   kill or the removal failed (the caller must then not hand the uid out again).
 * @throws OutpostError OUTPOST_ERR_ISOLATION as {@link runAsRunUser} does.
 */
export async function reapRunUser(user: RunUser, extraDirs: readonly string[] = []): Promise<boolean> {
  if (!(await killRunUser(user))) return false;
  const dirs = [...new Set([...SHARED_TEMP_DIRS, tmpdir(), ...extraDirs])].filter((dir) => existsSync(dir));
  return asRunUser(user, `find "$@" -xdev -mindepth 1 -uid ${user.uid} -delete 2>/dev/null; exit 0`, dirs);
}

/** Rounds of `kill -9 -1` {@link killRunUser} makes before it gives up on a uid. */
const KILL_ROUNDS = 5;
/** How long one round waits for the killed processes to be gone, ms. */
const KILL_WAIT_MS = 2_000;

/**
 * SIGKILLs every process of `user`'s uid and waits until none is alive (zombies aside: they run
 * nothing and go when their parent reaps them). The kill is `kill -9 -1` run *as* that uid: the
 * kernel signals every process of the uid in one pass under its task-list lock, and a fork racing
 * with it fails (the parent has the signal pending), so nothing of the run escapes; a run that
 * makes itself undumpable or leaves its process group is found the same way.
 *
 * @returns true once no process of the uid is alive; false when one still was after 5 rounds.
 * @throws OutpostError OUTPOST_ERR_ISOLATION as {@link runAsRunUser} does.
 */
export async function killRunUser(user: RunUser): Promise<boolean> {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    if (livePidsOf(user.uid).length === 0) return true;
    await asRunUser(user, 'kill -9 -1 2>/dev/null; exit 0', []);
    // Each look reads every /proc/<pid>/status synchronously (a few ms on a busy agent): the pauses
    // between looks double (5 ms up to 100 ms), so a slow death does not hold the event loop.
    const deadline = performance.now() + KILL_WAIT_MS;
    for (let pauseMs = 5; livePidsOf(user.uid).length > 0 && performance.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      pauseMs = Math.min(pauseMs * 2, 100);
    }
  }
  return livePidsOf(user.uid).length === 0;
}

/**
 * Every process now: its pid, real uid and whether it is alive (not a zombie), read from
 * /proc/<pid>/status, which is readable for every process (an undumpable one shows root as the
 * owner of /proc/<pid>, not its uid). Empty where /proc cannot be read.
 */
function processTable(): { pid: number; uid: number; alive: boolean }[] {
  const table: { pid: number; uid: number; alive: boolean }[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, 'latin1');
    } catch {
      continue; // Exited meanwhile.
    }
    const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (real === undefined) continue;
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    table.push({ pid: Number(name), uid: Number(real), alive: state !== 'Z' && state !== 'X' });
  }
  return table;
}

/** The pids of the live processes (zombies excluded) whose real uid is `uid`. */
export function livePidsOf(uid: number): number[] {
  return processTable()
    .filter((p) => p.uid === uid && p.alive)
    .map((p) => p.pid);
}

/** Runs `/bin/sh -c script reap args…` as `user`; true when it exited 0 within {@link REAP_TIMEOUT_MS}. */
function asRunUser(user: RunUser, script: string, args: readonly string[]): Promise<boolean> {
  const { command, args: argv } = runAsRunUser(user, '/bin/sh', ['-c', script, 'reap', ...args]);
  return new Promise<boolean>((resolve) => {
    const child = spawn(command, argv, { stdio: 'ignore', env: {}, cwd: '/' });
    const timer = setTimeout(() => child.kill('SIGKILL'), REAP_TIMEOUT_MS);
    timer.unref();
    child.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

/** The real uids of every process now, zombies included. */
export function uidsOfLiveProcesses(): Set<number> {
  return new Set(processTable().map((p) => p.uid));
}

/** Bytes of a Unix socket address's path on Linux (`sun_path`). */
const UNIX_PATH_BYTES = 108;

/**
 * The abstract Unix socket name whose binding claims `uid` on this machine ({@link claimRunUid}):
 * `\0outpost/run-user/<uid>/` filled with `_` to the whole of `sun_path`. Node 20 binds an abstract name padded
 * with NULs to the whole address and Node 22 and later bind it as given: a name that fills the address is the
 * same name for agents of every Node version.
 */
export function runUidClaimName(uid: number): string {
  return `\0outpost/run-user/${uid}/`.padEnd(UNIX_PATH_BYTES, '_');
}

/** The claims this process holds, by uid: each a listening socket bound to {@link runUidClaimName}. */
const claims = new Map<number, Server>();

/**
 * Claims `uid` for this process against every other process on the machine (every agent, every pool) by
 * binding the abstract Unix socket {@link runUidClaimName}: the kernel lets one socket hold a name, and frees
 * it when the socket closes, including when its process dies, so no claim outlives its agent and none needs
 * cleaning up. The bind of a Unix socket is made synchronously by `listen()`. The socket is close-on-exec (no
 * run user inherits it) and unreferenced (it keeps no event loop alive). Anyone on the machine may connect to an
 * abstract name, a run user's code too: every connection is closed as it is accepted, so none holds a descriptor
 * of the agent.
 *
 * The abstract namespace is one per network namespace: agents that share a PID namespace (where their run
 * users could signal each other) but not a network namespace do not see each other's claims.
 * @returns true when this process now holds the claim; false when another socket holds the name.
 */
export function claimRunUid(uid: number): boolean {
  if (claims.has(uid)) return false;
  const server = createServer((connection) => connection.destroy());
  // A name held elsewhere fails the bind: its EADDRINUSE is emitted on the next tick.
  server.on('error', () => {});
  server.listen({ path: runUidClaimName(uid) });
  if (!server.listening) {
    server.close();
    return false;
  }
  server.unref();
  claims.set(uid, server);
  return true;
}

/** Gives up this process's claim of `uid` ({@link claimRunUid}); nothing when it holds none. */
export function releaseRunUid(uid: number): void {
  claims.get(uid)?.close();
  claims.delete(uid);
}

/**
 * Hands out run users from a range of uids so that no two live runs share one: the kernel then
 * refuses a run's signals and ptrace to every other run and to the agent (EPERM), and every
 * process and file of one run can be found by its uid. {@link release} reaps the run
 * ({@link reapRunUser}) before its uid can be handed out again.
 */
export class RunUserPool {
  readonly #range: { first: number; count: number };
  readonly #what: string;
  readonly #extraDirs: readonly string[];
  readonly #inUse = new Set<number>();
  /** Releases still reaping. */
  readonly #releasing = new Set<Promise<void>>();
  #next: number;

  /**
   * @param range the uids to hand out: `first` ≥ 1000, `count` ≥ 1, all below 2³²−1.
   * @param options `what`: the kind of user code, for messages (`script`, `browser`, `suite`);
   *   `extraDirs`: folders cleaned on release besides {@link SHARED_TEMP_DIRS}.
   * @throws OutpostError OUTPOST_ERR_CONFIG when the range is out of bounds.
   */
  constructor(
    range: { first: number; count: number },
    options: { what: string; extraDirs?: readonly string[] },
  ) {
    if (
      !Number.isInteger(range.first) ||
      !Number.isInteger(range.count) ||
      range.first < 1000 ||
      range.count < 1 ||
      range.first + range.count > 4_294_967_295
    ) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `${options.what} uids must be a range of integers from 1000, got first ${range.first}, count ${range.count}`,
      );
    }
    this.#range = { first: range.first, count: range.count };
    this.#what = options.what;
    this.#extraDirs = options.extraDirs ?? [];
    // A random start: two pools starting together are unlikely to pick the same uid first.
    this.#next = randomInt(range.count);
  }

  /** How many uids are handed out now (releases still reaping included). */
  get inUse(): number {
    return this.#inUse.size;
  }

  /**
   * A uid no live process has and no other run on the machine holds (this pool's, another pool's or another
   * agent's: {@link claimRunUid}), as uid and gid.
   * @throws OutpostError OUTPOST_ERR_ISOLATION when user code cannot run apart here (the reason
   *   of {@link userCodeIsolation}); OUTPOST_ERR_CONFIG when every uid of the range is in use.
   */
  take(): RunUser {
    const isolation = userCodeIsolation();
    if (!isolation.available) throw new OutpostError('OUTPOST_ERR_ISOLATION', isolation.reason);
    const { first, count } = this.#range;
    // Another pool (a second agent on the machine, another pool of this one, a test) may use the same
    // range: a uid is taken only once claimed for this process (claimRunUid), so no two agents hand out
    // one uid at once; and not when some live process has it, since releasing a uid kills every process
    // it has (a process left by an agent that died: its claim went with it).
    const busy = uidsOfLiveProcesses();
    const own = process.geteuid?.();
    for (let n = 0; n < count; n++) {
      const uid = first + ((this.#next + n) % count);
      if (this.#inUse.has(uid) || busy.has(uid) || uid === own || !claimRunUid(uid)) continue;
      this.#next = (this.#next + n + 1) % count;
      this.#inUse.add(uid);
      return { uid, gid: uid };
    }
    throw new OutpostError(
      'OUTPOST_ERR_CONFIG',
      `all ${count} ${this.#what} uids from ${first} are in use: raise the ${this.#what} uid count`,
    );
  }

  /**
   * Ends the run of `user`: kills every process of its uid and removes its files
   * ({@link reapRunUser}), then hands the uid out again. A uid whose reap failed stays out of use.
   * Never rejects.
   */
  release(user: RunUser): Promise<void> {
    if (!this.#inUse.has(user.uid)) return Promise.resolve();
    const releasing = (async () => {
      const reaped = await reapRunUser(user, this.#extraDirs).catch(() => false);
      // A uid whose reap failed stays claimed: no agent on the machine hands it out.
      if (reaped) {
        this.#inUse.delete(user.uid);
        releaseRunUid(user.uid);
      }
    })();
    this.#releasing.add(releasing);
    void releasing.finally(() => this.#releasing.delete(releasing));
    return releasing;
  }

  /** Resolves once every release started so far has reaped its run. Never rejects. */
  async settled(): Promise<void> {
    while (this.#releasing.size > 0) await Promise.allSettled([...this.#releasing]);
  }
}

/** How {@link spawnUserProcess} starts one process of user code. */
export type UserProcessOptions = {
  /** The run user it runs as. */
  runAs: RunUser;
  /** Folder under which its private temp folder (cwd, HOME, TMPDIR) is made. */
  tmpRoot: string;
  /** Name prefix of that temp folder (`outpost-script-`). */
  tmpPrefix: string;
  /** Node's flags and script with its arguments, given its temp folder: run as `node <nodeArgs>`. */
  nodeArgs: (tmpDir: string) => readonly string[];
  /** Its whole environment, given its temp folder (nothing of the agent's is passed on). */
  env: (tmpDir: string) => Record<string, string>;
  /** Shell commands run before Node starts, as the run user (`ulimit -d 524288`); `ulimit -c 0` always. */
  limits?: string;
};

/** The shell the limits are set in before Node starts. */
const SHELL = '/bin/sh';

/**
 * Starts one process of user code, the one way the agent does (script processes, browser hosts
 * and runners): a private temp folder (mode 0700) given to the run user, then
 * `setpriv … sh -c 'ulimit …; exec node …'` spawned detached (it leads a process group of its
 * own, tracked so that the agent exiting kills it), with the given environment only and four
 * pipes (stdin, stdout, stderr, and fd 3 for messages).
 *
 * @returns the child and its temp folder (the caller removes it when the process ended).
 * @throws OutpostError OUTPOST_ERR_ISOLATION when user code cannot run apart here; the error of
 *   mkdtemp or chown when the temp folder cannot be made or given (nothing is left behind).
 */
export async function spawnUserProcess(
  options: UserProcessOptions,
): Promise<{ child: ChildProcess; tmpDir: string }> {
  const tmpDir = await realpath(await mkdtemp(join(options.tmpRoot, options.tmpPrefix)));
  try {
    await chown(tmpDir, options.runAs.uid, options.runAs.gid);
    const limits = `${options.limits ?? ''}${options.limits ? '; ' : ''}ulimit -c 0 2>/dev/null; exec "$0" "$@"`;
    const { command, args } = existsSync(SHELL)
      ? runAsRunUser(options.runAs, SHELL, ['-c', limits, process.execPath, ...options.nodeArgs(tmpDir)])
      : runAsRunUser(options.runAs, process.execPath, options.nodeArgs(tmpDir));
    const child = spawn(command, args, {
      cwd: tmpDir,
      env: options.env(tmpDir),
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid !== undefined) trackGroup(child.pid);
    return { child, tmpDir };
  } catch (err) {
    await removeTree(tmpDir);
    throw err;
  }
}
