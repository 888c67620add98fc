import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closeSenders, senders } from '../../../src/service/alerting/channels/index.js';
import {
  backoffMs,
  DeliveryWorker,
  type DeliveryWorkerOptions,
} from '../../../src/service/alerting/delivery/worker.js';
import { DeliveryQueries } from '../../../src/service/alerting/delivery/store.js';
import { alertingRoutes } from '../../../src/service/alerting/notification-routes.js';
import type { ChannelSender, DeliveryResult, ProviderConfig } from '../../../src/service/alerting/types.js';
import { authHook, createAccount } from '../../../src/service/platform/http/auth.js';
import { OutboundPolicy } from '../../../src/service/platform/http/outbound-policy.js';
import {
  AlertChannels,
  type ChannelDoc,
} from '../../../src/service/alerting/alert-channels/alert-channels.js';
import { Variables } from '../../../src/service/resources/variables/variables.js';
import { type Database, openSqliteDatabase } from '../../../src/service/platform/store/database.js';
import { type TestService, testService } from '../../helpers/service.js';

/** What the receiver got: the method, the notification's idempotency key (webhook-id) and the time. */
type Received = { key: string; atMs: number; body: string };
/** How the receiver answers request number `n` of a key. */
type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

/** A real HTTP receiver on loopback, answering per (idempotency key, request number of that key). */
class Receiver {
  readonly received: Received[] = [];
  answer: (key: string, n: number) => Answer = () => ({ status: 200, body: 'ok' });
  inFlight = 0;
  maxInFlight = 0;
  readonly #server: Server;
  constructor() {
    this.#server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const key = String(req.headers['webhook-id'] ?? req.headers['x-test-key'] ?? '');
        const n = this.received.filter((r) => r.key === key).length;
        this.received.push({ key, atMs: Date.now(), body: Buffer.concat(chunks).toString('utf8') });
        const a = this.answer(key, n);
        this.inFlight += 1;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        setTimeout(() => {
          this.inFlight -= 1;
          res.writeHead(a.status, a.headers ?? {});
          res.end(a.body ?? '');
        }, a.delayMs ?? 0);
      });
    });
  }
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }
  keys(): string[] {
    return this.received.map((r) => r.key);
  }
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** Log lines the worker wrote, parsed. */
type LogLine = { level: number; msg: string; [k: string]: unknown };

const PROVIDERS: ProviderConfig = {
  pagerdutyUrl: 'http://127.0.0.1:9',
  opsgenieUrl: { US: 'http://127.0.0.1:9', EU: 'http://127.0.0.1:9' },
  // The receivers listen on loopback, which the outbound policy refuses unless the allow-list names it.
  outbound: new OutboundPolicy({ allow: ['127.0.0.1/32'] }),
};

let db: Kysely<Database>;
let accountId: string;
let receiver: Receiver;
let hookUrl: string;
let clock: number;
let logs: LogLine[];
let workers: DeliveryWorker[];

beforeEach(async () => {
  db = await openSqliteDatabase(':memory:');
  accountId = await createAccount(db, 'A');
  receiver = new Receiver();
  hookUrl = await receiver.listen();
  clock = Date.now();
  logs = [];
  workers = [];
});

afterEach(async () => {
  for (const w of workers) await w.stop();
  await receiver.close();
  await db.destroy();
});

// The senders keep an HTTP connection pool between notifications.
afterAll(closeSenders);

/** A delivery worker on the test store with a fake clock (sends are real), stopped after the test. */
function worker(options: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker {
  const log = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LogLine) });
  const w = new DeliveryWorker(db, {
    log,
    senders,
    providers: PROVIDERS,
    now: () => clock,
    random: () => 0.5,
    ...options,
  });
  workers.push(w);
  return w;
}

