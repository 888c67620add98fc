import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { bodyAjv } from '../../../src/service/platform/http/validation.js';
import { AgentErrorReportSchema, AgentResponseSchema } from '../../../src/service/resources/agents/schema.js';
import { createCheck, icmpBody, type TestService, testService, triggerCheck } from '../../helpers/service.js';

const validAgent = bodyAjv.compile(AgentResponseSchema);
const validReport = bodyAjv.compile(AgentErrorReportSchema);
const expectValid = (validate: { (doc: unknown): boolean; errors?: unknown }, doc: unknown) =>
  expect(validate(doc) ? [] : validate.errors).toEqual([]);

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Claim = { freeSlots?: { uptime: number; main: number }; checkTypes?: string[]; runtimes?: string[] };

/** A claim through the real agent protocol, as an agent with `key` and id `agentId`. */
async function claim(key: string, agentId: string, over: Claim = {}, version = '1.2.3') {
  return svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/claim',
    headers: { authorization: `Bearer ${key}`, 'x-agent-id': agentId },
    payload: {
      agentVersion: version,
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['ICMP', 'TCP'],
      runtimes: ['2026.04'],
      freeSlots: { uptime: 10, main: 10 },
      waitSeconds: 0,
      ...over,
    },
  });
}

const agentsOf = async (account: 'A' | 'B' = 'A') => {
  const res = await svc.request('GET', '/v1/agents', undefined, account);
  expect(res.statusCode).toBe(200);
  return res.json() as Record<string, any>[];
};

