import { type Static, Type } from '@sinclair/typebox';
import { CHECK_TYPES } from '../../protocol/index.js';
import { AGGREGATIONS, METRIC_NAMES } from './metrics.js';
import { GROUP_COLUMNS, QUICK_RANGES } from './enums.js';
import { PageQuery } from '../platform/http/pagination.js';
import { Nullable, StringEnum, strict, Timestamp } from '../platform/http/schema-helpers.js';

/** A list parameter: comma-separated (`a,b`), repeated (`x=a&x=b`) or both. */
const ListParam = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: 200, description });

/**
 * Query of `GET /v1/analytics/api-checks/{id}` (docs/api.md, "Analytics"). `metrics` and
 * `filterByStatus` are checked item by item after splitting on commas (see the route), so an
 * unknown name is a 400 naming the parameter.
 */
export const AnalyticsQuerySchema = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description:
          'Window start, inclusive: unix timestamp in seconds (e.g. 1735689600) or ISO 8601 date or date-time (UTC when no zone). Overrides quickRange.',
      }),
    ),
    to: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'Window end, exclusive; same forms as from; default now. Overrides quickRange.',
      }),
    ),
    quickRange: Type.Optional(
      StringEnum(QUICK_RANGES, {
        default: 'last24Hours',
        description: 'Preset window in UTC; weeks start on Monday. Ignored when from or to is given.',
      }),
    ),
    aggregationInterval: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 43_200,
        description:
          'Bucket width in minutes, buckets aligned to the unix epoch. Without it: one bucket for the window.',
      }),
    ),
    filterByStatus: Type.Optional(
      ListParam(
        'success (PASSED or DEGRADED runs) and/or failure (FAILED runs); comma-separated or repeated.',
      ),
    ),
    groupBy: Type.Optional(
      StringEnum(Object.keys(GROUP_COLUMNS) as (keyof typeof GROUP_COLUMNS)[], {
        description: 'One series per run location or per HTTP status code.',
      }),
    ),
    metrics: ListParam(`Required; comma-separated or repeated. One of: ${METRIC_NAMES.join(', ')}.`),
    ...PageQuery(10).properties,
  },
  strict,
);
type ValidatedAnalyticsQuery = Static<typeof AnalyticsQuerySchema>;
/**
 * An analytics query as `apiCheckAnalytics` takes it: the validated query string (the route
 * passes it with `limit` and `page` defaulted), or the same from a caller in the process that
 * leaves `limit` (default 10) and `page` (default 1) out.
 */
export type AnalyticsQuery = Omit<ValidatedAnalyticsQuery, 'limit' | 'page'> &
  Partial<Pick<ValidatedAnalyticsQuery, 'limit' | 'page'>>;

/** One bucket of a series: `timestamp` (ISO 8601 start of the bucket) and one number (or null) per requested metric. */
const AnalyticsDataPointSchema = Type.Object(
  { timestamp: Timestamp },
  { additionalProperties: Nullable(Type.Number()) },
);

/**
 * One series: the group it stands for (`runLocation`, or `statusCode` with null for runs
 * without an HTTP response; neither when not grouped) and its buckets, oldest first.
 */
const AnalyticsSeriesSchema = Type.Object(
  {
    runLocation: Type.Optional(Type.String()),
    statusCode: Type.Optional(Nullable(Type.Integer())),
    data: Type.Array(AnalyticsDataPointSchema),
  },
  strict,
);

/** `metadata[metric]`: unit of the values, human label, aggregation applied. */
const MetricMetadataSchema = Type.Object(
  {
    unit: StringEnum(['milliseconds', 'percent', 'count'] as const),
    label: Type.String(),
    aggregation: StringEnum(AGGREGATIONS),
  },
  strict,
);

/** The analytics response (docs/api.md, "Analytics response (API checks)"). */
export const AnalyticsResponseSchema = Type.Object(
  {
    checkId: Type.String(),
    name: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    activated: Type.Boolean(),
    muted: Type.Boolean(),
    frequency: Type.Number(),
    from: Timestamp,
    to: Timestamp,
    tags: Type.Array(Type.String()),
    series: Type.Array(AnalyticsSeriesSchema),
    pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer() }, strict),
    metadata: Type.Record(Type.String(), MetricMetadataSchema),
  },
  strict,
);
export type AnalyticsResponse = Static<typeof AnalyticsResponseSchema>;

/** Quick ranges of `POST /v1/analytics/checks`: the hosted API's, a subset of QUICK_RANGES. */
export const BATCH_QUICK_RANGES = ['last24Hours', 'last7Days', 'thisWeek', 'lastWeek', 'lastMonth'] as const;

/** Most check ids one `POST /v1/analytics/checks` takes (the hosted API's `maxItems`). */
export const MAX_BATCH_CHECKS = 100;

/** Query of `POST /v1/analytics/checks` (docs/api.md, "Analytics"). */
export const AnalyticsBatchQuerySchema = Type.Object(
  {
    quickRange: Type.Optional(
      StringEnum(BATCH_QUICK_RANGES, {
        default: 'last24Hours',
        description: 'Preset window in UTC; weeks start on Monday.',
      }),
    ),
  },
  strict,
);

/** Body of `POST /v1/analytics/checks`: 1 to 100 check ids (UUIDs). */
export const AnalyticsBatchBodySchema = Type.Object(
  {
    checkIds: Type.Array(Type.String({ minLength: 1, format: 'uuid' }), {
      minItems: 1,
      maxItems: MAX_BATCH_CHECKS,
      description: `Ids of the checks to summarize, 1 to ${MAX_BATCH_CHECKS}. Ids not of a check of the account are left out of the answer.`,
    }),
  },
  strict,
);
export type AnalyticsBatchBody = Static<typeof AnalyticsBatchBodySchema>;

const summaryValue = (description: string) => Type.Optional(Nullable(Type.Number({ description })));

/**
 * One check's summary: present only the metrics that apply to its type; null when the window
 * holds no data for one.
 */
export const AnalyticsBatchItemSchema = Type.Object(
  {
    checkId: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    availability: summaryValue('Percent (0–100) of final runs that passed or degraded.'),
    responseTime_avg: summaryValue('Milliseconds.'),
    responseTime_p50: summaryValue('Milliseconds.'),
    responseTime_p95: summaryValue('Milliseconds.'),
    responseTime_p99: summaryValue('Milliseconds.'),
    latency_avg: summaryValue('ICMP: milliseconds, average round trip of a run.'),
    latency_p50: summaryValue('ICMP: milliseconds.'),
    latency_p95: summaryValue('ICMP: milliseconds.'),
    latency_p99: summaryValue('ICMP: milliseconds.'),
    packetLoss_avg: summaryValue('ICMP: percent.'),
    packetLoss_p95: summaryValue('ICMP: percent.'),
    packetLoss_p99: summaryValue('ICMP: percent.'),
  },
  strict,
);
export type AnalyticsBatchItem = Static<typeof AnalyticsBatchItemSchema>;

/** The answer of `POST /v1/analytics/checks`: one item per known check, in the order asked. */
export const AnalyticsBatchResponseSchema = Type.Array(AnalyticsBatchItemSchema);
