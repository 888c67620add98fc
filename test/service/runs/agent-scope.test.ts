import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { fileArtifacts, icmpBody, resultFor, type TestService, testService } from '../../helpers/service.js';

// Issue 9, 1.5: a key may only touch jobs of its own account and location(s), held by that
// agent; an agent id is bound to the key's location it first registered with.

let svc: TestService;
afterEach(async () => svc?.close());

type Location = { id: string; slugName: string; key: string };

async function createLocation(slug: string, account: 'A' | 'B' = 'A'): Promise<Location> {
  const res = await svc.request('POST', '/v1/private-locations', { name: slug, slugName: slug }, account);
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  return { id: body.id, slugName: body.slugName, key: body.keys[0].rawKey };
}

const claimBody = {
  agentVersion: '1.0.0-victim',
  protocolVersion: PROTOCOL_VERSION,
  checkTypes: ['ICMP'],
  runtimes: [],
  freeSlots: { uptime: 10, main: 10 },
  waitSeconds: 0,
};

const headers = (key: string, agentId: string) => ({ authorization: `Bearer ${key}`, 'x-agent-id': agentId });

/** Every agent route, as `key` + `agentId` against `job`. */
function attacks(key: string, agentId: string, job: Job) {
  return {
    claim: () =>
      svc.app.inject({
        method: 'POST',
        url: '/v1/agent/jobs/claim',
        headers: headers(key, agentId),
        payload: { ...claimBody, agentVersion: '6.6.6-attacker' },
      }),
    renew: () =>
      svc.app.inject({
        method: 'POST',
        url: `/v1/agent/jobs/${job.jobId}/lease`,
        headers: headers(key, agentId),
      }),
    upload: () =>
      svc.app.inject({
        method: 'PUT',
        url: `/v1/agent/jobs/${job.jobId}/artifacts/forged.txt`,
        headers: { ...headers(key, agentId), 'content-type': 'application/octet-stream' },
        payload: Buffer.from('forged'),
      }),
    result: () =>
      svc.app.inject({
        method: 'POST',
        url: `/v1/agent/jobs/${job.jobId}/result`,
        headers: headers(key, agentId),
        payload: resultFor(job, 'FAILED', { errorMessage: 'forged' }),
      }),
    event: () =>
      svc.app.inject({
        method: 'POST',
        url: '/v1/agent/events',
        headers: headers(key, agentId),
        payload: { message: 'forged', agentVersion: 'x', platform: 'linux', runtimeVersion: 'v24' },
      }),
  };
}

/** Everything of the victim's job and agent that an attack could change. */
async function snapshot(jobId: string) {
  const db = svc.context.db;
  return {
    job: await db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst(),
    results: await db.selectFrom('check_results').select(['id']).where('job_id', '=', jobId).execute(),
    agents: await db.selectFrom('agents').selectAll().where('account_id', '=', svc.accountA.id).execute(),
    events: await db.selectFrom('agent_events').select('id').execute(),
    artifact: existsSync(join(fileArtifacts(svc).dir, svc.accountA.id, jobId, 'forged.txt')),
  };
}

