import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  hashApiKey,
  KEY_USE_RESOLUTION_MS,
  KeyUseRecorder,
} from '../../../src/service/platform/http/auth.js';
import { type TestService, testService } from '../../helpers/service.js';

// `/v1/api-keys` on a real service (in-memory SQLite): a created key authenticates at once and its raw key is
// answered once only; the listing never holds a key or its hash; a revoked key answers 401; the key of the
// request itself cannot be revoked (409); the embedded agent's key is neither listed nor revocable; a use is
// recorded in `lastUsedAt`, at most once a minute.

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, payload?: unknown) =>
  svc.app.inject({
    method,
    url,
    headers: bearer(key),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** The stored row of key `id`, hash included (for the assertions only). */
const stored = (id: string) =>
  svc.context.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('POST /v1/api-keys', () => {
  it('answers the raw key once, stores only its SHA-256, and the key authenticates at once', async () => {
    const res = await call('POST', '/v1/api-keys', svc.accountA.key, { name: '  CI deploy ' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'keyPrefix',
      'lastUsedAt',
      'name',
      'rawKey',
      'role',
    ]);
    expect(body.name).toBe('CI deploy');
    // The caller's role by default, and no end.
    expect(body.role).toBe('OWNER');
    expect(body.expiresAt).toBeNull();
    expect(body.rawKey).toMatch(/^op_[0-9a-f]{64}$/);
    expect(body.keyPrefix).toBe(body.rawKey.slice(0, 7));
    expect(body.lastUsedAt).toBeNull();

    const row = await stored(body.id);
    expect(row.key_hash).toBe(hashApiKey(body.rawKey));
    expect(JSON.stringify(row)).not.toContain(body.rawKey);

    const checks = await call('GET', '/v1/checks', body.rawKey);
    expect(checks.statusCode).toBe(200);
    // The key is of account A: B's x-service-account is refused.
    const other = await svc.app.inject({
      method: 'GET',
      url: '/v1/checks',
      headers: { ...bearer(body.rawKey), 'x-service-account': svc.accountB.id },
    });
    expect(other.statusCode).toBe(401);
  });

  it.each([
    ['no name', {}, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'name'],
    ['the embedded agent’s label', { name: 'embedded-agent' }, 'name'],
    ['an unknown field', { name: 'x', key: 'op_mine' }, 'key'],
  ])('refuses %s with 400 naming the field', async (_what, payload, field) => {
    const res = await call('POST', '/v1/api-keys', svc.accountA.key, payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_VALIDATION', field });
  });
});

describe('GET /v1/api-keys', () => {
  it('lists the account’s keys with their first characters, never a key or its hash, and not the embedded agent’s', async () => {
    // An account key labelled as the embedded agent's (what `outpost up` made for its agent): never listed.
    const agentKey = await createApiKey(svc.context.db, svc.accountA.id, undefined, 'embedded-agent');
    const made = (await call('POST', '/v1/api-keys', svc.accountA.key, { name: 'Grafana' })).json();
    const res = await call('GET', '/v1/api-keys', svc.accountA.key);
    expect(res.statusCode).toBe(200);
    const list = res.json() as { id: string; name: string | null; keyPrefix: string }[];
    expect(list.map((k) => k.name)).toContain('Grafana');
    expect(
      list.some((k) => k.name === null),
      'the first key of the account',
    ).toBe(true);
    expect(list.some((k) => k.name === 'embedded-agent')).toBe(false);
    for (const key of [svc.accountA.key, made.rawKey, agentKey]) {
      expect(res.body).not.toContain(key);
      expect(res.body).not.toContain(hashApiKey(key));
    }
    expect(res.body).not.toContain(hashApiKey(svc.accountA.key).slice(0, 16));
    for (const k of list)
      expect(Object.keys(k).sort()).toEqual([
        'createdAt',
        'expiresAt',
        'id',
        'keyPrefix',
        'lastUsedAt',
        'name',
        'role',
      ]);
    // Account B sees its own keys only.
    const b = (await call('GET', '/v1/api-keys', svc.accountB.key)).json() as { id: string }[];
    expect(b.some((k) => list.some((a) => a.id === k.id))).toBe(false);
    // The embedded agent's key cannot be revoked through the API: it does not exist there.
    const agentRow = await svc.context.db
      .selectFrom('api_keys')
      .select('id')
      .where('label', '=', 'embedded-agent')
      .executeTakeFirstOrThrow();
    expect((await call('DELETE', `/v1/api-keys/${agentRow.id}`, svc.accountA.key)).statusCode).toBe(404);
    expect((await call('GET', '/v1/checks', agentKey)).statusCode, 'the agent key still works').toBe(200);
  });
});

describe('DELETE /v1/api-keys/{id}', () => {
  it('revokes a key: it answers 401 at once, and the listing no longer has it', async () => {
    const made = (await call('POST', '/v1/api-keys', svc.accountA.key, { name: 'to revoke' })).json();
    expect((await call('GET', '/v1/checks', made.rawKey)).statusCode).toBe(200);
    const res = await call('DELETE', `/v1/api-keys/${made.id}`, svc.accountA.key);
    expect(res.statusCode, res.body).toBe(204);
    expect((await call('GET', '/v1/checks', made.rawKey)).statusCode).toBe(401);
    const list = (await call('GET', '/v1/api-keys', svc.accountA.key)).json() as { id: string }[];
    expect(list.some((k) => k.id === made.id)).toBe(false);
    expect((await call('DELETE', `/v1/api-keys/${made.id}`, svc.accountA.key)).statusCode).toBe(404);
  });

  it('refuses to revoke the key of the request itself with 409, and the key keeps working', async () => {
    const made = (await call('POST', '/v1/api-keys', svc.accountA.key, { name: 'self' })).json();
    const res = await call('DELETE', `/v1/api-keys/${made.id}`, made.rawKey);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_API_KEY_IN_USE', id: made.id });
    expect(res.json().message).toMatch(/another key/);
    expect((await call('GET', '/v1/checks', made.rawKey)).statusCode).toBe(200);
    // Another key of the account may revoke it.
    expect((await call('DELETE', `/v1/api-keys/${made.id}`, svc.accountA.key)).statusCode).toBe(204);
  });

  it('answers 404 for a key of another account, which keeps working', async () => {
    const made = (await call('POST', '/v1/api-keys', svc.accountB.key, { name: 'B’s' })).json();
    expect((await call('DELETE', `/v1/api-keys/${made.id}`, svc.accountA.key)).statusCode).toBe(404);
    expect((await call('GET', '/v1/checks', made.rawKey)).statusCode).toBe(200);
  });
});

describe('last use', () => {
  it('records a key’s use in lastUsedAt, written at most once a minute', async () => {
    const key = await createApiKey(svc.context.db, svc.accountA.id, undefined, 'usage');
    const row = await svc.context.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', hashApiKey(key))
      .executeTakeFirstOrThrow();
    expect((await stored(row.id)).last_used_at).toBeNull();

    const before = Date.now();
    expect((await call('GET', '/v1/checks', key)).statusCode).toBe(200);
    const first = (await stored(row.id)).last_used_at;
    expect(first).toBeGreaterThanOrEqual(before);
    const listed = (await call('GET', '/v1/api-keys', svc.accountA.key)).json() as {
      id: string;
      lastUsedAt: string | null;
    }[];
    expect(listed.find((k) => k.id === row.id)?.lastUsedAt).toBe(new Date(first!).toISOString());

    // Within the minute, further requests write nothing: an older time set by hand stays.
    await svc.context.db.updateTable('api_keys').set({ last_used_at: 1 }).where('id', '=', row.id).execute();
    for (let i = 0; i < 3; i++) expect((await call('GET', '/v1/checks', key)).statusCode).toBe(200);
    expect((await stored(row.id)).last_used_at).toBe(1);
    expect(KEY_USE_RESOLUTION_MS).toBe(60_000);
  });

  it('writes again once the minute has passed (KeyUseRecorder with its own clock)', async () => {
    const key = await createApiKey(svc.context.db, svc.accountA.id, undefined, 'clocked');
    const { id } = await svc.context.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', hashApiKey(key))
      .executeTakeFirstOrThrow();
    let now = 1_000_000;
    const recorder = new KeyUseRecorder(svc.context.db, () => now);
    const request = { log: svc.app.log } as never;
    await recorder.used(id, request);
    expect((await stored(id)).last_used_at).toBe(1_000_000);
    now += KEY_USE_RESOLUTION_MS - 1;
    await recorder.used(id, request);
    expect((await stored(id)).last_used_at, 'within the minute').toBe(1_000_000);
    now += 1;
    await recorder.used(id, request);
    expect((await stored(id)).last_used_at, 'a minute later').toBe(now);
  });
});
