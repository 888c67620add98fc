import type { Static } from '@sinclair/typebox';
import type { Kysely, Selectable } from 'kysely';
import { isPostgres } from '../../platform/store/dialect.js';
import { iso } from '../../platform/http/pagination.js';
import type { Tx } from '../../runs/index.js';
import type { Database } from '../../platform/store/database.js';
import type { CheckStatusSchema } from './schema.js';

/** One hour in ms: the width of a `check_stats_hourly` bucket. */
export const HOUR_MS = 3_600_000;

/** Hourly buckets a status covers: the current hour and the 23 before it. */
export const STATUS_HOURS = 24;

/** One UTC day in ms: the width of a `check_stats_daily` bucket. */
const DAY_MS = 86_400_000;

/** Start (epoch ms, UTC) of the hour holding `ms`. */
export function hourStart(ms: number): number {
  return ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

/** What the rollups keep of one FINAL result. Times are epoch ms, `responseTime` ms. */
export type FinalResultFacts = {
  accountId: string;
  checkId: string;
  resultId: string;
  checkSessionId: string | null;
  runLocation: string;
  status: Database['check_last_results']['status'];
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  responseTime: number;
  startedAt: number;
  stoppedAt: number;
};

/** A check with its latest FINAL result (columns null before the first). */
export type CheckWithLastResult = {
  check_id: string;
  name: string;
  check_type: Database['checks']['check_type'];
  created_at: number;
  updated_at: number | null;
  result_id: string | null;
  check_session_id: string | null;
  run_location: string | null;
  has_failures: number | null;
  has_errors: number | null;
  is_degraded: number | null;
  response_time: number | null;
  started_at: number | null;
};

/** The runs of one check in one hour, over every run location. */
export type HourlyTotals = {
  check_id: string;
  hour_start: number;
  runs: number;
  failures: number;
  response_time_sum: number;
};

/** The latest certificate seen for a domain (see SslCertificateTable). */
export type CertificateRow = Pick<
  Selectable<Database['ssl_certificates']>,
  'check_id' | 'valid_to' | 'seen_at'
>;

/**
 * Writes one FINAL result into the two rollups, in the caller's transaction `tx`:
 * - `check_last_results`: the result replaces the check's row only when it started at or after
 *   the stored one (results arrive out of order across locations and retries);
 * - `check_stats_hourly`: the row of (check, UTC hour of `startedAt`, run location) counts one more
 *   run, one more failure when `hasFailures` or `hasErrors`, one more degraded run when
 *   `isDegraded`, and adds the response time to its sum and maximum;
 * - `check_stats_daily`: the row of (check, UTC day of `startedAt`) counts one more run of the result's
 *   `status` (PASSED, DEGRADED or FAILED: what a status page's uptime strip counts).
 * All are upserts (`ON CONFLICT … DO UPDATE`, SQLite and PostgreSQL alike).
 */
export async function recordFinalResult(tx: Tx, facts: FinalResultFacts): Promise<void> {
  const last = {
    account_id: facts.accountId,
    result_id: facts.resultId,
    check_session_id: facts.checkSessionId,
    run_location: facts.runLocation,
    status: facts.status,
    has_failures: facts.hasFailures ? 1 : 0,
    has_errors: facts.hasErrors ? 1 : 0,
    is_degraded: facts.isDegraded ? 1 : 0,
    response_time: facts.responseTime,
    started_at: facts.startedAt,
    stopped_at: facts.stoppedAt,
  };
  await tx
    .insertInto('check_last_results')
    .values({ check_id: facts.checkId, ...last })
    .onConflict((oc) =>
      oc.column('check_id').doUpdateSet(last).where('check_last_results.started_at', '<=', facts.startedAt),
    )
    .execute();

  const failed = facts.hasFailures || facts.hasErrors ? 1 : 0;
  const degraded = facts.isDegraded ? 1 : 0;
  await tx
    .insertInto('check_stats_hourly')
    .values({
      check_id: facts.checkId,
      hour_start: hourStart(facts.startedAt),
      run_location: facts.runLocation,
      account_id: facts.accountId,
      runs: 1,
      failures: failed,
      degraded,
      response_time_sum: facts.responseTime,
      response_time_max: facts.responseTime,
    })
    .onConflict((oc) =>
      oc.columns(['check_id', 'hour_start', 'run_location']).doUpdateSet((eb) => ({
        runs: eb('check_stats_hourly.runs', '+', 1),
        failures: eb('check_stats_hourly.failures', '+', failed),
        degraded: eb('check_stats_hourly.degraded', '+', degraded),
        response_time_sum: eb('check_stats_hourly.response_time_sum', '+', facts.responseTime),
        // CASE rather than max()/GREATEST(): the same SQL on SQLite and PostgreSQL.
        response_time_max: eb
          .case()
          .when('check_stats_hourly.response_time_max', '<', facts.responseTime)
          .then(facts.responseTime)
          .else(eb.ref('check_stats_hourly.response_time_max'))
          .end(),
      })),
    )
    .execute();

  const counts = {
    passed: facts.status === 'PASSED' ? 1 : 0,
    degraded: facts.status === 'DEGRADED' ? 1 : 0,
    failed: facts.status === 'FAILED' ? 1 : 0,
  };
  await tx
    .insertInto('check_stats_daily')
    .values({
      check_id: facts.checkId,
      day_start: facts.startedAt - (((facts.startedAt % DAY_MS) + DAY_MS) % DAY_MS),
      account_id: facts.accountId,
      ...counts,
    })
    .onConflict((oc) =>
      oc.columns(['check_id', 'day_start']).doUpdateSet((eb) => ({
        passed: eb('check_stats_daily.passed', '+', counts.passed),
        degraded: eb('check_stats_daily.degraded', '+', counts.degraded),
        failed: eb('check_stats_daily.failed', '+', counts.failed),
      })),
    )
    .execute();
}

/**
 * Deletes the rollup rows of a check (its latest result, its hourly and daily rows), in `tx` when given:
 * to be called where the check is deleted. Reads ignore the rows of deleted checks meanwhile.
 */
export async function deleteCheckStatuses(tx: Tx, accountId: string, checkId: string): Promise<void> {
  await tx
    .deleteFrom('check_last_results')
    .where('check_id', '=', checkId)
    .where('account_id', '=', accountId)
    .execute();
  await tx
    .deleteFrom('check_stats_hourly')
    .where('check_id', '=', checkId)
    .where('account_id', '=', accountId)
    .execute();
  await tx
    .deleteFrom('check_stats_daily')
    .where('check_id', '=', checkId)
    .where('account_id', '=', accountId)
    .execute();
}

/** The reads of `GET /v1/check-statuses`, every one scoped to one account. */
export class CheckStatusQueries {
  readonly #db: Tx;
  constructor(db: Tx) {
    this.#db = db;
  }

  /**
   * The account's checks (all of them, or those of `checkIds`) each with its latest FINAL result,
   * by name then id: one query, checks ⨝ check_last_results (rows of deleted checks never match).
   */
  checks(accountId: string, checkIds?: readonly string[]): Promise<CheckWithLastResult[]> {
    let q = this.#db
      .selectFrom('checks as c')
      .leftJoin('check_last_results as l', 'l.check_id', 'c.id')
      .select([
        'c.id as check_id',
        'c.name',
        'c.check_type',
        'c.created_at',
        'c.updated_at',
        'l.result_id',
        'l.check_session_id',
        'l.run_location',
        'l.has_failures',
        'l.has_errors',
        'l.is_degraded',
        'l.response_time',
        'l.started_at',
      ])
      .where('c.account_id', '=', accountId);
    if (checkIds) q = q.where('c.id', 'in', checkIds);
    return q.orderBy('c.name').orderBy('c.id').execute();
  }

  /**
   * Runs per check and hour from `fromHourMs` (inclusive, epoch ms), summed over run locations, of
   * the account's checks (all, or those of `checkIds`): one query, checks ⨝ check_stats_hourly, that
   * reads each check's hours by the primary key (check_id, hour_start, …): on SQLite twice as fast
   * as the (account_id, hour_start) index, and rows of deleted checks never match.
   */
  hourly(accountId: string, fromHourMs: number, checkIds?: readonly string[]): Promise<HourlyTotals[]> {
    let q = this.#db
      .selectFrom('checks as c')
      .innerJoin('check_stats_hourly as s', (join) =>
        join.onRef('s.check_id', '=', 'c.id').on('s.hour_start', '>=', fromHourMs),
      )
      .select((eb) => [
        's.check_id',
        's.hour_start',
        eb.fn.sum<number>('s.runs').as('runs'),
        eb.fn.sum<number>('s.failures').as('failures'),
        eb.fn.sum<number>('s.response_time_sum').as('response_time_sum'),
      ])
      .where('c.account_id', '=', accountId);
    // PostgreSQL's planner, left to the join alone, walked the whole (account_id, hour_start) index for the
    // hour bound (144 ms over 3,844,000 hourly rows); with the account named it reads the account's last
    // hours as one range (42 ms). SQLite keeps the primary-key walk per check.
    if (isPostgres(this.#db)) q = q.where('s.account_id', '=', accountId);
    if (checkIds) q = q.where('c.id', 'in', checkIds);
    return q.groupBy(['s.check_id', 's.hour_start']).execute();
  }

  /** The account's certificates (one row per domain; a handful per account), for `sslDaysRemaining`. */
  certificates(accountId: string): Promise<CertificateRow[]> {
    return this.#db
      .selectFrom('ssl_certificates')
      .select(['check_id', 'valid_to', 'seen_at'])
      .where('account_id', '=', accountId)
      .execute();
  }
}

/** One entry of `GET /v1/check-statuses` (CheckStatusSchema). */
export type CheckStatus = Static<typeof CheckStatusSchema>;

/** `value` rounded to 2 decimals. */
function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * The statuses of the account's checks (all, or those of `checkIds`), by name then id, at `nowMs`
 * (epoch ms): three queries whatever the number of checks (checks ⨝ latest results, the hourly
 * rollups of the last 24 UTC hours, the account's certificates). A check without a result has
 * false flags and null figures; `responseTimes24h` always holds 24 entries, oldest first.
 */
export async function readCheckStatuses(
  db: Kysely<Database>,
  accountId: string,
  nowMs: number,
  checkIds?: readonly string[],
): Promise<CheckStatus[]> {
  const queries = new CheckStatusQueries(db);
  const firstHour = hourStart(nowMs) - (STATUS_HOURS - 1) * HOUR_MS;
  const [checks, hours, certificates] = await Promise.all([
    queries.checks(accountId, checkIds),
    queries.hourly(accountId, firstHour, checkIds),
    queries.certificates(accountId),
  ]);
  const byCheck = new Map<string, HourlyTotals[]>();
  for (const row of hours) {
    const list = byCheck.get(row.check_id);
    if (list) list.push(row);
    else byCheck.set(row.check_id, [row]);
  }
  // The soonest expiry among the certificates a check recorded last (one per domain).
  const expiry = new Map<string, number>();
  for (const cert of certificates) {
    const validTo = Number(cert.valid_to);
    const known = expiry.get(cert.check_id);
    if (known === undefined || validTo < known) expiry.set(cert.check_id, validTo);
  }
  return checks.map((c) => {
    const buckets: (number | null)[] = new Array<number | null>(STATUS_HOURS).fill(null);
    let runs = 0;
    let failures = 0;
    let sum = 0;
    for (const h of byCheck.get(c.check_id) ?? []) {
      const slot = Math.round((Number(h.hour_start) - firstHour) / HOUR_MS);
      const hourRuns = Number(h.runs);
      if (slot < 0 || slot >= STATUS_HOURS || hourRuns <= 0) continue;
      const hourSum = Number(h.response_time_sum);
      buckets[slot] = round2(hourSum / hourRuns);
      runs += hourRuns;
      failures += Number(h.failures);
      sum += hourSum;
    }
    const validTo = expiry.get(c.check_id);
    const hasResult = c.result_id !== null;
    return {
      checkId: c.check_id,
      name: c.name,
      hasFailures: c.has_failures === 1,
      hasErrors: c.has_errors === 1,
      isDegraded: c.is_degraded === 1,
      longestRun: c.response_time,
      shortestRun: c.response_time,
      lastRunLocation: c.run_location,
      lastCheckRunId: hasResult ? (c.check_session_id ?? c.result_id) : null,
      sslDaysRemaining: validTo === undefined ? null : Math.floor((validTo - nowMs) / DAY_MS),
      created_at: iso(c.created_at),
      updated_at: iso(c.updated_at),
      lastResultId: c.result_id,
      lastRunAt: iso(c.started_at),
      availability24h: runs > 0 ? round2(((runs - failures) / runs) * 100) : null,
      responseTimeAvg24h: runs > 0 ? round2(sum / runs) : null,
      responseTimes24h: buckets,
    };
  });
}
