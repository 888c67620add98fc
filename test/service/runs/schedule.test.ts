import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { nextRunAfter, periodMs, phaseMs } from '../../../src/service/runs/scheduler/schedule.js';
import { Scheduler } from '../../../src/service/runs/scheduler/scheduler.js';
import { icmpBody, type TestService, testService } from '../../helpers/service.js';

describe('schedule rules', () => {
  it('runs frequency-0 checks every offset seconds', () => {
    expect(periodMs(0, 20)).toBe(20_000);
    expect(nextRunAfter(1_000, 'c', 0, 20)).toBe(20_000);
    expect(nextRunAfter(20_000, 'c', 0, 20)).toBe(40_000);
  });

  it('places minute frequencies at offset seconds, hour-plus at offset minutes', () => {
    expect(phaseMs('c', 10, 30)).toBe(30_000);
    expect(nextRunAfter(0, 'c', 10, 30)).toBe(30_000);
    expect(nextRunAfter(30_000, 'c', 10, 30)).toBe(630_000);
    expect(phaseMs('c', 120, 2)).toBe(120_000);
    expect(nextRunAfter(0, 'c', 120, 2)).toBe(120_000);
  });

  it('spreads checks without an offset over the period, stably per check', () => {
    const phases = Array.from({ length: 50 }, (_, i) => phaseMs(`check-${i}`, 10, null));
    expect(new Set(phases).size).toBeGreaterThan(45);
    for (const p of phases) {
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(600_000);
    }
    expect(phaseMs('check-1', 10, null)).toBe(phases[1]);
  });
});

describe('Scheduler', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await testService();
  });
  afterEach(async () => svc.close());

  it('enqueues a new check at once, then once per period, round-robin over its locations', async () => {
    const created = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: svc.auth(),
      payload: icmpBody({ frequency: 1, frequencyOffset: 5, locations: ['eu-west-1', 'us-east-2'] }),
    });
    expect(created.statusCode).toBe(201);
    const scheduler = new Scheduler(svc.context.db, svc.queue, { log: pino({ level: 'silent' }) });
    const t0 = Date.now();
    expect(await scheduler.tick(t0)).toBe(1);
    const next = nextRunAfter(t0, created.json().id, 1, 5);
    // A second later, or just before the next slot when that comes sooner (t0 may fall in the
    // last second before it: about one run in sixty did).
    expect(await scheduler.tick(Math.min(t0 + 1000, next - 1))).toBe(0);
    expect(await scheduler.tick(next - 1)).toBe(0);
    expect(await scheduler.tick(next)).toBe(1);
    expect(await scheduler.tick(next + 60_000)).toBe(1);
    const jobs = await svc.context.db
      .selectFrom('jobs')
      .select(['location', 'enqueued_at'])
      .orderBy('enqueued_at')
      .execute();
    expect(jobs.map((j) => j.location)).toEqual(['eu-west-1', 'us-east-2', 'eu-west-1']);
  });

  it('never schedules a deactivated check, and resumes when activated', async () => {
    const created = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: svc.auth(),
      payload: icmpBody({ activated: false }),
    });
    const scheduler = new Scheduler(svc.context.db, svc.queue, { log: pino({ level: 'silent' }) });
    expect(await scheduler.tick(Date.now())).toBe(0);
    await svc.app.inject({
      method: 'PUT',
      url: `/v1/checks/${created.json().id}`,
      headers: svc.auth(),
      payload: { heartbeat: {}, script: '', activated: true },
    });
    expect(await scheduler.tick(Date.now())).toBe(1);
  });

  it('queues many due checks in batches, once each, while two schedulers tick at once (two replicas)', async () => {
    // Daily checks at a minute of the day whose next slot is far off: each is due once here (at its creation),
    // however long the test takes under load.
    const offset = Array.from({ length: 24 }, (_, m) => m + 1).find(
      (m) => nextRunAfter(Date.now(), 'any', 1440, m) - Date.now() > 15 * 60_000,
    )!;
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) {
      const created = await svc.app.inject({
        method: 'POST',
        url: '/v1/checks/icmp',
        headers: svc.auth(),
        payload: icmpBody({
          name: `batched ${i}`,
          frequency: 1440,
          frequencyOffset: offset,
          locations: ['eu-west-1', 'us-east-2'],
        }),
      });
      expect(created.statusCode).toBe(201);
      ids.push(created.json().id);
    }
    const log = pino({ level: 'silent' });
    // Batches of 25: each tick goes on batch after batch until one comes back short.
    const a = new Scheduler(svc.context.db, svc.queue, { log, batchSize: 25 });
    const b = new Scheduler(svc.context.db, svc.queue, { log, batchSize: 25 });
    const t0 = Date.now();
    const [byA, byB] = await Promise.all([a.tick(t0), b.tick(t0)]);
    expect(byA + byB).toBe(120);
    const jobs = await svc.context.db.selectFrom('jobs').select(['check_id', 'location']).execute();
    expect(jobs).toHaveLength(120);
    expect(new Set(jobs.map((j) => j.check_id))).toEqual(new Set(ids));
    // Each check's first turn: its first location; the cursor moved with the slot.
    expect(new Set(jobs.map((j) => j.location))).toEqual(new Set(['eu-west-1']));
    const cursors = await svc.context.db.selectFrom('checks').select('location_cursor').execute();
    expect(new Set(cursors.map((c) => c.location_cursor))).toEqual(new Set([1]));
    // Every check's next run is its next slot on its grid.
    const next = await svc.context.db.selectFrom('checks').select(['id', 'next_run_at']).execute();
    for (const row of next) expect(Number(row.next_run_at)).toBe(nextRunAfter(t0, row.id, 1440, offset));
  });

  it('expires more runs in one tick than one expiry pass takes (500), pass after pass', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 520; i++) {
      const created = await svc.app.inject({
        method: 'POST',
        url: '/v1/checks/icmp',
        headers: svc.auth(),
        payload: icmpBody({ name: `unserved ${i}`, frequency: 1440 }),
      });
      expect(created.statusCode).toBe(201);
      ids.push(created.json().id);
    }
    const scheduler = new Scheduler(svc.context.db, svc.queue, { log: pino({ level: 'silent' }) });
    const t0 = Date.now();
    expect(await scheduler.tick(t0)).toBe(520);
    // Nothing more comes due (a daily slot could fall in the next 7 minutes).
    await svc.context.db.updateTable('checks').set({ activated: 0 }).execute();
    // No agent claims them: past the 6-minute queue expiry, one tick ends all 520.
    await scheduler.tick(t0 + 7 * 60_000);
    const left = await svc.context.db.selectFrom('jobs').select('id').execute();
    expect(left).toHaveLength(0);
    const expired = await svc.context.db.selectFrom('expired_runs').select('check_id').execute();
    expect(new Set(expired.map((row) => row.check_id))).toEqual(new Set(ids));
  });

  it('ticks on its own timer', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      await svc.app.inject({
        method: 'POST',
        url: '/v1/checks/icmp',
        headers: svc.auth(),
        payload: icmpBody(),
      });
      const scheduler = new Scheduler(svc.context.db, svc.queue, {
        log: pino({ level: 'silent' }),
        tickMs: 1000,
      });
      scheduler.start();
      await vi.advanceTimersByTimeAsync(1000);
      await scheduler.stop();
      const jobs = await svc.context.db.selectFrom('jobs').selectAll().execute();
      expect(jobs).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
