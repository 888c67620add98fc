import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { testStore } from '../../helpers/service.js';

/**
 * Two services on one store, as two replicas on one PostgreSQL store are (the `postgres` test project; on
 * SQLite the two share its one connection): their heartbeat sweepers run at once over the same late
 * heartbeats, and each heartbeat is marked late, with one failed result, once; a ping on one replica and a
 * sweep on the other never both store a heartbeat's owed late result.
 */
let store: Awaited<ReturnType<typeof testStore>>;
let replicas: Service[];
let key: string;
const clock = { offsetMs: 0 };

beforeAll(async () => {
  store = await testStore();
  key = await createApiKey(store.db, await createAccount(store.db, 'A'));
  const options = {
    db: store.db,
    log: pino({ level: 'silent' }),
    retention: false as const,
    appUrl: 'https://outpost.example.test/',
    // Swept by the test only, so both sweeps meet the same late heartbeats.
    heartbeats: { now: () => Date.now() + clock.offsetMs, sweep: false },
  };
  replicas = [await build(options), await build(options)];
});

afterAll(async () => {
  for (const replica of replicas ?? []) await replica.close();
  await store?.drop();
});

describe('heartbeat sweeps of two replicas at once', () => {
  it('mark each late heartbeat once and store one failed result for it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await replicas[i % 2]!.app.inject({
        method: 'POST',
        url: '/v1/checks/heartbeat',
        headers: { authorization: `Bearer ${key}` },
        payload: {
          name: `nightly job ${i}`,
          heartbeat: { period: 5, periodUnit: 'minutes', grace: 1, graceUnit: 'minutes' },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id as string);
    }
    // Every deadline (period + grace after creation) has passed.
    clock.offsetMs += 7 * 60_000;
    const [a, b] = await Promise.all(replicas.map((replica) => replica.heartbeats.sweepNow()));
    expect(a! + b!).toBe(ids.length);
    const failed = await store.db
      .selectFrom('check_results')
      .select('check_id')
      .where('check_id', 'in', ids)
      .where('status', '=', 'FAILED')
      .execute();
    expect(failed).toHaveLength(ids.length);
    expect(new Set(failed.map((row) => row.check_id)).size).toBe(ids.length);
    const late = await store.db
      .selectFrom('heartbeats')
      .select('status')
      .where('check_id', 'in', ids)
      .execute();
    expect(late.every((row) => row.status === 'LATE')).toBe(true);
  });

  it('store an owed late result once when one replica sweeps while the other takes pings', async () => {
    const checks: Array<{ id: string; token: string }> = [];
    for (let i = 0; i < 40; i++) {
      const res = await replicas[0]!.app.inject({
        method: 'POST',
        url: '/v1/checks/heartbeat',
        headers: { authorization: `Bearer ${key}` },
        payload: {
          name: `hourly job ${i}`,
          heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'seconds' },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      checks.push({ id: res.json().id as string, token: res.json().heartbeat.pingToken as string });
    }
    const ids = checks.map((c) => c.id);
    // Marked late with their results owed, as a sweep's first step leaves them.
    const lateAt = Date.now() + clock.offsetMs;
    await store.db
      .updateTable('heartbeats')
      .set({ status: 'LATE', due_at: null, late_result_at: lateAt })
      .where('check_id', 'in', ids)
      .execute();
    const pings = Promise.all(
      checks.map((c) => replicas[1]!.app.inject({ method: 'GET', url: `/ping/${c.token}` })),
    );
    const [answers] = await Promise.all([pings, replicas[0]!.heartbeats.sweepNow()]);
    expect(answers.map((a) => a.statusCode)).toEqual(checks.map(() => 200));
    const rows = await store.db
      .selectFrom('check_results')
      .select(['check_id', 'status', 'stopped_at'])
      .where('check_id', 'in', ids)
      .execute();
    for (const id of ids) {
      const own = rows.filter((row) => row.check_id === id);
      expect(own.filter((row) => row.status === 'FAILED').map((row) => Number(row.stopped_at))).toEqual([
        lateAt,
      ]);
      expect(own.filter((row) => row.status === 'PASSED')).toHaveLength(1);
    }
    const owed = await store.db
      .selectFrom('heartbeats')
      .select('check_id')
      .where('check_id', 'in', ids)
      .where('late_result_at', 'is not', null)
      .execute();
    expect(owed).toEqual([]);
  });
});
