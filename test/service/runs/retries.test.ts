import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckResult, Job } from '../../../src/protocol/index.js';
import {
  apiBody,
  claimJobs,
  createCheck,
  type TestService,
  testService,
  triggerCheck,
  resultFor,
} from '../../helpers/service.js';

let svc: TestService;
beforeEach(async () => {
  svc = await testService();
});
afterEach(async () => svc.close());

/**
 * A FAILED (or PASSED) API result, with the HTTP part's `errorCode` (null: an assertion failure).
 * Its resultType is FINAL, what an agent that does not know better sends; the service decides.
 */
function apiResult(job: Job, status: 'PASSED' | 'FAILED', errorCode: string | null): CheckResult {
  return resultFor(job, status, {
    errorMessage: status === 'FAILED' ? (errorCode ?? 'assertion failed') : null,
    httpCheckResult: {
      request: { method: 'GET', url: 'https://api.example.test/health' },
      response: null,
      timings: { socket: null, lookup: null, connect: null, secureConnect: null, response: null, end: null },
      timingPhases: {
        wait: null,
        dns: null,
        tcp: null,
        tls: null,
        firstByte: null,
        download: null,
        total: 3,
      },
      redirects: [],
      certificate: null,
      resolvedIp: null,
      resolver: 'dns',
      errorCode,
    },
  });
}

async function post(agentId: string, job: Job, result: CheckResult) {
  const res = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': agentId },
    payload: result,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { stored: boolean; duplicate: boolean; resultType: 'FINAL' | 'ATTEMPT' };
}

async function session(id: string) {
  return (await svc.request('GET', `/v1/check-sessions/${id}`)).json();
}

const storedTypes = async () =>
  (
    await svc.context.db
      .selectFrom('check_results')
      .select(['result_type', 'job_id'])
      .orderBy('created_at')
      .execute()
  ).map((r) => r.result_type);

const networkOnly = (over: Record<string, unknown> = {}) => ({
  type: 'FIXED',
  baseBackoffSeconds: 1,
  maxRetries: 1,
  onlyOn: ['NETWORK_ERROR'],
  ...over,
});