/** Creates a channel through AlertChannels (secrets sealed as the API stores them). */
async function channel(type: string, config: Record<string, unknown>, account = accountId): Promise<number> {
  const doc = {
    type,
    config,
    subscriptions: [],
    sendRecovery: true,
    sendFailure: true,
    sendDegraded: false,
    sslExpiry: false,
    sslExpiryThreshold: 30,
    autoSubscribe: false,
  } as unknown as ChannelDoc;
  return (await new AlertChannels(db).insert(account, doc, clock)).id;
}

const webhook = (extra: Record<string, unknown> = {}) =>
  channel('WEBHOOK', {
    name: 'hook',
    url: hookUrl,
    method: 'POST',
    headers: [],
    queryParameters: [],
    ...extra,
  });

let seq = 0;
/** Queues a notification as the alert outbox does (PENDING, due now). */
async function queue(
  channelId: number,
  checkId: string | null,
  over: { account?: string } = {},
): Promise<number> {
  seq += 1;
  const key = `${checkId}:episode:ALERT_FAILURE:${seq}:${channelId}`;
  const { id } = await db
    .insertInto('alert_notifications')
    .values({
      account_id: over.account ?? accountId,
      alert_id: `alert-${seq}`,
      channel_id: channelId,
      check_id: checkId,
      alert_type: 'ALERT_FAILURE',
      idempotency_key: key,
      order_key: `${channelId}:${checkId ?? ''}`,
      state: 'PENDING',
      next_attempt_at: clock,
      doc: JSON.stringify({
        ALERT_TITLE: `check ${checkId} is failing`,
        ALERT_TYPE: 'ALERT_FAILURE',
        CHECK_ID: checkId,
      }),
      created_at: clock,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(id);
}

async function row(id: number) {
  return db.selectFrom('alert_notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function attempts(id: number) {
  return db
    .selectFrom('alert_attempts')
    .selectAll()
    .where('notification_id', '=', id)
    .orderBy('id')
    .execute();
}

async function keyOf(id: number): Promise<string> {
  return (await row(id)).idempotency_key;
}

describe('DeliveryWorker', () => {
  it('delivers in order per (channel, check): the first is retried (503 then 200) and the second waits for it', async () => {
    const ch = await webhook();
    const first = await queue(ch, 'check-1');
    const second = await queue(ch, 'check-1');
    const k1 = await keyOf(first);
    receiver.answer = (key, n) =>
      key === k1 && n === 0 ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' };
    const w = worker({ baseDelayMs: 1000 });

    expect(await w.runDue()).toBe(1);
    expect(receiver.keys()).toEqual([k1]);
    const retried = await row(first);
    expect(retried.state).toBe('PENDING');
    // Attempt 1 waits between half and all of baseDelayMs (random 0.5 → 750 ms).
    expect(Number(retried.next_attempt_at)).toBe(clock + 750);
    expect(retried.last_error).toContain('503');
    // Before the back-off ends nothing is sent: the first is not due and blocks the second.
    clock += 749;
    expect(await w.runDue()).toBe(0);
    clock += 1;
    expect(await w.runDue()).toBe(1);
    expect((await row(first)).state).toBe('DELIVERED');
    expect(await w.runDue()).toBe(1);
    expect((await row(second)).state).toBe('DELIVERED');
    expect(receiver.keys()).toEqual([k1, k1, await keyOf(second)]);
    expect((await attempts(first)).map((a) => [a.outcome, a.status_code])).toEqual([
      ['RETRY', 503],
      ['DELIVERED', 200],
    ]);
  });

  it('does not hold back another check of the same channel, nor the notifications after a FAILED one', async () => {
    const ch = await webhook();
    const a1 = await queue(ch, 'check-a');
    const b1 = await queue(ch, 'check-b');
    const c1 = await queue(ch, 'check-c');
    const c2 = await queue(ch, 'check-c');
    const [ka, kc1] = [await keyOf(a1), await keyOf(c1)];
    receiver.answer = (key) =>
      key === ka ? { status: 503 } : key === kc1 ? { status: 400, body: 'bad' } : { status: 200 };
    const w = worker();
    expect(await w.runDue()).toBe(3);
    expect((await row(a1)).state).toBe('PENDING');
    expect((await row(b1)).state).toBe('DELIVERED');
    expect((await row(c1)).state).toBe('FAILED');
    expect(await w.runDue()).toBe(1);
    expect((await row(c2)).state).toBe('DELIVERED');
  });

  it('honours Retry-After (the next attempt not before it) and caps it at one hour', async () => {
    const ch = await webhook();
    const soon = await queue(ch, 'check-1');
    const late = await queue(ch, 'check-2');
    const ks = await keyOf(soon);
    receiver.answer = (key, n) =>
      n > 0
        ? { status: 200 }
        : key === ks
          ? { status: 503, headers: { 'retry-after': '120' } }
          : { status: 429, headers: { 'retry-after': '86400' } };
    const w = worker();
    const start = clock;
    expect(await w.runDue()).toBe(2);
    expect(Number((await row(soon)).next_attempt_at)).toBe(start + 120_000);
    expect(Number((await row(late)).next_attempt_at)).toBe(start + 3_600_000);
    clock = start + 119_999;
    expect(await w.runDue()).toBe(0);
    clock = start + 120_000;
    expect(await w.runDue()).toBe(1);
    expect((await row(soon)).state).toBe('DELIVERED');
    clock = start + 3_600_000;
    expect(await w.runDue()).toBe(1);
    expect((await row(late)).state).toBe('DELIVERED');
  });

  it('fails a 4xx at once (logged at warn with channel, notification and reason) and retries 408 and 429', async () => {
    const ch = await webhook();
    const bad = await queue(ch, 'check-400');
    const timeout = await queue(ch, 'check-408');
    const limited = await queue(ch, 'check-429');
    const statuses = new Map([
      [await keyOf(bad), 400],
      [await keyOf(timeout), 408],
      [await keyOf(limited), 429],
    ]);
    receiver.answer = (key) => ({ status: statuses.get(key) ?? 500, body: 'no' });
    const w = worker();
    expect(await w.runDue()).toBe(3);
    const failed = await row(bad);
    expect(failed.state).toBe('FAILED');
    expect(failed.last_error).toContain('400');
    expect((await row(timeout)).state).toBe('PENDING');
    expect((await row(limited)).state).toBe('PENDING');
    const warn = logs.find((l) => l.level === 40 && l.notificationId === bad);
    expect(warn).toMatchObject({ alertChannelId: ch, msg: 'notification failed' });
    expect(String(warn?.reason)).toContain('400');
    // The 4xx is never sent again.
    clock += 3_600_000;
    expect(await w.runDue()).toBe(2);
    expect(receiver.received.filter((r) => r.key === (failed.idempotency_key as string))).toHaveLength(1);
  });

  it('gives up after maxAttempts and says so', async () => {
    const ch = await webhook();
    const id = await queue(ch, 'check-1');
    receiver.answer = () => ({ status: 502 });
    const w = worker({ maxAttempts: 3, baseDelayMs: 100 });
    for (let i = 0; i < 3; i++) {
      expect(await w.runDue()).toBe(1);
      clock += 10_000;
    }
    expect(await w.runDue()).toBe(0);
    const r = await row(id);
    expect(r.state).toBe('FAILED');
    expect(r.attempts).toBe(3);
    expect(r.last_error).toContain('gave up after 3 attempts');
    expect(await attempts(id)).toHaveLength(3);
  });

  it('records every attempt with its latency, the answer cut to 2 000 characters and secrets masked', async () => {
    const planted = 'whsec-planted-Zq81vX0pL';
    const variable = 'account-secret-value-7731';
    await new Variables(db).create(
      accountId,
      { key: 'API_TOKEN', value: variable, secret: true, locked: false },
      clock,
    );
    const ch = await webhook({ webhookSecret: planted });
    const id = await queue(ch, 'check-1');
    // A sender that gives the worker the receiver's answer as it came: the worker's own scrubbing
    // is what is tested (the real senders scrub too).
    const raw: ChannelSender = async (n, target, _p, signal): Promise<DeliveryResult> => {
      const res = await request(String(target.config.url), {
        method: 'POST',
        headers: { 'x-test-key': n.idempotencyKey },
        body: JSON.stringify(n.variables),
        signal,
      });
      const text = await res.body.text();
      return {
        outcome: res.statusCode < 300 ? 'DELIVERED' : 'RETRY',
        statusCode: res.statusCode,
        answer: text,
        error: res.statusCode < 300 ? null : `rejected with ${text.slice(0, 100)}`,
        retryAfterMs: null,
      };
    };
    receiver.answer = (_key, n) => ({
      status: n === 0 ? 500 : 200,
      delayMs: 30,
      body: `echo ${planted} ${variable} ${Buffer.from(planted).toString('base64')} ${'x'.repeat(10_000)}`,
    });
    const w = worker({ senders: { WEBHOOK: raw } });
    expect(await w.runDue()).toBe(1);
    clock += 60_000;
    expect(await w.runDue()).toBe(1);
    const rows = await attempts(id);
    expect(rows.map((a) => a.outcome)).toEqual(['RETRY', 'DELIVERED']);
    for (const a of rows) {
      expect(Number(a.latency_ms)).toBeGreaterThanOrEqual(25);
      expect(Number(a.started_at)).toBeGreaterThan(0);
      expect(a.answer!.length).toBeLessThanOrEqual(2001);
      expect(a.answer!.endsWith('…')).toBe(true);
      expect(a.answer).toContain('*****');
      expect(a.answer).not.toContain(planted);
      expect(a.answer).not.toContain(variable);
      expect(a.answer).not.toContain(Buffer.from(planted).toString('base64'));
    }
    expect(rows[0]!.error).not.toContain(planted);
    expect((await row(id)).last_error).toBeNull();
  });

  it('records what the real webhook sender did: status, answer, latency, and the idempotency key as webhook-id', async () => {
    const ch = await webhook({ webhookSecret: 'whsec_c2VjcmV0LWtleS1mb3ItdGVzdHM=' });
    const id = await queue(ch, 'check-1');
    receiver.answer = () => ({ status: 202, body: 'accepted' });
    expect(await worker().runDue()).toBe(1);
    const [a] = await attempts(id);
    // Only the status is kept, never the body (`accepted`).
    expect(a).toMatchObject({
      outcome: 'DELIVERED',
      status_code: 202,
      answer: 'HTTP 202 Accepted',
      error: null,
    });
    expect(Number(a!.latency_ms)).toBeGreaterThan(0);
    expect(receiver.keys()).toEqual([await keyOf(id)]);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ CHECK_ID: 'check-1' });
    expect(Number((await row(id)).delivered_at)).toBe(clock);
  });

  it('sends a notification whose worker died mid-send again with the same idempotency key after its lease', async () => {
    const ch = await webhook();
    const id = await queue(ch, 'check-1');
    const key = await keyOf(id);
    // Worker A posts, then never finishes (as if its process died) until the test lets it go.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stuck: ChannelSender = async (n, target, providers, signal) => {
      await senders.WEBHOOK(n, target, providers, signal);
      await gate;
      return { outcome: 'RETRY', statusCode: 503, answer: null, error: 'stale outcome', retryAfterMs: null };
    };
    const a = worker({
      senders: { WEBHOOK: stuck },
      leaseMs: 60_000,
      sendTimeoutMs: 30_000,
      workerId: 'worker-a',
    });
    const aPass = a.runDue();
    for (let i = 0; i < 200 && receiver.received.length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(receiver.keys()).toEqual([key]);
    expect(await row(id)).toMatchObject({ state: 'SENDING', lease_owner: 'worker-a', attempts: 1 });

    const b = worker({ workerId: 'worker-b' });
    clock += 59_999;
    expect(await b.runDue()).toBe(0);
    clock += 1;
    expect(await b.runDue()).toBe(1);
    expect(receiver.keys()).toEqual([key, key]);
    expect(await row(id)).toMatchObject({ state: 'DELIVERED', attempts: 2, lease_owner: null });

    // A's late outcome is recorded as an attempt but does not undo B's delivery.
    release();
    await aPass;
    expect((await row(id)).state).toBe('DELIVERED');
    expect((await attempts(id)).map((x) => x.outcome).sort()).toEqual(['DELIVERED', 'RETRY']);
    expect(logs.some((l) => l.msg.includes('lease lost') && l.notificationId === id)).toBe(true);
  });

  it('after a restart sends what was pending and never sends a DELIVERED notification again', async () => {
    const ch = await webhook();
    const done = await queue(ch, 'check-1');
    const first = worker({ workerId: 'before-restart' });
    expect(await first.runDue()).toBe(1);
    await first.stop();
    const pending = await queue(ch, 'check-2');

    const second = worker({ workerId: 'after-restart', pollMs: 20, now: Date.now });
    second.start();
    for (let i = 0; i < 200 && (await row(pending)).state !== 'DELIVERED'; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await row(pending)).state).toBe('DELIVERED');
    // Several more polls: the delivered one stays delivered once.
    await new Promise((r) => setTimeout(r, 150));
    expect(receiver.keys()).toEqual([await keyOf(done), await keyOf(pending)]);
    expect(await attempts(done)).toHaveLength(1);
  });

  it('keeps at most `concurrency` sends in flight and never two of one (channel, check)', async () => {
    const ch = await webhook();
    const ids: number[] = [];
    for (const check of ['c1', 'c2', 'c3', 'c4', 'c1', 'c1']) ids.push(await queue(ch, check));
    const keyToCheck = new Map<string, string>();
    for (const id of ids) keyToCheck.set(await keyOf(id), (await row(id)).check_id!);
    const open = new Map<string, number>();
    let overlap = false;
    receiver.answer = (key) => {
      const check = keyToCheck.get(key)!;
      if ((open.get(check) ?? 0) > 0) overlap = true;
      open.set(check, (open.get(check) ?? 0) + 1);
      setTimeout(() => open.set(check, open.get(check)! - 1), 60);
      return { status: 200, delayMs: 60 };
    };
    const w = worker({ concurrency: 3, pollMs: 20, now: Date.now });
    w.start();
    for (let i = 0; i < 300 && receiver.received.length < 6; i++) await new Promise((r) => setTimeout(r, 10));
    await w.stop();
    expect(receiver.received).toHaveLength(6);
    expect(receiver.maxInFlight).toBeLessThanOrEqual(3);
    expect(receiver.maxInFlight).toBeGreaterThan(1);
    expect(overlap).toBe(false);
    const c1 = ids.filter((_, i) => [0, 4, 5].includes(i));
    const c1Keys = await Promise.all(c1.map(keyOf));
    expect(receiver.keys().filter((k) => c1Keys.includes(k))).toEqual(c1Keys);
  });

  it('fails a notification of a deleted channel, and one whose provider is not configured, with the reason', async () => {
    const gone = await webhook();
    const email = await channel('EMAIL', { address: 'ops@example.test' });
    const a = await queue(gone, 'check-1');
    const b = await queue(email, 'check-1');
    await new AlertChannels(db).delete(accountId, gone);
    expect(await worker().runDue()).toBe(2);
    expect(await row(a)).toMatchObject({ state: 'FAILED', last_error: 'channel deleted' });
    expect((await attempts(a))[0]).toMatchObject({ outcome: 'FAILED', error: 'channel deleted' });
    expect((await row(b)).last_error).toContain('OUTPOST_SMTP_URL');
    const warned = logs.filter((l) => l.level === 40 && l.msg === 'notification failed').map((l) => l.reason);
    expect(warned).toEqual(
      expect.arrayContaining(['channel deleted', expect.stringContaining('OUTPOST_SMTP_URL')]),
    );
  });

  it('claims a notification once when two workers race for it', async () => {
    const ch = await webhook();
    const id = await queue(ch, 'check-1');
    const store = new DeliveryQueries(db);
    const claims = await Promise.all(
      ['w1', 'w2', 'w3'].map((owner) =>
        store.claim(id, { owner, nowMs: clock, leaseMs: 60_000, maxAttempts: 10 }),
      ),
    );
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
    expect((await row(id)).attempts).toBe(1);
  });

  it('refuses a lease that does not outlast a send', () => {
    expect(() => worker({ leaseMs: 10_000, sendTimeoutMs: 15_000 })).toThrow(/leaseMs/);
  });

  it('backs off exponentially with jitter between half and all of the step, capped', () => {
    expect(backoffMs(1, 1000, 600_000, () => 0)).toBe(500);
    expect(backoffMs(1, 1000, 600_000, () => 0.999999)).toBe(1000);
    expect(backoffMs(4, 1000, 600_000, () => 0)).toBe(4000);
    expect(backoffMs(30, 1000, 600_000, () => 0.5)).toBe(600_000);
  });
});

