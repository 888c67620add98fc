import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { SQLite } from '../../src/service/platform/store/sqlite.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';

/** Checks every 10 s (frequency 0, offset 10: the scheduler's 10-second period, aligned to the epoch). */
const CHECKS = 20;
const PERIOD_MS = 10_000;
/** Three whole periods, counted from the middle of one period to the middle of another. */
const WINDOW_MS = 3 * PERIOD_MS;

describe('a default agent against 20 TCP checks every 10 s (issue 9 item 2.7)', () => {
  let tcp: Server;
  let service: ServiceProcess;
  let agent: CliProcess | undefined;
  const apiKey = `op_e2e_${'t'.repeat(40)}`;

  beforeAll(async () => {
    tcp = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    service = await startServiceProcess(apiKey);
  });

  afterAll(async () => {
    await stopCli(agent);
    await service?.stop();
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  });

  it('keeps up with the uptime class while the main class long-polls: ≥ 90 % of 120 runs per minute', async () => {
    const port = (tcp.address() as { port: number }).port;
    for (let i = 0; i < CHECKS; i++) {
      const res = await service.api('POST', '/v1/checks/tcp', {
        name: `tcp ${i}`,
        frequency: 0,
        frequencyOffset: 10,
        request: { hostname: '127.0.0.1', port },
      });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
    }
    // A default agent: JOB_CONCURRENCY 10, profile full (uptime and main classes), 20 s claims.
    agent = spawnCli(['agent'], {
      API_KEY: apiKey,
      SERVICE_URL: service.url,
      AGENT_HEALTH_PORT: String(await freePort()),
      LOG_LEVEL: 'WARN',
    });

    const db = new SQLite(join(service.dataDir, 'outpost.db'), { readonly: true, fileMustExist: true });
    const stored = () => (db.prepare('SELECT count(*) AS n FROM check_results').get() as { n: number }).n;
    // Runs are enqueued at multiples of 10 s: start and end the window half a period after one.
    const untilMidPeriod = (PERIOD_MS - (Date.now() % PERIOD_MS) + PERIOD_MS / 2) % PERIOD_MS;
    await new Promise((r) => setTimeout(r, untilMidPeriod + PERIOD_MS));
    const before = stored();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const runs = stored() - before;
    db.close();

    const runsPerMinute = (runs * 60_000) / WINDOW_MS;
    console.log(
      `agent throughput: ${runs} runs in ${WINDOW_MS / 1000} s = ${runsPerMinute} runs/min (expected 120)`,
    );
    expect(runs).toBeGreaterThanOrEqual(0.9 * CHECKS * (WINDOW_MS / PERIOD_MS));
    expect(agent.child.exitCode).toBeNull();
  }, 90_000);
});
