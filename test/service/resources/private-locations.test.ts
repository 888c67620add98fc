import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { hashApiKey } from '../../../src/service/platform/http/auth.js';
import { expectBadField, icmpBody, testService, type TestService, resultFor } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Account = 'A' | 'B';
const req: TestService['request'] = (...args) => svc.request(...args);

let slugCounter = 0;
const nextSlug = () => `lab-${++slugCounter}`;

async function createLocation(over: Record<string, unknown> = {}, account: Account = 'A') {
  const res = await req(
    'POST',
    '/v1/private-locations',
    { name: 'Lab', slugName: nextSlug(), ...over },
    account,
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const claimAs = (key: string, agentId: string = randomUUID()) =>
  svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/claim',
    headers: { authorization: `Bearer ${key}`, 'x-agent-id': agentId },
    payload: {
      agentVersion: '0.0.0-test',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['ICMP'],
      runtimes: [],
      freeSlots: { uptime: 10, main: 10 },
      waitSeconds: 0,
    },
  });

async function trigger(over: Record<string, unknown>): Promise<{ checkId: string; sessionId: string }> {
  const check = await req('POST', '/v1/checks/icmp', icmpBody({ activated: false, ...over }));
  expect(check.statusCode, check.body).toBe(201);
  const res = await req('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json().id] } });
  expect(res.statusCode).toBe(201);
  return { checkId: check.json().id, sessionId: res.json().sessions[0].checkSessionId };
}

describe('POST /v1/private-locations', () => {
  it('creates a location and answers its first key in clear once', async () => {
    const res = await req('POST', '/v1/private-locations', { name: 'Basement', slugName: 'basement' });
    expect(res.statusCode).toBe(201);
    const location = res.json();
    expect(location).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Basement',
      slugName: 'basement',
      icon: 'location',
      keys: [
        {
          id: expect.any(String),
          rawKey: expect.stringMatching(/^pl_[0-9a-f]{32}$/),
          maskedKey: expect.any(String),
          created_at: expect.any(String),
          updated_at: null,
        },
      ],
      agentCount: 0,
      lastSeen: null,
      embedded: false,
      created_at: expect.any(String),
      updated_at: null,
    });
    const key = location.keys[0];
    expect(key.maskedKey).toBe(`pl_…${key.rawKey.slice(-4)}`);

    const shown = await req('GET', `/v1/private-locations/${location.id}`);
    expect(shown.body).not.toContain(key.rawKey);
    const { rawKey: _clear, ...masked } = key;
    expect(shown.json()).toEqual({ ...location, keys: [masked] });
    const stored = await svc.context.db
      .selectFrom('private_location_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(stored.key_hash).toBe(hashApiKey(key.rawKey));
    expect(JSON.stringify(stored)).not.toContain(key.rawKey);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing name', { name: undefined }, 'name'],
    ['missing slugName', { slugName: undefined }, 'slugName'],
    ['name of 256', { name: 'n'.repeat(256) }, 'name'],
    ['uppercase slug', { slugName: 'Lab' }, 'slugName'],
    ['slug with underscore', { slugName: 'my_lab' }, 'slugName'],
    ['slug starting with a hyphen', { slugName: '-lab' }, 'slugName'],
    ['slug of 64', { slugName: 's'.repeat(64) }, 'slugName'],
    ['public location name as slug', { slugName: 'us-east-1' }, 'slugName'],
    ['bad icon', { icon: 'Bad Icon' }, 'icon'],
    ['unknown field', { region: 'x' }, 'region'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field and writes nothing', async (_name, over, field) => {
    const before = (await svc.context.db.selectFrom('private_locations').select('id').execute()).length;
    expectBadField(
      await req('POST', '/v1/private-locations', { name: 'n', slugName: 'fresh-slug', ...over }),
      field,
    );
    expect((await svc.context.db.selectFrom('private_locations').select('id').execute()).length).toBe(before);
  });

  it('accepts a 63-character slug and a 255-character name, and answers 409 for a slug taken in the account', async () => {
    const slug = `a${'-'.repeat(61)}z`;
    const location = await createLocation({ slugName: slug, name: 'n'.repeat(255), icon: 'pirate-ship' });
    expect(location).toMatchObject({ slugName: slug, icon: 'pirate-ship' });
    const dup = await req('POST', '/v1/private-locations', { name: 'again', slugName: slug });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: expect.stringContaining(slug),
      attributes: { field: 'slugName', in: 'body', rule: 'unique', code: 'OUTPOST_ERR_SLUG_TAKEN' },
    });
    expect((await req('POST', '/v1/private-locations', { name: 'B', slugName: slug }, 'B')).statusCode).toBe(
      201,
    );
  });
});

