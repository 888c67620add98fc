import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { CheckResult } from '../../src/protocol/index.js';
import {
  FAST_BACKOFF,
  makeJob,
  memoryLogger,
  TEST_API_KEY,
  TestService,
  testConfig,
  TimerExecutor,
} from './helpers.js';

async function probe(port: number | null, path: string) {
  const res = await request(`http://127.0.0.1:${port}${path}`);
  const text = await res.body.text();
  return { status: res.statusCode, text };
}

describe('Agent', () => {
  let service: TestService;
  let agents: Agent[];

  beforeEach(async () => {
    service = await new TestService().start();
    agents = [];
  });
  afterEach(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await service.close();
  });

  function agent(executors: TimerExecutor[], env: NodeJS.ProcessEnv = {}) {
    const log = memoryLogger();
    const instance = new Agent({
      config: testConfig(service.url, env),
      executors: new Map(executors.map((e) => [e.checkType, e])),
      logger: log.logger,
      healthHost: '127.0.0.1',
      backoff: FAST_BACKOFF,
    });
    agents.push(instance);
    return { instance, log };
  }
  const results = () => service.received('result').map((r) => r.body as CheckResult);

  it('is not ready before its first claim, ready after, and 503 from the moment stop() starts', async () => {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    service.handlers.claim = async (_r, nth) => {
      if (nth === 1) await gate;
      return 'default' as const;
    };
    const executor = new TimerExecutor('ICMP', 500);
    const { instance } = agent([executor]);
    await instance.start();

    const beforeClaim = await probe(instance.healthPort, '/-/readiness');
    openGate();
    await expect.poll(async () => (await probe(instance.healthPort, '/-/readiness')).status).toBe(200);
    const job = makeJob();
    service.push(job);
    await expect.poll(() => executor.running).toBe(1);
    const stopping = instance.stop();
    const whileDraining = await probe(instance.healthPort, '/-/readiness');
    const liveWhileDraining = await probe(instance.healthPort, '/-/liveness');
    await stopping;

    expect(beforeClaim.status).toBe(503);
    expect(whileDraining).toEqual({ status: 503, text: 'draining\n' });
    expect(liveWhileDraining.status).toBe(200);
    expect(results()).toHaveLength(1);
    expect(service.received('result')[0]?.path).toBe(`/v1/agent/jobs/${job.jobId}/result`);
    expect(results()[0]).toMatchObject({ status: 'PASSED', hasErrors: false });
    expect(executor.closed).toBe(1);
    await expect(instance.done).resolves.toBeUndefined();
    await expect(probe(instance.healthPort, '/-/liveness')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('aborts jobs still running when the grace period ends and drops their results', async () => {
    const executor = new TimerExecutor('ICMP', 30_000);
    const { instance } = agent([executor], { AGENT_SHUTDOWN_GRACE_SECONDS: '0' });
    await instance.start();
    service.push(makeJob());
    await expect.poll(() => executor.running).toBe(1);
    const t0 = performance.now();

    await instance.stop();

    expect(performance.now() - t0).toBeLessThan(3000);
    expect(executor.aborted).toHaveLength(1);
    expect(service.received('result')).toHaveLength(0);
  });

  it('fails a malformed job with a reason and keeps polling', async () => {
    const executor = new TimerExecutor('ICMP', 10);
    const { instance, log } = agent([executor]);
    const good = makeJob();
    const malformed = { ...makeJob({ jobId: 'job-malformed' }), check: { checkType: 'ICMP' } };
    service.push(malformed, { garbage: 1 }, good);
    await instance.start();

    await expect.poll(() => results().length).toBe(2);
    const claimsAfterResults = service.received('claim').length;
    await expect.poll(() => service.received('claim').length).toBeGreaterThan(claimsAfterResults);

    const byPath = new Map(service.received('result').map((r) => [r.path, r.body as CheckResult]));
    expect(byPath.get('/v1/agent/jobs/job-malformed/result')).toMatchObject({
      hasErrors: true,
      errorMessage: expect.stringMatching(/^malformed job: \/check\//),
    });
    expect(byPath.get(`/v1/agent/jobs/${good.jobId}/result`)).toMatchObject({ status: 'PASSED' });
    expect(log.lines.filter((l) => l.msg === 'malformed job refused').map((l) => l.jobId)).toEqual([
      'job-malformed',
      null,
    ]);
    expect(instance.status).toBe('ready');
  });

  it('rejects done with OUTPOST_ERR_UNAUTHORIZED on 401 and closes its health server', async () => {
    service.handlers.claim = () => ({
      status: 401,
      body: { statusCode: 401, error: 'Unauthorized', message: 'x' },
    });
    const { instance } = agent([new TimerExecutor('ICMP', 10)]);
    await instance.start();
    const port = instance.healthPort;

    await expect(instance.done).rejects.toMatchObject({ code: 'OUTPOST_ERR_UNAUTHORIZED' });
    await expect(instance.stop()).resolves.toBeUndefined();
    await expect(probe(port, '/-/liveness')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(service.received('claim')).toHaveLength(1);
  });

  it.each([
    [
      'full',
      [
        { checkTypes: ['ICMP'], freeSlots: { uptime: 4, main: 0 } },
        { checkTypes: ['API'], freeSlots: { uptime: 0, main: 4 } },
      ],
    ],
    ['uptime', [{ checkTypes: ['ICMP'], freeSlots: { uptime: 4, main: 0 } }]],
  ])(
    'advertises check types and slots of the %s profile, one claim loop per job class',
    async (profile, claims) => {
      const { instance } = agent([new TimerExecutor('ICMP', 10), new TimerExecutor('API', 10)], {
        AGENT_PROFILE: profile,
        JOB_CONCURRENCY: '4',
      });

      await instance.start();
      await expect.poll(() => service.received('claim').length).toBeGreaterThanOrEqual(claims.length);
      await new Promise((r) => setTimeout(r, 100));

      const first = service.received('claim').map((r) => r.body as { checkTypes: string[] });
      for (const claim of claims) {
        expect(first.find((b) => b.checkTypes[0] === claim.checkTypes[0])).toMatchObject(claim);
      }
      expect(new Set(first.map((b) => b.checkTypes.join()))).toEqual(
        new Set(claims.map((c) => c.checkTypes.join())),
      );
    },
  );

  it('claims a freed uptime slot at once while the main class long-polls (and the other way round)', async () => {
    const uptime = new TimerExecutor('ICMP', 20);
    const main = new TimerExecutor('API', 20);
    const { instance } = agent([uptime, main], { JOB_CONCURRENCY: '1', AGENT_CLAIM_WAIT_SECONDS: '20' });
    await instance.start();
    await expect.poll(() => service.received('claim').length).toBeGreaterThanOrEqual(2);

    // Each job fills its class's only slot; the next one of the same class must be claimed
    // as soon as the first ends, not after the other class's 20 s long poll.
    const t0 = performance.now();
    for (const [n, checkType] of ['ICMP', 'ICMP', 'ICMP', 'API', 'API', 'API', 'ICMP', 'API'].entries()) {
      service.push(makeJob({ check: { checkType: checkType as 'ICMP' } }));
      await expect.poll(() => results().length, { timeout: 3000, interval: 10 }).toBe(n + 1);
    }
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(uptime.runs).toHaveLength(4);
    expect(main.runs).toHaveLength(4);
  });

  it('reports an executor crash to /v1/agent/events, scrubbed, and still posts the result', async () => {
    const executor = new TimerExecutor('ICMP', 10, () => {
      throw new Error(`boom while using ${TEST_API_KEY}`);
    });
    const { instance } = agent([executor]);
    service.push(makeJob());

    await instance.start();
    await expect.poll(() => service.received('event').length).toBe(1);
    await expect.poll(() => results().length).toBe(1);

    expect(service.received('event')[0]?.body).toMatchObject({ message: 'Error: boom while using *****' });
    expect(JSON.stringify(service.received('event')[0]?.body)).not.toContain(TEST_API_KEY);
    expect(results()[0]).toMatchObject({ hasErrors: true });
  });

  it('sends no error report when EXTERNAL_OBSERVABILITY is off', async () => {
    const executor = new TimerExecutor('ICMP', 10, () => {
      throw new Error('boom');
    });
    const { instance } = agent([executor], { EXTERNAL_OBSERVABILITY: 'off' });
    service.push(makeJob());

    await instance.start();
    await expect.poll(() => results().length).toBe(1);
    await instance.stop();

    expect(service.received('event')).toHaveLength(0);
  });

  it('serves /health and /metrics describing the running agent', async () => {
    const executor = new TimerExecutor('ICMP', 300);
    const { instance } = agent([executor], { JOB_CONCURRENCY: '3' });
    await instance.start();
    service.push(makeJob());
    await expect.poll(() => executor.running).toBe(1);

    const health = JSON.parse((await probe(instance.healthPort, '/health')).text);
    await expect.poll(() => results().length).toBe(1);
    const metrics = (await probe(instance.healthPort, '/metrics')).text;

    expect(health).toMatchObject({
      status: 'ready',
      runningJobs: 1,
      freeSlots: { uptime: 2, main: 0 },
      lastSuccessfulPollAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(metrics).toContain('outpost_agent_jobs_total{check_type="ICMP",outcome="passed"} 1');
    expect(metrics).toContain('outpost_agent_ready 1');
    expect(metrics).toMatch(/outpost_agent_result_posts_total\{outcome="stored"\} 1/);
  });

  it('closes its health server when stop() races start()', async () => {
    const { instance } = agent([new TimerExecutor('ICMP', 10)]);

    const starting = instance.start();
    await instance.stop();
    await starting;

    expect(instance.healthPort).not.toBeNull();
    await expect(probe(instance.healthPort, '/-/liveness')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('rejects start() when the health port is taken, and stops cleanly', async () => {
    const first = agent([new TimerExecutor('ICMP', 10)]).instance;
    await first.start();
    const { instance } = agent([new TimerExecutor('ICMP', 10)], {
      AGENT_HEALTH_PORT: String(first.healthPort),
    });

    await expect(instance.start()).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await expect(instance.done).resolves.toBeUndefined();
    expect(service.received('claim').filter((c) => c.headers['x-agent-id'] === instance.agentId)).toEqual([]);
  });
});
