/**
 * `GET /v1/analytics/api-checks/{id}` (docs/api.md, "Analytics"): parameters parsed and
 * checked, the aggregation run, the response assembled.
 */
import type { Kysely } from 'kysely';
import type { CheckType } from '../../protocol/index.js';
import { CheckQueries } from '../checks/index.js';
import { badField, HttpError } from '../platform/http/errors.js';
import { iso, offsetOf } from '../platform/http/pagination.js';
import type { AnalyticsQuery, AnalyticsResponse } from './schema.js';
import type { AnalyticsWorkers } from './workers.js';
import type { Database } from '../platform/store/database.js';
import { type MetricMetadata, type MetricSpec, metadataOf, metricSpec } from './metrics.js';
import {
  type AggregatedSeries,
  aggregateResults,
  type GroupBy,
  STATUS_FILTERS,
  type StatusFilter,
  type Strategy,
} from './query.js';
import { resolveWindow } from './time-range.js';

/** Check types whose results carry `httpCheckResult`, the input of these analytics. */
export const ANALYTICS_CHECK_TYPES: readonly CheckType[] = ['API', 'URL'];

/** Splits list parameters given comma-separated, repeated, or both; trims items. */
function splitList(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(',')).map((v) => v.trim());
}

/**
 * Resolves `metrics`: duplicates are dropped, order kept.
 * @throws HttpError 400 naming `metrics` for an empty or unknown name.
 */
export function parseMetrics(values: readonly string[]): MetricSpec[] {
  const specs: MetricSpec[] = [];
  for (const name of new Set(splitList(values))) {
    const spec = metricSpec(name);
    if (!spec) {
      throw badField(
        'metrics',
        `has unknown metric ${JSON.stringify(name)}; expected responseTime, wait, dns, tcp, firstByte or download (optionally with _avg, _max, _median, _min, _p50, _p90, _p95, _p99, _stddev or _sum), availability or retries`,
        'enum',
        'querystring',
      );
    }
    specs.push(spec);
  }
  return specs;
}

/** @throws HttpError 400 naming `filterByStatus` for a value other than success or failure. */
export function parseStatusFilter(values: readonly string[] | undefined): StatusFilter[] {
  const items = splitList(values ?? []);
  const bad = items.find((v) => !(STATUS_FILTERS as readonly string[]).includes(v));
  if (bad !== undefined) {
    throw badField(
      'filterByStatus',
      `has ${JSON.stringify(bad)}; expected success or failure`,
      'enum',
      'querystring',
    );
  }
  return [...new Set(items)] as StatusFilter[];
}

/** Options of {@link apiCheckAnalytics}. */
export type AnalyticsOptions = {
  /** Clock for quick ranges, epoch ms; default `Date.now()`. */
  nowMs?: number;
  /** Forces a strategy (tests compare both); default chosen by bucket count. */
  strategy?: Strategy;
  /** Reader threads that evaluate parts of the window at once; default none (one thread). */
  workers?: AnalyticsWorkers | null;
};

type Series = AnalyticsResponse['series'][number];

/**
 * One aggregated series as the API shows it: the group key under its name (`runLocation`, or
 * `statusCode` with null for runs without an HTTP response; nothing when not grouped) and
 * `data`, one point per non-empty bucket, oldest first:
 * `{ timestamp: <ISO start of the bucket>, <metric>: <number or null>, … }`.
 */
function presentSeries(s: AggregatedSeries, groupBy: GroupBy | null, metrics: readonly MetricSpec[]): Series {
  const data = s.buckets.map((b) => {
    const point: Record<string, string | number | null> = { timestamp: iso(b.startMs)! };
    for (const [i, m] of metrics.entries()) point[m.name] = b.values[i] ?? null;
    return point as Series['data'][number];
  });
  if (groupBy === 'runLocation') return { runLocation: String(s.key), data };
  if (groupBy === 'statusCode') return { statusCode: s.key === null ? null : Number(s.key), data };
  return { data };
}

/**
 * Analytics of one API or URL check of the account (docs/api.md, "Analytics").
 *
 * Response: the check's `checkId`, `name`, `checkType`, `activated`, `muted`, `frequency`,
 * `tags`; the window `from`/`to` (ISO 8601, `to` exclusive); `series`, one when not grouped
 * (always present, `data` empty without results) or one per group, paged by `limit`/`page`
 * (see presentSeries for the shape); `pagination` `{page, limit}`; `metadata` keyed by each
 * requested metric name (`{unit, label, aggregation}`). Only FINAL results count, so a
 * retried run counts once.
 *
 * @throws HttpError 404 when the check is not in the account or is not an API or URL check;
 *   400 naming the parameter for a bad `metrics`, `filterByStatus`, `from` or `to`.
 */
export async function apiCheckAnalytics(
  db: Kysely<Database>,
  accountId: string,
  checkId: string,
  query: AnalyticsQuery,
  options: AnalyticsOptions = {},
): Promise<AnalyticsResponse> {
  const metrics = parseMetrics(query.metrics);
  const statuses = parseStatusFilter(query.filterByStatus);
  const { from, to } = query;
  const range = {
    quickRange: query.quickRange ?? 'last24Hours',
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
  };
  const window = resolveWindow(range, options.nowMs ?? Date.now());
  const check = await new CheckQueries(db).get(accountId, checkId);
  if (!ANALYTICS_CHECK_TYPES.includes(check.checkType)) {
    throw new HttpError(
      'OUTPOST_ERR_NOT_FOUND',
      `API check ${checkId} not found: it is a ${check.checkType} check`,
      {
        id: checkId,
      },
    );
  }
  const limit = query.limit ?? 10;
  const page = query.page ?? 1;
  const groupBy = query.groupBy ?? null;
  const intervalMs = query.aggregationInterval === undefined ? null : query.aggregationInterval * 60_000;
  const all = await aggregateResults(
    db,
    { checkId, window, intervalMs, metrics, groupBy, statuses },
    options.strategy,
    options.workers ?? null,
  );
  const series = groupBy === null && all.length === 0 ? [{ key: null, buckets: [] }] : all;
  const metadata: Record<string, MetricMetadata> = {};
  for (const m of metrics) metadata[m.name] = metadataOf(m);
  const offset = offsetOf({ page, limit });
  return {
    checkId: check.id,
    name: check.name,
    checkType: check.checkType,
    activated: check.activated,
    muted: check.muted === true,
    frequency: check.frequency,
    from: iso(window.fromMs)!,
    to: iso(window.toMs)!,
    tags: check.tags ?? [],
    series: series.slice(offset, offset + limit).map((s) => presentSeries(s, groupBy, metrics)),
    pagination: { page, limit },
    metadata,
  };
}
