import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TriggerQueries } from '../../../src/service/triggers/store.js';
import { tokenHash } from '../../../src/service/triggers/triggers.js';
import { expectBadField, icmpBody, type TestService, testService } from '../../helpers/service.js';

// Triggers (docs/api.md, "Triggers"): `/v1/triggers/checks/{checkId}` and `/v1/triggers/check-groups/{groupId}`
// make, read and delete a trigger; its keyless URL starts a run of the check (or of every activated check of
// the group) as "Run now" does: a check session and a queued job per run; a wrong token, another target's
// token, an unknown target and a deleted trigger all answer the same 404; a second call within 10 s answers
// 429; the token is stored as its SHA-256 and sealed, never in clear.

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const req: TestService['request'] = (...args) => svc.request(...args);

/** A keyless call of a trigger URL (its path: the service's address is the test's). */
const call = (method: 'GET' | 'POST', url: string) => svc.app.inject({ method, url: new URL(url).pathname });

async function check(over: Record<string, unknown> = {}): Promise<string> {
  const res = await req('POST', '/v1/checks/icmp', icmpBody({ activated: false, ...over }));
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function group(name: string): Promise<number> {
  const res = await req('POST', '/v1/check-groups', { name, activated: true, apiCheckDefaults: {} });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

/** Jobs queued for `checkId` with the session each belongs to. */
async function jobsOf(checkId: string) {
  return svc.context.db
    .selectFrom('jobs')
    .select(['id', 'check_session_id'])
    .where('check_id', '=', checkId)
    .execute();
}

describe('/v1/triggers/checks/{checkId}', () => {
  it('makes a trigger whose URL starts a run, reads it, and deletes it (URL then 404)', async () => {
    const checkId = await check();
    const made = await req('POST', `/v1/triggers/checks/${checkId}`);
    expect(made.statusCode, made.body).toBe(201);
    const trigger = made.json();
    expect(trigger).toEqual({
      id: expect.any(Number),
      checkId,
      token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      url: `http://localhost:3000/checks/${checkId}/trigger/${trigger.token}`,
      called_at: null,
      created_at: expect.any(String),
      updated_at: null,
    });
    // A second POST answers the same trigger; GET too.
    const again = await req('POST', `/v1/triggers/checks/${checkId}`);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(trigger);
    expect((await req('GET', `/v1/triggers/checks/${checkId}`)).json()).toEqual(trigger);

    // The URL, without a key, starts one session and queues its job (the check is not even activated).
    expect(await jobsOf(checkId)).toEqual([]);
    const res = await call('POST', trigger.url);
    expect(res.statusCode, res.body).toBe(200);
    const { checkSessionIds } = res.json();
    expect(checkSessionIds).toHaveLength(1);
    const jobs = await jobsOf(checkId);
    expect(jobs.map((j) => j.check_session_id)).toEqual(checkSessionIds);
    const session = await req('GET', `/v1/check-sessions/${checkSessionIds[0]}`);
    expect(session.json()).toMatchObject({ checkId, triggerSource: 'TRIGGER_API', status: 'PROGRESS' });
    expect((await req('GET', `/v1/triggers/checks/${checkId}`)).json().called_at).toEqual(expect.any(String));

    // A second call within 10 s: 429 with Retry-After, and no new job.
    const limited = await call('GET', trigger.url);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await jobsOf(checkId)).toHaveLength(1);

    expect((await req('DELETE', `/v1/triggers/checks/${checkId}`)).statusCode).toBe(204);
    expect((await call('GET', trigger.url)).statusCode).toBe(404);
    expect((await req('GET', `/v1/triggers/checks/${checkId}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/triggers/checks/${checkId}`)).statusCode).toBe(404);
    // A new trigger has a new token: the old URL stays dead.
    const renewed = (await req('POST', `/v1/triggers/checks/${checkId}`)).json();
    expect(renewed.token).not.toBe(trigger.token);
    expect((await call('GET', trigger.url)).statusCode).toBe(404);
  });

  it('answers a wrong token, another check and an unknown check with the same 404', async () => {
    const a = await check({ name: 'a' });
    const b = await check({ name: 'b' });
    const token = (await req('POST', `/v1/triggers/checks/${a}`)).json().token as string;
    await req('POST', `/v1/triggers/checks/${b}`);
    // The last character changed (to A, or to B when it is an A: a token ends in A once in 64).
    const wrong = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    const wrongToken = await call('GET', `http://x/checks/${a}/trigger/${wrong}`);
    const otherCheck = await call('GET', `http://x/checks/${b}/trigger/${token}`);
    const unknownCheck = await call(
      'GET',
      `http://x/checks/00000000-0000-4000-8000-000000000000/trigger/${token}`,
    );
    for (const res of [wrongToken, otherCheck, unknownCheck]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().attributes.code).toBe('OUTPOST_ERR_NOT_FOUND');
      expect(res.body).not.toContain(token);
    }
    expect(wrongToken.body).toBe((await call('GET', `http://x/checks/${a}/trigger/nope`)).body);
    expect(await jobsOf(a)).toEqual([]);
    expect(await jobsOf(b)).toEqual([]);
    // The right one still works.
    expect((await call('GET', `http://x/checks/${a}/trigger/${token}`)).statusCode).toBe(200);
  });

  it("keeps triggers to their account, and 404s for a check the account doesn't have", async () => {
    const checkId = await check();
    expect((await req('POST', `/v1/triggers/checks/${checkId}`, undefined, 'B')).statusCode).toBe(404);
    await req('POST', `/v1/triggers/checks/${checkId}`);
    expect((await req('GET', `/v1/triggers/checks/${checkId}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/triggers/checks/${checkId}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', `/v1/triggers/checks/${checkId}`)).statusCode).toBe(200);
    // A body is ignored: a client cannot choose the token.
    const sent = await req('POST', `/v1/triggers/checks/${checkId}`, { token: 'mine' });
    expect(sent.statusCode).toBe(200);
    expect(sent.json().token).not.toBe('mine');
  });

  it('stores the token only as its SHA-256 and sealed, and forgets the trigger of a deleted check', async () => {
    const checkId = await check();
    const { token, url } = (await req('POST', `/v1/triggers/checks/${checkId}`)).json();
    const rows = await svc.context.db
      .selectFrom('triggers')
      .selectAll()
      .where('target_id', '=', checkId)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(tokenHash(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    expect((await req('DELETE', `/v1/checks/${checkId}`)).statusCode).toBe(204);
    expect((await call('GET', url)).statusCode).toBe(404);
    expect((await req('GET', `/v1/triggers/checks/${checkId}`)).statusCode).toBe(404);
    // Retention's task removes the row of the deleted check (and keeps the others).
    const others = (await svc.context.db.selectFrom('triggers').select('id').execute()).length;
    expect(await new TriggerQueries(svc.context.db).deleteOrphans(100)).toBe(1);
    expect((await svc.context.db.selectFrom('triggers').select('id').execute()).length).toBe(others - 1);
  });
});

describe('/v1/triggers/check-groups/{groupId}', () => {
  it("starts a run of every activated check of the group, none of another group's", async () => {
    const groupId = await group('payments');
    const other = await group('other');
    const on1 = await check({ name: 'on1', groupId, activated: true });
    const on2 = await check({ name: 'on2', groupId, activated: true });
    const off = await check({ name: 'off', groupId, activated: false });
    const elsewhere = await check({ name: 'elsewhere', groupId: other, activated: true });
    const made = await req('POST', `/v1/triggers/check-groups/${groupId}`);
    expect(made.statusCode, made.body).toBe(201);
    const trigger = made.json();
    expect(trigger).toMatchObject({
      groupId,
      url: `http://localhost:3000/check-groups/${groupId}/trigger/${trigger.token}`,
    });
    expect((await req('GET', `/v1/triggers/check-groups/${groupId}`)).json()).toEqual(trigger);

    const sessionsBefore = async (id: string) =>
      (await svc.context.db.selectFrom('check_sessions').select('id').where('check_id', '=', id).execute())
        .length;
    const before = { off: await sessionsBefore(off), elsewhere: await sessionsBefore(elsewhere) };
    const res = await call('GET', trigger.url);
    expect(res.statusCode, res.body).toBe(200);
    const ids: string[] = res.json().checkSessionIds;
    expect(ids).toHaveLength(2);
    const sessions = await svc.context.db
      .selectFrom('check_sessions')
      .select(['id', 'check_id', 'trigger_source'])
      .where('id', 'in', ids)
      .execute();
    expect(sessions.map((s) => s.check_id).sort()).toEqual([on1, on2].sort());
    expect(new Set(sessions.map((s) => s.trigger_source))).toEqual(new Set(['TRIGGER_API']));
    for (const s of sessions)
      expect((await jobsOf(s.check_id)).map((j) => j.check_session_id)).toContain(s.id);
    expect(await sessionsBefore(off)).toBe(before.off);
    expect(await sessionsBefore(elsewhere)).toBe(before.elsewhere);

    // The group's token opens no check URL, and no other group's.
    const token = trigger.token as string;
    expect((await call('GET', `http://x/checks/${on1}/trigger/${token}`)).statusCode).toBe(404);
    expect((await call('GET', `http://x/check-groups/${other}/trigger/${token}`)).statusCode).toBe(404);
    expect((await call('GET', `http://x/check-groups/x${groupId}/trigger/${token}`)).statusCode).toBe(404);

    expect((await req('DELETE', `/v1/triggers/check-groups/${groupId}`)).statusCode).toBe(204);
    expect((await call('POST', trigger.url)).statusCode).toBe(404);
    expect((await req('GET', `/v1/triggers/check-groups/${groupId}`)).statusCode).toBe(404);
  });

  it('refuses a bad group id naming it, and 404s an unknown group', async () => {
    expectBadField(await req('POST', '/v1/triggers/check-groups/abc'), 'groupId', 'params');
    expect((await req('POST', '/v1/triggers/check-groups/999999')).statusCode).toBe(404);
    expect((await req('GET', '/v1/triggers/check-groups/999999')).statusCode).toBe(404);
  });
});
