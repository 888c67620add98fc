import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { killGroup, trackGroup, untrackGroup } from '../../common/process-tree.js';
import { killRunUser, runAsRunUser } from '../../common/run-users.js';
import type { OutputLog } from './output-log.js';
import type { Layout, SuiteRunOptions } from './types.js';
import { WRAPPER_CONFIG_NAME } from './wrapper-config.js';

/** After `timeoutMs`, how long before the group is SIGKILLed (Playwright writes its report at its global timeout). */
const KILL_GRACE_MS = 2_000;
/** How long the agent waits for the stdio of a killed group to close, ms. */
const CLOSE_WAIT_MS = 2_000;
const PATH = '/usr/local/bin:/usr/bin:/bin';

/** How `playwright test` ended. */
export type PlaywrightExit = {
  code: number | null;
  signal: NodeJS.Signals | null;
  killedAtDeadline: boolean;
  cancelled: boolean;
};

/** The suite's whole environment: the check's variables, then the runtime's (which win). */
function suiteEnv(options: SuiteRunOptions, layout: Layout): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env)) {
    if (
      typeof value === 'string' &&
      name !== '' &&
      !name.includes('=') &&
      !name.includes('\0') &&
      !value.includes('\0')
    )
      env[name] = value;
  }
  if (options.testSession) env.CI = '1';
  Object.assign(env, {
    OUTPOST: '1',
    OUTPOST_RUN_SOURCE: options.runSource,
    CHECKLY: '1',
    CHECKLY_RUN_SOURCE: options.runSource,
    HOME: layout.home,
    TMPDIR: layout.home,
    PATH,
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    PLAYWRIGHT_BROWSERS_PATH: layout.browsers,
  });
  return env;
}

/** Spawns `playwright test`, reads its output into `logs`, kills its group at the deadline or on abort. */
export async function runPlaywright(
  options: SuiteRunOptions,
  layout: Layout,
  logs: OutputLog,
): Promise<PlaywrightExit> {
  const cli = join(options.runtimeDir, 'node_modules', '@playwright', 'test', 'cli.js');
  const args = [cli, 'test', '--config', WRAPPER_CONFIG_NAME];
  const { command, args: argv } = existsSync('/bin/sh')
    ? runAsRunUser(options.runAs, '/bin/sh', [
        '-c',
        'ulimit -c 0 2>/dev/null; exec "$0" "$@"',
        process.execPath,
        ...args,
      ])
    : runAsRunUser(options.runAs, process.execPath, args);
  const child: ChildProcess = spawn(command, argv, {
    cwd: layout.project,
    env: suiteEnv(options, layout),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`playwright test could not be started: ${error.message}`);
  }
  trackGroup(pid);
  let killedAtDeadline = false;
  let cancelled = false;
  const kill = () => killGroup(pid);
  const deadline = setTimeout(() => {
    killedAtDeadline = true;
    kill();
  }, options.timeoutMs + KILL_GRACE_MS);
  const onAbort = () => {
    cancelled = true;
    kill();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = child[name];
    stream?.on('error', () => {});
    stream?.on('data', (chunk: Buffer) => logs.add(name, chunk));
  }
  // Listened for from the start: 'close' may come right after 'exit'.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(deadline);
  options.signal?.removeEventListener('abort', onAbort);
  // Whatever the leader left in its group (workers, a webServer) dies with it.
  kill();
  untrackGroup(pid);
  // A process of the suite that left its group (setsid, a double fork) dies with the run too.
  await killRunUser(options.runAs);
  // A process that left the group (setsid) may hold the pipes: wait a little, then stop reading.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
  clearTimeout(timer);
  child.stdout?.destroy();
  child.stderr?.destroy();
  return { ...exited, killedAtDeadline: killedAtDeadline && !cancelled, cancelled };
}
