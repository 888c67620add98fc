import { randomUUID } from 'node:crypto';
import { Kysely, type Migration, type MigrationProvider, Migrator, SqliteDialect } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckResult, Job } from '../../../src/protocol/index.js';
import { HEARTBEAT_RUN_LOCATION } from '../../../src/service/heartbeats/monitor.js';
import { core } from '../../../src/service/platform/store/migrations/0001_core.js';
import { resources } from '../../../src/service/platform/store/migrations/0002_resources.js';
import { analytics } from '../../../src/service/platform/store/migrations/0003_analytics.js';
import { statusPages } from '../../../src/service/platform/store/migrations/0004_status_pages.js';
import { privateLocations } from '../../../src/service/platform/store/migrations/0005_private_locations.js';
import { queueBounds } from '../../../src/service/platform/store/migrations/0006_queue_bounds.js';
import { agentStatus } from '../../../src/service/platform/store/migrations/0008_agent_status.js';
import { alerting } from '../../../src/service/platform/store/migrations/0009_alerting.js';
import { heartbeats } from '../../../src/service/platform/store/migrations/0010_heartbeats.js';
import { webApp } from '../../../src/service/platform/store/migrations/0011_web_app.js';
import { retentionTasks } from '../../../src/service/modules.js';
import { RetentionWorker } from '../../../src/service/platform/store/retention.js';
import type { Database } from '../../../src/service/platform/store/schema.js';
import { SQLite } from '../../../src/service/platform/store/sqlite.js';
import { ArtifactStore } from '../../../src/service/runs/artifacts/artifacts.js';
import {
  claimJobs,
  createCheck,
  icmpBody,
  resultFor,
  type TestService,
  testService,
} from '../../helpers/service.js';

// Issue 13: GET /v1/check-statuses reads two rollups a result recorder writes in each result's
// transaction (check_last_results, check_stats_hourly); the migration fills them from the results
// already stored.

const HOUR = 3_600_000;
const MINUTE = 60_000;
const AGENT = randomUUID();

/** The entry as the API answers it (app/src/types.ts, CheckStatus). */
type Status = {
  checkId: string;
  name: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  longestRun: number | null;
  shortestRun: number | null;
  lastRunLocation: string | null;
  lastCheckRunId: string | null;
  sslDaysRemaining: number | null;
  created_at: string;
  updated_at: string | null;
  lastResultId: string | null;
  lastRunAt: string | null;
  availability24h: number | null;
  responseTimeAvg24h: number | null;
  responseTimes24h: (number | null)[];
};

let svc: TestService;
afterEach(async () => svc?.close());

const hourStart = (ms: number) => ms - (ms % HOUR);

async function statuses(account: 'A' | 'B' = 'A', query = ''): Promise<Status[]> {
  const res = await svc.request('GET', `/v1/check-statuses${query}`, undefined, account);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Status[];
}

