import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';

/** The slow page answers after this long, milliseconds: longer than the 2 s lease. */
const SLOW_MS = 6000;

describe('an agent stopped (SIGSTOP) past its lease and continued (issue 9 item 2.11)', () => {
  let slow: Server;
  let hits = 0;
  let service: ServiceProcess;
  let agent: CliProcess;
  const apiKey = `op_e2e_${'p'.repeat(40)}`;

  beforeAll(async () => {
    slow = createServer((_req, res) => {
      hits += 1;
      setTimeout(() => res.end('late'), SLOW_MS);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    service = await startServiceProcess(apiKey, { OUTPOST_LEASE_SECONDS: '2' });
    agent = spawnCli(['agent'], {
      API_KEY: apiKey,
      SERVICE_URL: service.url,
      AGENT_HEALTH_PORT: String(await freePort()),
      NETWORK_TRACES: 'off',
      LOG_LEVEL: 'INFO',
    });
    await agent.waitFor(/"agent started"/);
  });

  afterAll(async () => {
    if (agent.child.exitCode === null) agent.child.kill('SIGCONT');
    await stopCli(agent);
    await service?.stop();
    slow.closeAllConnections();
    await new Promise<void>((resolve) => slow.close(() => resolve()));
  });

  it('never runs the same job id twice side by side, and drops the result of the run whose lease lapsed', async () => {
    const port = (slow.address() as { port: number }).port;
    const created = await service.api('POST', '/v1/checks/url', {
      name: 'slow page',
      activated: false,
      request: { url: `http://127.0.0.1:${port}/` },
    });
    expect(created.status).toBe(201);
    await service.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } });
    await expect.poll(() => hits, { timeout: 20_000 }).toBe(1);
    const started = await agent.waitFor(/"job started"/);
    const jobId = (JSON.parse(started) as { jobId: string }).jobId;

    agent.child.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 5000));
    agent.child.kill('SIGCONT');
    await new Promise((r) => setTimeout(r, SLOW_MS + 2000));

    const lines = agent
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; jobId?: string });
    const ofJob = lines.filter((l) => l.jobId === jobId);
    expect(ofJob.filter((l) => l.msg === 'job started')).toHaveLength(1);
    expect(hits).toBe(1);
    // The run that lost its lease posts nothing: a lost lease ends it and drops its result.
    expect(ofJob.some((l) => /lease lost|result dropped|duplicate claim/.test(l.msg))).toBe(true);
    expect(ofJob.some((l) => l.msg === 'result posted')).toBe(false);
  }, 60_000);
});
