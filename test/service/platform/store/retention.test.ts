import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Insertable } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServiceConfig } from '../../../../src/service/config.js';
import { retentionTasks } from '../../../../src/service/modules.js';
import { RetentionWorker } from '../../../../src/service/platform/store/retention.js';
import type { CheckSessionTable, SessionStatus } from '../../../../src/service/platform/store/schema.js';
import { fileArtifacts, type TestService, testService } from '../../../helpers/service.js';

// Issue 9, 2.3: results, sessions, artifact files, agent reports and agents are deleted after
// their retention, in small batches.

let svc: TestService;
afterEach(async () => svc?.close());

const DAY = 86_400_000;
const NOW = Date.now();

async function seedResult(ageDays: number, withArtifact: boolean): Promise<{ id: string; jobId: string }> {
  const id = randomUUID();
  const jobId = randomUUID();
  const at = NOW - ageDays * DAY;
  await svc.context.db
    .insertInto('check_results')
    .values({
      id,
      account_id: svc.accountA.id,
      check_id: 'c1',
      job_id: jobId,
      check_session_id: null,
      run_location: 'eu-west-1',
      status: 'PASSED',
      has_failures: 0,
      has_errors: 0,
      is_degraded: 0,
      response_time: 1,
      result_type: 'FINAL',
      started_at: at,
      stopped_at: at,
      doc: '{}',
      created_at: at,
      phase_wait: null,
      phase_dns: null,
      phase_tcp: null,
      phase_first_byte: null,
      phase_download: null,
      status_code: null,
      agent_id: null,
      result_hash: null,
      has_artifacts: withArtifact ? 1 : 0,
    })
    .execute();
  if (withArtifact) {
    const dir = join(fileArtifacts(svc).dir, svc.accountA.id, jobId);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'trace.zip'), 'bytes');
  }
  return { id, jobId };
}

const artifactOf = (jobId: string) => join(fileArtifacts(svc).dir, svc.accountA.id, jobId, 'trace.zip');
const worker = (batchSize = 500) =>
  new RetentionWorker(svc.context.db, retentionTasks({ artifacts: svc.context.artifacts }), {
    resultDays: 90,
    artifactDays: 30,
    agentDays: 30,
    batchSize,
    log: pino({ level: 'silent' }),
  });

