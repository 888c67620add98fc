import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { type Job, PROTOCOL_VERSION } from '../../src/protocol/index.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

/** The built CLI; `npm test` builds it first (pretest). */
export const CLI = join(PACKAGE_ROOT, 'dist/src/cli.js');

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A CLI process with its output collected. */
export type CliProcess = {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first output line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
};

/** Spawns `outpost <args>` from the built CLI with `env` on top of a minimal environment. */
export function spawnCli(args: string[], env: Record<string, string>): CliProcess {
  return spawnCollected(process.execPath, [CLI, ...args], {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    ...env,
  });
}

/**
 * Spawns `command args` (the built CLI behind a wrapper such as `setpriv` or the image's entrypoint)
 * with exactly `env`, in `cwd`, its stdout and stderr collected.
 * @throws Error when the CLI is not built.
 */
export function spawnCollected(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): CliProcess {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const child = spawn(command, args, {
    env,
    ...(cwd === undefined ? {} : { cwd }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = out.split('\n').find((l) => pattern.test(l));
          if (line !== undefined) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(line);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${out}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}

/** Stops a CLI process if it still runs (SIGKILL after 5 s of SIGTERM). */
export async function stopCli(p: CliProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(timer);
}

/** A small client for the service API in end-to-end tests. */
export function apiClient(baseUrl: string, apiKey: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const res = await fetch(new URL(path, baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
}

/** Runs the session completion long poll until the session is final. */
export async function awaitSession(
  api: ReturnType<typeof apiClient>,
  sessionId: string,
  timeoutMs = 60_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await api('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=5`);
    if (res.status === 200) return res.json;
    if (res.status !== 408) throw new Error(`completion answered ${res.status}: ${JSON.stringify(res.json)}`);
  }
  throw new Error(`session ${sessionId} not final within ${timeoutMs} ms`);
}

/** `outpost service` in its own process on a free port with a fresh data folder. */
export type ServiceProcess = {
  process: CliProcess;
  url: string;
  dataDir: string;
  api: ReturnType<typeof apiClient>;
  /** Stops the process and removes the data folder. */
  stop(): Promise<void>;
};

/** Starts `outpost service` with `apiKey` and `env` on top; resolves once it listens. */
export async function startServiceProcess(
  apiKey: string,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const process = spawnCli(['service'], {
    PORT: String(port),
    OUTPOST_DATA_DIR: dataDir,
    OUTPOST_API_KEY: apiKey,
    ...env,
  });
  await process.waitFor(/service is listening/);
  return {
    process,
    url,
    dataDir,
    api: apiClient(url, apiKey),
    async stop() {
      await stopCli(process);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** What {@link claimOverHttp} asks for; every field has the default of an agent serving every location. */
export type HttpClaim = {
  /** The claiming agent's id (a UUID); default a new one. */
  agentId?: string;
  checkTypes?: string[];
  freeSlots?: { uptime: number; main: number };
  /** How long the claim may wait for a job, s. Default 0. */
  waitSeconds?: number;
};

/**
 * `POST /v1/agent/jobs/claim` on the service at `url` with `apiKey` (an account key: a data-center agent),
 * as a real agent sends it over HTTP; expects 200.
 * @returns the jobs handed out (none when the queue had nothing for it).
 */
export async function claimOverHttp(url: string, apiKey: string, claim: HttpClaim = {}): Promise<Job[]> {
  const res = await fetch(new URL('/v1/agent/jobs/claim', url), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'x-agent-id': claim.agentId ?? randomUUID(),
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      agentVersion: '0.0.0-test',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: claim.checkTypes ?? ['ICMP', 'DNS', 'TCP', 'URL', 'API'],
      runtimes: ['2026.04'],
      freeSlots: claim.freeSlots ?? { uptime: 3, main: 3 },
      waitSeconds: claim.waitSeconds ?? 0,
    }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { jobs: Job[] }).jobs;
}
