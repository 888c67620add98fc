import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type Service } from '../../../src/service/app.js';
import { deadlineAfterMs } from '../../../src/service/heartbeats/expectation.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { testStore } from '../../helpers/service.js';

/**
 * Cron heartbeats across both DST changes: deadlines are the next occurrence in the schedule's
 * time zone (a time the spring-forward skips runs at the change; one the fall-back repeats runs
 * once), written out in UTC, plus the grace.
 */
describe('cron heartbeats across DST changes', () => {
  let store: Awaited<ReturnType<typeof testStore>>;
  let service: Service;
  let base: string;
  let key: string;
  const clock = { atMs: 0 };

  beforeAll(async () => {
    store = await testStore();
    const db = store.db;
    key = await createApiKey(db, await createAccount(db, 'A'));
    // The clock stands still where the test puts it; the sweeper is off (deadlines lie in 2026).
    service = await build({
      db,
      log: pino({ level: 'silent' }),
      retention: false,
      heartbeats: { now: () => clock.atMs, sweep: false },
    });
    base = await service.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await service?.close();
    await store?.drop();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  /** Creates the heartbeat at `createdAt`, then pings at each time; returns the deadline after each. */
  async function deadlines(
    schedule: string,
    timezone: string,
    graceMinutes: number,
    createdAt: string,
    pings: string[],
  ) {
    clock.atMs = Date.parse(createdAt);
    const created = await api('POST', '/v1/checks/heartbeat', {
      name: `cron ${schedule} ${timezone}`,
      heartbeat: { schedule, timezone, grace: graceMinutes, graceUnit: 'minutes' },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const out = [created.json.heartbeatState.dueAt as string];
    for (const at of pings) {
      clock.atMs = Date.parse(at);
      const res = await fetch(`${base}/ping/${created.json.heartbeat.pingToken}`);
      expect(res.status).toBe(200);
      out.push((await api('GET', `/v1/checks/${created.json.id}`)).json.heartbeatState.dueAt);
    }
    return out;
  }

  it('Europe/Amsterdam, spring forward (2026-03-29 02:00 CET → 03:00 CEST)', async () => {
    // 02:30 does not exist on the 29th: it runs at the change, 03:00 CEST = 01:00 UTC.
    expect(
      await deadlines('30 2 * * *', 'Europe/Amsterdam', 5, '2026-03-28T12:00:00Z', [
        '2026-03-29T01:00:10Z',
        '2026-03-30T00:30:05Z',
      ]),
    ).toEqual(['2026-03-29T01:05:00.000Z', '2026-03-30T00:35:00.000Z', '2026-03-31T00:35:00.000Z']);
    // A daily 09:00 moves from 08:00 UTC to 07:00 UTC.
    expect(
      await deadlines('0 9 * * *', 'Europe/Amsterdam', 0, '2026-03-28T08:30:00Z', ['2026-03-29T07:00:01Z']),
    ).toEqual(['2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
  });

  it('Europe/Amsterdam, fall back (2026-10-25 03:00 CEST → 02:00 CET)', async () => {
    // 02:30 happens twice on the 25th (00:30 and 01:30 UTC): once, at the first.
    expect(
      await deadlines('30 2 * * *', 'Europe/Amsterdam', 10, '2026-10-24T12:00:00Z', ['2026-10-25T00:31:00Z']),
    ).toEqual(['2026-10-25T00:40:00.000Z', '2026-10-26T01:40:00.000Z']);
    expect(
      await deadlines('0 9 * * *', 'Europe/Amsterdam', 0, '2026-10-24T08:00:00Z', ['2026-10-25T08:00:01Z']),
    ).toEqual(['2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  it('America/New_York, spring forward (2026-03-08 02:00 EST → 03:00 EDT)', async () => {
    expect(
      await deadlines('30 2 * * *', 'America/New_York', 15, '2026-03-07T12:00:00Z', [
        '2026-03-08T07:00:30Z',
        '2026-03-09T06:30:00Z',
      ]),
    ).toEqual(['2026-03-08T07:15:00.000Z', '2026-03-09T06:45:00.000Z', '2026-03-10T06:45:00.000Z']);
  });

  it('America/New_York, fall back (2026-11-01 02:00 EDT → 01:00 EST)', async () => {
    // 01:30 happens twice (05:30 and 06:30 UTC): once, at the first.
    expect(
      await deadlines('30 1 * * *', 'America/New_York', 0, '2026-10-31T12:00:00Z', ['2026-11-01T05:31:00Z']),
    ).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
    // Every 15 minutes goes on through the repeated hour in UTC.
    expect(
      await deadlines('*/15 * * * *', 'America/New_York', 1, '2026-11-01T05:50:00Z', [
        '2026-11-01T06:00:00Z',
      ]),
    ).toEqual(['2026-11-01T06:01:00.000Z', '2026-11-01T06:16:00.000Z']);
  });

  it('a period is the same number of milliseconds across a DST change; a start never brings the deadline forward', async () => {
    const period = { periodMs: 86_400_000, schedule: null, timezone: null, graceMs: 60_000 };
    expect(new Date(deadlineAfterMs(period, Date.parse('2026-03-28T23:00:00Z'))!).toISOString()).toBe(
      '2026-03-29T23:01:00.000Z',
    );
    clock.atMs = Date.parse('2026-06-01T00:00:00Z');
    const created = await api('POST', '/v1/checks/heartbeat', {
      name: 'daily',
      heartbeat: { schedule: '0 12 * * *', timezone: 'UTC', grace: 30, graceUnit: 'minutes' },
    });
    const token = created.json.heartbeat.pingToken;
    expect(created.json.heartbeatState.dueAt).toBe('2026-06-01T12:30:00.000Z');
    // An early /start keeps the schedule's deadline; a late one gives the run its grace.
    clock.atMs = Date.parse('2026-06-01T11:00:00Z');
    await fetch(`${base}/ping/${token}/start`);
    expect((await api('GET', `/v1/checks/${created.json.id}`)).json.heartbeatState).toMatchObject({
      status: 'STARTED',
      dueAt: '2026-06-01T12:30:00.000Z',
    });
    clock.atMs = Date.parse('2026-06-01T12:20:00Z');
    await fetch(`${base}/ping/${token}/start`);
    expect((await api('GET', `/v1/checks/${created.json.id}`)).json.heartbeatState.dueAt).toBe(
      '2026-06-01T12:50:00.000Z',
    );
  });
});
