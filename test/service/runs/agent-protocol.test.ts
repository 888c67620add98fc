import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Job } from '../../../src/protocol/index.js';
import { PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { icmpBody, type TestService, testService, resultFor } from '../../helpers/service.js';

let svc: TestService;
afterEach(async () => svc?.close());

const claimBody = (over: Record<string, unknown> = {}) => ({
  agentVersion: '0.0.0-test',
  protocolVersion: PROTOCOL_VERSION,
  checkTypes: ['ICMP'],
  runtimes: [],
  freeSlots: { uptime: 5, main: 5 },
  waitSeconds: 0,
  ...over,
});

async function claim(agentId: string, over: Record<string, unknown> = {}): Promise<Job[]> {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/claim',
    headers: { ...svc.auth(), 'x-agent-id': agentId },
    payload: claimBody(over),
  });
  expect(res.statusCode).toBe(200);
  return res.json().jobs as Job[];
}

const postResult = (agentId: string, job: Job, result = resultFor(job)) =>
  svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': agentId },
    payload: result,
  });

async function createAndTrigger(
  over: Record<string, unknown> = {},
): Promise<{ checkId: string; sessionId: string }> {
  const check = await svc.app.inject({
    method: 'POST',
    url: '/v1/checks/icmp',
    headers: svc.auth(),
    payload: icmpBody({ activated: false, ...over }),
  });
  expect(check.statusCode).toBe(201);
  const trig = await svc.app.inject({
    method: 'POST',
    url: '/v1/check-sessions/trigger',
    headers: svc.auth(),
    payload: { target: { checkId: [check.json().id] } },
  });
  expect(trig.statusCode).toBe(201);
  return { checkId: check.json().id, sessionId: trig.json().sessions[0].checkSessionId };
}

