import Fastify, { type FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthFailureLimits,
  authHook,
  clientBucketOf,
  createAccount,
  createApiKey,
  generateApiKey,
} from '../../../../src/service/platform/http/auth.js';
import { installErrorHandling } from '../../../../src/service/platform/http/errors.js';
import type { Database } from '../../../../src/service/platform/store/database.js';
import { openSqliteDatabase } from '../../../../src/service/platform/store/database.js';
import { type TestService, testService } from '../../../helpers/service.js';

/** A wrong key of the account-key shape: never stored, so never valid. */
const wrongKey = () => generateApiKey();

describe('failed authentication through the real service (default limits)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await testService();
  });
  afterAll(async () => svc.close());

  it('answers most of 3,000 wrong keys from one client with 429, retry-after and the spec error body', async () => {
    const statuses = new Map<number, number>();
    let limited: { headers: Record<string, unknown>; body: unknown } | null = null;
    for (let i = 0; i < 3000; i++) {
      const res = await svc.app.inject({
        method: 'GET',
        url: '/v1/checks',
        headers: { authorization: `Bearer ${wrongKey()}` },
      });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode === 429) limited ??= { headers: res.headers, body: res.json() };
    }
    expect(statuses.get(429) ?? 0).toBeGreaterThanOrEqual(2900);
    expect((statuses.get(401) ?? 0) + (statuses.get(429) ?? 0)).toBe(3000);
    expect(limited).not.toBeNull();
    const retryAfter = Number(limited!.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited!.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: expect.stringContaining('too many failed authentication attempts'),
      attributes: { code: 'OUTPOST_ERR_AUTH_RATE_LIMITED', scope: 'client', retryAfterSeconds: retryAfter },
    });

    // The same client with a valid key is not slowed at all.
    for (let i = 0; i < 50; i++) {
      const ok = await svc.request('GET', '/v1/checks');
      expect(ok.statusCode).toBe(200);
    }
  });

  it('documents the 429 answer and its retry-after header on authenticated operations', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, method] of [
      ['/v1/checks', 'get'],
      ['/v1/agent/jobs/claim', 'post'],
      ['/v1/check-results/{checkId}', 'get'],
    ] as const) {
      const limited = doc.paths[path][method].responses['429'];
      expect(limited.headers['retry-after']).toBeDefined();
      expect(limited.content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
    }
  });

  it('limits wrong agent keys (pl_ and account keys on /v1/agent/*) from another client too', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/v1/agent/jobs/claim',
        remoteAddress: '127.0.0.9',
        headers: {
          authorization: `Bearer ${i % 2 === 0 ? `pl_${wrongKey().slice(3)}` : wrongKey()}`,
          'x-agent-id': '00000000-0000-4000-8000-000000000001',
        },
        payload: {},
      });
      statuses.push(res.statusCode);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(150);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  });

  it('counts malformed and missing Authorization headers as failures', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await svc.app.inject({
        method: 'GET',
        url: '/v1/checks',
        remoteAddress: '127.0.0.10',
        headers: i % 2 === 0 ? { authorization: 'Basic abc' } : {},
      });
      statuses.push(res.statusCode);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(70);
  });
});

/** A real fastify server with the real auth hook under small limits, and one route per scope. */
async function limitedApp(db: Kysely<Database>, limits: AuthFailureLimits): Promise<FastifyInstance> {
  const app = Fastify();
  installErrorHandling(app);
  await app.register(async (v1) => {
    v1.addHook('onRequest', authHook(db, limits));
    v1.get('/v1/whoami', async (request) => ({ accountId: request.accountId }));
    v1.post('/v1/agent/ping', async (request) => ({ accountId: request.accountId }));
  });
  return app;
}

