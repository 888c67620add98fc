import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CheckResult, type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { apiCheckAnalytics, parseMetrics } from '../../../src/service/analytics/api-checks.js';
import { analyticsColumnsOf } from '../../../src/service/analytics/columns.js';
import { METRIC_NAMES } from '../../../src/service/analytics/metrics.js';
import { explainAggregate } from '../../../src/service/analytics/query.js';
import { quickRangeWindow } from '../../../src/service/analytics/time-range.js';
import { newCheckDoc } from '../../../src/service/checks/checks.js';
import { CheckQueries } from '../../../src/service/checks/store.js';
import type { AnalyticsQuery } from '../../../src/service/analytics/schema.js';
import {
  dbRow,
  expected,
  expectedSeries,
  expectSeriesClose,
  ROWS,
  type Series,
  T0,
} from '../../helpers/analytics-data.js';
import { icmpBody, TEST_DATABASE, type TestService, testService } from '../../helpers/service.js';

// ---- Service under test. ----

let svc: TestService;
let urlCheckId: string;
let icmpCheckId: string;
const FROM = T0;
const TO = T0 + 6 * 3_600_000;

beforeAll(async () => {
  svc = await testService();
  const url = await svc.app.inject({
    method: 'POST',
    url: '/v1/checks/url',
    headers: svc.auth(),
    payload: {
      name: 'health',
      request: { url: 'https://example.test/health' },
      tags: ['prod'],
      frequency: 1,
    },
  });
  expect(url.statusCode).toBe(201);
  urlCheckId = url.json().id;
  const icmp = await svc.app.inject({
    method: 'POST',
    url: '/v1/checks/icmp',
    headers: svc.auth(),
    payload: icmpBody(),
  });
  icmpCheckId = icmp.json().id;
  const a = svc.accountA.id;
  const noise = [
    ...ROWS.slice(0, 50).map((r) => dbRow(urlCheckId, a, { ...r, rt: 99_999 }, 'ATTEMPT')), // retried attempts: not counted
    ...ROWS.slice(0, 50).map((r) => dbRow(icmpCheckId, a, { ...r, rt: 88_888 })), // another check
    dbRow(urlCheckId, a, { ...ROWS[0]!, started: TO + 5, rt: 77_777 }), // after the window
    dbRow(urlCheckId, a, { ...ROWS[0]!, started: FROM - 1, rt: 66_666 }), // before the window
  ];
  const all = [...ROWS.map((r) => dbRow(urlCheckId, a, r)), ...noise];
  for (let i = 0; i < all.length; i += 400)
    await svc.context.db
      .insertInto('check_results')
      .values(all.slice(i, i + 400))
      .execute();
});
afterAll(async () => svc.close());
afterEach(() => vi.useRealTimers());

const seconds = (ms: number) => String(ms / 1000);
function get(query: Record<string, string | number | string[]>, id = urlCheckId, account: 'A' | 'B' = 'A') {
  return svc.app.inject({
    method: 'GET',
    url: `/v1/analytics/api-checks/${id}`,
    query: query as never,
    headers: svc.auth(account),
  });
}
const window = { from: seconds(FROM), to: seconds(TO) };

