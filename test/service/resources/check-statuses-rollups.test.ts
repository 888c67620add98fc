import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FinalResultFacts,
  HOUR_MS,
  recordFinalResult,
} from '../../../src/service/resources/check-statuses/store.js';
import { createCheck, icmpBody, type TestService, testService } from '../../helpers/service.js';

// The three rollups every FINAL result writes (check_last_results, check_stats_hourly, check_stats_daily), row
// by row. SQLite writes them in three statements and PostgreSQL in one (data-modifying CTEs): this file runs on
// both stores (the postgres project), so each way must write exactly these rows.

let svc: TestService;
afterEach(async () => svc?.close());

const DAY_MS = 24 * HOUR_MS;
const T0 = Date.UTC(2026, 10, 29, 10, 15);

describe('the rollups of FINAL results', () => {
  it('keep the latest result, count runs per hour and location and per day and status, add and max times', async () => {
    svc = await testService();
    const db = svc.context.db;
    const accountId = svc.accountA.id;
    const checkId = await createCheck(svc, 'icmp', icmpBody({ activated: false }));
    const record = async (over: Partial<FinalResultFacts> & Pick<FinalResultFacts, 'startedAt'>) => {
      const resultId = randomUUID();
      await recordFinalResult(db, {
        accountId,
        checkId,
        resultId,
        checkSessionId: null,
        runLocation: 'eu-west-1',
        status: 'PASSED',
        hasFailures: false,
        hasErrors: false,
        isDegraded: false,
        responseTime: 100,
        stoppedAt: over.startedAt + (over.responseTime ?? 100),
        ...over,
      });
      return resultId;
    };
    await record({ startedAt: T0 });
    // A PASSED run that had failures (a check that should fail): a failure of the hour, a PASSED run of the day.
    await record({ startedAt: T0 + 60_000, hasFailures: true, responseTime: 300 });
    await record({ startedAt: T0 + 120_000, status: 'DEGRADED', isDegraded: true, responseTime: 200 });
    await record({ startedAt: T0 + 180_000, runLocation: 'us-east-1', responseTime: 50 });
    await record({ startedAt: T0 + 240_000, responseTime: 10 });
    // An error without failures, in the next hour: FAILED for the day, a failure for the hour.
    const latest = await record({
      startedAt: T0 + HOUR_MS,
      status: 'FAILED',
      hasErrors: true,
      responseTime: 0,
      checkSessionId: randomUUID(),
    });
    // A late result of the first hour, and one of the day before: the latest result stays.
    await record({ startedAt: T0 + 30_000, status: 'FAILED', hasFailures: true, responseTime: 900 });
    await record({ startedAt: T0 - DAY_MS, responseTime: 70 });

    const last = await db
      .selectFrom('check_last_results')
      .selectAll()
      .where('check_id', '=', checkId)
      .execute();
    expect(last).toHaveLength(1);
    expect(last[0]).toMatchObject({
      result_id: latest,
      status: 'FAILED',
      run_location: 'eu-west-1',
      has_failures: 0,
      has_errors: 1,
      is_degraded: 0,
    });
    expect(Number(last[0]!.started_at)).toBe(T0 + HOUR_MS);
    // Every result counts, an older one too (it moved the hourly sums).
    expect(Number(last[0]!.revision)).toBe(7);

    const hourly = (
      await db
        .selectFrom('check_stats_hourly')
        .selectAll()
        .where('check_id', '=', checkId)
        .orderBy('hour_start')
        .orderBy('run_location')
        .execute()
    ).map((r) => [
      Number(r.hour_start),
      r.run_location,
      Number(r.runs),
      Number(r.failures),
      Number(r.degraded),
      Number(r.response_time_sum),
      Number(r.response_time_max),
    ]);
    const hour = (at: number) => at - (at % HOUR_MS);
    expect(hourly).toEqual([
      [hour(T0 - DAY_MS), 'eu-west-1', 1, 0, 0, 70, 70],
      [hour(T0), 'eu-west-1', 5, 2, 1, 1510, 900],
      [hour(T0), 'us-east-1', 1, 0, 0, 50, 50],
      [hour(T0 + HOUR_MS), 'eu-west-1', 1, 1, 0, 0, 0],
    ]);

    const daily = (
      await db
        .selectFrom('check_stats_daily')
        .selectAll()
        .where('check_id', '=', checkId)
        .orderBy('day_start')
        .execute()
    ).map((r) => [Number(r.day_start), Number(r.passed), Number(r.degraded), Number(r.failed)]);
    const day = (at: number) => at - (at % DAY_MS);
    expect(daily).toEqual([
      [day(T0 - DAY_MS), 1, 0, 0],
      [day(T0), 4, 1, 2],
    ]);
  });
});