describe('GET, PUT and DELETE /v1/private-locations/{id}', () => {
  it('lists the account’s locations with masked keys only', async () => {
    const location = await createLocation();
    const res = await req('GET', '/v1/private-locations');
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(location.keys[0].rawKey);
    const listed = res.json().find((l: { id: string }) => l.id === location.id);
    expect(listed.keys).toEqual([
      {
        id: location.keys[0].id,
        maskedKey: location.keys[0].maskedKey,
        created_at: expect.any(String),
        updated_at: null,
      },
    ]);
    expectBadField(await req('GET', '/v1/private-locations?limit=5'), 'limit', 'querystring');
  });

  it('renames and changes the icon, keeps slugName, and refuses to change it', async () => {
    const location = await createLocation();
    const res = await req('PUT', `/v1/private-locations/${location.id}`, {
      name: 'Renamed',
      icon: 'home',
      slugName: location.slugName,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: location.id,
      name: 'Renamed',
      icon: 'home',
      slugName: location.slugName,
      updated_at: expect.any(String),
    });
    expectBadField(
      await req('PUT', `/v1/private-locations/${location.id}`, { slugName: 'other-slug' }),
      'slugName',
    );
    expectBadField(await req('PUT', `/v1/private-locations/${location.id}`, { name: '' }), 'name');
    expect((await req('GET', `/v1/private-locations/${location.id}`)).json().name).toBe('Renamed');
    expect((await req('PUT', `/v1/private-locations/${randomUUID()}`, { name: 'x' })).statusCode).toBe(404);
  });

  it('deletes (204); its keys stop working at once; the slug is free again', async () => {
    const location = await createLocation();
    const key = location.keys[0].rawKey;
    expect((await claimAs(key)).statusCode).toBe(200);
    expect((await req('DELETE', `/v1/private-locations/${location.id}`)).statusCode).toBe(204);
    expect((await req('GET', `/v1/private-locations/${location.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/private-locations/${location.id}`)).statusCode).toBe(404);
    const denied = await claimAs(key);
    expect(denied.statusCode).toBe(401);
    expect(denied.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    expect(
      (await req('POST', '/v1/private-locations', { name: 'again', slugName: location.slugName })).statusCode,
    ).toBe(201);
  });
});

describe('keys', () => {
  it('holds at most two keys; rotation keeps the agent working without a gap', async () => {
    const location = await createLocation();
    const oldKey = location.keys[0];
    const added = await req('POST', `/v1/private-locations/${location.id}/keys`);
    expect(added.statusCode).toBe(201);
    const newKey = added.json();
    expect(newKey).toEqual({
      id: expect.any(String),
      rawKey: expect.stringMatching(/^pl_[0-9a-f]{32}$/),
      maskedKey: `pl_…${newKey.rawKey.slice(-4)}`,
      created_at: expect.any(String),
      updated_at: null,
    });
    const third = await req('POST', `/v1/private-locations/${location.id}/keys`);
    expect(third.statusCode).toBe(409);
    expect(third.json()).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      attributes: { code: 'OUTPOST_ERR_TOO_MANY_KEYS' },
    });

    expect((await claimAs(oldKey.rawKey)).statusCode).toBe(200);
    expect((await claimAs(newKey.rawKey)).statusCode).toBe(200);
    expect((await req('DELETE', `/v1/private-locations/${location.id}/keys/${oldKey.id}`)).statusCode).toBe(
      204,
    );
    expect((await claimAs(oldKey.rawKey)).statusCode).toBe(401);
    expect((await claimAs(newKey.rawKey)).statusCode).toBe(200);
    expect(
      (await req('GET', `/v1/private-locations/${location.id}`)).json().keys.map((k: { id: string }) => k.id),
    ).toEqual([newKey.id]);
    expect((await req('POST', `/v1/private-locations/${location.id}/keys`)).statusCode).toBe(201);
  });

  it('gives 404 for an unknown key, a key of another location, and an unknown location', async () => {
    const one = await createLocation();
    const two = await createLocation();
    expect((await req('DELETE', `/v1/private-locations/${one.id}/keys/${randomUUID()}`)).statusCode).toBe(
      404,
    );
    expect((await req('DELETE', `/v1/private-locations/${one.id}/keys/${two.keys[0].id}`)).statusCode).toBe(
      404,
    );
    expect((await req('POST', `/v1/private-locations/${randomUUID()}/keys`)).statusCode).toBe(404);
    expect((await claimAs(two.keys[0].rawKey)).statusCode).toBe(200);
  });
});