describe('GET /v1/analytics/api-checks/{id}', () => {
  it('answers the full shape: check fields, window, one series, pagination and metadata per metric', async () => {
    const res = await get({
      ...window,
      metrics: 'responseTime,responseTime_p95,availability,retries,dns_stddev',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      [
        'activated',
        'checkId',
        'checkType',
        'frequency',
        'from',
        'metadata',
        'muted',
        'name',
        'pagination',
        'series',
        'tags',
        'to',
      ].sort(),
    );
    expect(body).toMatchObject({
      checkId: urlCheckId,
      name: 'health',
      checkType: 'URL',
      activated: true,
      muted: false,
      frequency: 1,
      tags: ['prod'],
      from: new Date(FROM).toISOString(),
      to: new Date(TO).toISOString(),
      pagination: { page: 1, limit: 10 },
    });
    expect(body.metadata).toEqual({
      responseTime: { unit: 'milliseconds', label: 'Response time (average)', aggregation: 'avg' },
      responseTime_p95: {
        unit: 'milliseconds',
        label: 'Response time (95th percentile)',
        aggregation: 'p95',
      },
      availability: { unit: 'percent', label: 'Availability', aggregation: 'avg' },
      retries: { unit: 'count', label: 'Retried runs', aggregation: 'sum' },
      dns_stddev: { unit: 'milliseconds', label: 'DNS (standard deviation)', aggregation: 'stddev' },
    });
    expect(body.series).toHaveLength(1);
    expect(Object.keys(body.series[0])).toEqual(['data']);
    expect(body.series[0].data).toHaveLength(1);
    expect(Object.keys(body.series[0].data[0]).sort()).toEqual([
      'availability',
      'dns_stddev',
      'responseTime',
      'responseTime_p95',
      'retries',
      'timestamp',
    ]);
    expectSeriesClose(
      body.series,
      expectedSeries(['responseTime', 'responseTime_p95', 'availability', 'retries', 'dns_stddev'], {
        from: FROM,
        to: TO,
      }),
    );
  });

  it('computes every metric per epoch-aligned bucket as a direct computation does, in both strategies', async () => {
    const metrics = [...METRIC_NAMES];
    const res = await get({ ...window, metrics: metrics.join(','), aggregationInterval: 50 });
    expect(res.statusCode).toBe(200);
    const want = expectedSeries(metrics, { from: FROM, to: TO, intervalMin: 50 });
    // 06:00 is 10 minutes into a 50-minute epoch bucket: the first bucket starts at 05:50.
    expect(want[0]!.data.map((p) => p.timestamp).slice(0, 2)).toEqual([
      '2025-03-03T05:50:00.000Z',
      '2025-03-03T06:40:00.000Z',
    ]);
    expect(want[0]!.data).toHaveLength(8);
    expectSeriesClose(res.json().series, want);
    const query = { ...window, metrics: [metrics.join(',')], aggregationInterval: 50 } as AnalyticsQuery;
    const viaGroupBy = await apiCheckAnalytics(svc.context.db, svc.accountA.id, urlCheckId, query, {
      strategy: 'groupBy',
    });
    expectSeriesClose(viaGroupBy.series as Series[], want);
  });
});

describe('grouping, filtering, paging and the window', () => {
  const metrics = ['responseTime_p90', 'availability', 'retries', 'tcp_max', 'download_sum'];

  it.each([
    ['runLocation', undefined],
    ['statusCode', undefined],
    ['runLocation', 'success'],
    ['statusCode', 'failure'],
  ] as const)(
    'groupBy %s with filterByStatus %s agrees with the direct computation',
    async (groupBy, only) => {
      const res = await get({
        ...window,
        metrics: metrics.join(','),
        groupBy,
        aggregationInterval: 120,
        ...(only ? { filterByStatus: only } : {}),
      });
      expect(res.statusCode).toBe(200);
      const want = expectedSeries(metrics, {
        from: FROM,
        to: TO,
        intervalMin: 120,
        groupBy,
        ...(only ? { only } : {}),
      });
      expect(want.length).toBeGreaterThan(1);
      expectSeriesClose(res.json().series, want);
      const query = {
        ...window,
        metrics,
        groupBy,
        aggregationInterval: 120,
        ...(only ? { filterByStatus: [only] } : {}),
      };
      const viaGroupBy = await apiCheckAnalytics(svc.context.db, svc.accountA.id, urlCheckId, query, {
        strategy: 'groupBy',
      });
      expectSeriesClose(viaGroupBy.series as Series[], want);
    },
  );

  it('groups status codes ascending with runs without a response (null) last', async () => {
    const res = await get({ ...window, metrics: 'responseTime', groupBy: 'statusCode' });
    expect(res.json().series.map((s: Series) => s.statusCode)).toEqual([200, 201, 500, null]);
  });

  it('takes filterByStatus comma-separated or repeated, and both values mean every run', async () => {
    const both = await get({ ...window, metrics: 'availability', filterByStatus: 'success,failure' });
    const repeated = await get({
      ...window,
      metrics: 'availability',
      filterByStatus: ['failure', 'success'],
    });
    const none = await get({ ...window, metrics: 'availability' });
    expect(both.json().series).toEqual(none.json().series);
    expect(repeated.json().series).toEqual(none.json().series);
    const failures = await get({ ...window, metrics: 'availability', filterByStatus: 'failure' });
    expect(failures.json().series[0].data[0].availability).toBe(0);
  });

  it('pages the series with limit and page', async () => {
    const all = (await get({ ...window, metrics: 'responseTime', groupBy: 'runLocation' })).json()
      .series as Series[];
    expect(all.map((s) => s.runLocation)).toEqual(['ap-south-1', 'eu-west-1', 'us-east-1']);
    const p1 = await get({ ...window, metrics: 'responseTime', groupBy: 'runLocation', limit: 2 });
    const p2 = await get({ ...window, metrics: 'responseTime', groupBy: 'runLocation', limit: 2, page: 2 });
    const p3 = await get({ ...window, metrics: 'responseTime', groupBy: 'runLocation', limit: 2, page: 3 });
    expect(p1.json().series).toEqual(all.slice(0, 2));
    expect(p2.json().series).toEqual(all.slice(2));
    expect(p2.json().pagination).toEqual({ page: 2, limit: 2 });
    expect(p3.json().series).toEqual([]);
    expect((await get({ ...window, metrics: 'responseTime', page: 2 })).json().series).toEqual([]);
  });

  it('includes a result started exactly at from and excludes one started exactly at to', async () => {
    const at = ROWS[100]!.started;
    const res = await get({
      from: new Date(at).toISOString(),
      to: new Date(ROWS[103]!.started).toISOString(),
      metrics: 'responseTime_sum',
    });
    expect(res.json().series[0].data[0].responseTime_sum).toBeCloseTo(
      ROWS[100]!.rt + ROWS[101]!.rt + ROWS[102]!.rt,
      9,
    );
    expect(res.json().from).toBe(new Date(at).toISOString());
  });

  it('accepts from/to as unix seconds or ISO dates, a lone from ending now and a lone to starting 24 h before', async () => {
    const iso = await get({ from: '2025-03-03T06:00:00Z', to: '2025-03-03 09:00', metrics: 'retries' });
    const secs = await get({
      from: String(T0 / 1000),
      to: String((T0 + 3 * 3_600_000) / 1000),
      metrics: 'retries',
    });
    expect(iso.json().series).toEqual(secs.json().series);
    expect(iso.json().series[0].data[0].retries).toBe(
      expected(
        'retries',
        ROWS.filter((r) => r.started < T0 + 3 * 3_600_000),
      ),
    );
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(TO + 1000);
    const lone = (await get({ from: seconds(FROM), metrics: 'retries' })).json();
    expect([lone.from, lone.to]).toEqual([new Date(FROM).toISOString(), new Date(TO + 1000).toISOString()]);
    const loneTo = (await get({ to: seconds(TO), metrics: 'retries' })).json();
    expect([loneTo.from, loneTo.to]).toEqual([
      new Date(TO - 86_400_000).toISOString(),
      new Date(TO).toISOString(),
    ]);
  });

  it('defaults to the last 24 hours and computes quick ranges in UTC with weeks from Monday', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 + 3_600_000); // Monday 07:00
    const body = (await get({ metrics: 'availability' })).json();
    expect([body.from, body.to]).toEqual([
      new Date(T0 - 23 * 3_600_000).toISOString(),
      new Date(T0 + 3_600_000).toISOString(),
    ]);
    // The first 200 runs plus the one stored a millisecond before 06:00.
    expect(body.series[0].data[0].availability).toBeCloseToRelative(
      expected('availability', [ROWS[0]!, ...ROWS.slice(0, 200)])!,
    );
    const now = Date.UTC(2025, 0, 1, 10); // Wednesday 1 January 2025, 10:00
    const span = (range: Parameters<typeof quickRangeWindow>[0]) => {
      const w = quickRangeWindow(range, now);
      return [new Date(w.fromMs).toISOString(), new Date(w.toMs).toISOString()];
    };
    const nowIso = new Date(now).toISOString();
    expect(span('last24Hours')).toEqual(['2024-12-31T10:00:00.000Z', nowIso]);
    expect(span('last7Days')).toEqual(['2024-12-25T10:00:00.000Z', nowIso]);
    expect(span('last30Days')).toEqual(['2024-12-02T10:00:00.000Z', nowIso]);
    expect(span('thisWeek')).toEqual(['2024-12-30T00:00:00.000Z', nowIso]);
    expect(span('thisMonth')).toEqual(['2025-01-01T00:00:00.000Z', nowIso]);
    expect(span('lastWeek')).toEqual(['2024-12-23T00:00:00.000Z', '2024-12-30T00:00:00.000Z']);
    expect(span('lastMonth')).toEqual(['2024-12-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    // A Sunday still belongs to the week that began on the Monday before it.
    expect(quickRangeWindow('thisWeek', Date.UTC(2025, 2, 9, 23, 59)).fromMs).toBe(Date.UTC(2025, 2, 3));
    expect(quickRangeWindow('thisWeek', T0).fromMs).toBe(Date.UTC(2025, 2, 3));
  });

  it('answers one empty series without data, and no series when grouped', async () => {
    const empty = { from: '2020-01-01', to: '2020-01-02', metrics: 'responseTime' };
    expect((await get(empty)).json().series).toEqual([{ data: [] }]);
    expect((await get({ ...empty, groupBy: 'runLocation' })).json().series).toEqual([]);
  });

  it('serves API checks too, and null for a phase no run in the bucket reached', async () => {
    const doc = newCheckDoc(
      'API',
      { name: 'api', activated: false, muted: true, tags: [], request: { url: 'https://x.test' } },
      new Date(),
    );
    await new CheckQueries(svc.context.db).insert(svc.accountA.id, doc, Date.now());
    const r = { ...ROWS[1]!, phases: [1, 2, null, null, null], started: FROM + 5 };
    await svc.context.db
      .insertInto('check_results')
      .values(dbRow(doc.id, svc.accountA.id, r))
      .execute();
    const body = (await get({ ...window, metrics: 'wait_sum,tcp_p99,download_stddev' }, doc.id)).json();
    expect(body).toMatchObject({ checkType: 'API', activated: false, muted: true });
    expect(body.series[0].data[0]).toEqual({
      timestamp: new Date(FROM).toISOString(),
      wait_sum: 1,
      tcp_p99: null,
      download_stddev: null,
    });
  });
});

// SQLite's plans (EXPLAIN QUERY PLAN): the PostgreSQL store groups with its own planner.
describe.runIf(TEST_DATABASE === 'sqlite')('query plans', () => {
  const query = (metrics: string, groupBy: 'runLocation' | null = null) => ({
    checkId: urlCheckId,
    window: { fromMs: FROM, toMs: TO },
    intervalMs: 3_600_000,
    metrics: parseMetrics([metrics]),
    groupBy,
    statuses: [],
  });

  it.each([false, true])(
    'reads only a covering index, the narrow one when it covers (ANALYZE run: %s)',
    async (analyzed) => {
      if (analyzed) await sql`ANALYZE`.execute(svc.context.db);
      const typical = await explainAggregate(
        svc.context.db,
        query('responseTime_avg,responseTime_p95,availability'),
      );
      expect(typical.join('\n')).toContain(
        'USING COVERING INDEX check_results_analytics (check_id=? AND result_type=?',
      );
      const phases = await explainAggregate(svc.context.db, query('dns_p99,retries', 'runLocation'));
      expect(phases.join('\n')).toContain(
        'USING COVERING INDEX check_results_analytics_all (check_id=? AND result_type=?',
      );
      for (const plan of [typical, phases]) {
        expect(
          plan.filter((step) => / check_results| r\b/.test(step) && !step.includes('COVERING INDEX')),
        ).toEqual([]);
      }
    },
  );
});

describe('errors', () => {
  const bad = async (query: Record<string, string | number>, field: string) => {
    const res = await get({ ...window, metrics: 'responseTime', ...query });
    expect(res.statusCode, JSON.stringify(query)).toBe(400);
    expect(res.json()).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      attributes: { field, in: 'querystring' },
    });
  };

  it('requires metrics and names it for an unknown, empty or malformed metric', async () => {
    const res = await get({ ...window });
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field: 'metrics', rule: 'required' });
    for (const metrics of [
      'latency',
      'responseTime,',
      'availability_avg',
      'responseTime_p42',
      'dns_p95_max',
      'ResponseTime',
    ]) {
      await bad({ metrics }, 'metrics');
    }
  });

  it('checks each limit at its edge and one past it', async () => {
    for (const ok of [
      { aggregationInterval: 1 },
      { aggregationInterval: 43_200 },
      { limit: 1 },
      { limit: 100 },
      { page: 1 },
    ]) {
      expect((await get({ ...window, metrics: 'responseTime', ...ok })).statusCode, JSON.stringify(ok)).toBe(
        200,
      );
    }
    await bad({ aggregationInterval: 0 }, 'aggregationInterval');
    await bad({ aggregationInterval: 43_201 }, 'aggregationInterval');
    await bad({ aggregationInterval: 1.5 }, 'aggregationInterval');
    await bad({ limit: 0 }, 'limit');
    await bad({ limit: 101 }, 'limit');
    await bad({ page: 0 }, 'page');
  });

  it('rejects bad enums, windows and unknown parameters naming the parameter', async () => {
    await bad({ quickRange: 'lastYear' }, 'quickRange');
    await bad({ groupBy: 'checkId' }, 'groupBy');
    await bad({ filterByStatus: 'degraded' }, 'filterByStatus');
    await bad({ from: 'yesterday' }, 'from');
    await bad({ to: '2025-13-45' }, 'to');
    await bad({ from: seconds(TO), to: seconds(FROM) }, 'from');
    await bad({ from: seconds(FROM), to: seconds(FROM) }, 'from');
    await bad({ bucket: 5 }, 'bucket');
  });

  it('answers 404 for an unknown id, a check of another account, and a check that is not an API or URL check', async () => {
    for (const [id, account] of [
      [randomUUID(), 'A'],
      [urlCheckId, 'B'],
      [icmpCheckId, 'A'],
    ] as const) {
      const res = await get({ metrics: 'responseTime' }, id, account);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, error: 'Not Found', attributes: { id } });
    }
  });
});

