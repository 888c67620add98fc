import { randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type Service } from '../../../src/service/app.js';
import { parseServiceConfig } from '../../../src/service/config.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import type { ResolvedAddress } from '../../../src/service/platform/http/outbound-policy.js';
import {
  AlertChannels,
  type ChannelDoc,
} from '../../../src/service/alerting/alert-channels/alert-channels.js';
import { type Database, openSqliteDatabase } from '../../../src/service/platform/store/database.js';

/**
 * Alert channels as a server-side request forgery (docs/alerting.md, "Where alerts may go"): a channel
 * must not reach the service's own machine (loopback in any spelling, names resolving to it), a
 * redirect must not lead there, and no answer's body may be read back through the API or the store.
 * Every receiver here is a real server on loopback that counts the requests it gets.
 */

/** A real HTTP server that counts requests and answers as `answer` says. */
type Receiver = {
  origin: string;
  port: number;
  hits: { method: string; url: string; headers: IncomingHttpHeaders }[];
  answer: () => { status: number; headers?: Record<string, string>; body?: string };
  close(): Promise<void>;
};

async function receiver(host: string): Promise<Receiver | null> {
  const r: Receiver = {
    origin: '',
    port: 0,
    hits: [],
    answer: () => ({ status: 200, body: 'ok' }),
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      r.hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      const a = r.answer();
      res.writeHead(a.status, a.headers ?? {});
      res.end(a.body ?? '');
    });
  });
  server.listen(0, host);
  try {
    await once(server, 'listening');
  } catch {
    return null; // e.g. no IPv6 on this machine
  }
  r.port = (server.address() as AddressInfo).port;
  r.origin = `http://${host.includes(':') ? `[${host}]` : host}:${r.port}`;
  r.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return r;
}

/** A service on a store file in `dir`, with one account; `outbound` as build takes it. */
async function service(
  dir: string,
  outbound: Parameters<typeof build>[0]['outbound'],
): Promise<{ svc: Service; db: Kysely<Database>; accountId: string; key: string }> {
  const db = await openSqliteDatabase(join(dir, 'outpost.db'));
  const accountId = await createAccount(db, 'A');
  const key = await createApiKey(db, accountId);
  const svc = await build({
    db,
    log: pino({ level: 'silent' }),
    artifactsDir: join(dir, 'artifacts'),
    retention: false,
    ...(outbound === undefined ? {} : { outbound }),
  });
  return { svc, db, accountId, key };
}

function api(s: { svc: Service; key: string }) {
  return async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
    const res = await s.svc.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${s.key}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: res.statusCode, body: res.body, json: () => res.json() };
  };
}

