import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../../src/service/platform/http/auth.js';
import { type TestService, testService } from '../../helpers/service.js';

describe('accounts and the caller (docs/api.md, "Accounts")', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await testService();
  });
  afterAll(() => svc.close());

  const account = () => ({
    id: svc.accountA.id,
    name: 'A',
    runtimeId: '2026.04',
    plan: 'outpost',
    planDisplayName: 'Outpost (self-hosted)',
    settings: {},
    features: [],
  });

  it("answers the key's own account in the hosted shape, under /v1 and /next", async () => {
    for (const path of [
      '/v1/accounts/me',
      `/v1/accounts/${svc.accountA.id}`,
      `/next/accounts/${svc.accountA.id}`,
    ]) {
      const res = await svc.request('GET', path);
      expect(res.statusCode, path).toBe(200);
      expect(res.json(), path).toEqual(account());
    }
    for (const path of ['/v1/accounts', '/next/accounts']) {
      const res = await svc.request('GET', path);
      expect(res.json(), path).toEqual([account()]);
    }
    const b = await svc.request('GET', '/v1/accounts/me', undefined, 'B');
    expect(b.json()).toMatchObject({ id: svc.accountB.id, name: 'B' });
  });

  it('another account is a 404, as if it did not exist; no key is a 401', async () => {
    for (const path of [
      `/v1/accounts/${svc.accountB.id}`,
      `/next/accounts/${svc.accountB.id}`,
      '/next/accounts/nope',
    ]) {
      const res = await svc.request('GET', path);
      expect(res.statusCode, path).toBe(404);
      expect(res.body).not.toContain('"name":"B"');
    }
    const anonymous = await svc.app.inject({ method: 'GET', url: '/next/users/me' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('names the caller after its API key: the label, else the prefix; never the key', async () => {
    const me = await svc.request('GET', '/next/users/me');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({
      id: expect.any(String),
      name: `API key ${svc.accountA.key.slice(0, 7)}…`,
      email: null,
    });
    expect(me.body).not.toContain(svc.accountA.key.slice(7, 20));
    const labelled = await createApiKey(svc.context.db, svc.accountA.id, undefined, 'deploy bot');
    const res = await svc.app.inject({
      method: 'GET',
      url: '/next/users/me',
      headers: { authorization: `Bearer ${labelled}` },
    });
    expect(res.json()).toMatchObject({ name: 'deploy bot', email: null });
    expect(res.json().id).not.toBe(me.json().id);
  });

  it('lists no entitlement: Outpost limits no feature, location or quantity', async () => {
    const res = await svc.request('GET', '/v1/accounts/me/entitlements');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      plan: 'outpost',
      planDisplayName: 'Outpost (self-hosted)',
      locations: { all: [] },
      entitlements: [],
    });
  });
});
