import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import type { RunnerPayload } from '../../src/browser/messages.js';
import { type BrowserRunOutcome, BrowserRunner } from '../../src/browser/runner-process.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { CHROMIUM_PATH } from '../helpers/requirements.js';

/**
 * What the browser runner tests share: a warm Chromium started with the runtime's own
 * `launchServer` (as the browser host does), loopback HTTP servers, and one-call runs of a check
 * in a fresh runner whose artifacts are read before it is disposed.
 */
export const RUNTIME_ID = '2026.04';
export const RUNTIME_DIR = join(PACKAGE_ROOT, 'runtimes', RUNTIME_ID);

/**
 * As root the runner runs as uid/gid 62 500 (the agent's choice for unprivileged children), and
 * Chromium runs with `--no-sandbox` (it refuses its sandbox as root).
 */
export const AS_ROOT = process.getuid?.() === 0;
export const RUN_AS = { uid: 62_500, gid: 62_500 };

/** A warm browser on loopback, like the browser host's. */
export type WarmBrowser = { wsEndpoint: string; close: () => Promise<void> };

export async function startBrowser(): Promise<WarmBrowser> {
  const runtimeRequire = createRequire(join(RUNTIME_DIR, 'package.json'));
  const { chromium } = runtimeRequire('playwright-core') as typeof PlaywrightCore;
  const server = await chromium.launchServer({
    executablePath: CHROMIUM_PATH,
    host: '127.0.0.1',
    port: 0,
    wsPath: `/${Math.random().toString(16).slice(2)}${Math.random().toString(16).slice(2)}`,
    args: AS_ROOT ? ['--no-sandbox'] : [],
  });
  return { wsEndpoint: server.wsEndpoint(), close: () => server.close() };
}

/** A loopback HTTP server; `close` also ends connections left open (a server that never answers). */
export type Loopback = { origin: string; close: () => Promise<void> };

export async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Loopback> {
  const sockets = new Set<Socket>();
  const server: Server = createServer(handler);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A payload with test defaults: 20 s to run, 3 s capture margin. */
export function payloadFor(
  wsEndpoint: string,
  code: string,
  overrides: Partial<RunnerPayload> = {},
): RunnerPayload {
  return {
    wsEndpoint,
    checkType: 'BROWSER',
    code,
    shape: null,
    env: {},
    secrets: [],
    timeoutMs: 20_000,
    captureMarginMs: 3_000,
    video: false,
    maxLogChars: 10_000,
    maxEntries: 100,
    ...overrides,
  };
}

/** A finished run: the outcome and the artifacts' bytes, read before the runner was disposed. */
export type CheckRun = { outcome: BrowserRunOutcome; files: Map<string, Buffer>; tmpFiles: string[] };

/** Spawns a runner, waits for `ready`, runs `payload`, reads its artifacts, disposes it. */
export async function runCheck(
  payload: RunnerPayload,
  killAfterMs?: number,
  signal?: AbortSignal,
  prepareWith?: string,
): Promise<CheckRun> {
  const runner = await BrowserRunner.spawn({
    runtimeDir: RUNTIME_DIR,
    runtimeId: RUNTIME_ID,
    tmpRoot: tmpdir(),
    runAs: RUN_AS,
    ...(killAfterMs === undefined ? {} : { killAfterMs }),
  });
  let run: CheckRun;
  try {
    if (!(await runner.ready)) throw new Error(`the runner did not start: ${runner.output}`);
    if (prepareWith !== undefined) {
      // As the pool does for a spare: name the browser early, give the runner time to prepare.
      runner.prepare(prepareWith);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    }
    const outcome = await runner.run(payload, signal === undefined ? {} : { signal });
    const files = new Map<string, Buffer>();
    for (const artifact of outcome.artifacts)
      files.set(artifact.name, readFileSync(join(runner.tmpDir, artifact.name)));
    run = { outcome, files, tmpFiles: readdirSync(runner.tmpDir) };
  } finally {
    await runner.dispose();
  }
  // Nothing of the runner's process group is left.
  if (runner.pid !== undefined && groupAlive(runner.pid))
    throw new Error(`runner group ${runner.pid} survived`);
  return run;
}

/** True while any process of the group led by `pid` exists. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Pids of processes running as `uid` (the runners' user), for leak checks. */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const status = readFileSync(`/proc/${name}/status`, 'latin1');
      const uidLine = /^Uid:\s+(\d+)/m.exec(status);
      const state = /^State:\s+(\S)/m.exec(status);
      if (uidLine && Number(uidLine[1]) === uid && state?.[1] !== 'Z') pids.push(Number(name));
    } catch {
      // exited while listing
    }
  }
  return pids;
}
