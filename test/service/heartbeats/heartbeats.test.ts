import { Value } from '@sinclair/typebox/value';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckResultSchema } from '../../../src/protocol/index.js';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { readDoc } from '../../../src/service/platform/store/schema.js';
import { TEST_DATABASE, testStore } from '../../helpers/service.js';

/** A real service listening on loopback, with a clock the test moves (`offsetMs`). */
type Hb = {
  service: Service;
  base: string;
  key: string;
  clock: { offsetMs: number };
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
};

type Store = Awaited<ReturnType<typeof testStore>>;

/**
 * Starts a service on `store`, which its close leaves open (a restart builds another on it), or else on a
 * new store of its own (`testStore`), dropped at close.
 */
async function start(
  store?: Store,
  clock = { offsetMs: 0 },
  account?: { key: string },
  heartbeats: { sweep?: boolean } = {},
): Promise<Hb> {
  const own = store ? undefined : await testStore();
  const db = (store ?? own!).db;
  let key = account?.key;
  if (!key) key = await createApiKey(db, await createAccount(db, 'A'));
  const service = await build({
    db,
    log: pino({ level: 'silent' }),
    retention: false,
    appUrl: 'https://outpost.example.test/',
    heartbeats: { now: () => Date.now() + clock.offsetMs, ...heartbeats },
  });
  const base = await service.app.listen({ host: '127.0.0.1', port: 0 });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  return {
    service,
    base,
    key,
    clock,
    api,
    close: async () => {
      await service.close();
      await own?.drop();
    },
  };
}

const heartbeatBody = (heartbeat: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'nightly backup',
  heartbeat,
  ...extra,
});

async function createHeartbeat(
  hb: Hb,
  heartbeat: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const res = await hb.api('POST', '/v1/checks/heartbeat', heartbeatBody(heartbeat, extra));
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json as { id: string; pingUrl: string; heartbeat: { pingToken: string }; heartbeatState: any };
}

/** The stored results of a check, oldest first (each validated against CheckResultSchema). */
async function results(hb: Hb, checkId: string) {
  const rows = await hb.service.context.db
    .selectFrom('check_results')
    .selectAll()
    .where('check_id', '=', checkId)
    // Insertion order (SQLite's rowid; on PostgreSQL the inserting transaction's id, as each result is written
    // in a transaction of its own and never updated here): several results may share a millisecond.
    .orderBy(TEST_DATABASE === 'postgres' ? sql`xmin::text::bigint` : sql`rowid`)
    .execute();
  return rows.map((r) => {
    const doc = readDoc(r.doc);
    expect(
      Value.Check(CheckResultSchema, doc),
      JSON.stringify([...Value.Errors(CheckResultSchema, doc)]),
    ).toBe(true);
    return { ...doc, sessionId: r.check_session_id };
  });
}

const ping = (hb: Hb, token: string, suffix = '', init: RequestInit = {}) =>
  fetch(`${hb.base}/ping/${token}${suffix}`, init);

