import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQLite } from '../../src/service/platform/store/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiClient, CLI, freePort } from '../helpers/cli.js';

/** How long the slow server takes to answer, milliseconds: the run is in flight meanwhile. */
const SLOW_MS = 3000;

/** `outpost up` in its own process group, as a terminal runs a foreground job. */
type Up = {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | string>;
  url: string;
  dataDir: string;
};

async function startUp(apiKey: string): Promise<Up> {
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-up-'));
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'up'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      PORT: String(port),
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: apiKey,
      AGENT_HEALTH_PORT: String(await freePort()),
    },
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr!.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const deadline = Date.now() + 30_000;
  while (!/is up: http/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`outpost up did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output: () => out, exited, url: `http://127.0.0.1:${port}`, dataDir };
}

/** Direct children of `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
}

/** True while `pid` exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function within(ms: number, what: string, condition: () => boolean): Promise<number> {
  const t0 = Date.now();
  while (!condition()) {
    if (Date.now() - t0 > ms) throw new Error(`${what} not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - t0;
}

describe('outpost up: Ctrl-C drains, the agent never outlives up (issue 9 item 2.6)', () => {
  let slow: Server;
  let hits: number;
  let up: Up | undefined;
  let agentPid: number | undefined;
  const apiKey = `op_e2e_${'u'.repeat(40)}`;

  beforeEach(async () => {
    hits = 0;
    slow = createServer((_req, res) => {
      hits += 1;
      setTimeout(() => res.end('slow but fine'), SLOW_MS);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    if (up && up.child.exitCode === null && up.child.signalCode === null) {
      try {
        process.kill(-up.child.pid!, 'SIGKILL');
      } catch {}
    }
    if (agentPid !== undefined && alive(agentPid)) process.kill(agentPid, 'SIGKILL');
    if (up) rmSync(up.dataDir, { recursive: true, force: true });
    up = undefined;
    agentPid = undefined;
    slow.closeAllConnections();
    await new Promise<void>((resolve) => slow.close(() => resolve()));
  });

  /** Starts up, creates a URL check of the slow server and triggers it; resolves once its request is in flight. */
  async function runInFlight(): Promise<string> {
    up = await startUp(apiKey);
    const api = apiClient(up.url, apiKey);
    const port = (slow.address() as { port: number }).port;
    const created = await api('POST', '/v1/checks/url', {
      name: 'slow page',
      activated: false,
      request: { url: `http://127.0.0.1:${port}/slow` },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const triggered = await api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json.id] },
    });
    expect(triggered.status).toBe(201);
    await within(30_000, 'the slow request', () => hits > 0);
    [agentPid] = childrenOf(up.child.pid!);
    expect(agentPid).toBeDefined();
    return created.json.id as string;
  }

  function storedResults(dataDir: string, checkId: string): { status: string }[] {
    const db = new SQLite(join(dataDir, 'outpost.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT status FROM check_results WHERE check_id = ?').all(checkId) as {
        status: string;
      }[];
    } finally {
      db.close();
    }
  }

  it.each([
    ['SIGINT to the whole process group (Ctrl-C in a terminal)', 'group'],
    ['SIGTERM to up alone (a process manager)', 'up'],
  ])(
    '%s: the run in flight finishes and its result is stored before exit',
    async (_name, target) => {
      const checkId = await runInFlight();
      const t0 = Date.now();
      if (target === 'group') process.kill(-up!.child.pid!, 'SIGINT');
      else up!.child.kill('SIGTERM');

      const code = await up!.exited;
      const tookMs = Date.now() - t0;

      expect(code, up!.output()).toBe(0);
      expect(alive(agentPid!)).toBe(false);
      // 3 s is over the default degraded response time: DEGRADED, not FAILED (an aborted run would fail).
      expect(storedResults(up!.dataDir, checkId)).toEqual([{ status: 'DEGRADED' }]);
      // It waited for the slow answer rather than dropping the run.
      expect(tookMs).toBeGreaterThanOrEqual(SLOW_MS / 2);
      expect(up!.output()).not.toMatch(/second signal; exiting at once/);
    },
    60_000,
  );

  it('a second Ctrl-C exits at once, the agent with it', async () => {
    await runInFlight();
    process.kill(-up!.child.pid!, 'SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(-up!.child.pid!, 'SIGINT');

    const code = await up!.exited;
    expect(code).toBe(130);
    await within(3000, 'agent exit', () => !alive(agentPid!));
  }, 60_000);

  it('SIGKILL of up: the agent child exits within a few seconds', async () => {
    await runInFlight();
    process.kill(up!.child.pid!, 'SIGKILL');
    await up!.exited;

    const tookMs = await within(5000, 'agent exit after up died', () => !alive(agentPid!));
    console.log(`agent exited ${tookMs} ms after outpost up was SIGKILLed`);
  }, 60_000);

  it('a closed stdout (outpost up | head -1) ends the printing, not up: SIGTERM still stops it and its agent', async () => {
    up = await startUp(apiKey);
    // The reader goes away after the first line, as `head -1` does: every later write meets EPIPE.
    up.child.stdout!.destroy();
    await within(15_000, 'the embedded agent', () => childrenOf(up!.child.pid!).length > 0);
    [agentPid] = childrenOf(up.child.pid!);
    // The first result to print meets the closed pipe: up says so on stderr and goes on. How soon depends on
    // how fast the agent starts and runs the demo checks, so the test waits for the line, not a fixed time.
    const noticedMs = await within(30_000, 'the closed stdout noticed', () =>
      /stdout was closed: results and messages are no longer printed/.test(up!.output()),
    );
    console.log(`closed stdout noticed ${noticedMs} ms after the agent started`);
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(up.child.pid!), up.output()).toBe(true);

    process.kill(up.child.pid!, 'SIGTERM');
    expect(await up.exited).toBe(0);
    await within(5000, 'agent exit', () => !alive(agentPid!));
  }, 60_000);

  it('SIGKILL of up while its agent is still loading: the agent notices the closed channel all the same', async () => {
    up = await startUp(apiKey);
    await within(15_000, 'the embedded agent', () => childrenOf(up!.child.pid!).length > 0);
    [agentPid] = childrenOf(up.child.pid!);
    // At once: the agent has not installed its handlers yet when its channel closes.
    process.kill(up.child.pid!, 'SIGKILL');
    await up.exited;
    await within(10_000, 'agent exit after up died during its start', () => !alive(agentPid!));
  }, 60_000);
});