async function statusOf(checkId: string): Promise<Status> {
  const res = await svc.request('GET', `/v1/check-statuses/${checkId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Status;
}

/** A not-activated ICMP check (the scheduler leaves it alone; triggers still run it). */
function icmpCheck(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  return createCheck(svc, 'icmp', icmpBody({ name, activated: false, ...extra }));
}

/** Triggers `checkId` and claims its one job as agent AGENT. */
async function triggerAndClaim(checkId: string): Promise<Job> {
  const res = await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
  expect(res.statusCode, res.body).toBe(201);
  return claimOne(checkId);
}

async function claimOne(checkId: string): Promise<Job> {
  const jobs = (await claimJobs(svc, AGENT)).filter((j) => j.check.id === checkId);
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
}

/** Posts the agent's result of `job` through the agent route. */
async function post(job: Job, result: CheckResult): Promise<void> {
  const res = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': AGENT },
    payload: result,
  });
  expect(res.statusCode, res.body).toBe(200);
}

/** One run of `checkId` through trigger, claim and result post: `status` at `startedAtMs`, `responseTime` ms. */
async function run(
  checkId: string,
  status: 'PASSED' | 'FAILED' | 'DEGRADED',
  startedAtMs: number,
  responseTime: number,
): Promise<Job> {
  const job = await triggerAndClaim(checkId);
  await post(job, resultAt(job, status, startedAtMs, responseTime));
  return job;
}

function resultAt(
  job: Job,
  status: 'PASSED' | 'FAILED' | 'DEGRADED',
  startedAtMs: number,
  responseTime: number,
): CheckResult {
  return resultFor(job, status === 'FAILED' ? 'FAILED' : 'PASSED', {
    status,
    isDegraded: status === 'DEGRADED',
    responseTime,
    startedAt: new Date(startedAtMs).toISOString(),
    stoppedAt: new Date(startedAtMs + responseTime).toISOString(),
  });
}

/** A FINAL result stored through the queue as the service stores its own (heartbeats do). */
async function storeFinal(
  checkId: string,
  startedAtMs: number,
  responseTime: number,
  over: Partial<CheckResult> = {},
): Promise<string> {
  const job = { runLocation: 'eu-west-1', attempt: 1 } as Job;
  return svc.queue.results.storeServiceResult({
    accountId: svc.accountA.id,
    checkId,
    nowMs: Date.now(),
    result: { ...resultAt(job, 'PASSED', startedAtMs, responseTime), ...over },
  });
}

async function rollupRows(db: Kysely<Database>) {
  const last = await db.selectFrom('check_last_results').selectAll().orderBy('check_id').execute();
  const hourly = await db
    .selectFrom('check_stats_hourly')
    .selectAll()
    .orderBy('check_id')
    .orderBy('hour_start')
    .orderBy('run_location')
    .execute();
  return { last, hourly };
}

describe('GET /v1/check-statuses', () => {
  it('answers every check of the account, one without a result too, and one check by id', async () => {
    svc = await testService();
    const before = Date.now();
    const id = await icmpCheck('never run');
    const list = await statuses();
    expect(list).toHaveLength(1);
    const entry = list[0]!;
    expect(entry).toEqual({
      checkId: id,
      name: 'never run',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      longestRun: null,
      shortestRun: null,
      lastRunLocation: null,
      lastCheckRunId: null,
      sslDaysRemaining: null,
      created_at: expect.any(String),
      updated_at: null,
      lastResultId: null,
      lastRunAt: null,
      availability24h: null,
      responseTimeAvg24h: null,
      responseTimes24h: new Array(24).fill(null),
    });
    expect(Date.parse(entry.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(await statusOf(id)).toEqual(entry);

    const unknown = await svc.request('GET', '/v1/check-statuses/no-such-check');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().attributes.code).toBe('OUTPOST_ERR_NOT_FOUND');
  });

  it('follows the latest final result; 24-hour availability counts degraded runs as passed', async () => {
    svc = await testService();
    const id = await icmpCheck('api health');
    const now = Date.now();
    await run(id, 'PASSED', now - 3 * MINUTE, 10);
    await run(id, 'DEGRADED', now - 2 * MINUTE, 20);
    let status = await statusOf(id);
    expect(status).toMatchObject({
      hasFailures: false,
      isDegraded: true,
      availability24h: 100,
      longestRun: 20,
    });

    const job = await run(id, 'FAILED', now - MINUTE, 36);
    const failed = await svc.context.db
      .selectFrom('check_results')
      .select(['id', 'check_session_id'])
      .where('job_id', '=', job.jobId)
      .executeTakeFirstOrThrow();
    status = await statusOf(id);
    expect(status).toMatchObject({
      hasFailures: true,
      hasErrors: false,
      isDegraded: false,
      longestRun: 36,
      shortestRun: 36,
      lastRunLocation: job.runLocation,
      lastCheckRunId: failed.check_session_id,
      lastResultId: failed.id,
      lastRunAt: new Date(now - MINUTE).toISOString(),
      availability24h: 66.67,
      responseTimeAvg24h: 22,
    });
    expect(failed.check_session_id).toEqual(expect.any(String));
    // The three runs sit in the last one or two hourly buckets, whose runs average to 22 ms.
    const filled = status.responseTimes24h.filter((v) => v !== null);
    expect(status.responseTimes24h).toHaveLength(24);
    expect(filled.length).toBeGreaterThanOrEqual(1);
    expect(status.responseTimes24h.slice(0, 22)).toEqual(new Array(22).fill(null));
    // The list answers the same entry.
    expect((await statuses()).find((s) => s.checkId === id)).toEqual(status);
  });

  it('an error result counts as a failure; an ATTEMPT that a retry followed changes nothing', async () => {
    svc = await testService();
    const id = await icmpCheck('retried', {
      retryStrategy: {
        type: 'FIXED',
        baseBackoffSeconds: 0,
        maxRetries: 1,
        maxDurationSeconds: 600,
        sameRegion: true,
      },
    });
    const now = Date.now();
    await run(id, 'PASSED', now - 2 * MINUTE, 5);
    const before = await statusOf(id);
    const rowsBefore = await rollupRows(svc.context.db);

    // A failure the retry strategy retries is stored as an ATTEMPT.
    const first = await triggerAndClaim(id);
    await post(first, resultAt(first, 'FAILED', now - MINUTE, 50));
    const attempt = await svc.context.db
      .selectFrom('check_results')
      .select('result_type')
      .where('job_id', '=', first.jobId)
      .executeTakeFirstOrThrow();
    expect(attempt.result_type).toBe('ATTEMPT');
    expect(await statusOf(id)).toEqual(before);
    expect(await rollupRows(svc.context.db)).toEqual(rowsBefore);

    // Its retry errors: the run's FINAL result, a failure.
    const retry = await claimOne(id);
    await post(retry, {
      ...resultAt(retry, 'FAILED', now - MINUTE + 1000, 7),
      hasFailures: false,
      hasErrors: true,
    });
    expect(await statusOf(id)).toMatchObject({
      hasFailures: false,
      hasErrors: true,
      longestRun: 7,
      availability24h: 50,
      responseTimeAvg24h: 6,
    });
  });

  it('keeps the newest result as the last one when results arrive out of order', async () => {
    svc = await testService();
    const id = await icmpCheck('out of order');
    const now = Date.now();
    const newer = await triggerAndClaim(id);
    const older = await triggerAndClaim(id);
    await post(newer, resultAt(newer, 'FAILED', now - MINUTE, 40));
    await post(older, resultAt(older, 'PASSED', now - 5 * MINUTE, 10));
    const newest = await svc.context.db
      .selectFrom('check_results')
      .select('id')
      .where('job_id', '=', newer.jobId)
      .executeTakeFirstOrThrow();
    expect(await statusOf(id)).toMatchObject({
      hasFailures: true,
      longestRun: 40,
      lastResultId: newest.id,
      lastRunAt: new Date(now - MINUTE).toISOString(),
      // Both runs count in the figures.
      availability24h: 50,
      responseTimeAvg24h: 25,
    });
  });

  it('puts each run in the bucket of its UTC hour, oldest first, and leaves out runs older than 24 hours', async () => {
    svc = await testService();
    const id = await icmpCheck('spread');
    const current = hourStart(Date.now());
    await storeFinal(id, Date.now() - 1000, 80); // this hour: slot 23
    await storeFinal(id, current - HOUR + 10 * MINUTE, 60); // slot 22
    await storeFinal(id, current - 5 * HOUR, 100); // slot 18
    await storeFinal(id, current - 5 * HOUR + 59 * MINUTE, 200, {
      status: 'FAILED',
      hasFailures: true,
    }); // slot 18 too
    await storeFinal(id, current - 23 * HOUR, 30); // slot 0, the oldest counted
    await storeFinal(id, current - 23 * HOUR - 1, 9999); // the hour before: not counted
    await storeFinal(id, current - 30 * HOUR, 9999); // not counted
    if (hourStart(Date.now()) !== current) return; // the hour turned meanwhile: the slots moved
    const status = await statusOf(id);
    const expected: (number | null)[] = new Array(24).fill(null);
    expected[23] = 80;
    expected[22] = 60;
    expected[18] = 150;
    expected[0] = 30;
    expect(status.responseTimes24h).toEqual(expected);
    expect(status.availability24h).toBe(80);
    expect(status.responseTimeAvg24h).toBe(94);
    // The last result is the latest started, whatever the order of storing.
    expect(status.longestRun).toBe(80);
  });

  it("counts a heartbeat check's results", async () => {
    svc = await testService();
    const res = await svc.request('POST', '/v1/checks/heartbeat', {
      name: 'nightly backup',
      heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const check = res.json() as { id: string; heartbeat: { pingToken: string } };
    expect(
      (await svc.app.inject({ method: 'GET', url: `/ping/${check.heartbeat.pingToken}` })).statusCode,
    ).toBe(200);
    expect(await statusOf(check.id)).toMatchObject({
      hasFailures: false,
      lastRunLocation: HEARTBEAT_RUN_LOCATION,
      availability24h: 100,
    });
    const fail = await svc.app.inject({ method: 'GET', url: `/ping/${check.heartbeat.pingToken}/fail` });
    expect(fail.statusCode).toBe(200);
    const status = await statusOf(check.id);
    expect(status).toMatchObject({ hasFailures: true, availability24h: 50 });
    expect(status.lastResultId).toEqual(expect.any(String));
  });

  it("keeps accounts apart: another account's key sees none of it", async () => {
    svc = await testService();
    const id = await icmpCheck('private to A');
    await run(id, 'FAILED', Date.now() - MINUTE, 12);
    expect(await statuses('B')).toEqual([]);
    expect((await svc.request('GET', `/v1/check-statuses/${id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await statuses('B', `?checkId=${id}`)).length).toBe(0);
    const own = await statuses('A');
    expect(own.map((s) => s.checkId)).toEqual([id]);
  });

  it('narrows to the checks of checkId; leaves out deleted checks', async () => {
    svc = await testService();
    const a = await icmpCheck('a');
    const b = await icmpCheck('b');
    const c = await icmpCheck('c');
    expect((await statuses()).map((s) => s.name)).toEqual(['a', 'b', 'c']);
    expect((await statuses('A', `?checkId=${c},${a}`)).map((s) => s.checkId)).toEqual([a, c]);
    expect((await statuses('A', `?checkId=${b}, ${b}`)).map((s) => s.checkId)).toEqual([b]);
    const empty = await svc.request('GET', '/v1/check-statuses?checkId=,');
    expect(empty.statusCode).toBe(400);
    expect(empty.json().attributes).toMatchObject({ field: 'checkId', in: 'querystring' });

    await storeFinal(b, Date.now() - 1000, 5);
    expect((await svc.request('DELETE', `/v1/checks/${b}`)).statusCode).toBe(204);
    expect((await statuses()).map((s) => s.name)).toEqual(['a', 'c']);
    expect((await svc.request('GET', `/v1/check-statuses/${b}`)).statusCode).toBe(404);
  });

  it('shows the days left of the certificate the check recorded last', async () => {
    svc = await testService();
    const id = await icmpCheck('tls');
    const now = Date.now();
    await svc.context.db
      .insertInto('ssl_certificates')
      .values([
        {
          account_id: svc.accountA.id,
          domain: 'a.example.test',
          fingerprint: 'AA',
          valid_to: now + 40 * 86_400_000 + HOUR,
          check_id: id,
          result_id: null,
          seen_at: now,
        },
        {
          account_id: svc.accountA.id,
          domain: 'b.example.test',
          fingerprint: 'BB',
          valid_to: now + 12 * 86_400_000 + HOUR,
          check_id: id,
          result_id: null,
          seen_at: now,
        },
      ])
      .execute();
    expect((await statusOf(id)).sslDaysRemaining).toBe(12);
  });

  it('marks the fields the compatible API does not have in the OpenAPI document', async () => {
    svc = await testService();
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/v1/check-statuses'].get;
    const item = op.responses['200'].content['application/json'].schema.items;
    expect(item.properties.availability24h['x-outpost-not-in-spec']).toBe(true);
    expect(item.properties.responseTimes24h['x-outpost-not-in-spec']).toBe(true);
    expect(item.properties.hasFailures['x-outpost-not-in-spec']).toBeUndefined();
    expect(doc.paths['/v1/check-statuses/{checkId}'].get.responses['200']).toBeDefined();
  });
});

