import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checksSummary } from '../../../src/service/analytics/batch.js';
import { AnalyticsWorkers } from '../../../src/service/analytics/workers.js';
import { newCheckDoc } from '../../../src/service/checks/checks.js';
import { CheckQueries } from '../../../src/service/checks/store.js';
import { createAccount } from '../../../src/service/platform/http/auth.js';
import { openSqliteDatabase } from '../../../src/service/platform/store/database.js';
import { dbRow, type Row } from '../../helpers/analytics-data.js';
import {
  createCheck,
  expectBadField,
  icmpBody,
  type TestService,
  testService,
} from '../../helpers/service.js';

/**
 * `POST /v1/analytics/checks` (docs/api.md, "Analytics"): the hosted API's batch summary, over
 * results planted in the store relative to the real clock.
 */
const HOUR = 3_600_000;
/** Planted in a stored result's log and in a check's variable: no answer may show it. */
const SECRET = 'batch-analytics-secret-PLANTED-91c2';

let svc: TestService;
let urlId: string;
let tcpId: string;
let icmpId: string;
let heartbeatId: string;
let otherAccountId: string;
const now = Date.now();

/** A known final result `hoursAgo` before now. */
function row(hoursAgo: number, rt: number, status: Row['status']): Row {
  return {
    started: now - hoursAgo * HOUR,
    rt,
    status,
    loc: 'eu-west-1',
    code: status === 'FAILED' ? 500 : 200,
    attempts: 1,
    phases: [1, 2, 3, 4, 5],
  };
}

/** An ICMP result document with the run's average latency and packet loss, and the planted secret in a log line. */
function icmpDoc(latencyAvg: number | null, packetLoss: number): string {
  return JSON.stringify({
    icmpCheckResult: { latency: { min: null, avg: latencyAvg, max: null, stdDev: null }, packetLoss },
    logs: [{ time: new Date(now).toISOString(), level: 'INFO', msg: SECRET }],
  });
}

beforeAll(async () => {
  svc = await testService();
  urlId = await createCheck(svc, 'url', {
    name: 'health',
    request: { url: 'https://example.test/health' },
    environmentVariables: [{ key: 'TOKEN', value: SECRET, secret: true }],
  });
  tcpId = await createCheck(svc, 'tcp', { name: 'tcp', request: { hostname: '127.0.0.1', port: 9 } });
  icmpId = await createCheck(svc, 'icmp', icmpBody());
  heartbeatId = await createCheck(svc, 'heartbeat', {
    name: 'nightly backup',
    heartbeat: { period: 1, periodUnit: 'days', grace: 30, graceUnit: 'minutes' },
  });
  const other = await svc.request(
    'POST',
    '/v1/checks/url',
    { name: 'B', request: { url: 'https://example.test/b' } },
    'B',
  );
  expect(other.statusCode, other.body).toBe(201);
  otherAccountId = other.json().id;
  const a = svc.accountA.id;
  const rows = [
    // URL, last 24 hours: 100, 200, 300 (failed), 400 (degraded) ms.
    dbRow(urlId, a, row(1, 100, 'PASSED')),
    dbRow(urlId, a, row(2, 200, 'PASSED')),
    dbRow(urlId, a, row(3, 300, 'FAILED')),
    dbRow(urlId, a, row(4, 400, 'DEGRADED')),
    // A retried attempt: not counted.
    dbRow(urlId, a, row(1.5, 90_000, 'FAILED'), 'ATTEMPT'),
    // Two days ago: only in last7Days (and thisWeek/lastWeek depending on the day).
    dbRow(urlId, a, row(48, 1_000, 'FAILED')),
    // ICMP, last 24 hours: latency 10 and 30 ms, one run without a reply; loss 0, 50, 100 %.
    { ...dbRow(icmpId, a, row(1, 10, 'PASSED')), doc: icmpDoc(10, 0) },
    { ...dbRow(icmpId, a, row(2, 30, 'PASSED')), doc: icmpDoc(30, 50) },
    { ...dbRow(icmpId, a, row(3, 0, 'FAILED')), doc: icmpDoc(null, 100) },
    // Account B's check: never answered to A.
    dbRow(otherAccountId, svc.accountB.id, row(1, 5, 'PASSED')),
  ];
  await svc.context.db.insertInto('check_results').values(rows).execute();
});
afterAll(async () => svc.close());

function post(body: unknown, query = '', account: 'A' | 'B' = 'A') {
  return svc.request('POST', `/v1/analytics/checks${query}`, body, account);
}

