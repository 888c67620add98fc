/**
 * Aggregation of stored results into time buckets inside the store, in one SQL statement, so
 * no result row crosses into JavaScript. Reads only columns the indexes
 * `check_results_analytics` and `check_results_analytics_all` cover (migration `0003_analytics`).
 *
 * SQLite forms to translate for PostgreSQL: `percentile_cont(x, p)` (SQLite's percentile
 * extension, compiled into better-sqlite3) is `percentile_cont(p) WITHIN GROUP (ORDER BY x)`;
 * `json_group_array`/`json_array` are `json_agg`/`json_build_array`; the correlated subquery
 * per bucket becomes a LATERAL join.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../platform/store/dialect.js';
import type { Database } from '../platform/store/database.js';
import { type MetricSpec, percentileFraction } from './metrics.js';
import { bucketCount, bucketStartOf, type TimeWindow } from './time-range.js';
import type { AnalyticsWorkers } from './workers.js';

export { GROUP_COLUMNS, type GroupBy } from './enums.js';
import { GROUP_COLUMNS, type GroupBy } from './enums.js';

/** `filterByStatus` values: success = PASSED or DEGRADED, failure = FAILED. */
export const STATUS_FILTERS = ['success', 'failure'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/** What to aggregate: one check's final results in a window. */
export type AggregateQuery = {
  checkId: string;
  window: TimeWindow;
  /** Bucket width, ms, aligned to the epoch; null = one bucket for the whole window. */
  intervalMs: number | null;
  metrics: readonly MetricSpec[];
  groupBy: GroupBy | null;
  /** Statuses kept; empty = all. */
  statuses: readonly StatusFilter[];
};

/** One bucket of one series: its start (epoch ms) and one value per requested metric, in order. */
export type BucketValues = { startMs: number; values: (number | null)[] };

/**
 * One series: the group's key (null when not grouped, or for results without an HTTP status)
 * and its non-empty buckets, oldest first.
 */
export type AggregatedSeries = { key: string | number | null; buckets: BucketValues[] };

/**
 * How the statement walks the buckets:
 * - `loop`: a recursive CTE lists the buckets and a correlated subquery aggregates each one over
 *   an index range, so no sort of the results is needed (the fast path);
 * - `groupBy`: one `GROUP BY` over the window (sorts the results; used when the window holds more
 *   than {@link MAX_LOOP_BUCKETS} buckets, most of them then empty).
 */
export type Strategy = 'loop' | 'groupBy';

/** Above this many buckets a query uses the `groupBy` strategy. */
export const MAX_LOOP_BUCKETS = 50_000;

/** Aggregate SQL expressions of a query, deduplicated, and how to read each metric from them. */
class AggregatePlan {
  readonly exprs: string[] = [];
  readonly readers: ((row: readonly unknown[]) => number | null)[];

  /** Writes PostgreSQL's spelling of the JSON and percentile functions, not SQLite's. */
  readonly #postgres: boolean;

  constructor(metrics: readonly MetricSpec[], postgres = false) {
    this.#postgres = postgres;
    this.readers = metrics.map((m) => this.#reader(m));
  }

  /** The number at `path` (`$.a.b`, a constant of metrics.ts, never input) of the result document. */
  #jsonNumber(path: string): string {
    if (!this.#postgres) return `json_extract(r.doc, '${path}')`;
    const keys = path.replace(/^\$\./, '').split('.').join(',');
    return `((r.doc::jsonb #>> '{${keys}}')::double precision)`;
  }

  #at(expr: string): number {
    let i = this.exprs.indexOf(expr);
    if (i < 0) i = this.exprs.push(expr) - 1;
    return i;
  }

  #reader(m: MetricSpec): (row: readonly unknown[]) => number | null {
    const num = (i: number) => (row: readonly unknown[]) =>
      typeof row[i] === 'number' ? (row[i] as number) : null;
    if (m.kind === 'availability')
      return num(this.#at(`avg(CASE WHEN r.status <> 'FAILED' THEN 100.0 ELSE 0.0 END)`));
    if (m.kind === 'retries') return num(this.#at('sum(CASE WHEN r.attempts > 1 THEN 1 ELSE 0 END)'));
    // An ICMP metric reads the result document (its path is a constant of metrics.ts, never input).
    const c = m.kind === 'icmp' ? this.#jsonNumber(m.path) : `r.${m.column}`;
    const fraction = percentileFraction(m.aggregation);
    // percentile_cont is linear interpolation between closest ranks (SQLite's percentile extension
    // as PostgreSQL's ordered-set aggregate); NULLs are skipped.
    if (fraction !== undefined) {
      const percentile = this.#postgres
        ? `percentile_cont(${fraction}) WITHIN GROUP (ORDER BY ${c})`
        : `percentile_cont(${c}, ${fraction})`;
      return num(this.#at(percentile));
    }
    if (m.aggregation !== 'stddev') return num(this.#at(`${m.aggregation}(${c})`));
    // Population standard deviation from count, sum and sum of squares (one pass).
    const [n, s, q] = [this.#at(`count(${c})`), this.#at(`sum(${c})`), this.#at(`sum(${c} * ${c})`)];
    return (row) => {
      const count = row[n] as number;
      if (!count) return null;
      const mean = (row[s] as number) / count;
      return Math.sqrt(Math.max(0, (row[q] as number) / count - mean * mean));
    };
  }
}

function whereClause(q: AggregateQuery): string {
  const only = new Set(q.statuses);
  if (only.size !== 1) return '';
  return only.has('success') ? ` AND r.status <> 'FAILED'` : ` AND r.status = 'FAILED'`;
}

type Cell = [key: string | number | null, count: number, ...values: unknown[]];

/** The `loop` statement: one row per bucket, `cells` a JSON array of [key, count, ...aggregates] per group. */
function loopStatement(q: AggregateQuery, plan: AggregatePlan): RawBuilder<{ lo: number; cells: string }> {
  const { fromMs, toMs } = q.window;
  const interval = q.intervalMs ?? toMs - fromMs;
  const firstHi = q.intervalMs === null ? toMs : Math.min(bucketStartOf(fromMs, interval) + interval, toMs);
  const group = q.groupBy ? `r.${GROUP_COLUMNS[q.groupBy]}` : 'NULL';
  const cols = plan.exprs.map((e, i) => `, ${e} AS m${i}`).join('');
  const cells = ['g', 'n', ...plan.exprs.map((_, i) => `m${i}`)].join(', ');
  return sql<{ lo: number; cells: string }>`
    WITH RECURSIVE b(lo, hi) AS (
      SELECT ${sql.lit(fromMs)}, ${sql.lit(firstHi)}
      UNION ALL
      SELECT hi, CASE WHEN hi + ${sql.lit(interval)} < ${sql.lit(toMs)} THEN hi + ${sql.lit(interval)} ELSE ${sql.lit(toMs)} END
      FROM b WHERE hi < ${sql.lit(toMs)}
    )
    SELECT b.lo AS lo, (
      SELECT json_group_array(json_array(${sql.raw(cells)})) FROM (
        SELECT ${sql.raw(group)} AS g, count(*) AS n${sql.raw(cols)}
        FROM check_results r
        WHERE r.check_id = ${q.checkId} AND r.result_type = 'FINAL'
          AND r.started_at >= b.lo AND r.started_at < b.hi${sql.raw(whereClause(q))}
        ${sql.raw(q.groupBy ? `GROUP BY ${group}` : '')}
      ) WHERE n > 0
    ) AS cells
    FROM b`;
}

async function runLoop(
  db: Kysely<Database>,
  q: AggregateQuery,
  plan: AggregatePlan,
  workers: AnalyticsWorkers | null,
): Promise<Map<number, Cell[]>> {
  const interval = q.intervalMs ?? q.window.toMs - q.window.fromMs;
  // Buckets are independent: with reader threads, split the window at bucket boundaries
  // into one contiguous part per thread and evaluate the parts at once.
  const parts = workers && q.intervalMs !== null ? splitWindow(q, workers.size) : [q];
  const rowSets = await Promise.all(
    parts.map(async (part) => {
      const statement = loopStatement(part, plan);
      if (!workers || parts.length === 1) return (await statement.execute(db)).rows;
      const { sql: text, parameters } = statement.compile(db);
      return (await workers.all(text, parameters)) as { lo: number; cells: string }[];
    }),
  );
  const out = new Map<number, Cell[]>();
  for (const row of rowSets.flat()) {
    const parsed = JSON.parse(row.cells) as Cell[];
    if (parsed.length > 0)
      out.set(q.intervalMs === null ? q.window.fromMs : bucketStartOf(row.lo, interval), parsed);
  }
  return out;
}

/** Splits a bucketed query's window at bucket boundaries into at most `count` contiguous parts. */
export function splitWindow(q: AggregateQuery, count: number): AggregateQuery[] {
  const interval = q.intervalMs!;
  const buckets = bucketCount(q.window, interval);
  const n = Math.max(1, Math.min(count, buckets));
  const first = bucketStartOf(q.window.fromMs, interval);
  const parts: AggregateQuery[] = [];
  let fromMs = q.window.fromMs;
  for (let i = 1; i <= n; i++) {
    const toMs = i === n ? q.window.toMs : first + Math.round((buckets * i) / n) * interval;
    if (toMs > fromMs) parts.push({ ...q, window: { ...q.window, fromMs, toMs } });
    fromMs = toMs;
  }
  return parts;
}

/** The `groupBy` statement: one row per (group, bucket) with columns g, lo, n, m0, m1, … */
function groupByStatement(q: AggregateQuery, plan: AggregatePlan): RawBuilder<Record<string, unknown>> {
  const { fromMs, toMs } = q.window;
  const interval = q.intervalMs ?? toMs - fromMs;
  const group = q.groupBy ? `r.${GROUP_COLUMNS[q.groupBy]}` : 'NULL';
  const bucket = q.intervalMs === null ? `${fromMs}` : `(r.started_at / ${interval}) * ${interval}`;
  const cols = plan.exprs.map((e, i) => `, ${e} AS m${i}`).join('');
  return sql<Record<string, unknown>>`
    SELECT ${sql.raw(group)} AS g, ${sql.raw(bucket)} AS lo, count(*) AS n${sql.raw(cols)}
    FROM check_results r
    WHERE r.check_id = ${q.checkId} AND r.result_type = 'FINAL'
      AND r.started_at >= ${sql.lit(fromMs)} AND r.started_at < ${sql.lit(toMs)}${sql.raw(whereClause(q))}
    GROUP BY ${sql.raw(q.groupBy ? 'g, lo' : 'lo')}`;
}

async function runGroupBy(
  db: Kysely<Database>,
  q: AggregateQuery,
  plan: AggregatePlan,
): Promise<Map<number, Cell[]>> {
  const { rows } = await groupByStatement(q, plan).execute(db);
  const out = new Map<number, Cell[]>();
  for (const row of rows) {
    const lo = Number(row.lo);
    const cell = [
      row.g as string | number | null,
      Number(row.n),
      ...plan.exprs.map((_, i) => row[`m${i}`]),
    ] as Cell;
    const list = out.get(lo);
    if (list) list.push(cell);
    else out.set(lo, [cell]);
  }
  return out;
}

function compareKeys(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/** The strategy a query gets by default: `loop` unless the window holds too many buckets. */
export function strategyOf(q: AggregateQuery): Strategy {
  return q.intervalMs === null || bucketCount(q.window, q.intervalMs) <= MAX_LOOP_BUCKETS
    ? 'loop'
    : 'groupBy';
}

/**
 * The store's plan for a query (SQLite `EXPLAIN QUERY PLAN`, one line per step), to check that
 * it reads a covering index and never the table.
 */
export async function explainAggregate(
  db: Kysely<Database>,
  q: AggregateQuery,
  strategy: Strategy = strategyOf(q),
): Promise<string[]> {
  const plan = new AggregatePlan(q.metrics, isPostgres(db));
  const statement = strategy === 'loop' ? loopStatement(q, plan) : groupByStatement(q, plan);
  const { rows } = await sql<{ detail: string }>`EXPLAIN QUERY PLAN ${statement}`.execute(db);
  return rows.map((r) => r.detail);
}

/**
 * Aggregates one check's FINAL results in `[from, to)` into series of buckets: one series when
 * not grouped, else one per group key (run location ascending; status code ascending, null —
 * no HTTP response — last). Buckets without results are left out. Values are null where a
 * metric has no input in the bucket (for example `dns_avg` when no run reached DNS).
 */
export async function aggregateResults(
  db: Kysely<Database>,
  q: AggregateQuery,
  strategy: Strategy = strategyOf(q),
  workers: AnalyticsWorkers | null = null,
): Promise<AggregatedSeries[]> {
  const postgres = isPostgres(db);
  const plan = new AggregatePlan(q.metrics, postgres);
  // The `loop` statement is SQLite's (a recursive bucket list, JSON cells); PostgreSQL groups.
  const byBucket =
    strategy === 'loop' && !postgres ? await runLoop(db, q, plan, workers) : await runGroupBy(db, q, plan);
  const series = new Map<string | number | null, BucketValues[]>();
  for (const startMs of [...byBucket.keys()].sort((a, b) => a - b)) {
    for (const [key, , ...rest] of byBucket.get(startMs) ?? []) {
      const values = plan.readers.map((read) => read(rest));
      const list = series.get(key);
      if (list) list.push({ startMs, values });
      else series.set(key, [{ startMs, values }]);
    }
  }
  return [...series.entries()]
    .sort(([a], [b]) => compareKeys(a, b))
    .map(([key, buckets]) => ({ key, buckets }));
}

/** What {@link summarizeResults} aggregates: one check's final results over a whole window, ungrouped. */
export type SummaryQuery = Pick<AggregateQuery, 'checkId' | 'window' | 'metrics'>;

/**
 * One value per metric of `q.metrics`, in order, over the check's FINAL results in `[from, to)`:
 * the `loop` statement with one bucket, run on a reader thread when there is a pool (so a batch
 * of checks never scans results on the event loop), else on `db`. All values are null when the
 * window holds no result; one is null when no result has an input for it.
 */
export async function summarizeResults(
  db: Kysely<Database>,
  q: SummaryQuery,
  workers: AnalyticsWorkers | null = null,
): Promise<(number | null)[]> {
  const whole: AggregateQuery = { ...q, intervalMs: null, groupBy: null, statuses: [] };
  if (isPostgres(db)) {
    const plan = new AggregatePlan(q.metrics, true);
    const [cells] = [...(await runGroupBy(db, whole, plan)).values()];
    const cell = cells?.[0];
    if (!cell) return q.metrics.map(() => null);
    const [, , ...rest] = cell;
    return plan.readers.map((read) => read(rest));
  }
  const plan = new AggregatePlan(q.metrics);
  const statement = loopStatement(whole, plan);
  let rows: { lo: number; cells: string }[];
  if (workers) {
    const { sql: text, parameters } = statement.compile(db);
    rows = (await workers.all(text, parameters)) as { lo: number; cells: string }[];
  } else {
    rows = (await statement.execute(db)).rows;
  }
  const cell = rows.flatMap((row) => JSON.parse(row.cells) as Cell[])[0];
  if (!cell) return q.metrics.map(() => null);
  const [, , ...rest] = cell;
  return plan.readers.map((read) => read(rest));
}
