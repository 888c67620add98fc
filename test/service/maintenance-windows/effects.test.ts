import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Scheduler } from '../../../src/service/runs/scheduler/scheduler.js';
import { type HttpPeer, startHttpPeer } from '../../helpers/alert-peers.js';
import {
  claimJobs,
  createCheck,
  icmpBody,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

const AGENT = randomUUID();
const minute = 60_000;
let svc: TestService;
let peer: HttpPeer;
beforeEach(async () => {
  // The webhook receiver listens on loopback: the outbound policy must allow it.
  svc = await testService({ outbound: { allow: ['127.0.0.1/32'] } });
  peer = await startHttpPeer();
});
afterEach(async () => {
  await svc.close();
  await peer.close();
});

/** Creates a window on from a minute ago for ten minutes (unless `over` says otherwise); returns its id. */
async function windowNow(over: Record<string, unknown>): Promise<number> {
  const now = Date.now();
  const res = await svc.request('POST', '/v1/maintenance-windows', {
    name: 'database upgrade',
    startsAt: new Date(now - minute).toISOString(),
    endsAt: new Date(now + 10 * minute).toISOString(),
    ...over,
  });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().active).toBe(true);
  return res.json().id as number;
}

/** The checks the queue holds jobs of, one entry per job. */
async function queuedChecks(): Promise<string[]> {
  const rows = await svc.context.db.selectFrom('jobs').select(['check_id']).orderBy('enqueued_at').execute();
  return rows.map((r) => r.check_id);
}

describe('a window that pauses runs', () => {
  it('skips the scheduled runs of the checks it covers while on, then they run again', async () => {
    const covered = await createCheck(svc, 'icmp', icmpBody({ name: 'db', frequency: 1, tags: ['db'] }));
    const other = await createCheck(svc, 'icmp', icmpBody({ name: 'web', frequency: 1 }));
    await windowNow({ tags: ['db'] });
    const scheduler = new Scheduler(svc.context.db, svc.queue, { log: pino({ level: 'silent' }) });
    const now = Date.now();

    expect(await scheduler.tick(now)).toBe(1);
    expect(await queuedChecks()).toEqual([other]);
    // A later slot inside the window: skipped again.
    expect(await scheduler.tick(now + 5 * minute)).toBe(1);
    expect(await queuedChecks()).toEqual([other, other]);
    // After the window (it ends ten minutes from its creation): both run.
    expect(await scheduler.tick(now + 11 * minute)).toBe(2);
    expect((await queuedChecks()).filter((id) => id === covered)).toHaveLength(1);
  });

  it('covers checks by id and by group (and the group tags), not others', async () => {
    const group = await svc.request('POST', '/v1/check-groups', {
      name: 'payments',
      activated: true,
      apiCheckDefaults: {},
      locations: ['eu-west-1'],
      tags: ['payments'],
    });
    expect(group.statusCode, group.body).toBe(201);
    const groupId = group.json().id as number;
    const inGroup = await createCheck(svc, 'icmp', icmpBody({ name: 'pay', frequency: 1, groupId }));
    const byId = await createCheck(svc, 'icmp', icmpBody({ name: 'by id', frequency: 1 }));
    const free = await createCheck(svc, 'icmp', icmpBody({ name: 'free', frequency: 1 }));
    const scheduler = new Scheduler(svc.context.db, svc.queue, { log: pino({ level: 'silent' }) });
    const id = await windowNow({ checkIds: [byId], tags: ['payments'] });
    expect(await scheduler.tick(Date.now())).toBe(1);
    expect(await queuedChecks()).toEqual([free]);
    // By group id too; and `pauseRuns: false` lets every run through.
    const update = await svc.request('PUT', `/v1/maintenance-windows/${id}`, {
      tags: [],
      groupIds: [groupId],
      checkIds: [],
    });
    expect(update.statusCode, update.body).toBe(200);
    expect(await scheduler.tick(Date.now() + 2 * minute)).toBe(2);
    expect((await queuedChecks()).filter((c) => c === byId)).toHaveLength(1);
    expect((await queuedChecks()).filter((c) => c === inGroup)).toHaveLength(0);
    await svc.request('PUT', `/v1/maintenance-windows/${id}`, { pauseRuns: false });
    expect(await scheduler.tick(Date.now() + 4 * minute)).toBe(3);
  });

  it('still runs a check started by hand (Run now, a trigger)', async () => {
    const covered = await createCheck(svc, 'icmp', icmpBody({ name: 'db', tags: ['db'] }));
    await windowNow({ pauseAllChecks: true });
    const scheduler = new Scheduler(svc.context.db, svc.queue, { log: pino({ level: 'silent' }) });
    expect(await scheduler.tick(Date.now())).toBe(0);
    await triggerCheck(svc, covered);
    const jobs = (await claimJobs(svc, AGENT)).filter((j) => j.check.id === covered);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.runSource).toBe('TRIGGER_API');
  });
});