describe('alert notifications API', () => {
  let svc: TestService;
  let api: Receiver;
  let url: string;
  let apiWorker: DeliveryWorker;

  beforeAll(async () => {
    svc = await testService({ outbound: { allow: ['127.0.0.1/32'] } });
    if (!svc.app.hasRoute({ method: 'GET', url: '/v1/alert-notifications' })) {
      // Until the service registers the plugin: the same scope as every /v1 route.
      await svc.app.register(async (scope) => {
        const v1 = scope.withTypeProvider<TypeBoxTypeProvider>();
        v1.addHook('onRequest', authHook(svc.context.db));
        await alertingRoutes(v1, svc.context);
      });
    }
    api = new Receiver();
    url = await api.listen();
    apiWorker = new DeliveryWorker(svc.context.db, {
      log: pino({ level: 'silent' }),
      senders,
      providers: PROVIDERS,
      pollMs: 1000,
    });
    apiWorker.start();
  });

  afterAll(async () => {
    await apiWorker.stop();
    await svc.close();
    await api.close();
  });

  async function createWebhook(account: 'A' | 'B' = 'A'): Promise<number> {
    const res = await svc.request(
      'POST',
      '/v1/alert-channels',
      { type: 'WEBHOOK', config: { name: 'hook', url, webhookSecret: 'api-test-secret-42' } },
      account,
    );
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  }

  it('POST /v1/alert-channels/{id}/test answers the test notification with its first attempt', async () => {
    const id = await createWebhook();
    api.answer = () => ({ status: 200, body: 'thanks' });
    const started = Date.now();
    const res = await svc.request('POST', `/v1/alert-channels/${id}/test`);
    expect(res.statusCode, res.body).toBe(200);
    expect(Date.now() - started).toBeLessThan(2000);
    const body = res.json();
    expect(body).toMatchObject({
      alertChannelId: id,
      alertType: 'ALERT_TEST',
      alertId: null,
      checkId: null,
      state: 'DELIVERED',
      lastError: null,
      nextAttemptAt: null,
      attempts: [{ outcome: 'DELIVERED', statusCode: 200, answer: 'HTTP 200 OK', error: null }],
      // The hosted API's reading: the id as text, the status, the time.
      status: 'SUCCESS',
      checkAlertId: null,
      timestamp: body.createdAt,
    });
    expect(body.id).toMatch(/^[1-9]\d*$/);
    expect(body.idempotencyKey).toMatch(new RegExp(`^test:${id}:[0-9a-f-]{36}$`));
    const sent = api.received.find((r) => r.key === body.idempotencyKey);
    expect(JSON.parse(sent!.body)).toMatchObject({
      ALERT_TYPE: 'ALERT_TEST',
      ALERT_TITLE: 'Test notification from Outpost',
      CHECK_NAME: 'Test check',
    });
  });

  it('answers a failed test with the attempt and the reason, and 404 for an unknown channel or one of another account', async () => {
    const id = await createWebhook();
    api.answer = () => ({ status: 401, body: 'bad token api-test-secret-42' });
    const res = await svc.request('POST', `/v1/alert-channels/${id}/test`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      state: 'FAILED',
      status: 'FAILURE',
      attempts: [{ outcome: 'FAILED', statusCode: 401 }],
    });
    expect(res.body).not.toContain('api-test-secret-42');
    expect((await svc.request('POST', '/v1/alert-channels/999999/test')).statusCode).toBe(404);
    expect((await svc.request('POST', `/v1/alert-channels/${id}/test`, undefined, 'B')).statusCode).toBe(404);
  });

  it('answers 202 when no attempt finished within maxWaitSeconds (here: held back behind a retried test of the channel)', async () => {
    const id = await createWebhook();
    api.answer = () => ({ status: 429, headers: { 'retry-after': '3600' }, body: 'slow down' });
    const first = await svc.request('POST', `/v1/alert-channels/${id}/test`);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      state: 'PENDING',
      status: 'IN_PROGRESS',
      attempts: [{ outcome: 'RETRY', statusCode: 429 }],
    });
    expect(Date.parse(first.json().nextAttemptAt) - Date.now()).toBeGreaterThan(3_500_000);
    const started = Date.now();
    const res = await svc.request('POST', `/v1/alert-channels/${id}/test?maxWaitSeconds=1`);
    expect(res.statusCode, res.body).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(res.json()).toMatchObject({ state: 'PENDING', attempts: [] });
    const later = await svc.request('GET', `/v1/alert-notifications/${res.json().id}`);
    expect(later.json()).toMatchObject({ id: res.json().id, state: 'PENDING', attempts: [] });
  }, 10_000);

  it('lists notifications newest first with filters, and never those of another account', async () => {
    api.answer = () => ({ status: 200 });
    const a = await createWebhook('A');
    const b = await createWebhook('B');
    expect((await svc.request('POST', `/v1/alert-channels/${a}/test`)).statusCode).toBe(200);
    expect((await svc.request('POST', `/v1/alert-channels/${a}/test`)).statusCode).toBe(200);
    expect((await svc.request('POST', `/v1/alert-channels/${b}/test`, undefined, 'B')).statusCode).toBe(200);

    const listA = await svc.request('GET', `/v1/alert-notifications?alertChannelId=${a}`);
    expect(listA.statusCode, listA.body).toBe(200);
    const itemsA = listA.json() as { id: string; alertChannelId: number; attempts: unknown[] }[];
    expect(itemsA).toHaveLength(2);
    // Ids are numbers written as text, as the hosted API answers them; newest first.
    expect(itemsA.every((n) => typeof n.id === 'string' && /^\d+$/.test(n.id))).toBe(true);
    expect(Number(itemsA[0]!.id)).toBeGreaterThan(Number(itemsA[1]!.id));
    expect(itemsA.every((n) => n.alertChannelId === a && n.attempts.length === 1)).toBe(true);

    const all = (await svc.request('GET', '/v1/alert-notifications?limit=100')).json() as {
      alertChannelId: number;
    }[];
    expect(all.some((n) => n.alertChannelId === b)).toBe(false);
    const allB = (await svc.request('GET', '/v1/alert-notifications', undefined, 'B')).json() as {
      id: string;
      alertChannelId: number;
    }[];
    expect(allB.map((n) => n.alertChannelId)).toEqual([b]);
    expect((await svc.request('GET', `/v1/alert-notifications/${allB[0]!.id}`)).statusCode).toBe(404);
    expect(
      (await svc.request('GET', `/v1/alert-notifications/${allB[0]!.id}`, undefined, 'B')).statusCode,
    ).toBe(200);

    const delivered = (await svc.request('GET', '/v1/alert-notifications?state=DELIVERED&limit=1')).json();
    expect(delivered).toHaveLength(1);
    expect((await svc.request('GET', '/v1/alert-notifications?checkId=none')).json()).toEqual([]);
    expect((await svc.request('GET', '/v1/alert-notifications?state=LOST')).statusCode).toBe(400);
  });
});
