import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAIM_ACK_WINDOW_MS, type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { rotateEmbeddedAgentKey, seedDemoChecks } from '../../../src/service/bootstrap.js';
import { CheckQueries } from '../../../src/service/checks/store.js';
import { icmpBody, resultFor, type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
afterEach(async () => svc?.close());

/** A claim as an agent with `key` (account A's key by default), acknowledging unless `acknowledges` is false. */
async function claim(
  agentId: string,
  over: Record<string, unknown> = {},
  key: string = svc.accountA.key,
): Promise<Job[]> {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/claim',
    headers: { authorization: `Bearer ${key}`, 'x-agent-id': agentId },
    payload: {
      agentVersion: '9.9.9-test',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['ICMP'],
      runtimes: [],
      freeSlots: { uptime: 10, main: 10 },
      waitSeconds: 0,
      acknowledges: true,
      hostName: 'probe-7.office.example',
      ...over,
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().jobs as Job[];
}

async function ack(agentId: string, jobIds: string[], key: string = svc.accountA.key) {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/ack',
    headers: { authorization: `Bearer ${key}`, 'x-agent-id': agentId },
    payload: { jobIds },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { acknowledged: string[]; lost: string[]; leaseMs: number };
}

async function postResult(agentId: string, job: Job, status: 'PASSED' | 'FAILED' = 'PASSED') {
  return svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': agentId },
    payload: resultFor(job, status),
  });
}

/** Creates an ICMP check (not activated) and starts one session of it; returns the ids. */
async function checkAndRun(over: Record<string, unknown>): Promise<{ checkId: string; sessionId: string }> {
  const check = await svc.request('POST', '/v1/checks/icmp', icmpBody({ activated: false, ...over }));
  expect(check.statusCode, check.body).toBe(201);
  const checkId = check.json().id as string;
  const res = await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
  expect(res.statusCode, res.body).toBe(201);
  return { checkId, sessionId: res.json().sessions[0].checkSessionId };
}

async function jobRow(jobId: string) {
  return svc.context.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}

describe('where runs go', () => {
  it('an account-key agent serves the data-center locations it names, never a private location', async () => {
    svc = await testService();
    const location = await svc.request('POST', '/v1/private-locations', {
      name: 'Office',
      slugName: 'office-lan',
    });
    expect(location.statusCode, location.body).toBe(201);
    const office = await checkAndRun({ locations: [], privateLocations: ['office-lan'] });
    const dublin = await checkAndRun({ locations: ['eu-west-1'] });
    const virginia = await checkAndRun({ locations: ['us-east-1'] });

    const agent = randomUUID();
    const jobs = await claim(agent, { locations: ['eu-west-1'] });
    expect(jobs.map((j) => j.check.id)).toEqual([dublin.checkId]);
    // Naming none serves every data-center location; still not the private one.
    const rest = await claim(randomUUID());
    expect(rest.map((j) => j.check.id)).toEqual([virginia.checkId]);
    expect(
      await jobRow(
        (
          await svc.context.db
            .selectFrom('jobs')
            .select('id')
            .where('check_id', '=', office.checkId)
            .executeTakeFirstOrThrow()
        ).id,
      ),
    ).toMatchObject({ state: 'queued' });

    const shown = (await svc.request('GET', '/v1/agents')).json() as {
      id: string;
      locations: string[] | null;
      hostName: string | null;
    }[];
    expect(shown.find((a) => a.id === agent)).toMatchObject({
      locations: ['eu-west-1'],
      hostName: 'probe-7.office.example',
    });
  });

  it('flags the locations no connected agent serves, on the check and in the list', async () => {
    svc = await testService();
    const { checkId } = await checkAndRun({ locations: ['us-east-1', 'eu-west-1'] });
    const before = (await svc.request('GET', `/v1/checks/${checkId}`)).json();
    expect(before.unservedLocations).toEqual(['us-east-1', 'eu-west-1']);
    await claim(randomUUID(), { locations: ['eu-west-1'], freeSlots: { uptime: 0, main: 0 } });
    const after = (await svc.request('GET', `/v1/checks/${checkId}`)).json();
    expect(after.unservedLocations).toEqual(['us-east-1']);
    const listed = (await svc.request('GET', '/v1/checks')).json() as {
      id: string;
      unservedLocations: string[];
    }[];
    expect(listed.find((c) => c.id === checkId)?.unservedLocations).toEqual(['us-east-1']);
  });

  it('a run no agent takes expires with the reason, not as a failure; the check lists it', async () => {
    svc = await testService({ queueExpiryMs: 60_000 });
    const { checkId, sessionId } = await checkAndRun({ locations: ['ap-south-1'] });
    const outcome = await svc.queue.expireStale(Date.now() + 61_000);
    expect(outcome.expired).toHaveLength(1);
    expect(outcome.failed).toEqual([]);
    const expired = await svc.request('GET', `/v1/checks/${checkId}/expired-runs`);
    expect(expired.statusCode, expired.body).toBe(200);
    expect(expired.json()).toEqual([
      expect.objectContaining({
        runLocation: 'ap-south-1',
        checkSessionId: sessionId,
        reason: 'no connected agent serves location ap-south-1',
      }),
    ]);
    expect((await svc.request('GET', `/v1/check-results/${checkId}`)).json()).toEqual([]);
    expect((await svc.request('GET', `/v1/check-sessions/${sessionId}`)).json()).toMatchObject({
      status: 'TIMED_OUT',
    });
    expect((await svc.request('GET', `/v1/checks/${randomUUID()}/expired-runs`)).statusCode).toBe(404);
    // Another account sees nothing of it.
    expect((await svc.request('GET', `/v1/checks/${checkId}/expired-runs`, undefined, 'B')).statusCode).toBe(
      404,
    );
  });

  it('a run whose agents are busy expires saying so', async () => {
    svc = await testService({ queueExpiryMs: 100 });
    const { checkId } = await checkAndRun({ locations: ['eu-west-1'] });
    // Connected, serving the location, but with no free slot.
    await claim(randomUUID(), { locations: ['eu-west-1'], freeSlots: { uptime: 0, main: 0 } });
    await new Promise((r) => setTimeout(r, 150));
    await svc.queue.expireStale(Date.now());
    const [run] = (await svc.request('GET', `/v1/checks/${checkId}/expired-runs`)).json();
    expect(run.reason).toBe('the agent of location eu-west-1 had no free slot for it within 0 s');
  });
});

