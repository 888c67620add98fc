import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckAnalytics } from '../../../src/service/analytics/api-checks.js';
import { splitWindow } from '../../../src/service/analytics/query.js';
import { AnalyticsWorkers } from '../../../src/service/analytics/workers.js';
import { createAccount } from '../../../src/service/platform/http/auth.js';
import { newCheckDoc } from '../../../src/service/checks/checks.js';
import { CheckQueries } from '../../../src/service/checks/store.js';
import { type Database, openSqliteDatabase } from '../../../src/service/platform/store/database.js';
import type { AnalyticsQuery } from '../../../src/service/analytics/schema.js';
import { dbRow, ROWS, T0 } from '../../helpers/analytics-data.js';

/**
 * The reader threads evaluate parts of the window on their own connections;
 * their answer must equal the one-thread answer to the last digit.
 * (`npm test` builds first, so the worker script exists in dist/.)
 */
let dir: string;
let db: Kysely<Database>;
let workers: AnalyticsWorkers;
let accountId: string;
let checkId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outpost-analytics-workers-'));
  const file = join(dir, 'store.sqlite');
  db = await openSqliteDatabase(file);
  accountId = await createAccount(db, 'A');
  const doc = newCheckDoc('URL', { name: 'u', request: { url: 'http://127.0.0.1/' } }, new Date(T0));
  await new CheckQueries(db).insert(accountId, doc, T0);
  checkId = doc.id;
  await db
    .insertInto('check_results')
    .values(ROWS.map((r) => dbRow(checkId, accountId, r)))
    .execute();
  workers = new AnalyticsWorkers(file, 2);
});
afterAll(async () => {
  await workers.close();
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('analytics reader threads', () => {
  it('split a window at bucket boundaries into contiguous parts', () => {
    const q = {
      checkId: 'c',
      window: { fromMs: 90, toMs: 1000 },
      intervalMs: 100,
      metrics: [],
      groupBy: null,
      statuses: [],
    };
    const parts = splitWindow(q, 2).map((p) => [p.window.fromMs, p.window.toMs]);
    expect(parts).toEqual([
      [90, 500],
      [500, 1000],
    ]);
    expect(splitWindow({ ...q, window: { fromMs: 0, toMs: 50 } }, 4)).toHaveLength(1);
  });

  it.each([
    [
      'one bucket per hour',
      { aggregationInterval: 60, metrics: ['responseTime_p95,responseTime_avg,availability,dns_p50'] },
    ],
    [
      'grouped by location',
      { aggregationInterval: 30, groupBy: 'runLocation', metrics: ['responseTime_p99,retries'] },
    ],
    [
      'failures only',
      {
        aggregationInterval: 15,
        filterByStatus: ['failure'],
        metrics: ['responseTime_stddev,firstByte_sum'],
      },
    ],
  ] as const)('answer exactly as one thread does: %s', async (_name, q) => {
    const query = {
      from: String(T0 / 1000),
      to: String((T0 + 6 * 3_600_000) / 1000),
      ...q,
    } as unknown as AnalyticsQuery;
    const one = await apiCheckAnalytics(db, accountId, checkId, query);
    const threaded = await apiCheckAnalytics(db, accountId, checkId, query, { workers });
    expect(one.series.length).toBeGreaterThan(0);
    expect(one.series[0]!.data.length).toBeGreaterThan(1);
    expect(threaded).toEqual(one);
  });
});
