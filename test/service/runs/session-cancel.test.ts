import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimJobs,
  createCheck,
  expectBadField,
  icmpBody,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';
import type { Job } from '../../../src/protocol/index.js';

// A check session as the hosted API's clients read it, and POST /v1/check-sessions/{id}/cancel
// (docs/api.md, "Check session", "Check sessions").

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const session = async (id: string, account: 'A' | 'B' = 'A') => {
  const res = await svc.request('GET', `/v1/check-sessions/${id}`, undefined, account);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const cancel = (id: string, body?: unknown, account: 'A' | 'B' = 'A') =>
  svc.request('POST', `/v1/check-sessions/${id}/cancel`, body, account);

async function post(agent: string, job: Job) {
  const res = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': agent },
    payload: resultFor(job),
  });
  expect(res.statusCode, res.body).toBe(200);
}

const queuedJobs = (sessionId: string) =>
  svc.context.db
    .selectFrom('jobs')
    .select(['id', 'state', 'round_id'])
    .where('check_session_id', '=', sessionId)
    .execute();

describe('a check session as the hosted API answers it', () => {
  it('has runSource and the hosted fields of each result', async () => {
    const checkId = await createCheck(svc, 'icmp', icmpBody({ name: 'fields', activated: false }));
    const id = await triggerCheck(svc, checkId);
    const running = await session(id);
    expect(running).toMatchObject({
      status: 'PROGRESS',
      runSource: 'TRIGGER_API',
      triggerSource: 'TRIGGER_API',
    });
    const agent = randomUUID();
    const [job] = (await claimJobs(svc, agent)).filter((j) => j.checkSessionId === id);
    await post(agent, job!);
    const done = await session(id);
    expect(done.status).toBe('PASSED');
    expect(done.results).toHaveLength(1);
    const [r] = done.results;
    expect(r).toMatchObject({
      checkResultId: r.id,
      checkId,
      checkType: 'ICMP',
      name: 'fields',
      runLocation: 'us-east-1',
      resultType: 'FINAL',
      aborted: false,
      isCancelled: false,
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
    });
    expect(r.checkResultLink).toMatch(new RegExp(`/checks/${checkId}/results/${r.id}$`));
    // The link's result reads through the results route.
    expect((await svc.request('GET', `/v1/check-results/${checkId}/${r.checkResultId}`)).statusCode).toBe(
      200,
    );
  });
});

describe('POST /v1/check-sessions/{checkSessionId}/cancel', () => {
  it('removes the queued runs and ends the session CANCELLED at once', async () => {
    const checkId = await createCheck(svc, 'icmp', icmpBody({ name: 'queued', activated: false }));
    const id = await triggerCheck(svc, checkId);
    expect(await queuedJobs(id)).toHaveLength(1);
    const res = await cancel(id);
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expect(await queuedJobs(id)).toEqual([]);
    const cancelled = await session(id);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', results: [] });
    expect(cancelled.stoppedAt).toEqual(expect.any(String));
    // No agent gets the run; the completion wait answers at once.
    expect((await claimJobs(svc, randomUUID())).filter((j) => j.checkSessionId === id)).toEqual([]);
    const completion = await svc.request('GET', `/v1/check-sessions/${id}/completion?maxWaitSeconds=1`);
    expect(completion.statusCode).toBe(200);
    expect(completion.json().status).toBe('CANCELLED');
  });

  it('wakes a completion wait already running', async () => {
    const checkId = await createCheck(svc, 'icmp', icmpBody({ name: 'waited', activated: false }));
    const id = await triggerCheck(svc, checkId);
    const started = Date.now();
    const waiting = svc.request('GET', `/v1/check-sessions/${id}/completion?maxWaitSeconds=20`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await cancel(id)).statusCode).toBe(204);
    const res = await waiting;
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('lets a run an agent holds finish: its result is stored, the session stays CANCELLED', async () => {
    const checkId = await createCheck(svc, 'icmp', icmpBody({ name: 'running', activated: false }));
    const id = await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const [job] = (await claimJobs(svc, agent)).filter((j) => j.checkSessionId === id);
    expect(job).toBeDefined();
    expect((await cancel(id)).statusCode).toBe(204);
    expect(await queuedJobs(id)).toMatchObject([{ state: 'leased' }]);
    expect((await session(id)).status).toBe('CANCELLED');
    await post(agent, job!);
    const after = await session(id);
    expect(after.status).toBe('CANCELLED');
    expect(after.results).toHaveLength(1);
  });

  it('with sequenceId cancels only those runs; the session ends when none of it is left', async () => {
    const checkId = await createCheck(
      svc,
      'icmp',
      icmpBody({
        name: 'parallel',
        activated: false,
        runParallel: true,
        locations: ['us-east-1', 'eu-west-1'],
      }),
    );
    const id = await triggerCheck(svc, checkId);
    const jobs = await queuedJobs(id);
    expect(jobs).toHaveLength(2);
    expect((await cancel(id, { sequenceId: [randomUUID()] })).statusCode).toBe(204);
    expect(await queuedJobs(id)).toHaveLength(2);
    expect((await session(id)).status).toBe('PROGRESS');
    const rounds = [...new Set(jobs.map((j) => j.round_id!))];
    expect((await cancel(id, { sequenceId: rounds })).statusCode).toBe(204);
    expect(await queuedJobs(id)).toEqual([]);
    expect((await session(id)).status).toBe('CANCELLED');
  });

  it('leaves a final session as it is', async () => {
    const checkId = await createCheck(svc, 'icmp', icmpBody({ name: 'final', activated: false }));
    const id = await triggerCheck(svc, checkId);
    const agent = randomUUID();
    const [job] = (await claimJobs(svc, agent)).filter((j) => j.checkSessionId === id);
    await post(agent, job!);
    const before = await session(id);
    expect(before.status).toBe('PASSED');
    expect((await cancel(id)).statusCode).toBe(204);
    expect(await session(id)).toMatchObject({ status: 'PASSED', stoppedAt: before.stoppedAt });
  });

  it('answers 404 for an unknown session or one of another account, 400 naming a bad field', async () => {
    expect((await cancel(randomUUID())).statusCode).toBe(404);
    const checkId = await createCheck(svc, 'icmp', icmpBody({ name: 'theirs', activated: false }));
    const id = await triggerCheck(svc, checkId);
    expect((await cancel(id, undefined, 'B')).statusCode).toBe(404);
    expect((await session(id)).status).toBe('PROGRESS');
    expectBadField(await cancel(id, { sequenceId: 'all' }), 'sequenceId');
    expectBadField(await cancel(id, { sequenceId: ['not-a-uuid'] }), 'sequenceId[0]');
    expectBadField(await cancel(id, { everything: true }), 'everything');
    expect((await session(id)).status).toBe('PROGRESS');
    expect((await cancel(id, {})).statusCode).toBe(204);
    expect((await session(id)).status).toBe('CANCELLED');
  });
});