describe('heartbeat checks', () => {
  let hb: Hb;
  beforeAll(async () => {
    hb = await start();
  });
  afterAll(async () => {
    await hb.close();
  });

  it('creates a heartbeat with its ping URL and token; never scheduled', async () => {
    const before = Date.now();
    const check = await createHeartbeat(hb, {
      period: 5,
      periodUnit: 'minutes',
      grace: 1,
      graceUnit: 'minutes',
    });
    expect(check.heartbeat.pingToken).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(check.pingUrl).toBe(`https://outpost.example.test/ping/${check.heartbeat.pingToken}`);
    expect(check.heartbeatState.status).toBe('NEW');
    // Due a period and a grace after it was created (the request's own time, however long it took).
    const due = Date.parse(check.heartbeatState.dueAt);
    expect(due).toBeGreaterThanOrEqual(before + 6 * 60_000);
    expect(due).toBeLessThanOrEqual(Date.now() + 6 * 60_000);
    const row = await hb.service.context.db
      .selectFrom('checks')
      .select('next_run_at')
      .where('id', '=', check.id)
      .executeTakeFirstOrThrow();
    expect(row.next_run_at).toBeNull();
    // A trigger by checkId skips a heartbeat: no session, nothing queued.
    const trigger = await hb.api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } });
    expect(trigger.status).toBe(201);
    expect(trigger.json.sessions).toEqual([]);
  });

  it('refuses invalid heartbeats with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ period: 29, periodUnit: 'seconds', grace: 0, graceUnit: 'seconds' }, 'heartbeat.period'],
      [{ period: 366, periodUnit: 'days', grace: 0, graceUnit: 'seconds' }, 'heartbeat.period'],
      [{ period: 1, periodUnit: 'hours', grace: 366, graceUnit: 'days' }, 'heartbeat.grace'],
      [{ period: 1, periodUnit: 'weeks', grace: 0, graceUnit: 'seconds' }, 'heartbeat.periodUnit'],
      [{ grace: 0, graceUnit: 'seconds' }, 'heartbeat.period'],
      [{ period: 1, periodUnit: 'hours', graceUnit: 'seconds' }, 'heartbeat.grace'],
      [
        { schedule: '0 3 * * *', timezone: 'Mars/Olympus', grace: 0, graceUnit: 'seconds' },
        'heartbeat.timezone',
      ],
      [{ schedule: '0 3 * *', grace: 0, graceUnit: 'seconds' }, 'heartbeat.schedule'],
      [{ schedule: '0 0 * * * *', grace: 0, graceUnit: 'seconds' }, 'heartbeat.schedule'],
      [{ schedule: '99 3 * * *', grace: 0, graceUnit: 'seconds' }, 'heartbeat.schedule'],
      [{ schedule: '0 0 31 2 *', grace: 0, graceUnit: 'seconds' }, 'heartbeat.schedule'],
      [
        { schedule: '0 3 * * *', period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'seconds' },
        'heartbeat.schedule',
      ],
    ];
    for (const [heartbeat, field] of cases) {
      const res = await hb.api('POST', '/v1/checks/heartbeat', heartbeatBody(heartbeat));
      expect(res.status, JSON.stringify(heartbeat)).toBe(400);
      expect(res.json.attributes.field, JSON.stringify(heartbeat)).toBe(field);
    }
  });

  it('takes pings of every form and stores a result per success or failure', async () => {
    const check = await createHeartbeat(hb, {
      period: 1,
      periodUnit: 'hours',
      grace: 10,
      graceUnit: 'minutes',
    });
    const token = check.heartbeat.pingToken;

    const get = await ping(hb, token, '', { headers: { 'user-agent': 'cron/1' } });
    expect(get.status).toBe(200);
    expect(await get.text()).toBe('OK');
    expect(get.headers.get('ping-body-limit')).toBe('10000');
    const head = await ping(hb, token, '', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('ping-body-limit')).toBe('10000');
    const post = await ping(hb, token, '', { method: 'POST', body: 'backup done: 42 files' });
    expect(post.status).toBe(200);

    expect((await ping(hb, token, '/start')).status).toBe(200);
    let state = (await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState;
    expect(state.status).toBe('STARTED');
    await new Promise((r) => setTimeout(r, 30));
    expect((await ping(hb, token, '/0')).status).toBe(200);
    state = (await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState;
    expect(state.status).toBe('UP');

    const fail = await ping(hb, token, '/fail', { method: 'POST', body: 'disk full' });
    expect(fail.status).toBe(200);
    expect((await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState.status).toBe('FAILING');
    expect((await ping(hb, token, '/3', { method: 'POST', body: 'exit 3' })).status).toBe(200);
    // A success ping recovers a failing heartbeat.
    expect((await ping(hb, token, '')).status).toBe(200);
    expect((await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState.status).toBe('UP');

    const big = 'x'.repeat(25_000);
    const cut = await ping(hb, token, '', {
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/json' },
    });
    expect(cut.status).toBe(200);

    expect((await ping(hb, token, '/256')).status).toBe(400);
    expect((await ping(hb, token, '/later')).status).toBe(400);
    expect((await ping(hb, 'A'.repeat(22))).status).toBe(404);
    expect((await ping(hb, 'not-a-token')).status).toBe(404);

    const list = await results(hb, check.id);
    expect(list.map((r) => r.status)).toEqual([
      'PASSED',
      'PASSED',
      'PASSED',
      'PASSED',
      'FAILED',
      'FAILED',
      'PASSED',
      'PASSED',
    ]);
    for (const r of list) {
      expect(r).toMatchObject({ runLocation: 'heartbeat', resultType: 'FINAL', attempts: 1 });
      expect(r.sessionId).toBeNull();
    }
    expect(list[2]!.logs).toEqual([expect.objectContaining({ level: 'INFO', msg: 'backup done: 42 files' })]);
    expect(list[3]!.responseTime).toBeGreaterThanOrEqual(30);
    expect(list[0]!.responseTime).toBe(0);
    expect(list[4]).toMatchObject({ errorMessage: 'Ping reported failure', hasFailures: true });
    expect(list[4]!.logs[0]).toMatchObject({ level: 'ERROR', msg: 'disk full' });
    expect(list[5]!.errorMessage).toBe('Ping reported failure (exit code 3)');

    const pings = (await hb.api('GET', `/v1/checks/${check.id}/heartbeat-pings`)).json;
    expect(pings).toHaveLength(9);
    expect(pings[0]).toMatchObject({ kind: 'success', method: 'POST', bodySizeBytes: 25_000 });
    expect(pings[0].body).toHaveLength(10_000);
    expect(pings.map((p: { kind: string }) => p.kind).reverse()).toEqual([
      'success',
      'success',
      'success',
      'start',
      'success',
      'fail',
      'fail',
      'success',
      'success',
    ]);
    expect(pings.at(-1)).toMatchObject({ method: 'GET', userAgent: 'cron/1' });
    expect(pings.at(-2)).toMatchObject({ method: 'HEAD' });
    expect(pings.find((p: { exitCode: number | null }) => p.exitCode === 3)).toMatchObject({ kind: 'fail' });

    // The results API shows them; failed ones form error groups, as any failed result does
    // (through the result outbox).
    const api = await hb.api('GET', `/v1/check-results/${check.id}?limit=100`);
    expect(api.status).toBe(200);
    expect(api.json).toHaveLength(8);
    let groups: { status: number; json: any } = { status: 0, json: [] };
    for (let i = 0; i < 60 && (groups.json?.length ?? 0) === 0; i++) {
      groups = await hb.api('GET', `/v1/error-groups/checks/${check.id}`);
      if ((groups.json?.length ?? 0) === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(groups.status).toBe(200);
    expect(groups.json.map((g: { rawErrorMessage: string }) => g.rawErrorMessage)).toContain(
      'Ping reported failure',
    );
  });

  it('keeps the last 100 pings and rate-limits each token at 60 a minute with 429 and Retry-After', async () => {
    const check = await createHeartbeat(hb, {
      period: 1,
      periodUnit: 'hours',
      grace: 0,
      graceUnit: 'seconds',
    });
    const token = check.heartbeat.pingToken;
    const answers = await Promise.all(Array.from({ length: 61 }, () => ping(hb, token, '/start')));
    const codes = answers.map((a) => a.status).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(60);
    const limited = answers.find((a) => a.status === 429)!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another token is not limited by this one.
    const other = await createHeartbeat(hb, {
      period: 1,
      periodUnit: 'hours',
      grace: 0,
      graceUnit: 'seconds',
    });
    expect((await ping(hb, other.heartbeat.pingToken)).status).toBe(200);
    const pings = (await hb.api('GET', `/v1/checks/${check.id}/heartbeat-pings`)).json;
    expect(pings).toHaveLength(60);
  });

  it('keeps at most 100 pings per check', async () => {
    const check = await createHeartbeat(hb, {
      period: 1,
      periodUnit: 'hours',
      grace: 0,
      graceUnit: 'seconds',
    });
    const { HeartbeatQueries } = await import('../../../src/service/heartbeats/store.js');
    const store = new HeartbeatQueries(hb.service.context.db);
    for (let i = 0; i < 105; i++) {
      await store.insertPing({
        accountId: (
          await hb.service.context.db
            .selectFrom('heartbeats')
            .select('account_id')
            .where('check_id', '=', check.id)
            .executeTakeFirstOrThrow()
        ).account_id,
        checkId: check.id,
        kind: 'success',
        exitCode: null,
        method: 'GET',
        remoteAddress: null,
        userAgent: null,
        body: String(i),
        bodySizeBytes: 1,
        receivedAtMs: Date.now(),
      });
    }
    const pings = (await hb.api('GET', `/v1/checks/${check.id}/heartbeat-pings`)).json;
    expect(pings).toHaveLength(100);
    expect(pings[0].body).toBe('104');
    expect(pings.at(-1).body).toBe('5');
  });

  it('detects a late heartbeat within 1 s of its deadline and recovers it on the next ping', async () => {
    const check = await createHeartbeat(hb, {
      period: 30,
      periodUnit: 'seconds',
      grace: 2,
      graceUnit: 'seconds',
    });
    const token = check.heartbeat.pingToken;
    expect((await ping(hb, token)).status).toBe(200);
    const dueAt = Date.parse((await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState.dueAt);
    // Move the clock to 400 ms before the deadline.
    hb.clock.offsetMs += dueAt - (Date.now() + hb.clock.offsetMs) - 400;
    let late: any;
    const t0 = Date.now();
    while (Date.now() - t0 < 3000) {
      late = (await results(hb, check.id)).find((r) => r.status === 'FAILED');
      if (late) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(late, 'no late result within 3 s').toBeDefined();
    const detectedAt = Date.parse(late.stoppedAt);
    expect(detectedAt).toBeGreaterThanOrEqual(dueAt);
    expect(detectedAt - dueAt).toBeLessThan(1000);
    expect(late.errorMessage).toMatch(/^No ping received within period \+ grace \(last ping \d{4}-.*Z\)$/);
    expect((await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState).toMatchObject({
      status: 'LATE',
      dueAt: null,
    });
    // Late once: no second result while it stays late.
    await new Promise((r) => setTimeout(r, 1200));
    expect((await results(hb, check.id)).filter((r) => r.status === 'FAILED')).toHaveLength(1);
    expect((await ping(hb, token)).status).toBe(200);
    const after = await results(hb, check.id);
    expect(after.at(-1)!.status).toBe('PASSED');
    expect((await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState.status).toBe('UP');
  });

  it('a paused heartbeat takes pings but is never late; an update keeps the token', async () => {
    const check = await createHeartbeat(
      hb,
      { period: 30, periodUnit: 'seconds', grace: 0, graceUnit: 'seconds' },
      { activated: false },
    );
    const token = check.heartbeat.pingToken;
    expect(check.heartbeatState).toMatchObject({ status: 'PAUSED', dueAt: null });
    expect((await ping(hb, token)).status).toBe(200);
    hb.clock.offsetMs += 120_000;
    await new Promise((r) => setTimeout(r, 1100));
    expect(await results(hb, check.id)).toEqual([]);

    const put = await hb.api('PUT', `/v1/checks/${check.id}`, {
      activated: true,
      heartbeat: {
        schedule: '0 4 * * *',
        timezone: 'Europe/Amsterdam',
        grace: 1,
        graceUnit: 'hours',
        pingToken: 'ignored',
      },
      script: null,
    });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    expect(put.json.heartbeat).toMatchObject({
      schedule: '0 4 * * *',
      timezone: 'Europe/Amsterdam',
      pingToken: token,
    });
    expect(put.json.pingUrl).toBe(check.pingUrl);
    expect(put.json.heartbeatState.status).toBe('UP');
    const bad = await hb.api('PUT', `/v1/checks/${check.id}`, {
      heartbeat: { period: 10, periodUnit: 'seconds', grace: 0, graceUnit: 'seconds' },
      script: null,
    });
    expect(bad.status).toBe(400);
    expect(bad.json.attributes.field).toBe('heartbeat.period');
    expect((await hb.api('DELETE', `/v1/checks/${check.id}`)).status).toBe(204);
    expect((await ping(hb, token)).status).toBe(404);
  });
});

describe('heartbeats across a restart', () => {
  let store: Store;
  beforeAll(async () => {
    store = await testStore();
  });
  afterAll(async () => {
    await store?.drop();
  });

  it('raises no late result for a deadline that passed while stopped until start + grace', async () => {
    const clock = { offsetMs: 0 };
    const first = await start(store, clock);
    const check = await createHeartbeat(first, {
      period: 30,
      periodUnit: 'seconds',
      grace: 2,
      graceUnit: 'seconds',
    });
    expect((await ping(first, check.heartbeat.pingToken)).status).toBe(200);
    await first.close();

    // Stopped for 10 minutes: the deadline (ping + 32 s) passed meanwhile.
    clock.offsetMs += 600_000;
    const second = await start(store, clock, { key: first.key });
    try {
      const startedAt = Date.now() + clock.offsetMs;
      const state = (await second.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState;
      expect(state.status).toBe('UP');
      expect(Math.abs(Date.parse(state.dueAt) - (startedAt + 2000))).toBeLessThan(500);
      await new Promise((r) => setTimeout(r, 1200));
      expect((await results(second, check.id)).filter((r) => r.status === 'FAILED')).toEqual([]);
      // After start + grace it is late as any other.
      let late: any;
      const t0 = Date.now();
      while (!late && Date.now() - t0 < 3000) {
        late = (await results(second, check.id)).find((r) => r.status === 'FAILED');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(late).toBeDefined();
      expect(Date.parse(late.stoppedAt)).toBeGreaterThanOrEqual(Date.parse(state.dueAt));
    } finally {
      await second.close();
    }
  });
});

/**
 * A heartbeat marked late whose FAILED result is still owed (`late_result_at`), as a sweep leaves it between
 * marking a burst of missed deadlines and storing their results, or as a service stopped between the two
 * leaves it: the result, dated when it was marked, is stored once, before anything that comes after.
 */
describe('late results owed', () => {
  let store: Store;
  beforeAll(async () => {
    store = await testStore();
  });
  afterAll(async () => {
    await store?.drop();
  });

  /** Marks the heartbeat of `checkId` LATE at `lateAtMs` with its result owed, as a sweep's first step does. */
  const markLate = (checkId: string, lateAtMs: number) =>
    store.db
      .updateTable('heartbeats')
      .set({ status: 'LATE', due_at: null, late_result_at: lateAtMs, updated_at: lateAtMs })
      .where('check_id', '=', checkId)
      .execute();
  const owed = async (checkId: string) =>
    (
      await store.db
        .selectFrom('heartbeats')
        .select('late_result_at')
        .where('check_id', '=', checkId)
        .executeTakeFirstOrThrow()
    ).late_result_at;
  const hourly = { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'seconds' };

  it('a sweep stores the owed result once, dated when the heartbeat was marked late, after a restart too', async () => {
    const first = await start(store, undefined, undefined, { sweep: false });
    const check = await createHeartbeat(first, hourly);
    const runStarted = Date.now() - 60_000;
    await store.db
      .updateTable('heartbeats')
      .set({ started_at: runStarted })
      .where('check_id', '=', check.id)
      .execute();
    const lateAt = Date.now() - 5_000;
    await markLate(check.id, lateAt);
    await first.close();

    const second = await start(store, undefined, { key: first.key });
    try {
      let failed: any[] = [];
      const t0 = Date.now();
      while (failed.length === 0 && Date.now() - t0 < 3000) {
        await new Promise((r) => setTimeout(r, 50));
        failed = (await results(second, check.id)).filter((r) => r.status === 'FAILED');
      }
      expect(failed).toHaveLength(1);
      expect(Date.parse(failed[0].stoppedAt)).toBe(lateAt);
      expect(Date.parse(failed[0].startedAt)).toBe(lateAt);
      expect(failed[0].errorMessage).toBe(
        `No ping received within period + grace (last ping never); a run started at ${new Date(runStarted).toISOString()} did not finish within the grace`,
      );
      expect(await owed(check.id)).toBeNull();
      expect(await second.service.heartbeats.sweepNow()).toBe(0);
      expect((await results(second, check.id)).filter((r) => r.status === 'FAILED')).toHaveLength(1);
      expect((await second.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState).toMatchObject({
        status: 'LATE',
        dueAt: null,
      });
    } finally {
      await second.close();
    }
  });

  it('a ping before the sweep stores the owed FAILED result first, then its own', async () => {
    const hb = await start(store, undefined, undefined, { sweep: false });
    try {
      const check = await createHeartbeat(hb, hourly);
      // A /start, then the deadline passes: the run it started is the one that did not finish.
      expect((await ping(hb, check.heartbeat.pingToken, '/start')).status).toBe(200);
      const lateAt = Date.now() - 1_000;
      await markLate(check.id, lateAt);
      expect((await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState).toMatchObject({
        status: 'LATE',
        startedAt: null,
        dueAt: null,
      });
      expect((await ping(hb, check.heartbeat.pingToken)).status).toBe(200);
      const all = await results(hb, check.id);
      expect(all.map((r) => r.status)).toEqual(['FAILED', 'PASSED']);
      expect(Date.parse(all[0]!.stoppedAt)).toBe(lateAt);
      expect(all[0]!.errorMessage).toMatch(/a run started at .* did not finish within the grace$/);
      // The success ping ends no run: the one started was already counted as failed.
      expect(all[1]!.responseTime).toBe(0);
      expect(await owed(check.id)).toBeNull();
      expect((await hb.api('GET', `/v1/checks/${check.id}`)).json.heartbeatState.status).toBe('UP');
      expect(await hb.service.heartbeats.sweepNow()).toBe(0);
      expect(await results(hb, check.id)).toHaveLength(2);
    } finally {
      await hb.close();
    }
  });

  it('pausing the check stores the owed result before the pause', async () => {
    const hb = await start(store, undefined, undefined, { sweep: false });
    try {
      const check = await createHeartbeat(hb, hourly);
      await markLate(check.id, Date.now() - 1_000);
      const put = await hb.api('PUT', `/v1/checks/${check.id}`, { activated: false, script: null });
      expect(put.status, JSON.stringify(put.json)).toBe(200);
      expect(put.json.heartbeatState.status).toBe('PAUSED');
      expect((await results(hb, check.id)).map((r) => r.status)).toEqual(['FAILED']);
      expect(await owed(check.id)).toBeNull();
      expect(await hb.service.heartbeats.sweepNow()).toBe(0);
      expect(await results(hb, check.id)).toHaveLength(1);
    } finally {
      await hb.close();
    }
  });
});
