/**
 * The performance section of the check page: availability, runs and failures over a window, response time
 * per run location, and (API and URL checks) the HTTP phases stacked per time bucket.
 */
import { useMemo } from 'preact/hooks';
import { getApiCheckAnalytics } from '../../api/analytics.js';
import { listResultsBetween } from '../../api/check-results.js';
import { formatDateTime, formatMs, formatPercent } from '../../ui/format.js';
import { useLoad } from '../../ui/hooks.js';
import type { Check, CheckResultResponse } from '../../api/schemas.js';
import { ErrorNotice, Loading } from '../../ui/page.js';
import { type ChartMark, type ChartSeries, TimeChart } from '../../ui/time-chart.js';
import { MarkedRuns } from './marked-runs.js';
import './chart.css';

/** A window of the check page (`?window=`), its length and the analytics bucket that gives it ~60–200 buckets. */
export const WINDOWS = {
  '1h': { label: '1 hour', short: '1 h', ms: 3_600_000, intervalMinutes: 1 },
  '24h': { label: '24 hours', short: '24 h', ms: 86_400_000, intervalMinutes: 10 },
  '7d': { label: '7 days', short: '7 d', ms: 7 * 86_400_000, intervalMinutes: 60 },
  '30d': { label: '30 days', short: '30 d', ms: 30 * 86_400_000, intervalMinutes: 240 },
} as const;
/** A key of {@link WINDOWS}. */
export type WindowKey = keyof typeof WINDOWS;

/** Reads `?window=`: one of {@link WINDOWS}, else `24h`. */
export function windowOf(value: string | undefined): WindowKey {
  return value && value in WINDOWS ? (value as WindowKey) : '24h';
}

/** A result as `GET /v1/check-results/{checkId}` lists it. */
export type ResultItem = CheckResultResponse;

/** The HTTP phases of docs/checks.md "HTTP timing" that analytics aggregate, in request order. */
const PHASES = [
  { metric: 'wait', label: 'Wait (socket)' },
  { metric: 'dns', label: 'DNS' },
  { metric: 'tcp', label: 'TCP connect' },
  { metric: 'firstByte', label: 'First byte' },
  { metric: 'download', label: 'Download' },
] as const;

/** What the section shows for one window, whatever it was computed from. */
export type Performance = {
  fromMs: number;
  toMs: number;
  /** Percent of runs that passed or degraded; null without runs. */
  availability: number | null;
  runs: number;
  failures: number;
  avgMs: number | null;
  p95Ms: number | null;
  /** Response time per run location: bucket starts (epoch ms) and one series per location. */
  byLocation: { times: number[]; series: ChartSeries[] };
  /** API and URL checks: the HTTP phases per bucket. */
  phases: { times: number[]; series: ChartSeries[] } | null;
  /** Results-based figures cover only the newest this many runs when the window held more; else null. */
  truncatedSince: number | null;
  /** The window's failed and degraded runs (of the results read), newest first, marked on the chart. */
  marked: ResultItem[];
  /** When the runs marked are only the newest of the window: the oldest run read (epoch ms); else null. */
  marksSince: number | null;
};

/** The failed and degraded runs among `results`, newest first. */
function markedRuns(results: readonly ResultItem[]): ResultItem[] {
  return results
    .filter((r) => r.status === 'FAILED' || r.status === 'DEGRADED')
    .sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt));
}

/** The chart marks of failed and degraded runs: each at its start and its response time. */
export function marksOf(runs: readonly ResultItem[]): ChartMark[] {
  return runs
    .map((r) => ({
      t: Date.parse(r.startedAt),
      v: r.responseTime,
      kind: r.status === 'FAILED' ? ('failed' as const) : ('degraded' as const),
    }))
    .filter((m) => Number.isFinite(m.t));
}

