import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CheckResult, type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import {
  errorGroupsHook,
  errorHash,
  errorMessageOf,
} from '../../../src/service/resources/error-groups/error-groups.js';
import { icmpBody, type TestService, testService } from '../../helpers/service.js';

/** A final result; override per test. */
function failing(over: Partial<CheckResult> = {}): CheckResult {
  return {
    status: 'FAILED',
    hasFailures: true,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: 12,
    startedAt: '2025-01-01T00:00:00.000Z',
    stoppedAt: '2025-01-01T00:00:01.000Z',
    errorMessage: 'connect ECONNREFUSED 10.0.0.1:443',
    assertions: [],
    logs: [],
    runLocation: 'us-east-1',
    attempts: 1,
    resultType: 'FINAL',
    artifacts: [],
    ...over,
  };
}

describe('errorMessageOf', () => {
  const assertion = {
    source: 'LATENCY',
    property: 'avg',
    comparison: 'LESS_THAN',
    target: '100',
    regex: null,
    actual: 153,
  };
  it('takes the message, else the first failed assertion written as the executors write it, else null', () => {
    expect(errorMessageOf(failing())).toBe('connect ECONNREFUSED 10.0.0.1:443');
    const assertions = [
      { ...assertion, error: null },
      { ...assertion, error: '153 is not less than 100' },
      { ...assertion, property: 'max', error: 'other' },
    ];
    expect(errorMessageOf(failing({ errorMessage: '  ', assertions }))).toBe(
      'assertion LATENCY avg LESS_THAN 100 failed: 153 is not less than 100',
    );
    expect(
      errorMessageOf(failing({ errorMessage: null, assertions: [{ ...assertion, error: null }] })),
    ).toBeNull();
  });
});

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());
beforeEach(async () => {
  await svc.context.db.deleteFrom('error_groups').execute();
});

const call = (method: 'GET' | 'PATCH', url: string, payload?: unknown, account: 'A' | 'B' = 'A') =>
  svc.app.inject({
    method,
    url,
    headers: svc.auth(account),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

async function newCheck(account: 'A' | 'B' = 'A'): Promise<string> {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/v1/checks/icmp',
    headers: svc.auth(account),
    payload: icmpBody({ activated: false }),
  });
  expect(res.statusCode).toBe(201);
  return res.json().id;
}

/** Runs the hook as the agent route does after storing a result. */
async function stored(checkId: string, result: CheckResult, account: 'A' | 'B' = 'A'): Promise<void> {
  const accountId = account === 'A' ? svc.accountA.id : svc.accountB.id;
  await errorGroupsHook(svc.context.db)({ accountId, jobId: randomUUID(), checkId, result });
}

const groupsOf = async (checkId: string, query = '') =>
  (await call('GET', `/v1/error-groups/checks/${checkId}${query}`)).json();

