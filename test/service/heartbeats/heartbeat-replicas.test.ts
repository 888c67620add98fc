import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { testStore } from '../../helpers/service.js';

/**
 * Two services on one store, as two replicas on one PostgreSQL store are (the `postgres` test project; on
 * SQLite the two share its one connection): their heartbeat sweepers run at once over the same late
 * heartbeats, and each heartbeat is marked late, with one failed result, once.
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
});