describe('agent protocol', () => {
  it('stores one result when the same result is posted eight times at once (no unique index needed)', async () => {
    svc = await testService();
    await createAndTrigger();
    const a = randomUUID();
    const [job] = await claim(a);
    const result = resultFor(job!);
    const answers = await Promise.all(Array.from({ length: 8 }, () => postResult(a, job!, result)));
    // One post stores it; each other one finds it stored (a duplicate, 200) or, on PostgreSQL, lost the race
    // for the job's row while the first was committing (409): never a second row, never a 500.
    const stored = answers.filter((r) => r.statusCode === 200 && r.json().duplicate === false);
    expect(stored).toHaveLength(1);
    for (const r of answers) {
      expect([200, 409], r.body).toContain(r.statusCode);
      if (r.statusCode === 200) expect(r.json()).toMatchObject({ stored: true, resultType: 'FINAL' });
    }
    const rows = await svc.context.db
      .selectFrom('check_results')
      .select('id')
      .where('job_id', '=', job!.jobId)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('hands a job to one agent only, stores one result, and ends the session', async () => {
    svc = await testService();
    const { sessionId, checkId } = await createAndTrigger();
    const a = randomUUID();
    const b = randomUUID();
    const jobs = await claim(a);
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job).toMatchObject({
      check: { id: checkId, checkType: 'ICMP' },
      runSource: 'TRIGGER_API',
      checkSessionId: sessionId,
      attempt: 1,
      timeoutMs: 30000,
      leaseMs: 300000,
    });
    expect(await claim(b)).toEqual([]);

    const result = resultFor(job);
    expect((await postResult(b, job, result)).statusCode).toBe(409);
    const first = await postResult(a, job, result);
    expect(first.json()).toEqual({ stored: true, duplicate: false, resultType: 'FINAL' });
    const again = await postResult(a, job, result);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ stored: true, duplicate: true, resultType: 'FINAL' });
    const different = await postResult(a, job, resultFor(job, 'FAILED'));
    expect(different.statusCode).toBe(409);

    const session = await svc.app.inject({
      method: 'GET',
      url: `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=1`,
      headers: svc.auth(),
    });
    expect(session.statusCode).toBe(200);
    expect(session.json()).toMatchObject({
      checkSessionId: sessionId,
      status: 'PASSED',
      checkType: 'ICMP',
      triggerSource: 'TRIGGER_API',
      runLocations: ['us-east-1'],
    });
    expect(session.json().results).toHaveLength(1);
    const rows = await svc.context.db.selectFrom('check_results').selectAll().execute();
    expect(rows).toHaveLength(1);
  });

  it('never hands out more jobs than free slots, and only asked-for types', async () => {
    svc = await testService();
    for (let i = 0; i < 4; i++) await createAndTrigger();
    const agent = randomUUID();
    expect(await claim(agent, { freeSlots: { uptime: 0, main: 5 } })).toEqual([]);
    expect(await claim(agent, { checkTypes: ['DNS'] })).toEqual([]);
    expect(await claim(agent, { freeSlots: { uptime: 3, main: 0 } })).toHaveLength(3);
    expect(await claim(agent, { freeSlots: { uptime: 3, main: 0 } })).toHaveLength(1);
  });

  it('re-hands a job whose lease expired; the old agent then gets 409', async () => {
    svc = await testService({ leaseMs: 200 });
    await createAndTrigger();
    const a = randomUUID();
    const b = randomUUID();
    const [job] = await claim(a);
    const renew = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/lease`,
      headers: { ...svc.auth(), 'x-agent-id': a },
    });
    expect(renew.statusCode).toBe(200);
    expect(renew.json().leaseMs).toBe(200);
    await expect.poll(async () => (await claim(b)).length, { interval: 50, timeout: 3000 }).toBe(1);
    const lostRenew = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/lease`,
      headers: { ...svc.auth(), 'x-agent-id': a },
    });
    expect(lostRenew.statusCode).toBe(409);
    expect((await postResult(a, job!)).statusCode).toBe(409);
    expect((await postResult(b, job!)).statusCode).toBe(200);
    const stored = await svc.context.db.selectFrom('check_results').select('agent_id').execute();
    expect(stored).toEqual([{ agent_id: b }]);
    // The finished job is gone from the queue, payload and all.
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
  });

  it('wakes a long poll as soon as a job is queued', async () => {
    svc = await testService();
    const agent = randomUUID();
    const started = performance.now();
    const polling = claim(agent, { waitSeconds: 10 });
    await new Promise((r) => setTimeout(r, 200));
    await createAndTrigger();
    const jobs = await polling;
    expect(jobs).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('expires unclaimed jobs and ends their session TIMED_OUT', async () => {
    svc = await testService({ queueExpiryMs: 100 });
    const { sessionId } = await createAndTrigger();
    await new Promise((r) => setTimeout(r, 150));
    expect(await claim(randomUUID())).toEqual([]);
    expect((await svc.queue.expireStale(Date.now())).endedSessions).toEqual([sessionId]);
    const res = await svc.app.inject({
      method: 'GET',
      url: `/v1/check-sessions/${sessionId}`,
      headers: svc.auth(),
    });
    expect(res.json()).toMatchObject({ status: 'TIMED_OUT' });
    expect(res.json().stoppedAt).not.toBeNull();
  });

  it('answers a completion wait on a running session with a timeout error body', async () => {
    svc = await testService();
    const { sessionId } = await createAndTrigger();
    const started = performance.now();
    const res = await svc.app.inject({
      method: 'GET',
      url: `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=1`,
      headers: svc.auth(),
    });
    expect(res.statusCode).toBe(408);
    expect(res.json()).toMatchObject({
      statusCode: 408,
      error: 'Request Timeout',
      attributes: { checkSessionId: sessionId },
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    for (const bad of ['0', '31', 'x']) {
      const r = await svc.app.inject({
        method: 'GET',
        url: `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=${bad}`,
        headers: svc.auth(),
      });
      expect(r.statusCode).toBe(400);
      expect(r.json().attributes.field).toBe('maxWaitSeconds');
    }
    const other = await svc.app.inject({
      method: 'GET',
      url: `/v1/check-sessions/${sessionId}`,
      headers: svc.auth('B'),
    });
    expect(other.statusCode).toBe(404);
  });

  it('starts sessions by tag and fans out runParallel checks to every location', async () => {
    svc = await testService();
    await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: svc.auth(),
      payload: icmpBody({ tags: ['prod'], runParallel: true, locations: ['eu-west-1', 'us-west-2'] }),
    });
    await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: svc.auth(),
      payload: icmpBody({ tags: ['staging'] }),
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/check-sessions/trigger',
      headers: svc.auth(),
      payload: { target: { tags: ['prod'] } },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().sessions).toHaveLength(1);
    expect(res.json().sessions[0].runLocations).toEqual(['eu-west-1', 'us-west-2']);
    const jobs = await claim(randomUUID());
    expect(jobs.map((j) => j.runLocation).sort()).toEqual(['eu-west-1', 'us-west-2']);
    const all = await svc.app.inject({
      method: 'POST',
      url: '/v1/check-sessions/trigger',
      headers: svc.auth(),
      payload: {},
    });
    expect(all.json().sessions).toHaveLength(2);
    const unknown = await svc.app.inject({
      method: 'POST',
      url: '/v1/check-sessions/trigger',
      headers: svc.auth(),
      payload: { target: { checkId: ['nope'] } },
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('never hands a main-class job (API, browser) to an uptime-profile agent', async () => {
    svc = await testService();
    await createAndTrigger();
    const apiCheck = {
      ...(
        await svc.app.inject({
          method: 'POST',
          url: '/v1/checks/icmp',
          headers: svc.auth(),
          payload: icmpBody(),
        })
      ).json(),
      checkType: 'API',
    };
    await svc.context.db
      .transaction()
      .execute((tx) =>
        svc.queue.enqueue(
          tx,
          svc.accountA.id,
          [{ check: apiCheck, location: 'us-east-1', runSource: 'TRIGGER_API', checkSessionId: null }],
          Date.now(),
        ),
      );
    const uptimeAgent = randomUUID();
    // What an AGENT_PROFILE=uptime agent sends: uptime check types only, no main slots.
    const jobs = await claim(uptimeAgent, {
      checkTypes: ['ICMP', 'DNS', 'TCP', 'URL'],
      freeSlots: { uptime: 10, main: 0 },
    });
    expect(jobs.map((j) => j.check.checkType).sort()).toEqual(['ICMP']);
    expect(
      await claim(uptimeAgent, {
        checkTypes: ['ICMP', 'DNS', 'TCP', 'URL', 'API'],
        freeSlots: { uptime: 10, main: 0 },
      }),
    ).toEqual([]);
    const full = await claim(randomUUID(), { checkTypes: ['API'], freeSlots: { uptime: 0, main: 1 } });
    expect(full.map((j) => j.check.checkType)).toEqual(['API']);
  });

  it('refuses a claim without an agent id or with another protocol version', async () => {
    svc = await testService();
    const noId = await svc.app.inject({
      method: 'POST',
      url: '/v1/agent/jobs/claim',
      headers: svc.auth(),
      payload: claimBody(),
    });
    expect(noId.statusCode).toBe(400);
    const oldProto = await svc.app.inject({
      method: 'POST',
      url: '/v1/agent/jobs/claim',
      headers: { ...svc.auth(), 'x-agent-id': randomUUID() },
      payload: claimBody({ protocolVersion: 99 }),
    });
    expect(oldProto.statusCode).toBe(400);
    expect(oldProto.json().attributes.field).toBe('protocolVersion');
  });
});
