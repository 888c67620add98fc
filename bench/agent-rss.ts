import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PACKAGE_ROOT } from '../src/common/paths.js';

/** Idle agent memory, in MiB. */
export type AgentRssReport = { idleRssMiB: number; peakRssMiB: number; goalMiB: number };

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/**
 * Starts `outpost service` and `outpost agent` from the build, lets the agent
 * long-poll with nothing to do for `idleMs`, and reads its resident memory
 * from /proc (VmRSS now, VmHWM peak). Goal: under 80 MiB.
 */
export async function benchAgentIdleRss(idleMs = 10_000): Promise<AgentRssReport> {
  const cli = join(PACKAGE_ROOT, 'dist/src/cli.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-bench-'));
  const apiKey = `op_bench_${'r'.repeat(40)}`;
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'WARN' };
  const service = spawn(process.execPath, [cli, 'service'], {
    env: { ...env, PORT: String(port), OUTPOST_DATA_DIR: dataDir, OUTPOST_API_KEY: apiKey },
    stdio: 'ignore',
  });
  try {
    for (let i = 0; i < 100; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/v1/checks`, {
        headers: { authorization: `Bearer ${apiKey}` },
      }).catch(() => null);
      if (up?.ok) break;
      await sleep(100);
    }
    const agent = spawn(process.execPath, [cli, 'agent'], {
      env: {
        ...env,
        API_KEY: apiKey,
        SERVICE_URL: `http://127.0.0.1:${port}`,
        AGENT_HEALTH_PORT: String(await freePort()),
      },
      stdio: 'ignore',
    });
    try {
      await sleep(idleMs);
      return {
        idleRssMiB: rssMiB(agent.pid!, 'VmRSS'),
        peakRssMiB: rssMiB(agent.pid!, 'VmHWM'),
        goalMiB: 80,
      };
    } finally {
      agent.kill('SIGTERM');
    }
  } finally {
    service.kill('SIGTERM');
    await sleep(300);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