/** A passing result without a type-specific part. */
const base = {
  status: 'PASSED',
  hasFailures: false,
  hasErrors: false,
  isDegraded: false,
  overMaxResponseTime: false,
  responseTime: 12,
  startedAt: new Date(T0).toISOString(),
  stoppedAt: new Date(T0).toISOString(),
  errorMessage: null,
  assertions: [],
  logs: [],
  runLocation: 'eu-west-1',
  attempts: 2,
  resultType: 'FINAL',
  artifacts: [],
} as unknown as CheckResult;

describe('results posted by an agent', () => {
  it('are counted once the agent protocol stores them', async () => {
    const check = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/url',
      headers: svc.auth(),
      payload: { name: 'agent', activated: false, request: { url: 'https://example.test/' } },
    });
    const checkId = check.json().id as string;
    const agent = { ...svc.auth(), 'x-agent-id': randomUUID() };
    const claimed: Job[] = [];
    for (const _ of [1, 2]) {
      await svc.app.inject({
        method: 'POST',
        url: '/v1/check-sessions/trigger',
        headers: svc.auth(),
        payload: { target: { checkId: [checkId] } },
      });
      const claim = await svc.app.inject({
        method: 'POST',
        url: '/v1/agent/jobs/claim',
        headers: agent,
        payload: {
          agentVersion: 't',
          protocolVersion: PROTOCOL_VERSION,
          checkTypes: ['URL'],
          runtimes: [],
          freeSlots: { uptime: 1, main: 0 },
          waitSeconds: 0,
        },
      });
      claimed.push(...(claim.json().jobs as Job[]));
    }
    expect(claimed).toHaveLength(2);
    const startedAt = new Date(Date.now() - 1000).toISOString();
    for (const [i, job] of claimed.entries()) {
      const result = {
        ...base,
        status: i === 0 ? 'PASSED' : 'FAILED',
        responseTime: 10 + i * 20,
        startedAt,
        stoppedAt: startedAt,
        runLocation: job.runLocation,
        attempts: 1,
      };
      const posted = await svc.app.inject({
        method: 'POST',
        url: `/v1/agent/jobs/${job.jobId}/result`,
        headers: agent,
        payload: result,
      });
      expect(posted.statusCode).toBe(200);
    }
    const res = await get({ metrics: 'responseTime_avg,responseTime_max,availability' }, checkId);
    expect(res.json().series[0].data).toEqual([
      { timestamp: res.json().from, responseTime_avg: 20, responseTime_max: 30, availability: 50 },
    ]);
  });
});