describe('errorGroupsHook', () => {
  it('builds a group from a failing result posted through the agent protocol', async () => {
    const checkId = await newCheck();
    const trigger = await svc.app.inject({
      method: 'POST',
      url: '/v1/check-sessions/trigger',
      headers: svc.auth(),
      payload: { target: { checkId: [checkId] } },
    });
    expect(trigger.statusCode).toBe(201);
    const agent = { ...svc.auth(), 'x-agent-id': randomUUID() };
    const claim = await svc.app.inject({
      method: 'POST',
      url: '/v1/agent/jobs/claim',
      headers: agent,
      payload: {
        agentVersion: '0.0.0-test',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['ICMP'],
        runtimes: [],
        freeSlots: { uptime: 1, main: 1 },
        waitSeconds: 0,
      },
    });
    const job = claim.json().jobs[0] as Job;
    const result = failing({
      runLocation: job.runLocation,
      attempts: job.attempt,
      errorMessage: 'connect ECONNREFUSED 10.0.0.9:443',
    });
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: agent,
      payload: result,
    });
    expect(posted.json()).toEqual({ stored: true, duplicate: false, resultType: 'FINAL' });

    // Hooks run from the result outbox after the post has answered (the ingest kicks the worker):
    // on PostgreSQL the pass is still under way when the post returns, so wait for the group.
    const groups = await vi.waitFor(
      async () => {
        const listed = await groupsOf(checkId);
        expect(listed).toHaveLength(1);
        return listed;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(groups).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checkId,
        errorHash: errorHash('connect ECONNREFUSED <ip>:<port>'),
        rawErrorMessage: 'connect ECONNREFUSED 10.0.0.9:443',
        cleanedErrorMessage: 'connect ECONNREFUSED <ip>:<port>',
        firstSeen: '2025-01-01T00:00:00.000Z',
        lastSeen: '2025-01-01T00:00:00.000Z',
        archivedUntilNextEvent: false,
        archivedForEver: false,
        rootCauseAnalyses: [],
      },
    ]);
  });

  it('ignores passes, degradations, attempts and failures without any message', async () => {
    const checkId = await newCheck();
    await stored(checkId, failing({ status: 'PASSED', hasFailures: false }));
    await stored(checkId, failing({ status: 'DEGRADED', hasFailures: false, isDegraded: true }));
    await stored(checkId, failing({ resultType: 'ATTEMPT' }));
    await stored(checkId, failing({ errorMessage: null }));
    expect(await groupsOf(checkId)).toEqual([]);
    await stored(checkId, failing({ hasFailures: false, hasErrors: true, errorMessage: 'executor crashed' }));
    expect((await groupsOf(checkId)).map((g: { rawErrorMessage: string }) => g.rawErrorMessage)).toEqual([
      'executor crashed',
    ]);
  });

  it('counts one problem once, keeping the first and last sighting and the latest raw message', async () => {
    const checkId = await newCheck();
    await stored(
      checkId,
      failing({ startedAt: '2025-01-02T00:00:00.000Z', errorMessage: 'timeout after 5003 ms' }),
    );
    await stored(
      checkId,
      failing({ startedAt: '2025-01-03T00:00:00.000Z', errorMessage: 'timeout after 812 ms' }),
    );
    // A late result of an older run moves firstSeen only.
    await stored(
      checkId,
      failing({ startedAt: '2025-01-01T00:00:00.000Z', errorMessage: 'timeout after 7 ms' }),
    );
    const groups = await groupsOf(checkId);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({
      rawErrorMessage: 'timeout after 812 ms',
      cleanedErrorMessage: 'timeout after <duration>',
      firstSeen: '2025-01-01T00:00:00.000Z',
      lastSeen: '2025-01-03T00:00:00.000Z',
    });
  });

  it('reopens a group archived until the next event; a group archived for ever stays archived but records lastSeen', async () => {
    const checkId = await newCheck();
    await stored(checkId, failing({ startedAt: '2025-01-01T00:00:00.000Z' }));
    const [group] = await groupsOf(checkId);
    const url = `/v1/error-groups/${group.id}`;

    const archived = await call('PATCH', url, { archivedUntilNextEvent: true });
    expect(archived.statusCode).toBe(200);
    expect(archived.json()).toEqual({ ...group, archivedUntilNextEvent: true });
    await stored(
      checkId,
      failing({ startedAt: '2025-01-02T00:00:00.000Z', errorMessage: 'connect ECONNREFUSED 10.0.0.2:8443' }),
    );
    expect((await call('GET', url)).json()).toMatchObject({
      archivedUntilNextEvent: false,
      archivedForEver: false,
      lastSeen: '2025-01-02T00:00:00.000Z',
      rawErrorMessage: 'connect ECONNREFUSED 10.0.0.2:8443',
    });

    expect((await call('PATCH', url, { archiveForEver: true })).json()).toMatchObject({
      archivedForEver: true,
      archivedUntilNextEvent: false,
    });
    await stored(checkId, failing({ startedAt: '2025-01-03T00:00:00.000Z' }));
    expect((await call('GET', url)).json()).toMatchObject({
      archivedForEver: true,
      lastSeen: '2025-01-03T00:00:00.000Z',
    });

    const both = await call('PATCH', url, { archiveForEver: false, archivedUntilNextEvent: true });
    expect(both.json()).toMatchObject({ archivedForEver: false, archivedUntilNextEvent: true });
    expect((await call('PATCH', url, { archivedUntilNextEvent: false })).json()).toMatchObject({
      archivedUntilNextEvent: false,
    });
  });

  it('keeps groups per check: the same message on two checks makes two groups', async () => {
    const a = await newCheck();
    const b = await newCheck();
    await stored(a, failing());
    await stored(b, failing());
    const [ga] = await groupsOf(a);
    const [gb] = await groupsOf(b);
    expect(ga.errorHash).toBe(gb.errorHash);
    expect(ga.id).not.toBe(gb.id);
  });
});

