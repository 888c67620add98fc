/**
 * The analytics metric catalogue of API and URL checks (docs/api.md, "Analytics"): which
 * names exist, which stored column each reads, and how each is aggregated and labelled.
 */

/** Timing metrics: each names one numeric column of `check_results` (milliseconds). */
export const TIMING_METRICS = ['responseTime', 'wait', 'dns', 'tcp', 'firstByte', 'download'] as const;
export type TimingMetric = (typeof TIMING_METRICS)[number];

/** Suffixes a timing metric may carry (`responseTime_p95`). A bare name means `avg`. */
export const AGGREGATIONS = [
  'avg',
  'max',
  'median',
  'min',
  'p50',
  'p90',
  'p95',
  'p99',
  'stddev',
  'sum',
] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/** Every metric name `metrics` accepts: bare timing names, suffixed forms, availability, retries. */
export const METRIC_NAMES: readonly string[] = [
  ...TIMING_METRICS,
  'availability',
  'retries',
  ...TIMING_METRICS.flatMap((m) => AGGREGATIONS.map((a) => `${m}_${a}`)),
];

/** Column of `check_results` behind each timing metric. `responseTime` is the stored `response_time`. */
export const TIMING_COLUMNS: Record<TimingMetric, string> = {
  responseTime: 'response_time',
  wait: 'phase_wait',
  dns: 'phase_dns',
  tcp: 'phase_tcp',
  firstByte: 'phase_first_byte',
  download: 'phase_download',
};

/**
 * ICMP metrics of the batch summary (`POST /v1/analytics/checks`): no analytics column holds them,
 * so each reads one number of the stored result document (`check_results.doc`), in SQL.
 */
export const ICMP_METRICS = ['latency', 'packetLoss'] as const;
export type IcmpMetric = (typeof ICMP_METRICS)[number];

/**
 * JSON path in `check_results.doc` of each ICMP metric: the run's average round trip over its
 * replies (milliseconds, null without a reply) and its packet loss (percent, 0–100).
 */
export const ICMP_PATHS: Record<IcmpMetric, string> = {
  latency: '$.icmpCheckResult.latency.avg',
  packetLoss: '$.icmpCheckResult.packetLoss',
};

/** Unit of a metric's values, as `metadata[name].unit` reports it. */
export type MetricUnit = 'milliseconds' | 'percent' | 'count';

/**
 * One requested metric, resolved:
 * - `timing`: an aggregation of one column over the bucket's results; null when no result
 *   of the bucket has a value in that column (a phase the request never reached).
 * - `availability`: percent (0–100) of the bucket's final results that did not fail
 *   (status PASSED or DEGRADED), aggregation `avg` of 100/0 per result.
 * - `retries`: how many of the bucket's final results needed more than one attempt
 *   (`attempts > 1`), aggregation `sum`.
 * - `icmp`: an aggregation of one number of the ICMP result documents (see {@link ICMP_PATHS});
 *   null when no result of the bucket has it. Only the batch summary asks for these.
 */
export type MetricSpec =
  | { name: string; kind: 'timing'; metric: TimingMetric; column: string; aggregation: Aggregation }
  | { name: string; kind: 'icmp'; metric: IcmpMetric; path: string; aggregation: Aggregation }
  | { name: string; kind: 'availability'; aggregation: 'avg' }
  | { name: string; kind: 'retries'; aggregation: 'sum' };

/** What `metadata[name]` of the analytics response holds. */
export type MetricMetadata = { unit: MetricUnit; label: string; aggregation: Aggregation };

const TIMING_LABELS: Record<TimingMetric, string> = {
  responseTime: 'Response time',
  wait: 'Wait',
  dns: 'DNS',
  tcp: 'TCP connect',
  firstByte: 'Time to first byte',
  download: 'Download',
};

const AGGREGATION_LABELS: Record<Aggregation, string> = {
  avg: 'average',
  max: 'maximum',
  median: 'median',
  min: 'minimum',
  p50: '50th percentile',
  p90: '90th percentile',
  p95: '95th percentile',
  p99: '99th percentile',
  stddev: 'standard deviation',
  sum: 'sum',
};

/**
 * Resolves one metric name; undefined for an unknown one.
 * @example metricSpec('dns_p99') → { kind: 'timing', column: 'phase_dns', aggregation: 'p99', … }
 */
export function metricSpec(name: string): MetricSpec | undefined {
  if (name === 'availability') return { name, kind: 'availability', aggregation: 'avg' };
  if (name === 'retries') return { name, kind: 'retries', aggregation: 'sum' };
  const [base, suffix, extra] = name.split('_');
  if (extra !== undefined || !(TIMING_METRICS as readonly string[]).includes(base ?? '')) return undefined;
  if (suffix !== undefined && !(AGGREGATIONS as readonly string[]).includes(suffix)) return undefined;
  const metric = base as TimingMetric;
  return {
    name,
    kind: 'timing',
    metric,
    column: TIMING_COLUMNS[metric],
    aggregation: (suffix ?? 'avg') as Aggregation,
  };
}

/**
 * Resolves an ICMP metric name of the batch summary (`latency_p95`, `packetLoss_avg`); undefined
 * for another name. A bare name means `avg`.
 */
export function icmpMetricSpec(name: string): MetricSpec | undefined {
  const [base, suffix = 'avg', extra] = name.split('_');
  if (extra !== undefined || !(ICMP_METRICS as readonly string[]).includes(base ?? '')) return undefined;
  if (!(AGGREGATIONS as readonly string[]).includes(suffix)) return undefined;
  const metric = base as IcmpMetric;
  return { name, kind: 'icmp', metric, path: ICMP_PATHS[metric], aggregation: suffix as Aggregation };
}

/** `metadata[name]` for a resolved metric: unit, human label and aggregation. */
export function metadataOf(spec: MetricSpec): MetricMetadata {
  switch (spec.kind) {
    case 'availability':
      return { unit: 'percent', label: 'Availability', aggregation: 'avg' };
    case 'retries':
      return { unit: 'count', label: 'Retried runs', aggregation: 'sum' };
    case 'icmp':
      return {
        unit: spec.metric === 'latency' ? 'milliseconds' : 'percent',
        label: `${spec.metric === 'latency' ? 'Latency' : 'Packet loss'} (${AGGREGATION_LABELS[spec.aggregation]})`,
        aggregation: spec.aggregation,
      };
    default:
      return {
        unit: 'milliseconds',
        label: `${TIMING_LABELS[spec.metric]} (${AGGREGATION_LABELS[spec.aggregation]})`,
        aggregation: spec.aggregation,
      };
  }
}

/** Fraction (0–1) of a percentile aggregation; `median` is p50. Undefined for the others. */
export function percentileFraction(aggregation: Aggregation): number | undefined {
  switch (aggregation) {
    case 'median':
    case 'p50':
      return 0.5;
    case 'p90':
      return 0.9;
    case 'p95':
      return 0.95;
    case 'p99':
      return 0.99;
    default:
      return undefined;
  }
}