describe('run now', () => {
  it('replaces a scheduled run still waiting in the queue: the check does not run twice at once', async () => {
    svc = await testService();
    const created = await svc.request(
      'POST',
      '/v1/checks/icmp',
      icmpBody({ activated: true, locations: ['us-east-1'] }),
    );
    const checkId = created.json().id as string;
    // What the scheduler queues at once for a check created activated.
    const check = await new CheckQueries(svc.context.db).get(svc.accountA.id, checkId);
    await svc.context.db
      .transaction()
      .execute((tx) =>
        svc.queue.enqueue(
          tx,
          svc.accountA.id,
          [{ check, location: 'us-east-1', runSource: 'SCHEDULER', checkSessionId: null }],
          Date.now(),
        ),
      );
    const res = await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    const sessionId = res.json().sessions[0].checkSessionId as string;
    const jobs = await claim(randomUUID());
    expect(jobs.map((j) => j.checkSessionId)).toEqual([sessionId]);
  });
});

describe('a claim is committed when the agent acknowledges it', () => {
  it('an unacknowledged claim returns to the queue after the window, uncounted; a late acknowledgement is refused', async () => {
    svc = await testService();
    await checkAndRun({ locations: ['us-east-1'] });
    const stalled = randomUUID();
    const [job] = await claim(stalled);
    expect(job).toBeDefined();
    expect(await jobRow(job!.jobId)).toMatchObject({ state: 'leased', acknowledged_at: null, claims: 1 });

    const later = Date.now() + CLAIM_ACK_WINDOW_MS + 1000;
    const outcome = await svc.queue.expireStale(later);
    expect(outcome.requeued).toEqual([job!.jobId]);
    expect(outcome.failed).toEqual([]);
    // Queued again, the claim not counted and the agent not barred: it never received the job.
    expect(await jobRow(job!.jobId)).toMatchObject({ state: 'queued', claims: 0, lost_agents: '' });
    expect(await ack(stalled, [job!.jobId])).toMatchObject({ acknowledged: [], lost: [job!.jobId] });

    const next = await claim(stalled);
    expect(next.map((j) => j.jobId)).toEqual([job!.jobId]);
    const acked = await ack(stalled, [job!.jobId]);
    expect(acked.acknowledged).toEqual([job!.jobId]);
    const row = await jobRow(job!.jobId);
    expect(row?.acknowledged_at).not.toBeNull();
    expect(Number(row?.lease_expires_at)).toBeGreaterThan(Date.now() + acked.leaseMs - 5000);
    // Acknowledging twice is harmless.
    expect((await ack(stalled, [job!.jobId])).acknowledged).toEqual([job!.jobId]);
  });

  it('a claim never acknowledged past its run’s deadline expires with that reason: no FAILED result, no alert', async () => {
    svc = await testService({ queueExpiryMs: 20_000 });
    const channel = await svc.request('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'hook', url: 'https://hooks.example.test/outpost' },
    });
    expect(channel.statusCode, channel.body).toBe(201);
    const { checkId } = await checkAndRun({ locations: ['us-east-1'] });
    const agent = randomUUID();
    const [job] = await claim(agent);
    await svc.queue.expireStale(Date.now() + 31_000);
    expect(await jobRow(job!.jobId)).toBeUndefined();
    expect((await svc.request('GET', `/v1/check-results/${checkId}`)).json()).toEqual([]);
    expect((await svc.request('GET', '/v1/check-alerts')).json()).toEqual([]);
    const [run] = (await svc.request('GET', `/v1/checks/${checkId}/expired-runs`)).json();
    expect(run.reason).toBe(
      `agent ${agent} claimed the run but never confirmed it received it, and the run is past its deadline`,
    );
  });

  it('a long poll whose agent went away hands it nothing: the job stays queued for a live agent', async () => {
    svc = await testService();
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = svc.app.server.address() as { port: number };
    const check = await svc.request(
      'POST',
      '/v1/checks/icmp',
      icmpBody({ activated: false, locations: ['us-east-1'] }),
    );
    const gone = new AbortController();
    const polling = fetch(`http://127.0.0.1:${port}/v1/agent/jobs/claim`, {
      method: 'POST',
      signal: gone.signal,
      headers: { ...svc.auth(), 'x-agent-id': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify({
        agentVersion: '1',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['ICMP'],
        runtimes: [],
        freeSlots: { uptime: 1, main: 0 },
        waitSeconds: 10,
        acknowledges: true,
      }),
    }).catch(() => 'aborted');
    await new Promise((r) => setTimeout(r, 300));
    gone.abort();
    expect(await polling).toBe('aborted');
    await new Promise((r) => setTimeout(r, 100));
    await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json().id] } });
    await new Promise((r) => setTimeout(r, 1500));
    const [row] = await svc.context.db.selectFrom('jobs').selectAll().execute();
    expect(row).toMatchObject({ state: 'queued', agent_id: null, claims: 0 });
  });

  it('an older agent that does not acknowledge keeps the lease from its claim', async () => {
    svc = await testService();
    await checkAndRun({ locations: ['us-east-1'] });
    const [job] = await claim(randomUUID(), { acknowledges: undefined });
    const row = await jobRow(job!.jobId);
    expect(row?.acknowledged_at).not.toBeNull();
    expect((await svc.queue.expireStale(Date.now() + CLAIM_ACK_WINDOW_MS + 1000)).requeued).toEqual([]);
  });
});