describe('error group routes', () => {
  it('list most recently seen first, 10 per page by default, limit 1..100 and page', async () => {
    const checkId = await newCheck();
    const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo'.split(' ');
    for (const [day, word] of words.entries()) {
      await stored(
        checkId,
        failing({
          errorMessage: `failure ${word}`,
          startedAt: `2025-02-${String(day + 1).padStart(2, '0')}T00:00:00.000Z`,
        }),
      );
    }
    const newestFirst = [...words].reverse().map((w) => `failure ${w}`);
    const messages = (groups: { rawErrorMessage: string }[]) => groups.map((g) => g.rawErrorMessage);
    expect(messages(await groupsOf(checkId))).toEqual(newestFirst.slice(0, 10));
    expect(messages(await groupsOf(checkId, '?page=2'))).toEqual(newestFirst.slice(10));
    expect(messages(await groupsOf(checkId, '?limit=1&page=11'))).toEqual(['failure alpha']);
    expect(await groupsOf(checkId, '?limit=100')).toHaveLength(11);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['page=0', 'page'],
      ['nextId=x', 'nextId'],
    ] as const) {
      const res = await call('GET', `/v1/error-groups/checks/${checkId}?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().attributes).toMatchObject({ field, in: 'querystring' });
    }
  });

  it('answer 404 for unknown groups and checks', async () => {
    const unknown = randomUUID();
    expect((await call('GET', `/v1/error-groups/${unknown}`)).statusCode).toBe(404);
    expect((await call('PATCH', `/v1/error-groups/${unknown}`, { archiveForEver: true })).statusCode).toBe(
      404,
    );
    const res = await call('GET', `/v1/error-groups/checks/${unknown}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });

  it.each([
    ['an empty body', {}, 'archivedUntilNextEvent', 'required'],
    ['a string flag', { archiveForEver: 'yes' }, 'archiveForEver', 'type'],
    ['a null flag', { archivedUntilNextEvent: null }, 'archivedUntilNextEvent', 'type'],
    ['an unknown field', { archived: true }, 'archived', 'additionalProperties'],
  ])('PATCH rejects %s with 400 naming the field and changes nothing', async (_what, body, field, rule) => {
    const checkId = await newCheck();
    await stored(checkId, failing());
    const [group] = await groupsOf(checkId);
    const res = await call('PATCH', `/v1/error-groups/${group.id}`, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toEqual({ code: 'OUTPOST_ERR_VALIDATION', field, in: 'body', rule });
    expect((await call('GET', `/v1/error-groups/${group.id}`)).json()).toEqual(group);
  });

  it('GET /v1/error-groups lists the groups of every check of the account, most recently seen first', async () => {
    const one = await newCheck();
    const two = await newCheck();
    const gone = await newCheck();
    const secret = 'planted-secret-3c1d8e token=hunter2';
    const theirs = await newCheck('B');
    await stored(one, failing({ errorMessage: 'one fails', startedAt: '2025-03-01T00:00:00.000Z' }));
    await stored(two, failing({ errorMessage: 'two fails', startedAt: '2025-03-03T00:00:00.000Z' }));
    await stored(one, failing({ errorMessage: 'one times out', startedAt: '2025-03-02T00:00:00.000Z' }));
    await stored(gone, failing({ errorMessage: 'deleted check fails' }));
    await stored(theirs, failing({ errorMessage: secret }), 'B');
    const del = await svc.app.inject({ method: 'DELETE', url: `/v1/checks/${gone}`, headers: svc.auth('A') });
    expect(del.statusCode).toBe(204);

    const res = await call('GET', '/v1/error-groups');
    expect(res.statusCode, res.body).toBe(200);
    const all = res.json() as { checkId: string; rawErrorMessage: string; id: string }[];
    expect(all.map((g) => [g.checkId, g.rawErrorMessage])).toEqual([
      [two, 'two fails'],
      [one, 'one times out'],
      [one, 'one fails'],
    ]);
    expect(res.body).not.toContain(secret);
    expect(
      (await call('GET', '/v1/error-groups?limit=1&page=2')).json().map((g: { id: string }) => g.id),
    ).toEqual([all[1]!.id]);
    // Each one reads on its own too.
    expect((await call('GET', `/v1/error-groups/${all[0]!.id}`)).json()).toEqual(all[0]);
    // Account B sees its own only.
    const theirsListed = (await call('GET', '/v1/error-groups', undefined, 'B')).json();
    expect(theirsListed.map((g: { rawErrorMessage: string }) => g.rawErrorMessage)).toEqual([secret]);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['page=0', 'page'],
      ['checkId=x', 'checkId'],
    ] as const) {
      const bad = await call('GET', `/v1/error-groups?${query}`);
      expect(bad.statusCode).toBe(400);
      expect(bad.json().attributes).toMatchObject({ field, in: 'querystring' });
    }
  });

  it("keep account B away from A's groups", async () => {
    const checkId = await newCheck();
    await stored(checkId, failing());
    const [group] = await groupsOf(checkId);
    expect((await call('GET', `/v1/error-groups/${group.id}`, undefined, 'B')).statusCode).toBe(404);
    expect(
      (await call('PATCH', `/v1/error-groups/${group.id}`, { archiveForEver: true }, 'B')).statusCode,
    ).toBe(404);
    expect((await call('GET', `/v1/error-groups/checks/${checkId}`, undefined, 'B')).statusCode).toBe(404);
    expect((await call('GET', `/v1/error-groups/${group.id}`)).json()).toEqual(group);
  });
});
