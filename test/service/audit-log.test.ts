import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/service/platform/http/auth.js';
import { expectNoSecret } from '../helpers/secrets.js';
import { apiBody, expectBadField, type TestService, testService } from '../helpers/service.js';
import { createTestCa } from '../helpers/test-ca.js';

/**
 * The audit log (docs/teams.md, "Audit log"): who changed what, when and from where, with the documents before
 * and after, never a secret; listed newest first by GET /v1/audit-log [admin], filtered and paged; kept
 * OUTPOST_AUDIT_RETENTION_DAYS; a write that fails never fails the request.
 */

type Entry = {
  id: string;
  occurredAt: string;
  actor: { kind: string; id: string; name: string | null; role: string | null };
  action: string;
  resourceType: string;
  resourceId: string | null;
  before: any;
  after: any;
  ip: string | null;
  userAgent: string | null;
};

let svc: TestService;
let logs = '';

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs += chunk.toString();
      done();
    },
  });
  // Credentials answered in clear to API keys: the audit log must mask them all the same.
  svc = await testService({ apiCredentials: 'clear', log: pino({ level: 'trace' }, sink) });
});
afterAll(async () => svc?.close());

/** A call as account A that must succeed; its JSON answer (null for 204). */
async function ok(method: 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string, payload?: unknown): Promise<any> {
  const res = await svc.app.inject({
    method,
    url,
    headers: { ...svc.auth(), 'user-agent': 'audit-test/1.0' },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.statusCode === 204 ? null : res.json();
}

/** Every entry of account A matching `query`, newest first, walking the pages; waits for `atLeast` entries. */
async function entries(query = '', atLeast = 0): Promise<Entry[]> {
  let all: Entry[] = [];
  await expect
    .poll(
      async () => {
        all = [];
        let url: string | null = `/v1/audit-log?limit=100${query}`;
        while (url !== null) {
          const res: { statusCode: number; body: string; json(): any; headers: Record<string, unknown> } =
            await svc.app.inject({ method: 'GET', url, headers: svc.auth() });
          expect(res.statusCode, res.body).toBe(200);
          all.push(...(res.json() as Entry[]));
          const next: unknown = res.headers['x-next-id'];
          url = typeof next === 'string' ? `/v1/audit-log?limit=100${query}&nextId=${next}` : null;
        }
        return all.length;
      },
      { timeout: 10_000 },
    )
    .toBeGreaterThanOrEqual(atLeast);
  return all;
}

describe('what an entry records', () => {
  it('a create, an update and a delete: who, what, before and after, from where', async () => {
    const window = await ok('POST', '/v1/maintenance-windows', {
      name: 'w1',
      startsAt: '2026-01-01T02:00:00Z',
      endsAt: '2026-01-01T04:00:00Z',
    });
    await ok('PUT', `/v1/maintenance-windows/${window.id}`, { name: 'w2' });
    await ok('DELETE', `/v1/maintenance-windows/${window.id}`);
    const found = await entries(`&resourceType=maintenance-window&resourceId=${window.id}`, 3);
    expect(found.map((e) => e.action)).toEqual([
      'maintenance-window.delete',
      'maintenance-window.update',
      'maintenance-window.create',
    ]);
    const [deleted, updated, created] = found as [Entry, Entry, Entry];
    expect(created.before).toBeNull();
    expect(created.after).toMatchObject({ id: window.id, name: 'w1' });
    expect(updated.before).toEqual(created.after);
    expect(updated.after).toMatchObject({ name: 'w2' });
    expect(deleted.before).toEqual(updated.after);
    expect(deleted.after).toBeNull();
    const keyRow = await svc.context.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', svc.accountA.id)
      .executeTakeFirstOrThrow();
    for (const entry of found) {
      expect(entry.actor).toEqual({ kind: 'api-key', id: keyRow.id, name: null, role: 'OWNER' });
      expect(entry.resourceId).toBe(String(window.id));
      expect(entry.ip).toBe('127.0.0.1');
      expect(entry.userAgent).toBe('audit-test/1.0');
      expect(Date.parse(entry.occurredAt)).toBeGreaterThan(Date.now() - 60_000);
    }
  });

  it('a failed change, a read and another account’s change leave no entry', async () => {
    const before = (await entries()).length;
    const bad = await svc.request('POST', '/v1/snippets', { name: '' });
    expect(bad.statusCode).toBe(400);
    await svc.request('GET', '/v1/snippets');
    await svc.request('GET', '/v1/api-keys');
    await svc.request('POST', '/v1/snippets', { name: 'b', script: 'x' }, 'B');
    const marker = await ok('POST', '/v1/snippets', { name: 'marker', script: '1' });
    const after = await entries('', before + 1);
    expect(after).toHaveLength(before + 1);
    expect(after[0]).toMatchObject({ action: 'snippet.create', resourceId: String(marker.id) });
  });

  it('needs admin: a READ_WRITE key is refused, an ADMIN key reads', async () => {
    const writer = await createApiKey(svc.context.db, svc.accountA.id, undefined, 'w', 'READ_WRITE');
    const admin = await createApiKey(svc.context.db, svc.accountA.id, undefined, 'a', 'ADMIN');
    const refused = await svc.app.inject({
      method: 'GET',
      url: '/v1/audit-log',
      headers: { authorization: `Bearer ${writer}` },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ attributes: { permission: 'admin' } });
    const read = await svc.app.inject({
      method: 'GET',
      url: '/v1/audit-log',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(read.statusCode).toBe(200);
    // The writer's own change names it, with its role.
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/snippets',
      headers: { authorization: `Bearer ${writer}` },
      payload: { name: 'by writer', script: '1' },
    });
    expect(res.statusCode).toBe(201);
    const [entry] = await entries(`&resourceId=${res.json().id}&resourceType=snippet`, 1);
    expect(entry!.actor).toMatchObject({ kind: 'api-key', name: 'w', role: 'READ_WRITE' });
  });

  it('web-app sign-ins and sign-outs, never the key', async () => {
    const signIn = await svc.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { 'content-type': 'application/json', 'user-agent': 'browser/1' },
      payload: { apiKey: svc.accountA.key },
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const out = await svc.app.inject({
      method: 'DELETE',
      url: '/auth/session',
      headers: { cookie, 'x-csrf-token': signIn.json().csrfToken, 'user-agent': 'browser/1' },
    });
    expect(out.statusCode).toBe(204);
    const found = await entries('&resourceType=session', 2);
    expect(found.map((e) => e.action)).toEqual(['session.sign-out', 'session.sign-in']);
    expect(found[1]).toMatchObject({ userAgent: 'browser/1', actor: { kind: 'api-key', role: 'OWNER' } });
    expectNoSecret(JSON.stringify(found), svc.accountA.key);
  });
});

describe('GET /v1/audit-log: filters and pages', () => {
  it('pages newest first by cursor without repeats, and filters by actor, action and time', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await ok('POST', '/v1/snippets', { name: `p${i}`, script: '1' })).id);
    // Entries are written one at a time in order: once the last one is in, all are.
    await entries(`&resourceType=snippet&resourceId=${ids.at(-1)}`, 1);
    const all = await entries('&action=snippet.create');
    const pages: Entry[] = [];
    let url: string | null = '/v1/audit-log?limit=3&action=snippet.create';
    let count = 0;
    while (url !== null) {
      const res: { statusCode: number; json(): any; headers: Record<string, unknown> } = await svc.app.inject(
        {
          method: 'GET',
          url,
          headers: svc.auth(),
        },
      );
      expect(res.statusCode).toBe(200);
      const page = res.json() as Entry[];
      expect(page.length).toBeLessThanOrEqual(3);
      pages.push(...page);
      const link: unknown = res.headers.link;
      url = typeof link === 'string' ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
      count += 1;
    }
    expect(count).toBeGreaterThan(2);
    expect(pages.map((e) => e.id)).toEqual(all.map((e) => e.id));
    const times = pages.map((e) => Date.parse(e.occurredAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(pages.slice(0, 7).map((e) => e.resourceId)).toEqual(ids.reverse().map(String));

    const actor = all[0]!.actor.id;
    const byActor = all.filter((e) => e.actor.id === actor);
    expect(byActor.length).toBeLessThan(all.length);
    expect(await entries(`&actor=${actor}&action=snippet.create`)).toEqual(byActor);
    expect(await entries(`&actor=${randomUUID()}`)).toEqual([]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(await entries(`&from=${future}`)).toEqual([]);
    expect((await entries(`&to=${future}&action=snippet.create`)).length).toBe(all.length);
    expect(await entries('&to=2000-01-01T00:00:00Z')).toEqual([]);
  });

  it('refuses a bad cursor, time or unknown filter naming the field', async () => {
    expectBadField(await svc.request('GET', '/v1/audit-log?nextId=nope'), 'nextId', 'querystring');
    expectBadField(await svc.request('GET', '/v1/audit-log?from=yesterday'), 'from', 'querystring');
    expectBadField(await svc.request('GET', '/v1/audit-log?limit=101'), 'limit', 'querystring');
    expect((await svc.request('GET', '/v1/audit-log?color=red')).statusCode).toBe(400);
  });
});

describe('no secret in the audit log', () => {
  const secret = (name: string) => `${name}-Secret-${randomUUID()}`;
  const planted = {
    variable: secret('var'),
    variable2: secret('var2'),
    header: secret('hdr'),
    query: secret('qry'),
    urlToken: secret('urltok'),
    basicAuth: secret('basic'),
    urlPassword: secret('urlpw'),
    passphrase: secret('pass'),
  };
  const oneTime: string[] = [];

  beforeAll(async () => {
    await ok('POST', '/v1/variables', { key: 'AUDIT_SECRET', value: planted.variable, secret: true });
    await ok('PUT', '/v1/variables/AUDIT_SECRET', { value: planted.variable2, secret: true });
    const channel = await ok('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: {
        name: 'hook',
        url: `https://hooks.example.test/x?token=${planted.urlToken}`,
        headers: [
          { key: 'Authorization', value: `Bearer ${planted.header}` },
          { key: 'X-Plain', value: 'visible' },
        ],
        queryParameters: [{ key: 'access_token', value: planted.query }],
      },
    });
    // The answer holds the credentials in clear (OUTPOST_API_CREDENTIALS=clear): the entry must not.
    expect(JSON.stringify(channel)).toContain(planted.header);
    await ok('PUT', `/v1/alert-channels/${channel.id}`, { config: channel.config });
    await ok('DELETE', `/v1/alert-channels/${channel.id}`);
    const check = await ok(
      'POST',
      '/v1/checks/api',
      apiBody({
        request: {
          url: `https://user:${planted.urlPassword}@api.example.test/v1`,
          basicAuth: { username: 'u', password: planted.basicAuth },
        },
      }),
    );
    await ok('DELETE', `/v1/checks/${check.id}`);
    const ca = createTestCa();
    try {
      const pair = ca.issue({ commonName: 'client.example.test', extendedKeyUsage: 'clientAuth' });
      const cert = await ok('POST', '/v1/client-certificates', {
        host: 'mtls.example.test',
        cert: pair.cert,
        key: pair.key,
        passphrase: planted.passphrase,
      });
      oneTime.push(
        pair.key
          .split('\n')
          .filter((line) => !line.startsWith('-----'))
          .join('')
          .slice(0, 40),
      );
      await ok('DELETE', `/v1/client-certificates/${cert.id}`);
    } finally {
      ca.destroy();
    }
    const key = await ok('POST', '/v1/api-keys', { name: 'ci' });
    oneTime.push(key.rawKey);
    await ok('DELETE', `/v1/api-keys/${key.id}`);
    const location = await ok('POST', '/v1/private-locations', { name: 'Basement', slugName: 'basement' });
    for (const k of location.keys) if (k.rawKey) oneTime.push(k.rawKey);
    const locationKey = await ok('POST', `/v1/private-locations/${location.id}/keys`);
    oneTime.push(locationKey.rawKey);
    expect(oneTime.filter(Boolean)).toHaveLength(4);
  });

  it('is in no entry, no answer of GET /v1/audit-log and no log line, in any encoding', async () => {
    // Entries are written after their answers: wait for the last change's (the private location's key), not for a
    // count, which the entries before it can reach first.
    const wanted = [
      'variable',
      'alert-channel',
      'check',
      'client-certificate',
      'api-key',
      'private-location-key',
    ];
    let found: Entry[] = [];
    await expect
      .poll(
        async () => {
          found = await entries();
          return wanted.filter((type) => !found.some((e) => e.resourceType === type));
        },
        { timeout: 10_000 },
      )
      .toEqual([]);
    expect(found.length).toBeGreaterThanOrEqual(13);
    const answer = JSON.stringify(found);
    const rows = JSON.stringify(await svc.context.db.selectFrom('audit_log').selectAll().execute());
    for (const value of [...Object.values(planted), ...oneTime]) {
      for (const haystack of [answer, rows, logs]) expectNoSecret(haystack, value);
    }
    // What is not a secret is kept: the masked places say a value is set, plain headers stay readable.
    const channel = found.find((e) => e.action === 'alert-channel.create')!;
    expect(channel.after.config.headers).toEqual([
      { key: 'Authorization', value: '*****', locked: false },
      { key: 'X-Plain', value: 'visible', locked: false },
    ]);
    const deletedChannel = found.find((e) => e.action === 'alert-channel.delete')!;
    expect(deletedChannel.before.config.name).toBe('hook');
    const variable = found.find((e) => e.action === 'variable.update')!;
    expect(variable.before).toMatchObject({ key: 'AUDIT_SECRET', value: '*****', secret: true });
  });
});

describe('retention and failures', () => {
  it('entries older than OUTPOST_AUDIT_RETENTION_DAYS (default 365) are deleted', async () => {
    expect((await entries()).length).toBeGreaterThan(0);
    const total = (await svc.context.db.selectFrom('audit_log').select('id').execute()).length;
    const outcome = await svc.retention!.runOnce(Date.now() + 364 * 86_400_000);
    expect(outcome.auditEntries).toBe(0);
    const later = await svc.retention!.runOnce(Date.now() + 366 * 86_400_000);
    expect(later.auditEntries).toBe(total);
    const left = await svc.context.db
      .selectFrom('audit_log')
      .select('id')
      .where('account_id', '=', svc.accountA.id)
      .execute();
    expect(left).toEqual([]);
  });

  it('a write that fails is logged and does not fail the request', async () => {
    await sql`drop table audit_log`.execute(svc.context.db);
    const mark = logs.length;
    const started = Date.now();
    const res = await svc.request('POST', '/v1/snippets', { name: 'still works', script: '1' });
    expect(res.statusCode).toBe(201);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect.poll(() => logs.slice(mark).includes('could not record an audit entry')).toBe(true);
  });
});