describe('who ran it', () => {
  it('every result records the agent that ran it: id, version and host name', async () => {
    svc = await testService();
    const { checkId } = await checkAndRun({ locations: ['us-east-1'] });
    const agent = randomUUID();
    const [job] = await claim(agent);
    await ack(agent, [job!.jobId]);
    // A body claiming another agent does not change who is recorded.
    const res = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': agent },
      payload: { ...resultFor(job!), agent: { id: 'someone-else', version: '0', hostName: 'spoofed' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [result] = (await svc.request('GET', `/v1/check-results/${checkId}`)).json();
    expect(result.agent).toEqual({ id: agent, version: '9.9.9-test', hostName: 'probe-7.office.example' });
  });

  it('an agent that says it stopped shows as disconnected at once, and connected again at its next claim', async () => {
    svc = await testService();
    const agent = randomUUID();
    await claim(agent);
    const connected = async () =>
      ((await svc.request('GET', `/v1/agents/${agent}`)).json() as { connected: boolean }).connected;
    expect(await connected()).toBe(true);
    const stopped = await svc.app.inject({
      method: 'POST',
      url: '/v1/agent/stopped',
      headers: { ...svc.auth(), 'x-agent-id': agent },
    });
    expect(stopped.statusCode, stopped.body).toBe(204);
    expect(await connected()).toBe(false);
    expect((await svc.request('GET', `/v1/agents/${agent}`)).json().stoppedAt).not.toBeNull();
    await claim(agent);
    expect(await connected()).toBe(true);
  });
});

describe('the embedded location', () => {
  it('moves the demo checks an earlier version seeded in us-east-1 to local, and nothing the user placed', async () => {
    svc = await testService();
    await rotateEmbeddedAgentKey(svc.context.db, svc.accountA.id);
    const create = async (over: Record<string, unknown>) => {
      const res = await svc.request('POST', '/v1/checks/icmp', icmpBody({ activated: false, ...over }));
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const oldDemo = await create({ name: 'Demo: ping 127.0.0.1', tags: ['demo'], locations: ['us-east-1'] });
    const untagged = await create({ name: 'Demo: mine', locations: ['us-east-1'] });
    const elsewhere = await create({ name: 'Demo: eu', tags: ['demo'], locations: ['eu-west-1'] });
    expect(await seedDemoChecks(svc.context.db, svc.accountA.id)).toEqual([]);
    const where = async (id: string) => {
      const check = (await svc.request('GET', `/v1/checks/${id}`)).json();
      return [check.locations, check.privateLocations];
    };
    expect(await where(oldDemo)).toEqual([[], ['local']]);
    expect(await where(untagged)).toEqual([['us-east-1'], null]);
    expect(await where(elsewhere)).toEqual([['eu-west-1'], null]);
  });

  it('outpost up’s agent gets a key of location local; checks naming no location run there', async () => {
    svc = await testService();
    const key = await rotateEmbeddedAgentKey(svc.context.db, svc.accountA.id);
    expect(key).toMatch(/^pl_/);
    const again = await rotateEmbeddedAgentKey(svc.context.db, svc.accountA.id);
    expect(again).not.toBe(key);
    const locations = (await svc.request('GET', '/v1/private-locations')).json() as {
      slugName: string;
      keys: unknown[];
    }[];
    expect(locations.map((l) => [l.slugName, l.keys.length])).toEqual([['local', 1]]);

    const check = await svc.request('POST', '/v1/checks/icmp', icmpBody({ activated: false }));
    expect(check.statusCode, check.body).toBe(201);
    expect(check.json()).toMatchObject({ locations: null, privateLocations: ['local'] });
    // Account B has no embedded location: the hosted API's default stays.
    const other = await svc.request('POST', '/v1/checks/icmp', icmpBody({ activated: false }), 'B');
    expect(other.json()).toMatchObject({ locations: ['us-east-1'] });

    await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json().id] } });
    // The account key serves data-center locations: it does not get the run; the rotated-out key is refused.
    expect(await claim(randomUUID())).toEqual([]);
    const revoked = await svc.app.inject({
      method: 'POST',
      url: '/v1/agent/jobs/claim',
      headers: { authorization: `Bearer ${key}`, 'x-agent-id': randomUUID() },
      payload: {
        agentVersion: '1',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['ICMP'],
        runtimes: [],
        freeSlots: { uptime: 1, main: 0 },
        waitSeconds: 0,
      },
    });
    expect(revoked.statusCode).toBe(401);
    const embedded = randomUUID();
    const jobs = await claim(embedded, {}, again);
    expect(jobs.map((j) => j.runLocation)).toEqual(['local']);
    await ack(embedded, [jobs[0]!.jobId], again);
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${jobs[0]!.jobId}/result`,
      headers: { authorization: `Bearer ${again}`, 'x-agent-id': embedded },
      payload: resultFor(jobs[0]!),
    });
    expect(posted.statusCode, posted.body).toBe(200);
  });
});

// Unused here but kept next to the claims: a result of a job the agent holds unacknowledged is accepted.
it('a result posted before the acknowledgement is stored (a fast run)', async () => {
  svc = await testService();
  await checkAndRun({ locations: ['us-east-1'] });
  const agent = randomUUID();
  const [job] = await claim(agent);
  expect((await postResult(agent, job!)).statusCode).toBe(200);
});