/** Names the tests resolve themselves; the rest goes to the system's resolver (localhost). */
const NAMES: Record<string, string[]> = { 'hooks.example.test': ['127.0.0.1'] };
async function lookup(name: string): Promise<ResolvedAddress[]> {
  const mapped = NAMES[name];
  if (mapped) return mapped.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const found = await dnsLookup(name, { all: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

describe('alert channels to refused addresses (no allow-list)', () => {
  let dir: string;
  let s: Awaited<ReturnType<typeof service>>;
  let call: ReturnType<typeof api>;
  let v4: Receiver;
  let alias: Receiver;
  let v6: Receiver | null;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'outpost-ssrf-'));
    s = await service(dir, { lookup });
    call = api(s);
    v4 = (await receiver('127.0.0.1'))!;
    alias = (await receiver('127.0.0.2'))!;
    v6 = await receiver('::1');
    for (const r of [v4, alias, v6]) if (r) r.answer = () => ({ status: 200, body: 'metrics_total 1' });
  });
  afterAll(async () => {
    await s?.svc.close();
    await s?.db.destroy();
    await Promise.all([v4, alias, v6].map((r) => r?.close()));
    await rm(dir, { recursive: true, force: true });
  });

  const totalHits = () => v4.hits.length + alias.hits.length + (v6?.hits.length ?? 0);

  it('refuses a literal loopback, unspecified or localhost URL at create and update: 400 naming config.url', async () => {
    const p = v4.port;
    const urls = [
      `http://127.0.0.1:${p}/metrics`,
      `http://127.0.0.2:${alias.port}/metrics`,
      `http://[::1]:${v6?.port ?? p}/metrics`,
      `http://0.0.0.0:${p}/metrics`,
      `http://[::ffff:127.0.0.1]:${p}/metrics`,
      `http://2130706433:${p}/metrics`,
      `http://0177.0.0.1:${p}/metrics`,
      `http://127.1:${p}/metrics`,
      `http://0x7f000001:${p}/metrics`,
      `http://localhost:${p}/metrics`,
      `http://169.254.169.254/latest/meta-data/iam/security-credentials/`,
    ];
    for (const url of urls) {
      for (const config of [
        { name: 'metrics', url, method: 'GET' },
        // The cloud-metadata flow: PUT with a header.
        {
          name: 'token',
          url,
          method: 'PUT',
          headers: [{ key: 'X-aws-ec2-metadata-token-ttl-seconds', value: '60' }],
        },
      ]) {
        const res = await call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config });
        expect(res.status, `${url}: ${res.body}`).toBe(400);
        expect(res.json()).toMatchObject({
          statusCode: 400,
          error: 'Bad Request',
          attributes: { code: 'OUTPOST_ERR_VALIDATION', field: 'config.url', in: 'body', rule: 'outbound' },
        });
        expect(res.json().message).toMatch(
          /^body\.config\.url is refused: .+; allow it with OUTPOST_OUTBOUND_ALLOW$/,
        );
      }
    }
    const decimal = await call('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'n', url: `http://2130706433:${p}/` },
    });
    expect(decimal.json().message).toBe(
      'body.config.url is refused: 127.0.0.1 is a loopback address; allow it with OUTPOST_OUTBOUND_ALLOW',
    );
    const slack = await call('POST', '/v1/alert-channels', {
      type: 'SLACK',
      config: { url: `https://127.0.0.1:${p}/services/T/B/x` },
    });
    expect(slack.status, slack.body).toBe(400);
    expect(slack.json().attributes).toMatchObject({ field: 'config.url', rule: 'outbound' });

    // Update: a saved channel cannot be pointed at a refused address either, and keeps its URL.
    const created = await call('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'n', url: 'https://hooks.example.com/in' },
    });
    expect(created.status, created.body).toBe(201);
    const id = created.json().id as number;
    const update = await call('PUT', `/v1/alert-channels/${id}`, {
      config: { name: 'n', url: `http://[::ffff:7f00:1]:${p}/` },
    });
    expect(update.status, update.body).toBe(400);
    expect(update.json().attributes).toMatchObject({ field: 'config.url', rule: 'outbound' });
    expect((await call('GET', `/v1/alert-channels/${id}`)).json().config.url).toBe(
      'https://hooks.example.com/in',
    );
    expect(totalHits()).toBe(0);
  });

  it('refuses at delivery a name that resolves to loopback: one FAILED attempt with the reason, no request', async () => {
    const created = await call('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'looks public', url: `http://hooks.example.test:${v4.port}/metrics`, method: 'GET' },
    });
    expect(created.status, created.body).toBe(201);
    const test = await call('POST', `/v1/alert-channels/${created.json().id}/test`);
    expect(test.status, test.body).toBe(200);
    const reason =
      'refused: hooks.example.test resolves to 127.0.0.1, a loopback address; allow it with OUTPOST_OUTBOUND_ALLOW';
    expect(test.json()).toMatchObject({
      state: 'FAILED',
      lastError: reason,
      attempts: [{ outcome: 'FAILED', statusCode: null, answer: null, error: reason }],
    });
    // Not retried: still one attempt a moment later.
    await new Promise((r) => setTimeout(r, 1500));
    const later = await call('GET', `/v1/alert-notifications/${test.json().id}`);
    expect(later.json()).toMatchObject({ state: 'FAILED', attempts: [{ outcome: 'FAILED' }] });
    expect(totalHits()).toBe(0);
  });

  it('refuses at delivery channels saved before the policy (literal loopback, localhost, IPv6 forms)', async () => {
    const urls = [
      `http://127.0.0.1:${v4.port}/metrics`,
      `http://127.0.0.2:${alias.port}/metrics`,
      `http://localhost:${v4.port}/metrics`,
      `http://[::ffff:127.0.0.1]:${v4.port}/metrics`,
      `http://2130706433:${v4.port}/metrics`,
      ...(v6 ? [`http://[::1]:${v6.port}/metrics`] : []),
    ];
    for (const url of urls) {
      const doc = {
        type: 'WEBHOOK',
        config: { name: 'legacy', url, method: 'GET', headers: [], queryParameters: [] },
        subscriptions: [],
        sendRecovery: true,
        sendFailure: true,
        sendDegraded: false,
        sslExpiry: false,
        sslExpiryThreshold: 30,
        autoSubscribe: false,
      } as unknown as ChannelDoc;
      const row = await new AlertChannels(s.db).insert(s.accountId, doc, Date.now());
      const test = await call('POST', `/v1/alert-channels/${row.id}/test`);
      expect(test.status, test.body).toBe(200);
      expect(test.json().attempts, url).toMatchObject([
        { outcome: 'FAILED', statusCode: null, answer: null },
      ]);
      expect(test.json().lastError, url).toMatch(
        /^refused: .*loopback address; allow it with OUTPOST_OUTBOUND_ALLOW$/,
      );
    }
    expect(totalHits()).toBe(0);
  });

  it("refuses the service's own port even where a range allows loopback", async () => {
    const ownDir = await mkdtemp(join(tmpdir(), 'outpost-ssrf-own-'));
    const own = await service(ownDir, { allow: ['127.0.0.0/8'] });
    try {
      await own.svc.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (own.svc.app.server.address() as AddressInfo).port;
      const ownCall = api(own);
      for (const url of [`http://127.0.0.1:${port}/v1/checks`, `http://127.0.0.2:${port}/v1/checks`]) {
        const res = await ownCall('POST', '/v1/alert-channels', {
          type: 'WEBHOOK',
          config: { name: 'me', url },
        });
        expect(res.status, res.body).toBe(400);
        expect(res.json().message).toContain("this service's own address");
      }
      // Another port of the allowed range is fine.
      const other = await ownCall('POST', '/v1/alert-channels', {
        type: 'WEBHOOK',
        config: { name: 'ok', url: `http://127.0.0.1:${v4.port}/` },
      });
      expect(other.status, other.body).toBe(201);
    } finally {
      await own.svc.close();
      await own.db.destroy();
      await rm(ownDir, { recursive: true, force: true });
    }
  });
});