describe('agent routes are scoped to the key and the agent', () => {
  let a: Location;
  let b: Location;
  let victim: string;
  let job: Job;

  beforeEach(async () => {
    svc = await testService();
    a = await createLocation('loc-a');
    b = await createLocation('loc-b');
    const check = await svc.request(
      'POST',
      '/v1/checks/icmp',
      icmpBody({ activated: false, locations: [], privateLocations: [b.slugName] }),
    );
    expect(check.statusCode, check.body).toBe(201);
    const trig = await svc.request('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [check.json().id] },
    });
    expect(trig.statusCode).toBe(201);
    victim = randomUUID();
    const claimed = await svc.app.inject({
      method: 'POST',
      url: '/v1/agent/jobs/claim',
      headers: headers(b.key, victim),
      payload: claimBody,
    });
    expect(claimed.statusCode).toBe(200);
    job = claimed.json().jobs[0];
    expect(job.runLocation).toBe(b.slugName);
  });

  it("refuses a location-a key that sends the location-b agent's id, on every route, with 409", async () => {
    const before = await snapshot(job.jobId);
    for (const [route, attack] of Object.entries(attacks(a.key, victim, job))) {
      const res = await attack();
      expect(res.statusCode, `${route}: ${res.body}`).toBe(409);
      expect(res.json(), route).toMatchObject({
        statusCode: 409,
        error: 'Conflict',
        attributes: { code: 'OUTPOST_ERR_AGENT_KEY_MISMATCH', field: 'x-agent-id' },
      });
    }
    expect(await snapshot(job.jobId)).toEqual(before);
  });

  it('answers 404 to a location-a agent of its own touching a location-b job, and changes nothing', async () => {
    const before = await snapshot(job.jobId);
    const attacker = randomUUID();
    const routes = attacks(a.key, attacker, job);
    const claimed = await routes.claim();
    expect(claimed.statusCode).toBe(200);
    expect(claimed.json().jobs).toEqual([]);
    for (const route of ['renew', 'upload', 'result'] as const) {
      const res = await routes[route]();
      expect(res.statusCode, `${route}: ${res.body}`).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
    }
    const after = await snapshot(job.jobId);
    expect(after.job).toEqual(before.job);
    expect(after.results).toEqual([]);
    expect(after.artifact).toBe(false);
    // Only the attacker's own agent row was added; the victim's is as it was.
    expect(after.agents.find((r) => r.id === victim)).toEqual(before.agents.find((r) => r.id === victim));
  });

  it('answers 404 to another account using the same agent id, and keeps the two accounts’ agents apart', async () => {
    const before = await snapshot(job.jobId);
    const other = await createLocation('loc-b', 'B');
    for (const key of [svc.accountB.key, other.key]) {
      const routes = attacks(key, victim, job);
      const claimed = await routes.claim();
      // Account B's agent with this id is bound to B's key, so the second key is refused.
      expect([200, 409]).toContain(claimed.statusCode);
      for (const route of ['renew', 'upload', 'result'] as const) {
        const res = await routes[route]();
        expect([404, 409], `${route}: ${res.body}`).toContain(res.statusCode);
      }
    }
    const after = await snapshot(job.jobId);
    expect(after.job).toEqual(before.job);
    expect(after.results).toEqual([]);
    expect(after.artifact).toBe(false);
    expect(after.agents).toEqual(before.agents);
    const bAgents = await svc.context.db
      .selectFrom('agents')
      .selectAll()
      .where('account_id', '=', svc.accountB.id)
      .execute();
    expect(bAgents.map((r) => [r.id, r.version])).toEqual([[victim, '6.6.6-attacker']]);
    // Account B never sees account A's job: 404, not 409.
    const res = await attacks(svc.accountB.key, victim, job).renew();
    expect(res.statusCode).toBe(404);
  });

  it('refuses another agent of the same location (409 lease lost), and every route after the job ended', async () => {
    const before = await snapshot(job.jobId);
    const sibling = attacks(b.key, randomUUID(), job);
    for (const route of ['renew', 'upload', 'result'] as const) {
      const res = await sibling[route]();
      expect(res.statusCode, `${route}: ${res.body}`).toBe(409);
      expect(res.json()).toMatchObject({ attributes: { code: 'OUTPOST_ERR_LEASE_LOST' } });
    }
    expect(await snapshot(job.jobId)).toEqual(before);

    // The holder finishes; then neither it nor anyone else may add to the job.
    const own = attacks(b.key, victim, job);
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: headers(b.key, victim),
      payload: resultFor(job),
    });
    expect(posted.statusCode).toBe(200);
    for (const route of ['renew', 'upload', 'result'] as const) {
      const res = await own[route]();
      expect(res.statusCode, `${route}: ${res.body}`).toBe(409);
    }
    const results = await svc.context.db.selectFrom('check_results').select('status').execute();
    expect(results).toEqual([{ status: 'PASSED' }]);
    expect(existsSync(join(fileArtifacts(svc).dir, svc.accountA.id, job.jobId, 'forged.txt'))).toBe(false);
  });

  it('stores the location of the job, not the one the agent claims in its result', async () => {
    const forged = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: headers(b.key, victim),
      payload: resultFor(job, 'PASSED', { runLocation: a.slugName }),
    });
    expect(forged.statusCode).toBe(200);
    const stored = await svc.context.db.selectFrom('check_results').select('run_location').execute();
    expect(stored).toEqual([{ run_location: b.slugName }]);
  });
});
