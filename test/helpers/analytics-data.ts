/**
 * Known results for the analytics tests, and the direct computation the service must agree
 * with: metrics computed here in plain TypeScript over the same rows.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';

expect.extend({
  /** Within 1e-9 relative (sums in another order round differently). */
  toBeCloseToRelative(received: unknown, want: number) {
    const pass =
      typeof received === 'number' && Math.abs(received - want) <= 1e-9 * Math.max(1, Math.abs(want));
    return { pass, message: () => `expected ${String(received)} to be within 1e-9 relative of ${want}` };
  },
});

declare module 'vitest' {
  // `T = any` as in vitest's own declaration (declarations must match).
  interface Matchers<T = any> {
    toBeCloseToRelative(want: number): T;
  }
}

/** One known result. `phases`: wait, dns, tcp, firstByte, download (ms, null = not reached). */
export type Row = {
  started: number;
  rt: number;
  status: 'PASSED' | 'DEGRADED' | 'FAILED';
  loc: string;
  code: number | null;
  attempts: number;
  phases: (number | null)[]; // wait, dns, tcp, firstByte, download
};

/** Monday 2025-03-03 06:00 UTC: the first known result. */
export const T0 = Date.UTC(2025, 2, 3, 6, 0, 0); // Monday 2025-03-03 06:00 UTC
const N = 1200;
const LOCATIONS = ['eu-west-1', 'us-east-1', 'ap-south-1'];

function knownRow(i: number): Row {
  // response times: a permutation of 1..1000 ms with quarter-ms fractions.
  const rt = 1 + ((i * 7919) % 1000) + (i % 4) * 0.25;
  const status = i % 7 === 0 ? 'FAILED' : i % 11 === 0 ? 'DEGRADED' : 'PASSED';
  const code = i % 13 === 0 ? null : status === 'FAILED' ? 500 : i % 5 === 0 ? 201 : 200;
  const phases = [rt * 0.01, rt * 0.1, rt * 0.2, rt * 0.5, rt * 0.19];
  return {
    started: T0 + i * 18_000 + (i % 3),
    rt,
    status,
    loc: LOCATIONS[i % 3]!,
    code,
    attempts: i % 27 === 0 ? 3 : i % 9 === 0 ? 2 : 1,
    phases: code === null ? [phases[0]!, phases[1]!, null, null, null] : phases,
  };
}
/** 1 200 known final results of one check, every 18 s from T0 (six hours). */
export const ROWS = Array.from({ length: N }, (_, i) => knownRow(i));

/** A `check_results` row of a known result, with the analytics columns. */
export function dbRow(checkId: string, accountId: string, r: Row, resultType: 'FINAL' | 'ATTEMPT' = 'FINAL') {
  const [phase_wait, phase_dns, phase_tcp, phase_first_byte, phase_download] = r.phases as (number | null)[];
  return {
    id: randomUUID(),
    account_id: accountId,
    check_id: checkId,
    job_id: randomUUID(),
    check_session_id: null,
    run_location: r.loc,
    status: r.status,
    has_failures: r.status === 'FAILED' ? 1 : 0,
    has_errors: 0,
    is_degraded: r.status === 'DEGRADED' ? 1 : 0,
    response_time: r.rt,
    result_type: resultType,
    started_at: r.started,
    stopped_at: r.started + Math.ceil(r.rt),
    doc: '{}',
    created_at: r.started,
    phase_wait: phase_wait ?? null,
    phase_dns: phase_dns ?? null,
    phase_tcp: phase_tcp ?? null,
    phase_first_byte: phase_first_byte ?? null,
    phase_download: phase_download ?? null,
    status_code: r.code,
    attempts: r.attempts,
  };
}

const PHASE_INDEX: Record<string, number> = { wait: 0, dns: 1, tcp: 2, firstByte: 3, download: 4 };

/** Linear interpolation between closest ranks over sorted values (PostgreSQL's percentile_cont). */
function percentile(sorted: number[], p: number): number {
  const ix = p * (sorted.length - 1);
  const lo = Math.floor(ix);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (ix - lo);
}

/** A metric over rows, computed directly (two-pass population stddev, sorted-array percentiles). */
export function expected(metric: string, rows: Row[]): number | null {
  if (metric === 'availability')
    return (100 * rows.filter((r) => r.status !== 'FAILED').length) / rows.length;
  if (metric === 'retries') return rows.filter((r) => r.attempts > 1).length;
  const [base, agg = 'avg'] = metric.split('_') as [string, string?];
  const values = rows
    .map((r) => (base === 'responseTime' ? r.rt : r.phases[PHASE_INDEX[base]!]!))
    .filter((v): v is number => v !== null);
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const sum = values.reduce((a, b) => a + b, 0);
  const mean = sum / values.length;
  const fractions: Record<string, number> = { median: 0.5, p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };
  if (agg in fractions) return percentile(sorted, fractions[agg]!);
  if (agg === 'stddev') return Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
  return { avg: mean, min: sorted[0]!, max: sorted.at(-1)!, sum }[agg] ?? Number.NaN;
}

export type Point = Record<string, string | number | null>;
export type Series = { runLocation?: string; statusCode?: number | null; data: Point[] };

/** Expected series: rows in [from, to), filtered, grouped, bucketed by epoch-aligned interval. */
export function expectedSeries(
  metrics: string[],
  opts: {
    from: number;
    to: number;
    intervalMin?: number;
    groupBy?: 'runLocation' | 'statusCode';
    only?: 'success' | 'failure';
  },
): Series[] {
  const rows = ROWS.filter((r) => r.started >= opts.from && r.started < opts.to).filter(
    (r) => !opts.only || (opts.only === 'failure') === (r.status === 'FAILED'),
  );
  const keyOf = (r: Row) =>
    opts.groupBy === 'runLocation' ? r.loc : opts.groupBy === 'statusCode' ? r.code : null;
  const keys = [...new Set(rows.map(keyOf))].sort((a, b) =>
    a === null ? 1 : b === null ? -1 : a < b ? -1 : 1,
  );
  const interval = (opts.intervalMin ?? 0) * 60_000;
  return keys.map((key) => {
    const own = rows.filter((r) => keyOf(r) === key);
    const starts = [
      ...new Set(own.map((r) => (interval ? Math.floor(r.started / interval) * interval : opts.from))),
    ];
    const data = starts.map((start) => {
      const inBucket = own.filter(
        (r) => (interval ? Math.floor(r.started / interval) * interval : opts.from) === start,
      );
      const point = { timestamp: new Date(start).toISOString() } as Point;
      for (const m of metrics) point[m] = expected(m, inBucket);
      return point;
    });
    const group =
      opts.groupBy === 'runLocation'
        ? { runLocation: key as string }
        : opts.groupBy
          ? { statusCode: key as number | null }
          : {};
    return { ...group, data };
  });
}

/** Same series, same buckets, every value within 1e-9 relative (sums in a different order round differently). */
export function expectSeriesClose(actual: Series[], wanted: Series[]): void {
  expect(actual.map(({ data, ...group }) => ({ group, buckets: data.map((p) => p.timestamp) }))).toEqual(
    wanted.map(({ data, ...group }) => ({ group, buckets: data.map((p) => p.timestamp) })),
  );
  for (const [i, s] of actual.entries()) {
    for (const [j, point] of s.data.entries()) {
      for (const [metric, want] of Object.entries(wanted[i]!.data[j]!)) {
        const got = point[metric];
        if (typeof want !== 'number') expect(got, metric).toEqual(want);
        else expect(got, metric).toBeCloseToRelative(want);
      }
    }
  }
}