describe('retries at result submission', () => {
  it('stores a retried failure as ATTEMPT, queues attempt 2 after the back-off, and ends FINAL', async () => {
    const checkId = await createCheck(svc, 'api', apiBody({ retryStrategy: networkOnly() }));
    const sessionId = await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const [first] = await claimJobs(svc, agent);

    const before = Date.now();
    const failed = apiResult(first!, 'FAILED', 'ECONNREFUSED');
    const ack = await post(agent, first!, failed);
    expect(ack).toEqual({ stored: true, duplicate: false, resultType: 'ATTEMPT' });
    expect(await storedTypes()).toEqual(['ATTEMPT']);
    expect((await session(sessionId)).status).toBe('PROGRESS');
    // The same post again is a duplicate and queues nothing more.
    expect(await post(agent, first!, failed)).toEqual({
      stored: true,
      duplicate: true,
      resultType: 'ATTEMPT',
    });

    // Not claimable before the back-off; a long poll gets it once it is due.
    expect(await claimJobs(svc, agent)).toEqual([]);
    const [second] = await claimJobs(svc, agent, { waitSeconds: 5 });
    expect(Date.now() - before).toBeGreaterThanOrEqual(1000);
    expect(second).toMatchObject({
      attempt: 2,
      checkRunId: first!.jobId,
      runStartedAt: first!.runStartedAt,
      checkSessionId: sessionId,
      runSource: 'TRIGGER_API',
      runLocation: first!.runLocation,
      retryStrategy: first!.retryStrategy,
      check: first!.check,
    });
    expect(second!.jobId).not.toBe(first!.jobId);

    const final = await post(agent, second!, apiResult(second!, 'FAILED', 'ECONNREFUSED'));
    expect(final.resultType).toBe('FINAL');
    expect(await storedTypes()).toEqual(['ATTEMPT', 'FINAL']);
    const done = await session(sessionId);
    expect(done.status).toBe('FAILED');
    expect(done.results.map((r: { resultType: string }) => r.resultType)).toEqual(['ATTEMPT', 'FINAL']);
    // Both attempts' jobs are finished, so gone from the queue (payloads included).
    expect(await svc.context.db.selectFrom('jobs').select('state').execute()).toEqual([]);
  });

  it('ends at once (FINAL) on a failure that is not a network error when onlyOn is NETWORK_ERROR', async () => {
    const checkId = await createCheck(svc, 'api', apiBody({ retryStrategy: networkOnly() }));
    const sessionId = await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const [job] = await claimJobs(svc, agent);
    expect((await post(agent, job!, apiResult(job!, 'FAILED', null))).resultType).toBe('FINAL');
    expect(await storedTypes()).toEqual(['FINAL']);
    expect((await session(sessionId)).status).toBe('FAILED');
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toHaveLength(0);
  });

  it('never retries a passed run', async () => {
    const checkId = await createCheck(
      svc,
      'api',
      apiBody({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0 } }),
    );
    const sessionId = await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const [job] = await claimJobs(svc, agent);
    expect((await post(agent, job!, apiResult(job!, 'PASSED', null))).resultType).toBe('FINAL');
    expect((await session(sessionId)).status).toBe('PASSED');
  });

  it('retries in another location when sameRegion is false', async () => {
    const checkId = await createCheck(
      svc,
      'api',
      apiBody({
        locations: ['eu-west-1', 'us-west-2'],
        retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 0, maxRetries: 2, sameRegion: false },
      }),
    );
    await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const seen: string[] = [];
    let [job] = await claimJobs(svc, agent);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(job!.attempt).toBe(attempt);
      seen.push(job!.runLocation);
      const ack = await post(agent, job!, apiResult(job!, 'FAILED', 'ETIMEDOUT'));
      expect(ack.resultType).toBe(attempt < 3 ? 'ATTEMPT' : 'FINAL');
      [job] = await claimJobs(svc, agent);
    }
    expect(job).toBeUndefined();
    expect(seen[1]).not.toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);
    expect(new Set(seen)).toEqual(new Set(['eu-west-1', 'us-west-2']));
  });

  it('retries once from another location on doubleCheck without a strategy', async () => {
    const checkId = await createCheck(svc, 'api', apiBody({ locations: ['eu-west-1', 'us-west-2'] }));
    const sessionId = await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const [first] = await claimJobs(svc, agent);
    expect(first!.retryStrategy).toMatchObject({
      type: 'SINGLE_RETRY',
      baseBackoffSeconds: 5,
      sameRegion: false,
    });
    expect((await post(agent, first!, apiResult(first!, 'FAILED', null))).resultType).toBe('ATTEMPT');
    const retry = await svc.context.db
      .selectFrom('jobs')
      .select(['attempt', 'location', 'enqueued_at', 'expires_at', 'state'])
      .where('attempt', '=', 2)
      .executeTakeFirstOrThrow();
    expect(retry.state).toBe('queued');
    expect(retry.location).not.toBe(first!.runLocation);
    expect(Number(retry.enqueued_at)).toBeGreaterThan(Date.now() + 3000);
    expect(Number(retry.expires_at) - Number(retry.enqueued_at)).toBe(360_000);
    // Claimable once due (the queue's clock moved on by 5 s).
    const [second] = await svc.queue.claim(
      { accountId: svc.accountA.id, agentId: agent, locations: null },
      { checkTypes: ['API'], freeSlots: { uptime: 0, main: 1 } },
      Number(retry.enqueued_at),
    );
    expect(second).toMatchObject({ attempt: 2, runLocation: retry.location });
    expect((await post(agent, second!, apiResult(second!, 'FAILED', null))).resultType).toBe('FINAL');
    expect((await session(sessionId)).status).toBe('FAILED');
  });

  it('keeps an uptime check’s results FINAL (its jobs carry no retry strategy)', async () => {
    const checkId = await createCheck(svc, 'url', {
      name: 'u',
      activated: false,
      request: { url: 'http://a.test/' },
    });
    const sessionId = await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const [job] = await claimJobs(svc, agent);
    expect(job!.retryStrategy).toBeUndefined();
    const result = { ...apiResult(job!, 'FAILED', 'ECONNREFUSED'), resultType: 'ATTEMPT' as const };
    expect((await post(agent, job!, result)).resultType).toBe('FINAL');
    expect((await session(sessionId)).status).toBe('FAILED');
  });
});