describe('retention', () => {
  it('deletes results after 90 days and artifact files after 30, keeping what is younger', async () => {
    svc = await testService();
    // The service's own worker is stopped; these tests run passes themselves.
    await svc.retention?.stop();
    const fresh = await seedResult(1, true);
    const oldArtifacts = await seedResult(31, true);
    const expired = await seedResult(91, true);
    const outcome = await worker().runOnce(NOW);
    expect(outcome).toMatchObject({ results: 1, artifacts: 2 });
    const left = await svc.context.db.selectFrom('check_results').select(['id', 'has_artifacts']).execute();
    expect(left.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [
        { id: fresh.id, has_artifacts: 1 },
        { id: oldArtifacts.id, has_artifacts: 0 },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect(existsSync(artifactOf(fresh.jobId))).toBe(true);
    expect(existsSync(artifactOf(oldArtifacts.jobId))).toBe(false);
    expect(existsSync(artifactOf(expired.jobId))).toBe(false);
    // A second pass has nothing left to do.
    expect(await worker().runOnce(NOW)).toEqual({
      results: 0,
      artifacts: 0,
      sessions: 0,
      agentEvents: 0,
      agents: 0,
      alerts: 0,
      notifications: 0,
      testRuns: 0,
      auditEntries: 0,
    });
  });

  it("prunes the hourly and daily rollups of hours and days that ended by the results' cut-off, keeping the rest", async () => {
    svc = await testService();
    await svc.retention?.stop();
    const cutoff = NOW - 90 * DAY;
    const hour = 3_600_000;
    const hourOf = (ms: number) => ms - (ms % hour);
    const dayOf = (ms: number) => ms - (ms % DAY);
    const hours = [hourOf(cutoff) - 2 * hour, hourOf(cutoff) - hour, hourOf(cutoff), hourOf(NOW)];
    const days = [dayOf(cutoff) - 2 * DAY, dayOf(cutoff) - DAY, dayOf(cutoff), dayOf(NOW)];
    const accountId = svc.accountA.id;
    await svc.context.db
      .insertInto('check_stats_hourly')
      .values(
        hours.map((hour_start) => ({
          check_id: 'c1',
          hour_start,
          run_location: 'eu-west-1',
          account_id: accountId,
          runs: 1,
          failures: 0,
          degraded: 0,
          response_time_sum: 1,
          response_time_max: 1,
        })),
      )
      .execute();
    await svc.context.db
      .insertInto('check_stats_daily')
      .values(
        days.map((day_start) => ({
          check_id: 'c1',
          day_start,
          account_id: accountId,
          passed: 1,
          degraded: 0,
          failed: 0,
        })),
      )
      .execute();
    await worker().runOnce(NOW);
    // An hour (a day) goes once it ended by the cut-off: the one holding the cut-off stays.
    const leftHours = await svc.context.db
      .selectFrom('check_stats_hourly')
      .select('hour_start')
      .orderBy('hour_start')
      .execute();
    expect(leftHours.map((r) => Number(r.hour_start))).toEqual(hours.slice(2));
    const leftDays = await svc.context.db
      .selectFrom('check_stats_daily')
      .select('day_start')
      .orderBy('day_start')
      .execute();
    expect(leftDays.map((r) => Number(r.day_start))).toEqual(days.slice(2));
  });

  it('prunes old agent reports, agents not seen for 30 days, and ended sessions past the result retention', async () => {
    svc = await testService();
    // The service's own worker is stopped; these tests run passes themselves.
    await svc.retention?.stop();
    const db = svc.context.db;
    const account = svc.accountA.id;
    await db
      .insertInto('agents')
      .values([
        { account_id: account, id: 'gone', version: '1', last_seen_at: NOW - 31 * DAY, location_id: null },
        { account_id: account, id: 'alive', version: '1', last_seen_at: NOW - DAY, location_id: null },
      ])
      .execute();
    await db
      .insertInto('agent_events')
      .values([
        { account_id: account, agent_id: 'alive', doc: '{}', created_at: NOW - 31 * DAY },
        { account_id: account, agent_id: 'alive', doc: '{}', created_at: NOW - DAY },
      ])
      .execute();
    const session = (id: string, ageDays: number, status: SessionStatus): Insertable<CheckSessionTable> => ({
      id,
      account_id: account,
      check_id: 'c1',
      check_type: 'ICMP',
      name: 'x',
      trigger_source: 'TRIGGER_API',
      status,
      run_locations: '[]',
      started_at: NOW - ageDays * DAY,
      stopped_at: null,
    });
    await db
      .insertInto('check_sessions')
      .values([session('old', 91, 'PASSED'), session('new', 1, 'PASSED'), session('running', 91, 'PROGRESS')])
      .execute();
    expect(await worker().runOnce(NOW)).toMatchObject({ agentEvents: 1, agents: 1, sessions: 1 });
    expect((await db.selectFrom('agents').select('id').execute()).map((r) => r.id)).toEqual(['alive']);
    expect(await db.selectFrom('agent_events').select('created_at').execute()).toEqual([
      { created_at: NOW - DAY },
    ]);
    expect(
      (await db.selectFrom('check_sessions').select('id').orderBy('id').execute()).map((r) => r.id),
    ).toEqual(['new', 'running']);
  });

  it('prunes alerts and finished notifications (with their attempts) past the result retention, never one still owed', async () => {
    svc = await testService();
    await svc.retention?.stop();
    const db = svc.context.db;
    const account = svc.accountA.id;
    const alert = (id: string, ageDays: number) => ({
      id,
      account_id: account,
      check_id: 'c1',
      alert_type: 'ALERT_FAILURE',
      episode_id: id,
      sequence: 0,
      notified: 1,
      result_id: null,
      doc: '{}',
      created_at: NOW - ageDays * DAY,
    });
    await db
      .insertInto('check_alerts')
      .values([alert('old', 91), alert('new', 1)])
      .execute();
    const notification = (key: string, ageDays: number, state: string) => ({
      account_id: account,
      alert_id: null,
      channel_id: 1,
      check_id: 'c1',
      alert_type: 'ALERT_FAILURE',
      idempotency_key: key,
      order_key: '1:c1',
      state,
      next_attempt_at: NOW,
      doc: '{}',
      created_at: NOW - ageDays * DAY,
      delivered_at: null,
    });
    await db
      .insertInto('alert_notifications')
      .values([
        notification('old-delivered', 91, 'DELIVERED'),
        notification('old-failed', 91, 'FAILED'),
        notification('old-pending', 91, 'PENDING'),
        notification('new-delivered', 1, 'DELIVERED'),
      ])
      .execute();
    const ids = await db.selectFrom('alert_notifications').select(['id', 'idempotency_key']).execute();
    await db
      .insertInto('alert_attempts')
      .values(
        ids.map((n) => ({
          notification_id: n.id,
          account_id: account,
          started_at: NOW,
          latency_ms: 1,
          outcome: 'DELIVERED',
          status_code: 200,
          answer: null,
          error: null,
        })),
      )
      .execute();
    expect(await worker().runOnce(NOW)).toMatchObject({ alerts: 1, notifications: 2 });
    expect((await db.selectFrom('check_alerts').select('id').execute()).map((r) => r.id)).toEqual(['new']);
    const left = await db
      .selectFrom('alert_notifications')
      .select(['id', 'idempotency_key'])
      .orderBy('id')
      .execute();
    expect(left.map((n) => n.idempotency_key)).toEqual(['old-pending', 'new-delivered']);
    const attempts = await db
      .selectFrom('alert_attempts')
      .select('notification_id')
      .orderBy('notification_id')
      .execute();
    expect(attempts.map((a) => a.notification_id)).toEqual(left.map((n) => n.id));
  });

  it('deletes in small batches and gives the event loop back between them', async () => {
    svc = await testService();
    // The service's own worker is stopped; these tests run passes themselves.
    await svc.retention?.stop();
    const db = svc.context.db;
    const rows = Array.from({ length: 20_000 }, (_, i) => ({
      account_id: svc.accountA.id,
      agent_id: 'a',
      doc: '{}',
      created_at: NOW - 40 * DAY - i,
    }));
    for (let i = 0; i < rows.length; i += 2000)
      await db
        .insertInto('agent_events')
        .values(rows.slice(i, i + 2000))
        .execute();
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const outcome = await worker(500).runOnce(NOW);
    delay.disable();
    expect(outcome.agentEvents).toBe(20_000);
    expect(await db.selectFrom('agent_events').select('id').execute()).toEqual([]);
    // One batch of 500 rows is a few ms; the whole pass never holds the loop for long.
    expect(delay.max / 1e6).toBeLessThan(250);
  });

  it('reads its retention from the environment with defaults 90 / 30 / 30 and names a bad variable', () => {
    expect(parseServiceConfig({})).toMatchObject({
      resultRetentionDays: 90,
      artifactRetentionDays: 30,
      agentRetentionDays: 30,
    });
    expect(
      parseServiceConfig({ OUTPOST_RESULT_RETENTION_DAYS: '7', OUTPOST_ARTIFACT_RETENTION_DAYS: '2' }),
    ).toMatchObject({ resultRetentionDays: 7, artifactRetentionDays: 2 });
    expect(() => parseServiceConfig({ OUTPOST_ARTIFACT_RETENTION_DAYS: '0' })).toThrow(
      /OUTPOST_ARTIFACT_RETENTION_DAYS must be an integer from 1/,
    );
  });
});
