import { createHash, createHmac, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { build, type Service } from '../../../../src/service/app.js';
import { createAccount, createApiKey, generateApiKey } from '../../../../src/service/platform/http/auth.js';
import { type Database, openSqliteDatabase } from '../../../../src/service/platform/store/database.js';
import { retentionTasks } from '../../../../src/service/modules.js';
import { RetentionWorker } from '../../../../src/service/platform/store/retention.js';
import { SecretBox, secretBoxOf } from '../../../../src/service/platform/store/secret-box.js';
import { expectNoSecret } from '../../../helpers/secrets.js';
import {
  apiBody,
  claimJobs,
  createCheck,
  icmpBody,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../../helpers/service.js';

// Issue 13, part A: web-app sessions (POST/GET/DELETE /auth/session), the session cookie on /v1 with its
// CSRF token and Origin check, and what ends a session.

const DAY = 86_400_000;

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

/** POST /auth/session with `apiKey` as JSON (extra headers on top). */
function signIn(
  s: Service,
  apiKey: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return s.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ apiKey }),
  });
}

/** The `Set-Cookie` header of the session cookie in `res` (one cookie expected). */
function sessionSetCookie(res: LightMyRequestResponse): string {
  const all = res.headers['set-cookie'];
  const list = Array.isArray(all) ? all : all === undefined ? [] : [all];
  const found = list.filter((c) => c.startsWith('outpost_session='));
  expect(found, JSON.stringify(list)).toHaveLength(1);
  return found[0]!;
}

/** The `Cookie` header a browser sends back after `res` set the session cookie. */
function cookieHeader(res: LightMyRequestResponse): string {
  return sessionSetCookie(res).split(';')[0]!;
}

/** Signs in as account A and answers the Cookie header and the CSRF token. */
async function signedIn(
  s: TestService,
): Promise<{ cookie: string; csrf: string; body: Record<string, string> }> {
  const res = await signIn(s, s.accountA.key);
  expect(res.statusCode, res.body).toBe(200);
  return { cookie: cookieHeader(res), csrf: res.json().csrfToken, body: res.json() };
}

