import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobDispatcher } from '../../src/agent/dispatcher.js';
import { type PollerOptions, runPoller } from '../../src/agent/poller.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { makeJob, memoryLogger, passedOutcome, TEST_API_KEY, TestService, TimerExecutor } from './helpers.js';

describe('runPoller', () => {
  let service: TestService;
  let client: ServiceClient;
  let stop: AbortController;
  let hard: AbortController;

  beforeEach(async () => {
    service = await new TestService().start();
    client = new ServiceClient({ serviceUrl: service.url, apiKey: TEST_API_KEY, agentId: 'agent-1' });
    stop = new AbortController();
    hard = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    hard.abort();
    await client.close();
    await service.close();
  });

  function poller(executor: TimerExecutor, overrides: Partial<PollerOptions> = {}) {
    const log = memoryLogger();
    const dispatcher = new JobDispatcher({
      client,
      executors: new Map([[executor.checkType, executor]]),
      concurrency: { uptime: 1, main: 5 },
      logger: log.logger,
      hardSignal: hard.signal,
    });
    const options: PollerOptions = {
      client,
      dispatcher,
      checkTypes: [executor.checkType],
      runtimes: [],
      claimWaitSeconds: 1,
      signal: stop.signal,
      logger: log.logger,
      ...overrides,
    };
    return { log, dispatcher, running: runPoller(options) };
  }

  it('backs off with jittered exponential delays on 503s and dropped connections, then recovers', async () => {
    service.handlers.claim = (_r, nth) => (nth > 4 ? 'default' : nth % 2 === 1 ? { status: 503 } : 'drop');
    let successes = 0;
    const { log } = poller(new TimerExecutor('ICMP', 10), {
      backoff: { baseMs: 100, capMs: 400 },
      onClaimSuccess: () => void successes++,
    });

    await expect.poll(() => successes, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);

    const claims = service.received('claim');
    const gaps = claims.slice(1, 5).map((c, i) => c.atMs - (claims[i]?.atMs ?? 0));
    gaps.forEach((gap, attempt) => {
      expect(gap).toBeGreaterThanOrEqual(50 - 5);
      expect(gap).toBeLessThanOrEqual(Math.min(400, 100 * 2 ** attempt) + 150);
    });
    const backOffs = log.lines.filter((l) => l.msg === 'claim failed; backing off');
    expect(backOffs.map((l) => l.failures)).toEqual([1, 2, 3, 4]);
    expect(backOffs.map((l) => (l.err as { code: string }).code)).toEqual(
      Array(4).fill('OUTPOST_ERR_SERVICE_UNAVAILABLE'),
    );
  });

  it('claims again at once after a claim that failed having waited its back-off, and backs off after a quick failure', async () => {
    let droppedAtMs = 0;
    service.handlers.claim = async (_r, nth) => {
      if (nth === 2) {
        // A long poll cut after 1.2 s (its replica died): longer than the first back-off (0.5–1 s).
        await new Promise((resolve) => setTimeout(resolve, 1200));
        droppedAtMs = performance.now();
        return 'drop';
      }
      return nth === 3 ? 'drop' : 'default';
    };
    poller(new TimerExecutor('ICMP', 10), { backoff: { baseMs: 1000, capMs: 5000 } });
    await expect.poll(() => service.received('claim').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(4);
    const claims = service.received('claim');
    // After the cut long poll: no back-off (the first would be 0.5–1 s).
    expect(claims[2]!.atMs - droppedAtMs).toBeLessThan(400);
    // After the quick failure: the second back-off, 0.5–2 s (jittered: at least half the base).
    expect(claims[3]!.atMs - claims[2]!.atMs).toBeGreaterThanOrEqual(500 - 5);
  });

  it('waits at least Retry-After before the next claim', async () => {
    service.handlers.claim = (_r, nth) =>
      nth === 1 ? { status: 429, headers: { 'retry-after': '0.3' } } : 'default';
    poller(new TimerExecutor('ICMP', 10), { backoff: { baseMs: 10, capMs: 1000 } });

    await expect.poll(() => service.received('claim').length).toBeGreaterThanOrEqual(2);

    const [first, second] = service.received('claim');
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(295);
  });

  it('rejects with OUTPOST_ERR_UNAUTHORIZED on 401, without retrying', async () => {
    service.handlers.claim = () => ({
      status: 401,
      body: { statusCode: 401, error: 'Unauthorized', message: 'bad key' },
    });

    const { running } = poller(new TimerExecutor('ICMP', 10), { backoff: { baseMs: 10, capMs: 20 } });

    await expect(running).rejects.toMatchObject({ code: 'OUTPOST_ERR_UNAUTHORIZED', statusCode: 401 });
    expect(service.received('claim')).toHaveLength(1);
  });

  it('rejects with OUTPOST_ERR_PROTOCOL when the claim answers 400', async () => {
    service.handlers.claim = () => ({ status: 400, body: { message: 'unsupported protocolVersion' } });

    const { running } = poller(new TimerExecutor('ICMP', 10));

    await expect(running).rejects.toMatchObject({ code: 'OUTPOST_ERR_PROTOCOL' });
  });

  it('asks only for free slots and does not claim while every slot is busy', async () => {
    let jobEndedAtMs = Number.POSITIVE_INFINITY;
    const executor = new TimerExecutor('ICMP', 300, () => {
      jobEndedAtMs = performance.now();
      return passedOutcome();
    });
    service.push(makeJob());
    poller(executor);

    await expect.poll(() => service.received('claim').length, { timeout: 5000 }).toBeGreaterThanOrEqual(2);

    const [first, second] = service.received('claim');
    // The executor only runs ICMP: no main slot is advertised even though main has 5.
    expect(first?.body).toMatchObject({
      checkTypes: ['ICMP'],
      freeSlots: { uptime: 1, main: 0 },
      waitSeconds: 0,
    });
    expect(second?.body).toMatchObject({ freeSlots: { uptime: 1, main: 0 }, waitSeconds: 1 });
    expect(second?.atMs).toBeGreaterThanOrEqual(jobEndedAtMs);
    expect(executor.runs).toHaveLength(1);
  });

  it('leaves out of each claim the types claimable() refuses now, and claims none while it refuses all', async () => {
    let browserAdmitted = false;
    poller(new TimerExecutor('BROWSER', 10), {
      checkTypes: ['API', 'BROWSER'],
      claimWaitSeconds: 0,
      claimable: (t) => t !== 'BROWSER' || browserAdmitted,
    });
    await expect.poll(() => service.received('claim').length, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    expect(service.received('claim')[0]?.body).toMatchObject({ checkTypes: ['API'] });
    browserAdmitted = true;
    await expect
      .poll(
        () =>
          service.received('claim').some((c) => (c.body as { checkTypes: string[] }).checkTypes.length === 2),
        {
          timeout: 5000,
        },
      )
      .toBe(true);
    expect(service.received('claim').at(-1)?.body).toMatchObject({ checkTypes: ['API', 'BROWSER'] });
  });

  it('does not claim for a class whose every type claimable() refuses', async () => {
    poller(new TimerExecutor('BROWSER', 10), { claimWaitSeconds: 0, claimable: () => false });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(service.received('claim')).toEqual([]);
  });

  it('stops on abort, cutting the long poll in flight short', async () => {
    const { running } = poller(new TimerExecutor('ICMP', 10), { claimWaitSeconds: 20 });
    // The first claim does not wait; the second is the 20 s long poll.
    await expect.poll(() => service.received('claim').length).toBe(2);
    const t0 = performance.now();

    stop.abort();
    await running;

    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
