/**
 * `POST /v1/analytics/checks` (docs/api.md, "Analytics"): the hosted API's summary of several
 * checks over a quick range, one item per check, its metrics chosen by the check's type.
 */
import type { Kysely } from 'kysely';
import type { CheckType } from '../../protocol/index.js';
import { CheckQueries } from '../checks/index.js';
import type { Database } from '../platform/store/database.js';
import { icmpMetricSpec, type MetricSpec, metricSpec } from './metrics.js';
import { summarizeResults } from './query.js';
import type { AnalyticsBatchItem, BATCH_QUICK_RANGES } from './schema.js';
import { quickRangeWindow } from './time-range.js';
import type { AnalyticsWorkers } from './workers.js';

/** Check types whose runs have a duration the summary reports as `responseTime_*`. */
const RESPONSE_TIME_TYPES: readonly CheckType[] = [
  'API',
  'URL',
  'TCP',
  'DNS',
  'GRPC',
  'BROWSER',
  'MULTI_STEP',
  'PLAYWRIGHT',
  // SSL and TRACEROUTE monitors: the handshake time, the final hop's average RTT.
  'SSL',
  'TRACEROUTE',
];

const RESPONSE_TIME_METRICS = [
  'responseTime_avg',
  'responseTime_p50',
  'responseTime_p95',
  'responseTime_p99',
];
const ICMP_SUMMARY_METRICS = [
  'latency_avg',
  'latency_p50',
  'latency_p95',
  'latency_p99',
  'packetLoss_avg',
  'packetLoss_p95',
  'packetLoss_p99',
];

/**
 * The metrics the summary holds for a check type, as the hosted API shapes it: `availability`
 * for every type; `responseTime_avg|p50|p95|p99` (milliseconds) for API, URL, TCP, DNS and the
 * browser types; `latency_avg|p50|p95|p99` (milliseconds) and `packetLoss_avg|p95|p99` (percent)
 * for ICMP. Heartbeat and agentic checks get availability only.
 */
export function summaryMetricsOf(checkType: CheckType): MetricSpec[] {
  const names = ['availability'];
  if (RESPONSE_TIME_TYPES.includes(checkType)) names.push(...RESPONSE_TIME_METRICS);
  if (checkType === 'ICMP') names.push(...ICMP_SUMMARY_METRICS);
  return names.map((name) => (metricSpec(name) ?? icmpMetricSpec(name))!);
}

/** Options of {@link checksSummary}. */
export type SummaryOptions = {
  /** Clock for the quick range, epoch ms; default `Date.now()`. */
  nowMs?: number;
  /** Reader threads that run each check's statement; default none (the store connection). */
  workers?: AnalyticsWorkers | null;
};

/**
 * The summary of each check of `checkIds` that is in the account, in the order asked (a repeated
 * id answered once). An id of no check of the account (unknown, deleted, another account's) is
 * left out, as the hosted API leaves it out: the answer then has fewer items than ids asked.
 * Each item holds `checkId`, `checkType` and the metrics of {@link summaryMetricsOf} over the
 * check's FINAL results in the quick range's window, each null when the window has no data for it.
 * The caller bounds `checkIds` (the route's schema: at most 100); the checks' statements run on
 * the reader threads at once when there is a pool.
 */
export async function checksSummary(
  db: Kysely<Database>,
  accountId: string,
  checkIds: readonly string[],
  quickRange: (typeof BATCH_QUICK_RANGES)[number],
  options: SummaryOptions = {},
): Promise<AnalyticsBatchItem[]> {
  const window = quickRangeWindow(quickRange, options.nowMs ?? Date.now());
  const checks = new CheckQueries(db);
  const known: { id: string; checkType: CheckType }[] = [];
  for (const id of new Set(checkIds)) {
    const summary = await checks.summary(accountId, id);
    if (summary) known.push({ id, checkType: summary.checkType });
  }
  const workers = options.workers ?? null;
  return Promise.all(
    known.map(async ({ id, checkType }) => {
      const metrics = summaryMetricsOf(checkType);
      const values = await summarizeResults(db, { checkId: id, window, metrics }, workers);
      const item: Record<string, unknown> = { checkId: id, checkType };
      for (const [i, m] of metrics.entries()) item[m.name] = values[i] ?? null;
      return item as AnalyticsBatchItem;
    }),
  );
}