/** The oldest start among `results` (epoch ms) when they are a truncated read, else null. */
function oldestIfTruncated(results: readonly ResultItem[], truncated: boolean): number | null {
  if (!truncated) return null;
  const oldest = Math.min(...results.map((r) => Date.parse(r.startedAt)).filter(Number.isFinite));
  return Number.isFinite(oldest) ? oldest : null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Aligns series given as (time, value) points on one sorted time axis, null where a series has no point. */
function alignSeries(
  input: readonly { label: string; points: readonly { t: number; v: number | null }[] }[],
): { times: number[]; series: ChartSeries[] } {
  const all = new Set<number>();
  for (const s of input) for (const p of s.points) all.add(p.t);
  const times = [...all].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const series = input.map((s) => {
    const values: (number | null)[] = times.map(() => null);
    for (const p of s.points) values[index.get(p.t) ?? 0] = p.v;
    return { label: s.label, values };
  });
  return { times, series };
}

/** API and URL checks: three analytics queries over the window (per location, phases, totals). */
async function fromAnalytics(
  checkId: string,
  fromMs: number,
  toMs: number,
  intervalMinutes: number,
  signal: AbortSignal,
): Promise<Performance> {
  const window = { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
  const [locations, phases, totals, results] = await Promise.all([
    getApiCheckAnalytics(
      checkId,
      {
        ...window,
        metrics: 'responseTime',
        groupBy: 'runLocation',
        aggregationInterval: intervalMinutes,
        limit: 100,
      },
      signal,
    ),
    getApiCheckAnalytics(
      checkId,
      { ...window, metrics: PHASES.map((p) => p.metric).join(','), aggregationInterval: intervalMinutes },
      signal,
    ),
    // One bucket for the whole window. The number of runs is sum / avg of the response time (every run has
    // one), and the failures follow from the availability: the API has no count metric.
    getApiCheckAnalytics(
      checkId,
      { ...window, metrics: 'availability,responseTime_avg,responseTime_sum,responseTime_p95' },
      signal,
    ),
    // The runs themselves, for marking the failed and degraded ones: analytics have no single run.
    listResultsBetween(checkId, window, signal, MAX_RESULT_PAGES),
  ]);
  const truncated = results.length >= MAX_RESULT_PAGES * 100;
  const total = totals.series[0]?.data[0];
  const avg = num(total?.responseTime_avg);
  const sum = num(total?.responseTime_sum);
  const availability = num(total?.availability);
  const runs = avg && sum !== null ? Math.round(sum / avg) : 0;
  // Buckets where no run reached any phase (every run failed before a socket) have nothing to stack.
  const phaseData = (phases.series[0]?.data ?? []).filter((d) =>
    PHASES.some((p) => num(d[p.metric]) !== null),
  );
  return {
    fromMs,
    toMs,
    availability,
    runs,
    failures: availability === null ? 0 : Math.round(runs * (1 - availability / 100)),
    avgMs: avg,
    p95Ms: num(total?.responseTime_p95),
    byLocation: alignSeries(
      locations.series.map((s) => ({
        label: s.runLocation ?? 'all locations',
        points: s.data.map((d) => ({ t: Date.parse(d.timestamp), v: num(d.responseTime) })),
      })),
    ),
    phases: {
      times: phaseData.map((d) => Date.parse(d.timestamp)),
      series: PHASES.map((p) => ({ label: p.label, values: phaseData.map((d) => num(d[p.metric])) })),
    },
    truncatedSince: null,
    marked: markedRuns(results),
    marksSince: oldestIfTruncated(results, truncated),
  };
}

/** Most results read for a check type without analytics: ten pages of 100. */
const MAX_RESULT_PAGES = 10;

/** Other types: the window's results (newest first, up to 1,000), averaged per location and bucket here. */
async function fromResults(
  checkId: string,
  fromMs: number,
  toMs: number,
  intervalMinutes: number,
  signal: AbortSignal,
): Promise<Performance> {
  const results = await listResultsBetween(
    checkId,
    { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() },
    signal,
    MAX_RESULT_PAGES,
  );
  return summarizeResults(results, fromMs, toMs, intervalMinutes, results.length >= MAX_RESULT_PAGES * 100);
}

/**
 * The figures of a window from its results: availability (passed or degraded over all), failures, average
 * and 95th percentile response time, and the mean response time per location and bucket of
 * `intervalMinutes` (buckets aligned to the epoch, as the analytics API aligns them). Exported for tests.
 */
function summarizeResults(
  results: readonly ResultItem[],
  fromMs: number,
  toMs: number,
  intervalMinutes: number,
  truncated: boolean,
): Performance {
  const interval = intervalMinutes * 60_000;
  const buckets = new Map<string, Map<number, { sum: number; n: number }>>();
  const times: number[] = [];
  let failures = 0;
  let oldest = Number.POSITIVE_INFINITY;
  for (const r of results) {
    const t = Date.parse(r.startedAt);
    if (Number.isNaN(t)) continue;
    oldest = Math.min(oldest, t);
    if (r.status === 'FAILED') failures++;
    times.push(r.responseTime);
    const start = Math.floor(t / interval) * interval;
    let byBucket = buckets.get(r.runLocation);
    if (!byBucket) {
      byBucket = new Map();
      buckets.set(r.runLocation, byBucket);
    }
    const cell = byBucket.get(start) ?? { sum: 0, n: 0 };
    cell.sum += r.responseTime;
    cell.n++;
    byBucket.set(start, cell);
  }
  times.sort((a, b) => a - b);
  const n = times.length;
  const p95 = n === 0 ? null : (times[Math.min(n - 1, Math.ceil(0.95 * n) - 1)] ?? null);
  const avg = n === 0 ? null : times.reduce((a, b) => a + b, 0) / n;
  return {
    fromMs,
    toMs,
    availability: n === 0 ? null : ((n - failures) / n) * 100,
    runs: n,
    failures,
    avgMs: avg,
    p95Ms: p95,
    byLocation: alignSeries(
      [...buckets.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([location, byBucket]) => ({
          label: location,
          points: [...byBucket.entries()].map(([t, c]) => ({ t, v: c.sum / c.n })),
        })),
    ),
    phases: null,
    truncatedSince: truncated && Number.isFinite(oldest) ? oldest : null,
    marked: markedRuns(results),
    // The notice of truncatedSince already says the chart covers only the newest runs.
    marksSince: null,
  };
}

/**
 * The performance of a check over a window: figures, response time per run location and, for API and URL
 * checks (from the analytics API), the HTTP phases stacked; other types from their results.
 * @param reloadKey changes when the figures must be read again (after a run).
 */
export function CheckPerformance({
  check,
  windowKey,
  reloadKey,
}: {
  check: Check;
  windowKey: WindowKey;
  reloadKey: number;
}) {
  const win = WINDOWS[windowKey];
  const http = check.checkType === 'API' || check.checkType === 'URL';
  const perf = useLoad(
    (signal) => {
      const toMs = Date.now();
      const fromMs = toMs - win.ms;
      return http
        ? fromAnalytics(check.id, fromMs, toMs, win.intervalMinutes, signal)
        : fromResults(check.id, fromMs, toMs, win.intervalMinutes, signal);
    },
    [check.id, windowKey, http, reloadKey],
  );
  const p = perf.data;
  const format = useMemo(() => (ms: number) => (ms === 0 ? '0 ms' : formatMs(ms)), []);
  const marks = useMemo(() => marksOf(p?.marked ?? []), [p?.marked]);

  if (perf.error && !p) return <ErrorNotice error={perf.error} title="The figures could not be loaded" />;
  if (!p) return <Loading what="Loading figures" />;
  const heartbeat = check.checkType === 'HEARTBEAT';
  return (
    <div class="check-performance" aria-busy={perf.loading ? 'true' : 'false'}>
      {perf.error ? <ErrorNotice error={perf.error} title="The figures could not be refreshed" /> : null}
      <dl class="grid check-stats">
        <div class="card stat">
          <dt class="stat-label">Availability</dt>
          <dd class="stat-value">{formatPercent(p.availability)}</dd>
        </div>
        <div class="card stat">
          <dt class="stat-label">Runs</dt>
          <dd class="stat-value">{p.runs.toLocaleString()}</dd>
        </div>
        <div class="card stat">
          <dt class="stat-label">Failed runs</dt>
          <dd class="stat-value">{p.failures.toLocaleString()}</dd>
        </div>
        {heartbeat ? null : (
          <div class="card stat">
            <dt class="stat-label">Response time (avg / p95)</dt>
            <dd class="stat-value">
              {formatMs(p.avgMs)} <span class="muted">/ {formatMs(p.p95Ms)}</span>
            </dd>
          </div>
        )}
      </dl>
      {p.truncatedSince !== null ? (
        <p class="notice">
          This window holds more runs than the page reads: the figures and the chart cover the newest{' '}
          {(MAX_RESULT_PAGES * 100).toLocaleString()} runs, since {formatDateTime(p.truncatedSince)}.
        </p>
      ) : null}
      {heartbeat ? (
        <p class="muted">
          A heartbeat monitor has no response time: each of its results says whether the ping came in time.
        </p>
      ) : (
        <TimeChart
          caption={`Response time per run location, last ${win.label} (mean per ${bucketText(win.intervalMinutes)}; failed runs ✕, degraded runs ▲)`}
          times={p.byLocation.times}
          series={p.byLocation.series}
          range={[p.fromMs, p.toMs]}
          format={format}
          marks={marks}
        />
      )}
      {heartbeat ? null : <MarkedRuns checkId={check.id} runs={p.marked} since={p.marksSince} />}
      {p.phases ? (
        <TimeChart
          caption={`HTTP phases, stacked, last ${win.label} (mean per ${bucketText(win.intervalMinutes)}; the TLS handshake is not included)`}
          times={p.phases.times}
          series={p.phases.series}
          kind="stacked-bars"
          range={[p.fromMs, p.toMs]}
          format={format}
          emptyText="No run in this window recorded HTTP phases."
        />
      ) : null}
    </div>
  );
}

/** `10 minutes`, `1 hour`, `4 hours`. */
function bucketText(minutes: number): string {
  if (minutes % 60 === 0) return minutes === 60 ? 'hour' : `${minutes / 60} hours`;
  return minutes === 1 ? 'minute' : `${minutes} minutes`;
}