describe('failed authentication limits (short window, real HTTP on loopback)', () => {
  let db: Kysely<Database>;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    db = await openSqliteDatabase(':memory:');
    accountId = await createAccount(db, 'A');
    key = await createApiKey(db, accountId);
  });
  afterAll(async () => db.destroy());

  it('answers 429 after N failures and 401 again once the window has passed', async () => {
    const app = await limitedApp(db, { perClientFailures: 5, perKeyPrefixFailures: 1000, windowMs: 1500 });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const call = (k: string) => fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${k}` } });
      const first: number[] = [];
      for (let i = 0; i < 8; i++) first.push((await call(wrongKey())).status);
      expect(first).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      const limited = await call(wrongKey());
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^[12]$/);
      // A valid key from the same address is served while the address is limited.
      const ok = await call(key);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ accountId });
      // After the window (and block) the count starts again.
      await expect
        .poll(async () => (await call(wrongKey())).status, { timeout: 6000, interval: 250 })
        .toBe(401);
    } finally {
      await app.close();
    }
  });

  it('counts only failures: many valid requests do not bring a client closer to the limit', async () => {
    const app = await limitedApp(db, { perClientFailures: 3, perKeyPrefixFailures: 1000, windowMs: 60_000 });
    const inject = (k: string) =>
      app.inject({
        method: 'GET',
        url: '/v1/whoami',
        remoteAddress: '10.1.0.1',
        headers: { authorization: `Bearer ${k}` },
      });
    for (let i = 0; i < 100; i++) expect((await inject(key)).statusCode).toBe(200);
    expect((await inject(wrongKey())).statusCode).toBe(401);
    expect((await inject(wrongKey())).statusCode).toBe(401);
    expect((await inject(wrongKey())).statusCode).toBe(401);
    expect((await inject(wrongKey())).statusCode).toBe(429);
    await app.close();
  });

  it('keeps clients apart, but one IPv6 /64 is one client', async () => {
    const app = await limitedApp(db, { perClientFailures: 3, perKeyPrefixFailures: 1000, windowMs: 60_000 });
    const inject = (remoteAddress: string) =>
      app.inject({
        method: 'GET',
        url: '/v1/whoami',
        remoteAddress,
        headers: { authorization: `Bearer ${wrongKey()}` },
      });
    for (let i = 0; i < 3; i++) expect((await inject('10.2.0.1')).statusCode).toBe(401);
    expect((await inject('10.2.0.1')).statusCode).toBe(429);
    // Another IPv4 client still gets its own count.
    expect((await inject('10.2.0.2')).statusCode).toBe(401);
    // Rotating addresses inside one /64 does not reset the count.
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) statuses.push((await inject(`2001:db8:1:2::${i.toString(16)}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    expect((await inject('2001:db8:1:3::1')).statusCode).toBe(401);
    await app.close();
  });

  it('limits all clients together per key kind, so a guesser spread over many addresses is stopped', async () => {
    const app = await limitedApp(db, { perClientFailures: 1000, perKeyPrefixFailures: 40, windowMs: 60_000 });
    const statuses: number[] = [];
    let body: unknown;
    for (let i = 0; i < 100; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/agent/ping',
        remoteAddress: `10.3.${Math.floor(i / 250)}.${i % 250}`,
        headers: { authorization: `Bearer pl_${wrongKey().slice(3)}` },
      });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) body ??= res.json();
    }
    expect(statuses.slice(0, 40).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(40).every((s) => s === 429)).toBe(true);
    expect(body).toMatchObject({ statusCode: 429, attributes: { scope: 'keyPrefix' } });
    // Another key kind, and valid keys, are unaffected.
    const other = await app.inject({
      method: 'GET',
      url: '/v1/whoami',
      remoteAddress: '10.4.0.1',
      headers: { authorization: `Bearer ${wrongKey()}` },
    });
    expect(other.statusCode).toBe(401);
    const ok = await app.inject({
      method: 'GET',
      url: '/v1/whoami',
      remoteAddress: '10.4.0.1',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(ok.statusCode).toBe(200);
    await app.close();
  });
});

describe('clientBucketOf', () => {
  it('keeps IPv4 (also IPv4-mapped) and cuts IPv6 to its /64', () => {
    expect(clientBucketOf('192.0.2.7')).toBe('192.0.2.7');
    expect(clientBucketOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientBucketOf('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64');
    expect(clientBucketOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientBucketOf('::1')).toBe('0:0:0:0::/64');
    expect(clientBucketOf('2001:0db8:0000:0001:1:2:3:4')).toBe('2001:db8:0:1::/64');
  });
});