describe('POST /v1/analytics/checks', () => {
  it('answers each check shaped by its type, in the order asked, with exact values', async () => {
    const res = await post({ checkIds: [urlId, tcpId, icmpId, heartbeatId] });
    expect(res.statusCode, res.body).toBe(200);
    const [url, tcp, icmp, heartbeat] = res.json();
    expect(res.json()).toHaveLength(4);
    // Percentiles interpolate between closest ranks: p95 of 100..400 is 300 + 0.85 × 100.
    expect(url).toEqual({
      checkId: urlId,
      checkType: 'URL',
      availability: 75,
      responseTime_avg: 250,
      responseTime_p50: 250,
      responseTime_p95: expect.closeTo(385, 9),
      responseTime_p99: expect.closeTo(397, 9),
    });
    // No result in range: null values, but every field of the type present.
    expect(tcp).toEqual({
      checkId: tcpId,
      checkType: 'TCP',
      availability: null,
      responseTime_avg: null,
      responseTime_p50: null,
      responseTime_p95: null,
      responseTime_p99: null,
    });
    // Latency over the runs with a reply (10, 30); packet loss over all three (0, 50, 100).
    expect(icmp).toEqual({
      checkId: icmpId,
      checkType: 'ICMP',
      availability: expect.closeTo(200 / 3, 9),
      latency_avg: 20,
      latency_p50: 20,
      latency_p95: expect.closeTo(29, 9),
      latency_p99: expect.closeTo(29.8, 9),
      packetLoss_avg: 50,
      packetLoss_p95: expect.closeTo(95, 9),
      packetLoss_p99: expect.closeTo(99, 9),
    });
    expect(heartbeat).toEqual({ checkId: heartbeatId, checkType: 'HEARTBEAT', availability: null });
    expect(res.body).not.toContain(SECRET);
  });

  it('takes the quick range: last7Days counts the run of two days ago', async () => {
    const res = await post({ checkIds: [urlId] }, '?quickRange=last7Days');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      {
        checkId: urlId,
        checkType: 'URL',
        availability: 60,
        responseTime_avg: 400,
        responseTime_p50: 300,
        responseTime_p95: expect.closeTo(880, 9),
        responseTime_p99: expect.closeTo(976, 9),
      },
    ]);
  });

  it("leaves out another account's checks and unknown ids, and answers a repeated id once", async () => {
    const unknown = randomUUID();
    const res = await post({ checkIds: [otherAccountId, unknown, urlId, urlId] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().map((i: { checkId: string }) => i.checkId)).toEqual([urlId]);
    const b = await post({ checkIds: [urlId, icmpId] }, '', 'B');
    expect(b.statusCode, b.body).toBe(200);
    expect(b.json()).toEqual([]);
    const own = await post({ checkIds: [otherAccountId] }, '', 'B');
    expect(own.json()).toEqual([
      expect.objectContaining({
        checkId: otherAccountId,
        checkType: 'URL',
        availability: 100,
        responseTime_avg: 5,
      }),
    ]);
  });

  it('answers 400 naming the field for bad input', async () => {
    expectBadField(await post({}), 'checkIds');
    expectBadField(await post({ checkIds: [] }), 'checkIds');
    expectBadField(await post({ checkIds: ['not-a-uuid'] }), 'checkIds[0]');
    expectBadField(await post({ checkIds: Array.from({ length: 101 }, () => randomUUID()) }), 'checkIds');
    expectBadField(await post({ checkIds: [urlId], from: '2025-01-01' }), 'from');
    expectBadField(await post({ checkIds: [urlId] }, '?quickRange=last30Days'), 'quickRange', 'querystring');
  });

  it('is refused without a key', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/analytics/checks',
      payload: { checkIds: [urlId] },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('the batch summary on reader threads', () => {
  it('runs one statement per check on the threads and answers what one thread answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-analytics-batch-'));
    const file = join(dir, 'store.sqlite');
    const db = await openSqliteDatabase(file);
    const workers = new AnalyticsWorkers(file, 2);
    try {
      const accountId = await createAccount(db, 'A');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const doc = newCheckDoc(
          'API',
          { name: `api ${i}`, request: { url: 'http://127.0.0.1/' } },
          new Date(now),
        );
        await new CheckQueries(db).insert(accountId, doc, now);
        ids.push(doc.id);
        await db
          .insertInto('check_results')
          .values([
            dbRow(doc.id, accountId, row(1, 10 * (i + 1), 'PASSED')),
            dbRow(doc.id, accountId, row(2, 30 * (i + 1), i % 2 ? 'FAILED' : 'PASSED')),
          ])
          .execute();
      }
      const all = vi.spyOn(workers, 'all');
      const threaded = await checksSummary(db, accountId, ids, 'last24Hours', { workers, nowMs: now });
      expect(all).toHaveBeenCalledTimes(5);
      const direct = await checksSummary(db, accountId, ids, 'last24Hours', { nowMs: now });
      expect(threaded).toEqual(direct);
      expect(threaded.map((i) => [i.availability, i.responseTime_avg])).toEqual([
        [100, 20],
        [50, 40],
        [100, 60],
        [50, 80],
        [100, 100],
      ]);
    } finally {
      await workers.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