describe('a window that silences alerts', () => {
  /** One manual run of `checkId` whose result is `status`. */
  async function run(checkId: string, status: 'PASSED' | 'FAILED'): Promise<void> {
    await triggerCheck(svc, checkId);
    const jobs = (await claimJobs(svc, AGENT)).filter((j) => j.check.id === checkId);
    expect(jobs).toHaveLength(1);
    const res = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${jobs[0]!.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': AGENT },
      payload: resultFor(jobs[0]!, status),
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  async function alertsOf(checkId: string) {
    const res = await svc.request('GET', `/v1/check-alerts?checkId=${checkId}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { alertType: string; notified: boolean }[]).reverse();
  }

  it('records the failure but sends nothing for a covered check; alerts again once the window is gone', async () => {
    const channel = await svc.request('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'hook', url: `${peer.origin}/hook` },
    });
    expect(channel.statusCode, channel.body).toBe(201);
    const covered = await createCheck(
      svc,
      'icmp',
      icmpBody({ name: 'silenced-db', tags: ['db'], activated: false }),
    );
    const other = await createCheck(svc, 'icmp', icmpBody({ name: 'loud-web', activated: false }));
    const id = await windowNow({ tags: ['db'] });

    await run(covered, 'FAILED');
    await run(other, 'FAILED');
    // The other check's alert reaches the receiver; the covered one's never does.
    await expect.poll(() => peer.requests.length, { timeout: 15_000 }).toBe(1);
    expect(peer.requests[0]!.body).toContain('loud-web');
    expect(peer.requests[0]!.body).not.toContain('silenced-db');
    expect(await alertsOf(covered)).toEqual([
      expect.objectContaining({ alertType: 'ALERT_FAILURE', notified: false }),
    ]);
    expect(await alertsOf(other)).toEqual([
      expect.objectContaining({ alertType: 'ALERT_FAILURE', notified: true }),
    ]);
    // The state still changed: the check reads as failing.
    const status = await svc.request('GET', `/v1/check-statuses/${covered}`);
    expect(status.json()).toMatchObject({ hasFailures: true });
    const held = await svc.context.db
      .selectFrom('alert_notifications')
      .select('id')
      .where('check_id', '=', covered)
      .execute();
    expect(held).toEqual([]);

    // Without the window, a new failure of the covered check is sent.
    expect((await svc.request('DELETE', `/v1/maintenance-windows/${id}`)).statusCode).toBe(204);
    await run(covered, 'PASSED');
    await run(covered, 'FAILED');
    await expect.poll(() => peer.requests.length, { timeout: 15_000 }).toBe(2);
    expect(peer.requests[1]!.body).toContain('silenced-db');
    expect((await alertsOf(covered)).map((a) => [a.alertType, a.notified])).toEqual([
      ['ALERT_FAILURE', false],
      ['ALERT_RECOVERY', false],
      ['ALERT_FAILURE', true],
    ]);
  });

  it('silences by silenceAlertsTags and silenceAllAlerts, and not when silenceAlerts is false', async () => {
    const channel = await svc.request('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'hook', url: `${peer.origin}/hook` },
    });
    expect(channel.statusCode).toBe(201);
    const a = await createCheck(svc, 'icmp', icmpBody({ name: 'a', tags: ['noisy'], activated: false }));
    const b = await createCheck(svc, 'icmp', icmpBody({ name: 'b', tags: ['db'], activated: false }));
    const c = await createCheck(svc, 'icmp', icmpBody({ name: 'c', activated: false }));
    await windowNow({ tags: ['db'], silenceAlerts: false, pauseRuns: false, silenceAlertsTags: ['noisy'] });
    await run(a, 'FAILED');
    await run(b, 'FAILED');
    expect((await alertsOf(a))[0]).toMatchObject({ notified: false });
    expect((await alertsOf(b))[0]).toMatchObject({ notified: true });
    await windowNow({ silenceAllAlerts: true, pauseRuns: false });
    await run(c, 'FAILED');
    expect((await alertsOf(c))[0]).toMatchObject({ notified: false });
  });
});