describe('alert channels with OUTPOST_OUTBOUND_ALLOW=127.0.0.1/32', () => {
  const SECRET = `outpost-ssrf-body-${randomUUID()}`;
  let dir: string;
  let s: Awaited<ReturnType<typeof service>>;
  let call: ReturnType<typeof api>;
  let target: Receiver;
  let aliasTarget: Receiver;
  let redirector: Receiver;
  const seen: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'outpost-ssrf-allow-'));
    const config = parseServiceConfig({ OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32' });
    s = await service(dir, { allow: config.outboundAllow, privateNetworks: config.outboundPrivate });
    call = async (...args) => {
      const res = await api(s)(...args);
      seen.push(res.body);
      return res;
    };
    target = (await receiver('127.0.0.1'))!;
    aliasTarget = (await receiver('127.0.0.2'))!;
    redirector = (await receiver('127.0.0.1'))!;
    target.answer = () => ({
      status: 200,
      headers: { 'content-type': 'text/plain' },
      body: `metrics ${SECRET}`,
    });
  });
  afterAll(async () => {
    await s?.svc.close();
    await s?.db.destroy();
    await Promise.all([target, aliasTarget, redirector].map((r) => r?.close()));
    await rm(dir, { recursive: true, force: true });
  });

  async function channel(url: string, extra: Record<string, unknown> = {}): Promise<number> {
    const res = await call('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'hook', url, ...extra },
    });
    expect(res.status, res.body).toBe(201);
    return res.json().id as number;
  }

  it('delivers, and keeps the status but never the body: not in the /test answer, the API or the store', async () => {
    const ok = await channel(`${target.origin}/metrics`, { method: 'GET' });
    const test = await call('POST', `/v1/alert-channels/${ok}/test`);
    expect(test.status, test.body).toBe(200);
    expect(test.json()).toMatchObject({
      state: 'DELIVERED',
      attempts: [{ outcome: 'DELIVERED', statusCode: 200, answer: 'HTTP 200 OK', error: null }],
    });
    expect(target.hits).toHaveLength(1);
    expect(target.hits[0]!.method).toBe('GET');

    // A failing answer: its status only.
    target.answer = () => ({ status: 404, body: `not here ${SECRET}` });
    const missing = await call('POST', `/v1/alert-channels/${ok}/test`);
    expect(missing.json()).toMatchObject({
      state: 'FAILED',
      attempts: [{ outcome: 'FAILED', statusCode: 404, answer: 'HTTP 404 Not Found' }],
    });
    expect(missing.json().attempts[0].error).toBe('the webhook answered 404: the endpoint does not exist');
    target.answer = () => ({ status: 500, body: `boom ${SECRET}` });
    const broken = await call('POST', `/v1/alert-channels/${ok}/test`);
    expect(broken.json().attempts[0]).toMatchObject({ outcome: 'RETRY', statusCode: 500 });
    expect(target.hits).toHaveLength(3);

    await call('GET', '/v1/alert-notifications?limit=100');
    await call('GET', `/v1/alert-notifications/${test.json().id}`);
    await call('GET', `/v1/alert-notifications?alertChannelId=${ok}`);
    const answers = seen.join('\n');
    expect(answers).toContain('HTTP 200 OK');

    // The store: every row of every table, then the database files byte for byte.
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(
      s.db,
    );
    let rows = '';
    for (const { name } of tables.rows) {
      rows += JSON.stringify((await sql`select * from ${sql.table(name)}`.execute(s.db)).rows);
    }
    expect(rows).toContain('HTTP 404 Not Found');
    const files = ['outpost.db', 'outpost.db-wal']
      .map((f) => join(dir, f))
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'));
    expect(files.length).toBeGreaterThan(0);
    const forms = [
      SECRET,
      Buffer.from(SECRET).toString('base64'),
      Buffer.from(SECRET).toString('base64url'),
      Buffer.from(SECRET).toString('hex'),
      Buffer.from(SECRET).toString('hex').toUpperCase(),
    ];
    for (const form of forms) {
      expect(answers).not.toContain(form);
      expect(rows).not.toContain(form);
      for (const file of files) expect(file.includes(form)).toBe(false);
    }
  });

  it('does not follow a redirect, to an allowed address or not: the target gets no request', async () => {
    const before = target.hits.length;
    for (const location of [
      `${target.origin}/metrics`,
      `${aliasTarget.origin}/metrics`,
      'http://169.254.169.254/',
    ]) {
      redirector.answer = () => ({ status: 302, headers: { location }, body: SECRET });
      const id = await channel(`${redirector.origin}/hook`);
      const test = await call('POST', `/v1/alert-channels/${id}/test`);
      expect(test.json()).toMatchObject({
        state: 'FAILED',
        attempts: [{ outcome: 'FAILED', statusCode: 302, answer: 'HTTP 302 Found' }],
      });
      expect(test.json().lastError).toMatch(/redirects are not followed/);
      expect(test.body).not.toContain(location);
    }
    expect(redirector.hits).toHaveLength(3);
    expect(target.hits).toHaveLength(before);
    expect(aliasTarget.hits).toHaveLength(0);
  });

  it('still refuses what the allow-list does not name: 127.0.0.2, [::1], localhost (::1), link-local', async () => {
    for (const url of [
      `${aliasTarget.origin}/`,
      'http://[::1]/',
      'http://169.254.169.254/',
      `http://0.0.0.0:${target.port}/`,
    ]) {
      const res = await call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'n', url } });
      expect(res.status, `${url}: ${res.body}`).toBe(400);
    }
    expect(aliasTarget.hits).toHaveLength(0);
  });

  it('answers no body an older version stored in an attempt', async () => {
    const id = await channel(`${target.origin}/legacy`);
    target.answer = () => ({ status: 200 });
    const test = await call('POST', `/v1/alert-channels/${id}/test`);
    const notificationId = test.json().id as number;
    await s.db
      .updateTable('alert_attempts')
      .set({ answer: `{"legacy":"${SECRET}"}` })
      .where('notification_id', '=', notificationId)
      .execute();
    const read = await call('GET', `/v1/alert-notifications/${notificationId}`);
    expect(read.json().attempts).toMatchObject([{ outcome: 'DELIVERED', statusCode: 200, answer: null }]);
    expect(read.body).not.toContain(SECRET);
  });
});