describe('the rollups', () => {
  it('the migration fills them from the results already stored, as the recorder would have', async () => {
    svc = await testService();
    const a = await icmpCheck('a');
    const b = await icmpCheck('b');
    const now = Date.now();
    const current = hourStart(now);
    await run(a, 'PASSED', now - 3 * MINUTE, 10);
    await run(a, 'FAILED', now - 2 * MINUTE, 30);
    await storeFinal(a, current - 3 * HOUR + 1, 44, { runLocation: 'us-east-1' });
    await storeFinal(a, current - 3 * HOUR + 2, 66, { isDegraded: true, status: 'DEGRADED' });
    await storeFinal(a, current - 30 * HOUR, 11);
    await storeFinal(b, current - 2 * HOUR, 5, { hasErrors: true, status: 'FAILED' });
    // An ATTEMPT in check_results: left out by the backfill as by the recorder.
    await svc.context.db
      .insertInto('check_results')
      .values({
        ...(await svc.context.db
          .selectFrom('check_results')
          .selectAll()
          .where('check_id', '=', b)
          .executeTakeFirstOrThrow()),
        id: 'attempt-1',
        job_id: 'attempt-job',
        result_type: 'ATTEMPT',
        started_at: now,
        response_time: 9999,
      })
      .execute();
    // Results of a check deleted since: left out.
    const gone = await icmpCheck('gone');
    await storeFinal(gone, now - 1000, 1);
    expect((await svc.request('DELETE', `/v1/checks/${gone}`)).statusCode).toBe(204);
    const recorded = await rollupRows(svc.context.db);
    // Deleting a check deletes its rollup rows.
    expect(recorded.last.map((r) => r.check_id).sort()).toEqual([a, b].sort());

    // A store as it was before 0011, holding the same checks and results.
    const sqlite = new SQLite(':memory:');
    const old = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    const migrations: Record<string, Migration> = {
      '0001_core': core,
      '0002_resources': resources,
      '0003_analytics': analytics,
      '0004_status_pages': statusPages,
      '0005_private_locations': privateLocations,
      '0006_queue_bounds': queueBounds,
      '0008_agent_status': agentStatus,
      '0009_alerting': alerting,
      '0010_heartbeats': heartbeats,
      '0011_web_app': webApp,
    };
    const provider: MigrationProvider = { getMigrations: async () => migrations };
    const migrator = new Migrator({ db: old as Kysely<unknown>, provider });
    expect((await migrator.migrateTo('0010_heartbeats')).error).toBeUndefined();
    for (const table of ['accounts', 'checks', 'check_sessions', 'check_results'] as const) {
      const rows = await svc.context.db.selectFrom(table).selectAll().execute();
      for (const row of rows) {
        // Columns of later migrations (0017_result_details) are not in a store of 0010's day.
        const { details_settled: _later, ...then } = row as Record<string, unknown>;
        await old
          .insertInto(table)
          .values(then as never)
          .execute();
      }
    }
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const backfilled = await rollupRows(old);
    await old.destroy();

    const kept = <T extends { check_id: string }>(rows: T[]) => rows.filter((r) => r.check_id !== gone);
    // `revision` (0028_list_versions, the ETag's count of results recorded) is not in a store of 0011's day.
    const unrevised = kept(recorded.last).map(({ revision: _count, ...row }) => row);
    expect(backfilled.last).toEqual(unrevised);
    expect(backfilled.hourly).toEqual(kept(recorded.hourly));
    // a: the last minutes' hour (or two), two locations 3 hours ago, one 30 hours ago; b: one.
    expect(backfilled.hourly.length).toBeGreaterThanOrEqual(5);
  });

  it('retention deletes hourly rows of hours older than the results', async () => {
    svc = await testService();
    await svc.retention?.stop();
    const now = Date.now();
    const DAY = 86_400_000;
    const row = (hour: number, account: string) => ({
      check_id: `check-of-${account}`,
      hour_start: hour,
      run_location: 'eu-west-1',
      account_id: account,
      runs: 1,
      failures: 0,
      degraded: 0,
      response_time_sum: 1,
      response_time_max: 1,
    });
    const cutoff = now - 90 * DAY;
    const ended = hourStart(cutoff) - HOUR; // ended before the cutoff
    const straddling = hourStart(cutoff); // holds results younger than the cutoff
    await svc.context.db
      .insertInto('check_stats_hourly')
      .values([
        row(ended - 5 * HOUR, svc.accountA.id),
        row(ended, svc.accountA.id),
        row(ended, svc.accountB.id),
        row(straddling, svc.accountA.id),
        row(hourStart(now), svc.accountA.id),
      ])
      .execute();
    await new RetentionWorker(svc.context.db, retentionTasks({ artifacts: new ArtifactStore() }), {
      resultDays: 90,
      artifactDays: 30,
      agentDays: 30,
      log: pino({ level: 'silent' }),
    }).runOnce(now);
    const left = await svc.context.db
      .selectFrom('check_stats_hourly')
      .select(['hour_start', 'account_id'])
      .orderBy('hour_start')
      .execute();
    expect(left).toEqual([
      { hour_start: straddling, account_id: svc.accountA.id },
      { hour_start: hourStart(now), account_id: svc.accountA.id },
    ]);
  });
});
