/**
 * The result page's chart: the check's runs in the hour before and after this one, response time per run
 * location, with the failed runs marked red (✕) and the degraded ones amber (▲), and their list as text.
 */
import { useMemo } from 'preact/hooks';
import { listResultsBetween } from '../api/check-results.js';
import type { CheckResultResponse } from '../api/schemas.js';
import { MarkedRuns } from '../checks/detail/marked-runs.js';
import { marksOf } from '../checks/detail/performance.js';
import { formatMs } from '../ui/format.js';
import { useLoad } from '../ui/hooks.js';
import { ErrorNotice, Loading } from '../ui/page.js';
import { type ChartSeries, TimeChart } from '../ui/time-chart.js';
import '../checks/detail/chart.css';

/** How far before and after the run the chart reaches, ms. */
const SPAN_MS = 3_600_000;
/** Most pages of 100 results read for the chart. */
const MAX_PAGES = 3;

/** One series per run location over the runs' own times (null where a location has no run then). */
export function seriesOfRuns(runs: readonly CheckResultResponse[]): {
  times: number[];
  series: ChartSeries[];
} {
  const times = [...new Set(runs.map((r) => Date.parse(r.startedAt)).filter(Number.isFinite))].sort(
    (a, b) => a - b,
  );
  const index = new Map(times.map((t, i) => [t, i]));
  const byLocation = new Map<string, (number | null)[]>();
  for (const r of runs) {
    const i = index.get(Date.parse(r.startedAt));
    if (i === undefined) continue;
    let values = byLocation.get(r.runLocation);
    if (!values) {
      values = times.map(() => null);
      byLocation.set(r.runLocation, values);
    }
    values[i] = r.responseTime;
  }
  const series = [...byLocation.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, values]) => ({ label, values }));
  return { times, series };
}

/** The check's runs around `result` on a response-time chart, failed and degraded runs marked. */
export function RunsAround({ checkId, result }: { checkId: string; result: CheckResultResponse }) {
  const at = Date.parse(result.startedAt);
  const range = useMemo(() => [at - SPAN_MS, at + SPAN_MS] as const, [at]);
  const loaded = useLoad(
    (signal) =>
      listResultsBetween(
        checkId,
        { from: new Date(range[0]).toISOString(), to: new Date(range[1]).toISOString() },
        signal,
        MAX_PAGES,
      ),
    [checkId, range[0]],
  );
  const runs = loaded.data;
  const chart = useMemo(() => seriesOfRuns(runs ?? []), [runs]);
  const marked = useMemo(
    () =>
      (runs ?? [])
        .filter((r) => r.status === 'FAILED' || r.status === 'DEGRADED')
        .sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt)),
    [runs],
  );
  const marks = useMemo(() => marksOf(marked), [marked]);
  if (loaded.error && !runs)
    return <ErrorNotice error={loaded.error} title="The runs around this one could not be loaded" />;
  if (!runs) return <Loading what="Loading the runs around this one" />;
  return (
    <section class="rv-part rv-around" aria-labelledby="rv-around-heading">
      <h2 id="rv-around-heading">Runs around this one</h2>
      <TimeChart
        caption="Response time of each run, an hour either side of this one (failed runs ✕, degraded runs ▲)"
        times={chart.times}
        series={chart.series}
        range={range}
        format={(ms) => (ms === 0 ? '0 ms' : formatMs(ms))}
        marks={marks}
      />
      <MarkedRuns
        checkId={checkId}
        runs={marked}
        since={runs.length >= MAX_PAGES * 100 ? Date.parse(runs[runs.length - 1]?.startedAt ?? '') : null}
        currentId={result.id}
      />
    </section>
  );
}