function withCookie(
  s: Service,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD',
  url: string,
  cookie: string,
  headers: Record<string, string> = {},
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return s.app.inject({
    method,
    url,
    headers: { cookie, ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

async function checkCount(s: TestService): Promise<number> {
  const res = await s.request('GET', '/v1/checks');
  expect(res.statusCode).toBe(200);
  return (res.json() as unknown[]).length;
}

describe('signing in', () => {
  it('answers the session and a signed, HttpOnly, SameSite=Strict cookie; stores only the id’s hash', async () => {
    svc = await testService();
    const userAgent = `Mozilla/5.0 ${'x'.repeat(300)}`;
    const before = Date.now();
    const res = await signIn(svc, svc.accountA.key, { 'user-agent': userAgent });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toEqual({
      accountId: svc.accountA.id,
      accountName: 'A',
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.any(String),
      keyPrefix: svc.accountA.key.slice(0, 7),
      user: null,
      role: 'OWNER',
    });
    const expiresAt = Date.parse(body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * DAY);

    const setCookie = sessionSetCookie(res);
    const attributes = setCookie.split(';').map((a) => a.trim());
    expect(attributes).toEqual(
      expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/', 'Max-Age=2592000']),
    );
    // Plain http and an http app URL: no Secure.
    expect(attributes).not.toContain('Secure');
    // <id>.<HMAC signature>, URL-encoded.
    const value = decodeURIComponent(setCookie.slice('outpost_session='.length).split(';')[0]!);
    const [id, signature] = value.split('.');
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signature).toMatch(/^[A-Za-z0-9+/]{43}$/);

    const rows = await svc.context.db.selectFrom('web_sessions').selectAll().execute();
    expect(rows).toEqual([
      {
        id_hash: createHash('sha256').update(id!).digest('hex'),
        account_id: svc.accountA.id,
        api_key_id: expect.any(String),
        user_id: null,
        created_at: expect.any(Number),
        last_seen_at: expect.any(Number),
        expires_at: expiresAt,
        user_agent: userAgent.slice(0, 200),
      },
    ]);
    const key = await svc.context.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', svc.accountA.id)
      .executeTakeFirstOrThrow();
    expect(rows[0]!.api_key_id).toBe(key.id);
    expect(JSON.stringify(rows)).not.toContain(id);
    // A client's x-forwarded-proto is not believed (no trusted proxy is configured).
    const forwarded = await signIn(svc, svc.accountA.key, { 'x-forwarded-proto': 'https' });
    expect(forwarded.statusCode).toBe(200);
    expect(
      sessionSetCookie(forwarded)
        .split(';')
        .map((a) => a.trim()),
    ).not.toContain('Secure');
  });

  it('GET /auth/session answers the same session for the cookie, 401 without one', async () => {
    svc = await testService();
    const { cookie, body } = await signedIn(svc);
    const res = await withCookie(svc, 'GET', '/auth/session', cookie);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(body);
    const none = await svc.app.inject({ method: 'GET', url: '/auth/session' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({
      statusCode: 401,
      error: 'Unauthorized',
      attributes: { code: 'OUTPOST_ERR_UNAUTHORIZED' },
    });
  });

  it('sets Secure when the app URL is https (proxy headers are not trusted) and accepts its origin', async () => {
    const db = await openSqliteDatabase(':memory:');
    const account = await createAccount(db, 'Secure');
    const key = await createApiKey(db, account);
    const service = await build({
      db,
      log: pino({ level: 'silent' }),
      appUrl: 'https://outpost.example',
      retention: false,
    });
    try {
      const res = await signIn(service, key);
      expect(res.statusCode).toBe(200);
      expect(
        sessionSetCookie(res)
          .split(';')
          .map((a) => a.trim()),
      ).toContain('Secure');
      // The app URL's origin is this service's too (behind a TLS-terminating proxy).
      const csrf = res.json().csrfToken as string;
      const created = await withCookie(
        service,
        'POST',
        '/v1/checks/icmp',
        cookieHeader(res),
        { 'x-csrf-token': csrf, origin: 'https://outpost.example' },
        icmpBody(),
      );
      expect(created.statusCode, created.body).toBe(201);
    } finally {
      await service.close();
      await db.destroy();
    }
  });

  it('accepts JSON only (415), from its own origin only (403), with an apiKey (400)', async () => {
    svc = await testService();
    const form = await svc.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `apiKey=${svc.accountA.key}`,
    });
    expect(form.statusCode).toBe(415);
    expect(form.json().attributes).toEqual({
      code: 'OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE',
      field: 'content-type',
      in: 'headers',
    });
    const text = await svc.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { 'content-type': 'text/plain' },
      payload: JSON.stringify({ apiKey: svc.accountA.key }),
    });
    expect(text.statusCode).toBe(415);
    const foreign = await signIn(svc, svc.accountA.key, { origin: 'https://evil.example' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_CSRF', field: 'origin' });
    expect(foreign.headers['set-cookie']).toBeUndefined();
    const own = await signIn(svc, svc.accountA.key, { origin: 'http://localhost:80' });
    expect(own.statusCode, own.body).toBe(200);
    const missing = await svc.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_VALIDATION', field: 'apiKey' });
  });

  it('refuses private-location keys and the embedded agent’s key (401), which still work as keys', async () => {
    svc = await testService();
    const location = await svc.request('POST', '/v1/private-locations', {
      name: 'Basement',
      slugName: 'basement',
    });
    expect(location.statusCode).toBe(201);
    const plKey = location.json().keys[0].rawKey as string;
    expect(plKey).toMatch(/^pl_/);
    const embedded = await createApiKey(svc.context.db, svc.accountA.id, generateApiKey(), 'embedded-agent');
    // The embedded agent's key is a working API key…
    const works = await svc.app.inject({
      method: 'GET',
      url: '/v1/checks',
      headers: { authorization: `Bearer ${embedded}` },
    });
    expect(works.statusCode).toBe(200);
    // …but neither opens a web session, with the same answer as a wrong key.
    for (const key of [plKey, embedded, generateApiKey()]) {
      const res = await signIn(svc, key);
      expect(res.statusCode, key.slice(0, 3)).toBe(401);
      expect(res.json()).toMatchObject({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'invalid API key: sign in with an account API key (op_…)',
        attributes: { code: 'OUTPOST_ERR_UNAUTHORIZED' },
      });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(await svc.context.db.selectFrom('web_sessions').selectAll().execute()).toEqual([]);
  });

  it('counts wrong keys in the API’s failure limiter: 401, then 429 with retry-after; a right key still signs in', async () => {
    svc = await testService();
    for (let i = 0; i < 20; i++) {
      const res = await signIn(svc, generateApiKey());
      expect(res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
    const limited = await signIn(svc, generateApiKey());
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json().attributes).toMatchObject({
      code: 'OUTPOST_ERR_AUTH_RATE_LIMITED',
      scope: 'client',
    });
    // The same limiter as /v1: a wrong key there is limited too.
    const api = await svc.app.inject({
      method: 'GET',
      url: '/v1/checks',
      headers: { authorization: `Bearer ${generateApiKey()}` },
    });
    expect(api.statusCode).toBe(429);
    // Only failures count.
    expect((await signIn(svc, svc.accountA.key)).statusCode).toBe(200);
  });
});

describe('the session cookie on /v1', () => {
  it('reads with the cookie; writes need the CSRF token and the service’s own origin', async () => {
    svc = await testService();
    const { cookie, csrf } = await signedIn(svc);
    const list = await withCookie(svc, 'GET', '/v1/checks', cookie);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.headers['cache-control']).toBe('no-store');
    expect(list.headers['x-content-type-options']).toBe('nosniff');

    const noToken = await withCookie(svc, 'POST', '/v1/checks/icmp', cookie, {}, icmpBody());
    expect(noToken.statusCode).toBe(403);
    expect(noToken.json()).toMatchObject({
      statusCode: 403,
      error: 'Forbidden',
      attributes: { code: 'OUTPOST_ERR_CSRF', field: 'x-csrf-token', in: 'headers' },
    });
    const wrongToken = await withCookie(
      svc,
      'POST',
      '/v1/checks/icmp',
      cookie,
      { 'x-csrf-token': createHmac('sha256', 'other').update('x').digest('base64url') },
      icmpBody(),
    );
    expect(wrongToken.statusCode).toBe(403);
    expect(wrongToken.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_CSRF', field: 'x-csrf-token' });
    const foreign = await withCookie(
      svc,
      'POST',
      '/v1/checks/icmp',
      cookie,
      { 'x-csrf-token': csrf, origin: 'https://evil.example' },
      icmpBody(),
    );
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_CSRF', field: 'origin' });
    expect(await checkCount(svc)).toBe(0);

    const created = await withCookie(
      svc,
      'POST',
      '/v1/checks/icmp',
      cookie,
      { 'x-csrf-token': csrf },
      icmpBody(),
    );
    expect(created.statusCode, created.body).toBe(201);
    const sameOrigin = await withCookie(
      svc,
      'POST',
      '/v1/checks/icmp',
      cookie,
      { 'x-csrf-token': csrf, origin: 'http://localhost:80' },
      icmpBody({ name: 'second' }),
    );
    expect(sameOrigin.statusCode, sameOrigin.body).toBe(201);
    // The session is account A: what it created is A's, and B sees none of it.
    expect(await checkCount(svc)).toBe(2);
    expect((await svc.request('GET', '/v1/checks', undefined, 'B')).json()).toEqual([]);
    const removed = await withCookie(svc, 'DELETE', `/v1/checks/${created.json().id}`, cookie, {
      'x-csrf-token': csrf,
    });
    expect(removed.statusCode).toBe(204);
  });

  it('refuses a cross-site HTML form post carrying the cookie, and creates nothing', async () => {
    svc = await testService();
    const { cookie } = await signedIn(svc);
    const res = await withCookie(
      svc,
      'POST',
      '/v1/checks/icmp',
      cookie,
      { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      'name=pwned&request%5Bhostname%5D=127.0.0.1',
    );
    expect(res.statusCode).toBe(403);
    expect(res.json().attributes.code).toBe('OUTPOST_ERR_CSRF');
    // Without Origin (an old browser): still no token, still refused.
    const noOrigin = await withCookie(
      svc,
      'POST',
      '/v1/checks/icmp',
      cookie,
      { 'content-type': 'application/x-www-form-urlencoded' },
      'name=pwned',
    );
    expect(noOrigin.statusCode).toBe(403);
    expect(await checkCount(svc)).toBe(0);
  });

  it('the Authorization header wins; no cookie and no header is the 401 of before', async () => {
    svc = await testService();
    const { cookie } = await signedIn(svc);
    const wrongKey = await withCookie(svc, 'GET', '/v1/checks', cookie, { authorization: 'Bearer op_nope' });
    expect(wrongKey.statusCode).toBe(401);
    expect(wrongKey.json().message).toBe('invalid API key or account');
    // A Bearer request needs no CSRF token (it is not a browser's ambient credential).
    const bearer = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: { ...svc.auth(), cookie },
      payload: icmpBody(),
    });
    expect(bearer.statusCode).toBe(201);
    const nothing = await svc.app.inject({ method: 'GET', url: '/v1/checks' });
    expect(nothing.statusCode).toBe(401);
    expect(nothing.json().message).toBe(
      'missing or malformed Authorization header; expected "Bearer <API key>"',
    );
    const otherCookie = await svc.app.inject({
      method: 'GET',
      url: '/v1/checks',
      headers: { cookie: 'theme=dark' },
    });
    expect(otherCookie.json().message).toBe(
      'missing or malformed Authorization header; expected "Bearer <API key>"',
    );
    const otherAccount = await withCookie(svc, 'GET', '/v1/checks', cookie, {
      'x-service-account': svc.accountB.id,
    });
    expect(otherAccount.statusCode).toBe(401);
  });

  it('never works on /v1/agent/*', async () => {
    svc = await testService();
    const { cookie, csrf } = await signedIn(svc);
    const res = await withCookie(
      svc,
      'POST',
      '/v1/agent/jobs/claim',
      cookie,
      { 'x-csrf-token': csrf, 'x-agent-id': '2f0c7a34-8a47-4b8e-9d5e-0a4f4c7b2a11' },
      {
        agentVersion: '0.0.0-test',
        protocolVersion: 1,
        checkTypes: ['ICMP'],
        runtimes: [],
        freeSlots: { uptime: 1, main: 1 },
        waitSeconds: 0,
      },
    );
    expect(res.statusCode).toBe(401);
    expect(res.json().attributes.code).toBe('OUTPOST_ERR_UNAUTHORIZED');
    expect(res.json().message).toMatch(/agent/);
  });

  it('refuses a tampered, unsigned or foreign-signed cookie (401, counted as a failure)', async () => {
    svc = await testService();
    const { cookie } = await signedIn(svc);
    const value = decodeURIComponent(cookie.slice('outpost_session='.length));
    const [id, signature] = value.split('.') as [string, string];
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    const foreignSignature = createHmac('sha256', randomBytes(32))
      .update(id)
      .digest('base64')
      .replace(/=+$/, '');
    const bad = [
      `${flip(id)}.${signature}`,
      `${id}.${flip(signature)}`,
      id,
      `${id}.${foreignSignature}`,
      `${randomBytes(32).toString('base64url')}.${signature}`,
      'garbage',
    ];
    for (const v of bad) {
      const res = await withCookie(svc, 'GET', '/v1/checks', `outpost_session=${encodeURIComponent(v)}`);
      expect(res.statusCode, v).toBe(401);
      expect(res.json().attributes.code).toBe('OUTPOST_ERR_UNAUTHORIZED');
      // The dead cookie is cleared.
      expect(sessionSetCookie(res)).toMatch(/Expires=Thu, 01 Jan 1970/);
      const session = await withCookie(
        svc,
        'GET',
        '/auth/session',
        `outpost_session=${encodeURIComponent(v)}`,
      );
      expect(session.statusCode).toBe(401);
    }
    // 12 failures so far; 8 more reach the limit of 20 per client, the next is 429.
    for (let i = 0; i < 8; i++) {
      expect((await withCookie(svc, 'GET', '/v1/checks', 'outpost_session=garbage')).statusCode).toBe(401);
    }
    expect((await withCookie(svc, 'GET', '/v1/checks', 'outpost_session=garbage')).statusCode).toBe(429);
    // The real cookie still works: only failures are limited.
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(200);
  });
});

describe('the trace viewer’s download', () => {
  it('GET and HEAD of a result’s trace.zip work with the session cookie (no CSRF token for reads)', async () => {
    svc = await testService();
    const checkId = await createCheck(svc, 'api', apiBody({ doubleCheck: false }));
    const checkSessionId = await triggerCheck(svc, checkId);
    const agent = '5b8f2c1e-3d4a-4e6b-9c7d-1a2b3c4d5e6f';
    const [job] = await claimJobs(svc, agent);
    const bytes = randomBytes(4096);
    const upload = await svc.app.inject({
      method: 'PUT',
      url: `/v1/agent/jobs/${job!.jobId}/artifacts/trace.zip`,
      headers: { ...svc.auth(), 'x-agent-id': agent, 'content-type': 'application/octet-stream' },
      payload: bytes,
    });
    expect(upload.statusCode, upload.body).toBe(201);
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': agent },
      payload: resultFor(job!, 'PASSED', { artifacts: [{ name: 'trace.zip', sizeBytes: bytes.length }] }),
    });
    expect(posted.statusCode).toBe(200);
    const resultId = (await svc.request('GET', `/v1/check-sessions/${checkSessionId}`)).json().results[0].id;
    const url = `/v1/check-results/${checkId}/${resultId}/artifacts/trace.zip`;

    const { cookie } = await signedIn(svc);
    const download = await withCookie(svc, 'GET', url, cookie);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(bytes)).toBe(true);
    expect(download.headers['cache-control']).toBe('no-store');
    const head = await withCookie(svc, 'HEAD', url, cookie);
    expect(head.statusCode).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(bytes.length);
    expect(head.rawPayload.length).toBe(0);
    // Another account's session finds nothing.
    const other = await signIn(svc, svc.accountB.key);
    expect((await withCookie(svc, 'GET', url, cookieHeader(other))).statusCode).toBe(404);
  });
});

describe('the end of a session', () => {
  it('signing out needs the CSRF token, deletes the session and clears the cookie', async () => {
    svc = await testService();
    const { cookie, csrf } = await signedIn(svc);
    const noToken = await withCookie(svc, 'DELETE', '/auth/session', cookie);
    expect(noToken.statusCode).toBe(403);
    expect(noToken.json().attributes.code).toBe('OUTPOST_ERR_CSRF');
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(200);

    const out = await withCookie(svc, 'DELETE', '/auth/session', cookie, { 'x-csrf-token': csrf });
    expect(out.statusCode).toBe(204);
    const cleared = sessionSetCookie(out);
    expect(cleared).toMatch(/^outpost_session=;/);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(await svc.context.db.selectFrom('web_sessions').selectAll().execute()).toEqual([]);
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(401);
    expect((await withCookie(svc, 'GET', '/auth/session', cookie)).statusCode).toBe(401);
    // Signing out again, or with no cookie at all, only clears the cookie.
    expect(
      (await withCookie(svc, 'DELETE', '/auth/session', cookie, { 'x-csrf-token': csrf })).statusCode,
    ).toBe(204);
    expect((await svc.app.inject({ method: 'DELETE', url: '/auth/session' })).statusCode).toBe(204);
  });

  it('deleting the API key ends its sessions', async () => {
    svc = await testService();
    const { cookie } = await signedIn(svc);
    const other = await signIn(svc, svc.accountB.key);
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(200);
    await svc.context.db.deleteFrom('api_keys').where('account_id', '=', svc.accountA.id).execute();
    const res = await withCookie(svc, 'GET', '/v1/checks', cookie);
    expect(res.statusCode).toBe(401);
    expect((await withCookie(svc, 'GET', '/auth/session', cookie)).statusCode).toBe(401);
    // Its row is gone; B's session lives on.
    const rows = await svc.context.db.selectFrom('web_sessions').select('account_id').execute();
    expect(rows).toEqual([{ account_id: svc.accountB.id }]);
    expect((await withCookie(svc, 'GET', '/v1/checks', cookieHeader(other))).statusCode).toBe(200);
  });

  it('ends after 7 days unused and 30 days after sign-in; last use is written at most once a minute', async () => {
    svc = await testService();
    const db = svc.context.db;
    const { cookie } = await signedIn(svc);
    const row = () => db.selectFrom('web_sessions').selectAll().executeTakeFirstOrThrow();
    const first = await row();
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(200);
    expect((await row()).last_seen_at).toBe(first.last_seen_at);
    // Two minutes later: the use is recorded.
    await db
      .updateTable('web_sessions')
      .set({ last_seen_at: first.last_seen_at - 120_000 })
      .execute();
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(200);
    expect((await row()).last_seen_at).toBeGreaterThanOrEqual(first.last_seen_at);
    // Unused for 6 days: still alive.
    await db
      .updateTable('web_sessions')
      .set({ last_seen_at: Date.now() - 6 * DAY })
      .execute();
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(200);
    // Unused for 7 days: over, and deleted.
    await db
      .updateTable('web_sessions')
      .set({ last_seen_at: Date.now() - 7 * DAY - 1000 })
      .execute();
    expect((await withCookie(svc, 'GET', '/v1/checks', cookie)).statusCode).toBe(401);
    expect(await db.selectFrom('web_sessions').selectAll().execute()).toEqual([]);

    const again = await signedIn(svc);
    await db
      .updateTable('web_sessions')
      .set({ expires_at: Date.now() - 1 })
      .execute();
    expect((await withCookie(svc, 'GET', '/auth/session', again.cookie)).statusCode).toBe(401);
    expect(await db.selectFrom('web_sessions').selectAll().execute()).toEqual([]);
  });

  it('the retention pass deletes expired, idle and orphaned sessions', async () => {
    svc = await testService();
    await svc.retention?.stop();
    const db = svc.context.db;
    const key = await db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', svc.accountA.id)
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const session = (idHash: string, over: Partial<Database['web_sessions']> = {}) => ({
      id_hash: idHash,
      account_id: svc!.accountA.id,
      api_key_id: key.id,
      created_at: now - DAY,
      last_seen_at: now - 60_000,
      expires_at: now + 29 * DAY,
      user_agent: null,
      ...over,
    });
    await db
      .insertInto('web_sessions')
      .values([
        session('live'),
        session('expired', { expires_at: now - 1 }),
        session('idle', { last_seen_at: now - 7 * DAY - 1 }),
        session('orphan', { api_key_id: 'deleted-key' }),
      ])
      .execute();
    await new RetentionWorker(db, retentionTasks({ artifacts: svc.context.artifacts }), {
      resultDays: 90,
      artifactDays: 30,
      agentDays: 30,
      log: pino({ level: 'silent' }),
    }).runOnce(now);
    expect((await db.selectFrom('web_sessions').select('id_hash').execute()).map((r) => r.id_hash)).toEqual([
      'live',
    ]);
  });
});

describe('keys', () => {
  it('derives the cookie and CSRF keys from the SecretBox key: the same across restarts, one per purpose', async () => {
    const key = randomBytes(32);
    const a = new SecretBox(key, 'a');
    const b = new SecretBox(Buffer.from(key), 'b');
    expect(a.deriveKey('web-session-cookie')).toEqual(b.deriveKey('web-session-cookie'));
    expect(a.deriveKey('web-session-cookie')).toHaveLength(32);
    expect(a.deriveKey('web-session-cookie')).not.toEqual(a.deriveKey('web-csrf'));
    expect(a.deriveKey('web-session-cookie')).not.toEqual(key);
    expect(SecretBox.ephemeral().deriveKey('web-csrf')).not.toEqual(a.deriveKey('web-csrf'));
    expect(() => a.deriveKey('')).toThrow(RangeError);

    // A restart on the same store (and so the same key) keeps the browser signed in.
    const db = await openSqliteDatabase(':memory:');
    const account = await createAccount(db, 'Restart');
    const apiKey = await createApiKey(db, account);
    const first = await build({ db, log: pino({ level: 'silent' }), retention: false });
    const res = await signIn(first, apiKey);
    await first.close();
    const second = await build({ db, log: pino({ level: 'silent' }), retention: false });
    try {
      const again = await withCookie(second, 'GET', '/auth/session', cookieHeader(res));
      expect(again.statusCode).toBe(200);
      expect(again.json().csrfToken).toBe(res.json().csrfToken);
      expect(secretBoxOf(db).deriveKey('web-csrf')).toHaveLength(32);
    } finally {
      await second.close();
      await db.destroy();
    }
  });
});

describe('the API key stays secret', () => {
  it('is in no log line and no table after signing in, using and ending a session', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const db = await openSqliteDatabase(':memory:');
    const account = await createAccount(db, 'Planted');
    const planted = await createApiKey(db, account);
    const service = await build({ db, log: pino({ level: 'trace' }, sink), retention: false });
    try {
      const wrong = generateApiKey();
      expect((await signIn(service, wrong)).statusCode).toBe(401);
      const res = await signIn(service, planted, { 'user-agent': 'test-browser' });
      expect(res.statusCode).toBe(200);
      const cookie = cookieHeader(res);
      const csrf = res.json().csrfToken as string;
      expect((await withCookie(service, 'GET', '/v1/checks', cookie)).statusCode).toBe(200);
      const created = await withCookie(
        service,
        'POST',
        '/v1/checks/icmp',
        cookie,
        { 'x-csrf-token': csrf },
        icmpBody(),
      );
      expect(created.statusCode).toBe(201);
      // A failing request that is logged, and a malformed sign-in body.
      await service.app.inject({
        method: 'POST',
        url: '/auth/session',
        headers: { 'content-type': 'application/json' },
        payload: `{"apiKey": "${planted}"`,
      });
      const second = await signIn(service, planted);
      expect(
        (
          await withCookie(service, 'DELETE', '/auth/session', cookieHeader(second), {
            'x-csrf-token': second.json().csrfToken,
          })
        ).statusCode,
      ).toBe(204);

      const log = lines.join('');
      expect(log).toContain('web session opened');
      expectNoSecret(log, planted);
      expectNoSecret(log, wrong);
      const id = decodeURIComponent(cookie.slice('outpost_session='.length)).split('.')[0]!;
      expect(log).not.toContain(id);

      const dump = await dumpTables(db);
      expect(dump).toContain('test-browser');
      expectNoSecret(dump, planted);
      expectNoSecret(dump, wrong);
      expect(dump).not.toContain(id);
    } finally {
      await service.close();
      await db.destroy();
    }
  });
});

/** Every row of every table of the store, as JSON text. */
async function dumpTables(db: Kysely<Database>): Promise<string> {
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
  expect(tables.rows.map((t) => t.name)).toContain('web_sessions');
  const parts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql`select * from ${sql.table(name)}`.execute(db);
    parts.push(`${name}: ${JSON.stringify(rows.rows)}`);
  }
  return parts.join('\n');
}