describe('GET /v1/agents', () => {
  it('shows an agent with an account key (the embedded agent’s kind): scope, seen times, slots, running jobs', async () => {
    const agentId = randomUUID();
    const checkId = await createCheck(svc, 'icmp', icmpBody({ activated: false }));
    await triggerCheck(svc, checkId);
    const before = Date.now();
    const res = await claim(svc.accountA.key, agentId, { freeSlots: { uptime: 4, main: 2 } });
    expect(res.statusCode).toBe(200);
    const [job] = res.json().jobs;
    expect(job).toBeDefined();

    const agent = (await agentsOf()).find((a) => a.id === agentId)!;
    expectValid(validAgent, agent);
    expect(agent).toMatchObject({
      id: agentId,
      version: '1.2.3',
      scope: 'ACCOUNT',
      privateLocation: null,
      locations: null,
      connected: true,
      // 4 uptime slots offered, one ICMP job handed out; no main-class check types claimed.
      freeSlots: { uptime: 3, main: 0 },
      checkTypes: ['ICMP', 'TCP'],
      runtimes: ['2026.04'],
      runningJobs: [
        {
          jobId: job.jobId,
          checkId,
          checkType: 'ICMP',
          runLocation: job.runLocation,
          checkSessionId: expect.any(String),
        },
      ],
      errorReports: { count: 0, lastReportedAt: null },
    });
    expect(Date.parse(agent.firstSeenAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(agent.lastSeenAt).toBe(agent.firstSeenAt);

    // Its result ends the running job; a later claim moves lastSeenAt and the slots, not firstSeenAt.
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: { authorization: `Bearer ${svc.accountA.key}`, 'x-agent-id': agentId },
      payload: {
        status: 'PASSED',
        hasFailures: false,
        hasErrors: false,
        isDegraded: false,
        overMaxResponseTime: false,
        responseTime: 1,
        startedAt: new Date().toISOString(),
        stoppedAt: new Date().toISOString(),
        errorMessage: null,
        assertions: [],
        logs: [],
        runLocation: job.runLocation,
        attempts: 1,
        resultType: 'FINAL',
        artifacts: [],
      },
    });
    expect(posted.statusCode, posted.body).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
    expect(
      (await claim(svc.accountA.key, agentId, { freeSlots: { uptime: 9, main: 1 } }, '1.2.4')).statusCode,
    ).toBe(200);
    const later = (await agentsOf()).find((a) => a.id === agentId)!;
    expect(later).toMatchObject({ version: '1.2.4', freeSlots: { uptime: 9, main: 0 }, runningJobs: [] });
    expect(later.firstSeenAt).toBe(agent.firstSeenAt);
    expect(Date.parse(later.lastSeenAt)).toBeGreaterThan(Date.parse(agent.lastSeenAt));
  });

  it('keeps each job class’s last report: an agent claims per class, one class’s types and slots at a time', async () => {
    const agentId = randomUUID();
    const uptime = { checkTypes: ['ICMP', 'DNS', 'TCP', 'URL'], freeSlots: { uptime: 5, main: 0 } };
    const main = { checkTypes: ['API'], freeSlots: { uptime: 0, main: 7 } };
    expect((await claim(svc.accountA.key, agentId, uptime)).statusCode).toBe(200);
    expect((await claim(svc.accountA.key, agentId, main)).statusCode).toBe(200);
    const agent = (await svc.request('GET', `/v1/agents/${agentId}`)).json();
    expect(agent.freeSlots).toEqual({ uptime: 5, main: 7 });
    expect(agent.checkTypes).toEqual(['ICMP', 'DNS', 'TCP', 'URL', 'API']);
    // A main-class job handed out lowers the main slots only.
    const apiCheck = await createCheck(svc, 'api', {
      name: 'api',
      activated: false,
      request: { url: 'http://127.0.0.1:9/' },
    });
    await triggerCheck(svc, apiCheck);
    const answer = await claim(svc.accountA.key, agentId, { ...main, freeSlots: { uptime: 0, main: 6 } });
    expect(answer.json().jobs).toHaveLength(1);
    const after = (await svc.request('GET', `/v1/agents/${agentId}`)).json();
    expect(after.freeSlots).toEqual({ uptime: 5, main: 5 });
    expect(after.runningJobs.map((j: { checkId: string }) => j.checkId)).toEqual([apiCheck]);
  });

  it('shows a private-location agent with its location, and connected false once its last claim is old', async () => {
    const location = (
      await svc.request('POST', '/v1/private-locations', { name: 'Basement', slugName: 'basement' })
    ).json();
    const agentId = randomUUID();
    expect((await claim(location.keys[0].rawKey, agentId)).statusCode).toBe(200);
    const agent = (await agentsOf()).find((a) => a.id === agentId)!;
    expectValid(validAgent, agent);
    expect(agent).toMatchObject({
      scope: 'PRIVATE_LOCATION',
      privateLocation: { id: location.id, slugName: 'basement', name: 'Basement' },
      locations: ['basement'],
      connected: true,
    });
    // 36 s without a claim: past the longest long poll (20 s) and the margin.
    await svc.context.db
      .updateTable('agents')
      .set({ last_seen_at: Date.now() - 36_000 })
      .where('id', '=', agentId)
      .execute();
    expect((await svc.request('GET', `/v1/agents/${agentId}`)).json().connected).toBe(false);
  });

  it('a refused claim (another location’s key for a known agent id) changes nothing of that agent', async () => {
    const agentId = randomUUID();
    expect((await claim(svc.accountA.key, agentId, { freeSlots: { uptime: 3, main: 3 } })).statusCode).toBe(
      200,
    );
    const location = (
      await svc.request('POST', '/v1/private-locations', { name: 'Attic', slugName: 'attic' })
    ).json();
    const refused = await claim(
      location.keys[0].rawKey,
      agentId,
      { freeSlots: { uptime: 0, main: 0 } },
      '6.6.6',
    );
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    const agent = (await svc.request('GET', `/v1/agents/${agentId}`)).json();
    expect(agent).toMatchObject({ version: '1.2.3', scope: 'ACCOUNT', freeSlots: { uptime: 3, main: 0 } });
  });

  it('is account-scoped: another account sees neither the list entries nor the agent', async () => {
    const agentId = randomUUID();
    expect((await claim(svc.accountA.key, agentId)).statusCode).toBe(200);
    expect((await agentsOf('B')).map((a) => a.id)).not.toContain(agentId);
    expect((await svc.request('GET', `/v1/agents/${agentId}`, undefined, 'B')).statusCode).toBe(404);
    expect((await svc.request('GET', `/v1/agents/${agentId}/error-reports`, undefined, 'B')).statusCode).toBe(
      404,
    );
    // The same agent id under account B is B's own agent, with B's report.
    expect((await claim(svc.accountB.key, agentId, { freeSlots: { uptime: 1, main: 0 } })).statusCode).toBe(
      200,
    );
    const inB = (await agentsOf('B')).filter((a) => a.id === agentId);
    expect(inB).toHaveLength(1);
    expect(inB[0]!.freeSlots).toEqual({ uptime: 1, main: 0 });
    expect((await svc.request('GET', `/v1/agents/${agentId}`)).json().freeSlots).toEqual({
      uptime: 10,
      main: 0,
    });
  });

  it('404 for an unknown agent', async () => {
    const id = randomUUID();
    expect((await svc.request('GET', `/v1/agents/${id}`)).statusCode).toBe(404);
    const res = await svc.request('GET', `/v1/agents/${id}/error-reports`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });
});

describe('GET /v1/agents/{id}/error-reports', () => {
  it('pages the reports an agent sent, newest first, and counts them in the agent', async () => {
    const agentId = randomUUID();
    const headers = { authorization: `Bearer ${svc.accountA.key}`, 'x-agent-id': agentId };
    expect((await claim(svc.accountA.key, agentId)).statusCode).toBe(200);
    for (let i = 0; i < 13; i++) {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/v1/agent/events',
        headers,
        payload: {
          message: `crash ${i}`,
          ...(i % 2 === 0 ? { stack: `Error: crash ${i}\n    at x` } : {}),
          agentVersion: '1.2.3',
          platform: 'linux-x64',
          runtimeVersion: 'v24.0.0',
        },
      });
      expect(res.statusCode).toBe(202);
    }
    const first = await svc.request('GET', `/v1/agents/${agentId}/error-reports`);
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.map((r: { message: string }) => r.message)).toEqual(
      Array.from({ length: 10 }, (_, i) => `crash ${12 - i}`),
    );
    for (const report of page1) expectValid(validReport, report);
    expect(page1[0]).toMatchObject({
      agentId,
      message: 'crash 12',
      stack: 'Error: crash 12\n    at x',
      agentVersion: '1.2.3',
      platform: 'linux-x64',
      runtimeVersion: 'v24.0.0',
    });
    expect(page1[1].stack).toBeNull();
    const page2 = (await svc.request('GET', `/v1/agents/${agentId}/error-reports?page=2`)).json();
    expect(page2.map((r: { message: string }) => r.message)).toEqual(['crash 2', 'crash 1', 'crash 0']);
    expect(
      (await svc.request('GET', `/v1/agents/${agentId}/error-reports?limit=2&page=3`))
        .json()
        .map((r: { message: string }) => r.message),
    ).toEqual(['crash 8', 'crash 7']);
    expect((await svc.request('GET', `/v1/agents/${agentId}/error-reports?page=9`)).json()).toEqual([]);

    const agent = (await svc.request('GET', `/v1/agents/${agentId}`)).json();
    expect(agent.errorReports).toEqual({ count: 13, lastReportedAt: page1[0].created_at });
  });

  it('400 naming the field for a bad page or limit', async () => {
    const id = randomUUID();
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['page=0', 'page'],
      ['other=1', 'other'],
    ] as const) {
      const res = await svc.request('GET', `/v1/agents/${id}/error-reports?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, attributes: { field, in: 'querystring' } });
    }
  });
});