describe('analyticsColumnsOf', () => {
  it('copies the HTTP timing phases, the status code and attempts', () => {
    const http = {
      timingPhases: { wait: 0.5, dns: 1.25, tcp: 2, tls: 3, firstByte: 4, download: 1, total: 12 },
      response: { statusCode: 503 },
    } as unknown as NonNullable<CheckResult['httpCheckResult']>;
    expect(analyticsColumnsOf({ ...base, httpCheckResult: http })).toEqual({
      phase_wait: 0.5,
      phase_dns: 1.25,
      phase_tcp: 2,
      phase_first_byte: 4,
      phase_download: 1,
      status_code: 503,
      attempts: 2,
    });
    const noResponse = {
      ...http,
      response: null,
      timingPhases: { ...http.timingPhases, tcp: null, firstByte: null, download: null },
    };
    expect(analyticsColumnsOf({ ...base, httpCheckResult: noResponse })).toMatchObject({
      phase_tcp: null,
      phase_download: null,
      status_code: null,
    });
  });

  it('stores nulls for a result without phases, and TCP timings where they exist', () => {
    expect(analyticsColumnsOf(base)).toEqual({
      phase_wait: null,
      phase_dns: null,
      phase_tcp: null,
      phase_first_byte: null,
      phase_download: null,
      status_code: null,
      attempts: 2,
    });
    const tcp = { timings: { dns: 1, connect: 2, firstByte: null, total: 3 } } as unknown as NonNullable<
      CheckResult['tcpCheckResult']
    >;
    expect(analyticsColumnsOf({ ...base, tcpCheckResult: tcp })).toMatchObject({
      phase_dns: 1,
      phase_tcp: 2,
      phase_first_byte: null,
    });
  });
});