describe('agent authentication with a private-location key', () => {
  it('is valid on /v1/agent/* only', async () => {
    const { keys } = await createLocation();
    const headers = { authorization: `Bearer ${keys[0].rawKey}` };
    for (const url of ['/v1/checks', '/v1/private-locations', '/v1/check-groups', '/v1/alert-channels']) {
      const res = await svc.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode, url).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized', attributes: {} });
    }
    const wrongAccount = await svc.app.inject({
      method: 'POST',
      url: '/v1/agent/jobs/claim',
      headers: { ...headers, 'x-agent-id': randomUUID(), 'x-service-account': svc.accountB.id },
      payload: {},
    });
    expect(wrongAccount.statusCode).toBe(401);
    expect((await claimAs(`pl_${'0'.repeat(32)}`)).statusCode).toBe(401);
  });

  it('claims only jobs queued for its location; an account key claims data-center jobs only, never a private location’s', async () => {
    const location = await createLocation();
    const slug = location.slugName;
    const other = await createLocation();
    const mine = await trigger({ privateLocations: [slug] });
    const elsewhere = await trigger({ locations: ['us-east-1'] });
    const otherLocation = await trigger({ privateLocations: [other.slugName] });

    const agentId = randomUUID();
    const res = await claimAs(location.keys[0].rawKey, agentId);
    expect(res.statusCode).toBe(200);
    const jobs = res.json().jobs as Job[];
    expect(jobs.map((j) => [j.check.id, j.runLocation])).toEqual([[mine.checkId, slug]]);
    expect((await claimAs(location.keys[0].rawKey)).json().jobs).toEqual([]);

    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${jobs[0]!.jobId}/result`,
      headers: { authorization: `Bearer ${location.keys[0].rawKey}`, 'x-agent-id': agentId },
      payload: resultFor(jobs[0]!),
    });
    expect(posted.statusCode).toBe(200);
    expect((await req('GET', `/v1/check-sessions/${mine.sessionId}`)).json()).toMatchObject({
      status: 'PASSED',
      runLocations: [slug],
    });

    const rest = (await claimAs(svc.accountA.key)).json().jobs as Job[];
    expect(rest.map((j) => j.check.id)).toEqual([elsewhere.checkId]);
    // The other location's job waits for an agent holding that location's key.
    const theirs = (await claimAs(other.keys[0].rawKey)).json().jobs as Job[];
    expect(theirs.map((j) => j.check.id)).toEqual([otherLocation.checkId]);
  });

  it('records the agent against its location: agentCount and lastSeen', async () => {
    const location = await createLocation();
    const before = Date.now();
    await claimAs(location.keys[0].rawKey);
    await claimAs(location.keys[0].rawKey);
    const shown = (await req('GET', `/v1/private-locations/${location.id}`)).json();
    expect(shown.agentCount).toBe(2);
    expect(Date.parse(shown.lastSeen)).toBeGreaterThanOrEqual(before);
    await svc.context.db
      .updateTable('agents')
      .set({ last_seen_at: before - 121_000 })
      .where('location_id', '=', location.id)
      .execute();
    const stale = (await req('GET', `/v1/private-locations/${location.id}`)).json();
    expect(stale.agentCount).toBe(0);
    expect(stale.lastSeen).toBe(new Date(before - 121_000).toISOString());
  });
});

describe('two accounts', () => {
  it('never shows, changes or deletes another account’s location or keys (404)', async () => {
    const location = await createLocation({ name: 'A-only-location' });
    const keyId = location.keys[0].id;
    expect((await req('GET', `/v1/private-locations/${location.id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', '/v1/private-locations', undefined, 'B')).body).not.toContain('A-only-location');
    expect(
      (await req('PUT', `/v1/private-locations/${location.id}`, { name: 'stolen' }, 'B')).statusCode,
    ).toBe(404);
    expect((await req('POST', `/v1/private-locations/${location.id}/keys`, undefined, 'B')).statusCode).toBe(
      404,
    );
    expect(
      (await req('DELETE', `/v1/private-locations/${location.id}/keys/${keyId}`, undefined, 'B')).statusCode,
    ).toBe(404);
    expect((await req('DELETE', `/v1/private-locations/${location.id}`, undefined, 'B')).statusCode).toBe(
      404,
    );
    const shown = (await req('GET', `/v1/private-locations/${location.id}`)).json();
    expect(shown).toMatchObject({ name: 'A-only-location', keys: [{ id: keyId }] });
  });

  it('a key of account B’s location never claims account A’s jobs', async () => {
    const slug = nextSlug();
    // Both accounts have a location with the same slug; A's job is queued under it.
    await createLocation({ slugName: slug }, 'A');
    const ofB = await createLocation({ slugName: slug }, 'B');
    await trigger({ privateLocations: [slug] });
    expect((await claimAs(ofB.keys[0].rawKey)).json().jobs).toEqual([]);
  });
});
