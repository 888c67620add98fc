import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type JobDispatcherOptions, JobDispatcher } from '../../src/agent/dispatcher.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import type { CheckResult } from '../../src/protocol/index.js';
import {
  FAST_BACKOFF,
  makeJob,
  memoryLogger,
  passedOutcome,
  TEST_API_KEY,
  TestService,
  TimerExecutor,
} from './helpers.js';

describe('JobDispatcher', () => {
  let service: TestService;
  let client: ServiceClient;
  let hard: AbortController;

  beforeEach(async () => {
    service = await new TestService().start();
    client = new ServiceClient({ serviceUrl: service.url, apiKey: TEST_API_KEY, agentId: 'agent-1' });
    hard = new AbortController();
  });
  afterEach(async () => {
    hard.abort();
    await client.close();
    await service.close();
  });

  function dispatcher(executors: TimerExecutor[], overrides: Partial<JobDispatcherOptions> = {}) {
    const log = memoryLogger();
    const instance = new JobDispatcher({
      client,
      executors: new Map(executors.map((e) => [e.checkType, e])),
      concurrency: { uptime: 2, main: 2 },
      logger: log.logger,
      hardSignal: hard.signal,
      backoff: FAST_BACKOFF,
      ...overrides,
    });
    return { instance, log };
  }
  const results = () => service.received('result').map((r) => r.body as CheckResult);

  it('adds the agent-filled fields to the outcome and posts it', async () => {
    const { instance } = dispatcher([new TimerExecutor('ICMP', 10)]);
    const job = makeJob({ attempt: 3, runLocation: 'lab-1' });

    instance.dispatch(job);
    await instance.drain();

    expect(service.received('result')[0]?.path).toBe(`/v1/agent/jobs/${job.jobId}/result`);
    expect(results()[0]).toMatchObject({
      status: 'PASSED',
      hasErrors: false,
      runLocation: 'lab-1',
      attempts: 3,
      resultType: 'FINAL',
      artifacts: [],
    });
  });

  it('uploads the files an executor attached, in order, before the result, then releases them', async () => {
    const order: string[] = [];
    const released: string[] = [];
    const executor = new TimerExecutor('BROWSER', 5, (_job, context) => {
      context.attachArtifacts?.(
        [
          { name: 'trace.zip', path: '/tmp/a/trace.zip' },
          { name: 'failure.png', path: '/tmp/a/failure.png' },
        ],
        async () => {
          released.push('a');
        },
      );
      return passedOutcome();
    });
    const { instance } = dispatcher([executor], {
      uploadArtifact: async (_jobId, name) => {
        order.push(`${name} (results so far: ${results().length})`);
        return name.length * 100;
      },
    });

    instance.dispatch(makeJob({ check: { ...makeJob().check, checkType: 'BROWSER' } }));
    await instance.drain();

    expect(order).toEqual(['trace.zip (results so far: 0)', 'failure.png (results so far: 0)']);
    expect(results()[0]?.artifacts).toEqual([
      { name: 'trace.zip', sizeBytes: 900 },
      { name: 'failure.png', sizeBytes: 1100 },
    ]);
    expect(released).toEqual(['a']);
  });

  it('stops uploading at the first failed artifact, posts the result with those before it, releases all', async () => {
    const released: string[] = [];
    const executor = new TimerExecutor('BROWSER', 5, (_job, context) => {
      context.attachArtifacts?.(
        [
          { name: 'trace.zip', path: '/x/trace.zip' },
          { name: 'video.webm', path: '/x/video.webm' },
          { name: 'shot.png', path: '/x/shot.png' },
        ],
        async () => {
          released.push('x');
        },
      );
      return passedOutcome();
    });
    const tried: string[] = [];
    const { instance, log } = dispatcher([executor], {
      uploadArtifact: async (_jobId, name) => {
        tried.push(name);
        if (name === 'video.webm') throw new Error('413 too large');
        return 1;
      },
    });

    instance.dispatch(makeJob({ check: { ...makeJob().check, checkType: 'BROWSER' } }));
    await instance.drain();

    expect(tried).toEqual(['trace.zip', 'video.webm']);
    expect(results()[0]?.artifacts).toEqual([{ name: 'trace.zip', sizeBytes: 1 }]);
    expect(released).toEqual(['x']);
    expect(log.lines.some((l) => String(l.msg).startsWith('artifact upload failed'))).toBe(true);
  });

  it('retries the result while the result endpoint answers 503, then posts it once', async () => {
    service.handlers.result = (_r, nth) => (nth <= 2 ? { status: 503 } : 'default');
    const { instance, log } = dispatcher([new TimerExecutor('ICMP', 10)]);
    const job = makeJob();

    instance.dispatch(job);
    await instance.drain();

    const posts = service.received('result');
    expect(posts).toHaveLength(3);
    expect(posts.map((p) => p.body)).toEqual([posts[0]?.body, posts[0]?.body, posts[0]?.body]);
    expect(log.lines.filter((l) => l.msg === 'result post failed; retrying')).toHaveLength(2);
    expect(log.lines.find((l) => l.msg === 'result posted')).toMatchObject({ jobId: job.jobId, tries: 3 });
  });

  it('gives up a result once its retry deadline passes', async () => {
    service.handlers.result = () => ({ status: 503 });
    const { instance, log } = dispatcher([new TimerExecutor('ICMP', 10)], { resultRetryMs: 300 });

    instance.dispatch(makeJob());
    await instance.drain();

    expect(service.received('result').length).toBeGreaterThanOrEqual(2);
    expect(log.lines.some((l) => l.msg === 'result not posted before its deadline or shutdown')).toBe(true);
  });

  it('turns a throwing executor into a result with hasErrors and the reason', async () => {
    const crashes: unknown[] = [];
    const executor = new TimerExecutor('ICMP', 10, () => {
      throw new TypeError('cannot read properties of undefined');
    });
    const { instance } = dispatcher([executor], { onExecutorCrash: (err) => crashes.push(err) });

    instance.dispatch(makeJob());
    await instance.drain();

    expect(results()[0]).toMatchObject({
      status: 'FAILED',
      hasErrors: true,
      errorMessage: 'executor error: cannot read properties of undefined',
    });
    expect(crashes).toHaveLength(1);
  });

  it('turns an invalid outcome into a result with hasErrors', async () => {
    const executor = new TimerExecutor('ICMP', 10, () => ({
      ...passedOutcome(),
      status: 'GREAT' as 'PASSED',
    }));
    const { instance } = dispatcher([executor]);

    instance.dispatch(makeJob());
    await instance.drain();

    expect(results()[0]?.errorMessage).toMatch(
      /^executor error: executor returned an invalid outcome: \/status/,
    );
  });

  it('answers a job of a check type it has no executor for with hasErrors', async () => {
    const { instance } = dispatcher([new TimerExecutor('ICMP', 10)]);

    instance.dispatch(makeJob({ check: { checkType: 'BROWSER' } }));
    await instance.drain();

    expect(results()[0]).toMatchObject({
      hasErrors: true,
      errorMessage: 'this agent has no executor for check type BROWSER',
    });
  });

  it('aborts a job at its timeoutMs and says so in the result', async () => {
    const executor = new TimerExecutor('ICMP', 10_000);
    const { instance } = dispatcher([executor]);

    instance.dispatch(makeJob({ timeoutMs: 100 }));
    await instance.drain();

    expect(executor.aborted).toHaveLength(1);
    expect(results()[0]).toMatchObject({ hasErrors: true, errorMessage: 'run timed out after 100 ms' });
  });

  it('renews the lease every leaseMs / 3 while the job runs', async () => {
    service.leaseMs = 150;
    const { instance } = dispatcher([new TimerExecutor('ICMP', 500)]);
    const job = makeJob({ leaseMs: 150 });

    instance.dispatch(job);
    await instance.drain();

    const leases = service.received('lease');
    expect(leases.length).toBeGreaterThanOrEqual(5);
    expect(leases[0]?.path).toBe(`/v1/agent/jobs/${job.jobId}/lease`);
    expect(leases[0]?.headers.authorization).toBe(`Bearer ${TEST_API_KEY}`);
    expect(results()).toHaveLength(1);
  });

  it('aborts the job and drops its result when the lease answers 409', async () => {
    service.handlers.lease = () => ({ status: 409 });
    const executor = new TimerExecutor('ICMP', 10_000);
    const { instance, log } = dispatcher([executor]);

    instance.dispatch(makeJob({ leaseMs: 90 }));
    await instance.drain();

    expect(executor.aborted).toHaveLength(1);
    expect(service.received('result')).toHaveLength(0);
    expect(log.lines.find((l) => l.msg === 'job stopped; result dropped')).toMatchObject({
      why: 'lease_lost',
    });
  });

  it('never runs a job id it already holds: a duplicate while queued, running or posting is ignored', async () => {
    // The result post of the first run hangs until released, so the third dispatch lands while it posts.
    let releasePost!: () => void;
    const postGate = new Promise<void>((resolve) => {
      releasePost = resolve;
    });
    service.handlers.result = async () => {
      await postGate;
      return 'default' as const;
    };
    const executor = new TimerExecutor('ICMP', 300);
    const { instance, log } = dispatcher([executor], { concurrency: { uptime: 1, main: 1 } });
    const blocker = makeJob();
    const job = makeJob();

    instance.dispatch(blocker);
    const whileQueued = instance.dispatch({ ...job, attempt: 2 });
    const again = instance.dispatch(job);
    await expect.poll(() => executor.runs.some((j) => j.jobId === job.jobId)).toBe(true);
    const whileRunning = instance.dispatch(job);
    await expect.poll(() => service.received('result').length).toBe(2);
    const whilePosting = instance.dispatch(job);
    releasePost();
    await instance.drain();

    expect([whileQueued, again, whileRunning, whilePosting]).toEqual([true, false, false, false]);
    expect(executor.runs.filter((j) => j.jobId === job.jobId)).toHaveLength(1);
    expect(executor.maxRunning).toBe(1);
    expect(service.received('result').filter((r) => r.path.includes(job.jobId))).toHaveLength(1);
    expect(log.lines.filter((l) => l.msg === 'duplicate claim of a job already held; ignored')).toHaveLength(
      3,
    );
    expect(instance.holds(job.jobId)).toBe(false);
    // Once its result is posted the id is free again: a later run of the same job id (a retry) runs.
    expect(instance.dispatch(job)).toBe(true);
    await instance.drain();
    expect(executor.runs.filter((j) => j.jobId === job.jobId)).toHaveLength(2);
  });

  it('releases the id of a job whose lease was lost, so nothing of it stays held', async () => {
    service.handlers.lease = () => ({ status: 409 });
    const executor = new TimerExecutor('ICMP', 10_000);
    const { instance } = dispatcher([executor]);
    const job = makeJob({ leaseMs: 90 });

    instance.dispatch(job);
    expect(instance.dispatch(job)).toBe(false);
    await instance.drain();

    expect(executor.runs).toHaveLength(1);
    expect(executor.aborted).toHaveLength(1);
    expect(service.received('result')).toHaveLength(0);
    expect(instance.holds(job.jobId)).toBe(false);
  });

  it('runs at most `concurrency` jobs of a class at once and frees slots as they end', async () => {
    const executor = new TimerExecutor('ICMP', 100);
    const { instance } = dispatcher([executor]);

    for (let i = 0; i < 5; i++) instance.dispatch(makeJob());
    const busy = instance.freeSlots();
    await instance.drain();

    expect(busy).toEqual({ uptime: 0, main: 2 });
    expect(instance.freeSlots()).toEqual({ uptime: 2, main: 2 });
    expect(executor.maxRunning).toBe(2);
    expect(results()).toHaveLength(5);
  });

  it('fails a malformed job that has a jobId with a result, and only logs one without', async () => {
    const { instance, log } = dispatcher([]);
    const reject = {
      checkId: 'c',
      checkType: 'ICMP',
      runLocation: 'lab',
      attempt: 2,
      reason: 'malformed job: /x',
    };

    instance.reject({ ...reject, jobId: 'job-bad' });
    instance.reject({ ...reject, jobId: null });
    await instance.drain();

    expect(service.received('result').map((r) => r.path)).toEqual(['/v1/agent/jobs/job-bad/result']);
    expect(results()[0]).toMatchObject({ hasErrors: true, errorMessage: 'malformed job: /x', attempts: 2 });
    expect(log.lines.filter((l) => l.msg === 'malformed job refused')).toHaveLength(2);
  });

  it('drops the result of a job cut short by the hard signal', async () => {
    const executor = new TimerExecutor('ICMP', 10_000);
    const { instance } = dispatcher([executor]);
    instance.dispatch(makeJob());
    await expect.poll(() => executor.running).toBe(1);

    hard.abort();
    await instance.drain();

    expect(executor.aborted).toHaveLength(1);
    expect(service.received('result')).toHaveLength(0);
  });
});
