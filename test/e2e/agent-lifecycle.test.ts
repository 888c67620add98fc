import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type apiClient,
  awaitSession,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';

const apiKey = `op_e2e_${'a'.repeat(40)}`;

/** A job that runs for a few seconds: 40 echo requests, which the executor spaces out. */
const slowCheck = {
  name: 'slow loopback ping',
  activated: false,
  request: { hostname: '127.0.0.1', pingCount: 40 },
  heartbeat: {},
  script: '',
};

async function health(port: number): Promise<any> {
  return (await fetch(`http://127.0.0.1:${port}/health`)).json();
}

describe('agent lifecycle against a real service process', () => {
  let serviceProcess: ServiceProcess;
  let _service: CliProcess;
  let api: ReturnType<typeof apiClient>;
  let serviceUrl: string;
  const agents: CliProcess[] = [];

  const startAgent = async () => {
    const healthPort = await freePort();
    const agent = spawnCli(['agent'], {
      API_KEY: apiKey,
      SERVICE_URL: serviceUrl,
      AGENT_HEALTH_PORT: String(healthPort),
      LOG_LEVEL: 'INFO',
      AGENT_CLAIM_WAIT_SECONDS: '1',
    });
    agents.push(agent);
    return { agent, healthPort };
  };

  beforeEach(async () => {
    const started = await startServiceProcess(apiKey, { OUTPOST_LEASE_SECONDS: '3', LOG_LEVEL: 'WARN' });
    serviceProcess = started;
    _service = started.process;
    serviceUrl = started.url;
    api = started.api;
  });

  afterEach(async () => {
    for (const a of agents.splice(0)) await stopCli(a);
    await serviceProcess.stop();
  });

  async function startSlowSession(): Promise<string> {
    const created = await api('POST', '/v1/checks/icmp', slowCheck);
    expect(created.status).toBe(201);
    const started = await api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json.id] },
    });
    return started.json.sessions[0].checkSessionId as string;
  }

  it('SIGTERM mid-job: readiness 503 at once, the result still arrives, exit code 0', async () => {
    const { agent, healthPort } = await startAgent();
    await expect
      .poll(
        async () => (await fetch(`http://127.0.0.1:${healthPort}/-/readiness`).catch(() => null))?.status,
        { timeout: 15_000 },
      )
      .toBe(200);
    const sessionId = await startSlowSession();
    await expect.poll(async () => (await health(healthPort)).runningJobs, { timeout: 15_000 }).toBe(1);

    agent.child.kill('SIGTERM');
    await expect
      .poll(async () => (await fetch(`http://127.0.0.1:${healthPort}/-/readiness`)).status, {
        timeout: 1000,
        interval: 20,
      })
      .toBe(503);
    expect(await agent.exited).toBe(0);

    const session = await api('GET', `/v1/check-sessions/${sessionId}`);
    expect(session.json.status).toBe('PASSED');
    expect(session.json.results).toHaveLength(1);
    expect(session.json.results[0].icmpCheckResult.packetsReceived).toBe(40);
  });

  it('SIGKILL mid-job: after the lease, a second agent runs the job; exactly one result is stored', async () => {
    const first = await startAgent();
    const sessionId = await startSlowSession();
    await expect
      .poll(async () => (await health(first.healthPort).catch(() => ({ runningJobs: 0 }))).runningJobs, {
        timeout: 15_000,
      })
      .toBe(1);
    first.agent.child.kill('SIGKILL');
    expect(await first.agent.exited).toBe('SIGKILL');

    await startAgent();
    const done = await awaitSession(api, sessionId, 60_000);
    expect(done.status).toBe('PASSED');
    expect(done.results).toHaveLength(1);
    // Give a late duplicate every chance to land, then count again.
    await new Promise((r) => setTimeout(r, 500));
    expect((await api('GET', `/v1/check-sessions/${sessionId}`)).json.results).toHaveLength(1);
  });

  it('an agent with a wrong key exits non-zero', async () => {
    const healthPort = await freePort();
    const agent = spawnCli(['agent'], {
      API_KEY: 'op_wrong_key_0000000000000000',
      SERVICE_URL: serviceUrl,
      AGENT_HEALTH_PORT: String(healthPort),
    });
    agents.push(agent);
    const code = await agent.exited;
    expect(code).not.toBe(0);
    expect(agent.output()).toMatch(/401|unauthori[sz]ed/i);
  });

  it('an agent with bad configuration names each bad variable and exits non-zero', async () => {
    const agent = spawnCli(['agent'], { SERVICE_URL: 'not a url', JOB_CONCURRENCY: 'lots' });
    agents.push(agent);
    expect(await agent.exited).not.toBe(0);
    const out = agent.output();
    expect(out).toContain('API_KEY');
    expect(out).toContain('SERVICE_URL');
    expect(out).toContain('JOB_CONCURRENCY');
  });
});
