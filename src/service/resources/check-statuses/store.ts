import type { Static } from '@sinclair/typebox';
import { type Insertable, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { isPostgres } from '../../platform/store/dialect.js';
import { Statement } from '../../platform/store/statement.js';
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

/**
 * The rollup rows of one check's last hours, packed by the store into one text (one row per check instead of
 * one per check, hour and run location: 10,000 checks read 10,000 rows, not 240,000): `hours` holds, for each
 * `check_stats_hourly` row, four numbers separated by single spaces, rows one after the other: the hour's slot
 * (0 for the first hour asked, 1 for the next, …), its runs, its failures and its response-time sum (ms). A
 * slot appears once per run location. Read it with {@link unpackHours}.
 */
export type PackedHours = { check_id: string; hours: string };

/**
 * Per-hour sums of one check over every run location, by slot (see PackedHours): for slot `i`, its runs at
 * `3 * i`, its failures at `3 * i + 1` and its response-time sum (ms) at `3 * i + 2`.
 */
export type HourSums = Float64Array;

/**
 * The sums by slot of a check's packed rows (PackedHours.hours), for slots 0 … `slots - 1`, written into `into`
 * (zeroed first; at least `3 * slots` long, so one array serves every check); rows of other slots are left
 * out. Numbers are read by hand (up to 15 digits, one `.`), any other form (an exponent, more digits) by
 * `Number`: 10,000 checks hold 960,000 of them.
 */
export function unpackHours(
  hours: string,
  slots: number,
  into: HourSums = new Float64Array(3 * slots),
): HourSums {
  into.fill(0, 0, 3 * slots);
  const end = hours.length;
  let at = 0;
  const next = (): number => {
    const from = at;
    let value = 0;
    let scale = 0;
    let digits = 0;
    for (; at < end; at++) {
      const c = hours.charCodeAt(at);
      if (c === 32) break;
      // Up to 15 digits the value and the scale are exact, so their quotient is the number the text names.
      if (c >= 48 && c <= 57 && ++digits <= 15) {
        value = value * 10 + (c - 48);
        if (scale > 0) scale *= 10;
      } else if (c === 46 && scale === 0) scale = 1;
      else {
        while (at < end && hours.charCodeAt(at) !== 32) at++;
        value = Number(hours.slice(from, at));
        scale = 0;
        break;
      }
    }
    at++;
    return scale > 1 ? value / scale : value;
  };
  while (at < end) {
    const slot = next();
    const runs = next();
    const failures = next();
    const sum = next();
    if (!(slot >= 0 && slot < slots)) continue;
    into[3 * slot]! += runs;
    into[3 * slot + 1]! += failures;
    into[3 * slot + 2]! += sum;
  }
  return into;
}

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
  await UPSERT_LAST_RESULT.run(tx, {
    check_id: facts.checkId,
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
  });
  await UPSERT_HOURLY.run(tx, {
    checkId: facts.checkId,
    hourStart: hourStart(facts.startedAt),
    runLocation: facts.runLocation,
    accountId: facts.accountId,
    failed: facts.hasFailures || facts.hasErrors ? 1 : 0,
    degraded: facts.isDegraded ? 1 : 0,
    responseTime: facts.responseTime,
  });
  await UPSERT_DAILY.run(tx, {
    checkId: facts.checkId,
    dayStart: facts.startedAt - (((facts.startedAt % DAY_MS) + DAY_MS) % DAY_MS),
    accountId: facts.accountId,
    passed: facts.status === 'PASSED' ? 1 : 0,
    degraded: facts.status === 'DEGRADED' ? 1 : 0,
    failed: facts.status === 'FAILED' ? 1 : 0,
  });
}

/** The columns of `check_last_results` a FINAL result sets (all but `check_id` and `revision`). */
const LAST_RESULT_COLUMNS = [
  'account_id',
  'result_id',
  'check_session_id',
  'run_location',
  'status',
  'has_failures',
  'has_errors',
  'is_degraded',
  'response_time',
  'started_at',
  'stopped_at',
] as const;

type LastResultValues = Record<'check_id' | (typeof LAST_RESULT_COLUMNS)[number], unknown> &
  Insertable<Database['check_last_results']>;

// The three upserts of every FINAL result, built once (platform/store/statement.ts).
const UPSERT_LAST_RESULT = new Statement((db: Kysely<Database>, v: LastResultValues) =>
  db
    .insertInto('check_last_results')
    .values(
      Object.fromEntries(
        ['check_id', ...LAST_RESULT_COLUMNS].map((c) => [c, v[c as keyof LastResultValues]]),
      ) as Insertable<Database['check_last_results']>,
    )
    .onConflict((oc) =>
      oc.column('check_id').doUpdateSet((eb) => ({
        // Every column but `revision` takes the new result's value only when it started at or after the stored
        // one; `revision` counts every result, since an older one still changes the hourly rollups.
        ...(Object.fromEntries(
          LAST_RESULT_COLUMNS.map((column) => [
            column,
            sql`CASE WHEN check_last_results.started_at <= ${v.started_at} THEN ${sql.ref(`excluded.${column}`)} ELSE ${sql.ref(`check_last_results.${column}`)} END`,
          ]),
        ) as Record<(typeof LAST_RESULT_COLUMNS)[number], RawBuilder<never>>),
        revision: eb('check_last_results.revision', '+', 1),
      })),
    ),
);

const UPSERT_HOURLY = new Statement(
  (
    db: Kysely<Database>,
    v: {
      checkId: string;
      hourStart: number;
      runLocation: string;
      accountId: string;
      failed: number;
      degraded: number;
      responseTime: number;
    },
  ) =>
    db
      .insertInto('check_stats_hourly')
      .values({
        check_id: v.checkId,
        hour_start: v.hourStart,
        run_location: v.runLocation,
        account_id: v.accountId,
        runs: 1,
        failures: v.failed,
        degraded: v.degraded,
        response_time_sum: v.responseTime,
        response_time_max: v.responseTime,
      })
      .onConflict((oc) =>
        oc.columns(['check_id', 'hour_start', 'run_location']).doUpdateSet((eb) => ({
          runs: eb('check_stats_hourly.runs', '+', 1),
          failures: eb('check_stats_hourly.failures', '+', v.failed),
          degraded: eb('check_stats_hourly.degraded', '+', v.degraded),
          response_time_sum: eb('check_stats_hourly.response_time_sum', '+', v.responseTime),
          // CASE rather than max()/GREATEST(): the same SQL on SQLite and PostgreSQL.
          response_time_max: eb
            .case()
            .when('check_stats_hourly.response_time_max', '<', v.responseTime)
            .then(v.responseTime)
            .else(eb.ref('check_stats_hourly.response_time_max'))
            .end(),
        })),
      ),
);

const UPSERT_DAILY = new Statement(
  (
    db: Kysely<Database>,
    v: {
      checkId: string;
      dayStart: number;
      accountId: string;
      passed: number;
      degraded: number;
      failed: number;
    },
  ) =>
    db
      .insertInto('check_stats_daily')
      .values({
        check_id: v.checkId,
        day_start: v.dayStart,
        account_id: v.accountId,
        passed: v.passed,
        degraded: v.degraded,
        failed: v.failed,
      })
      .onConflict((oc) =>
        oc.columns(['check_id', 'day_start']).doUpdateSet((eb) => ({
          passed: eb('check_stats_daily.passed', '+', v.passed),
          degraded: eb('check_stats_daily.degraded', '+', v.degraded),
          failed: eb('check_stats_daily.failed', '+', v.failed),
        })),
      ),
);

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

/**
 * What `GET /v1/check-statuses` of an account is read from, in figures that change whenever the answer could
 * (apart from the hour and certificates' days, which the caller adds): its checks' count and sums of
 * `created_at` and `updated_at` (epoch ms, as decimal text: sums of 10,000 times pass 2^53; a create, an update
 * or a delete moves one of them, also when replicas' clocks differ, which a greatest value would miss), and its
 * `check_last_results` rows' count and sum of `revision` (every FINAL result recorded, older ones too, adds
 * one; a check's rows leave with it). Read by index alone (`checks_account_updated`,
 * `check_last_results_account_revision`); the count walks the account's entries anyway, so the sums cost
 * nothing more.
 */
export type CheckStatusesVersion = {
  checks: number;
  createdAt: string | null;
  updatedAt: string | null;
  lastResults: number;
  revisions: number;
};

/** A page of the statuses, by name then id: `limit` entries from the `offset`th (from 0). */
export type StatusesPage = { limit: number; offset: number };

/** The reads of `GET /v1/check-statuses`, every one scoped to one account. */
export class CheckStatusQueries {
  readonly #db: Tx;
  constructor(db: Tx) {
    this.#db = db;
  }

  /**
   * The account's checks (all of them, or those of `checkIds`; of those, only `page`'s when given) each with
   * its latest FINAL result, by name then id: one query, checks ⨝ check_last_results (rows of deleted checks
   * never match).
   */
  checks(
    accountId: string,
    checkIds?: readonly string[],
    page?: StatusesPage,
  ): Promise<CheckWithLastResult[]> {
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
    q = q.orderBy('c.name').orderBy('c.id');
    if (page) q = q.limit(page.limit).offset(page.offset);
    return q.execute();
  }

  /**
   * The `check_stats_hourly` rows from `fromHourMs` (inclusive, epoch ms, an hour's start) of the account's
   * checks (all, or those of `checkIds`), one row per check with its rows packed (PackedHours), so the store
   * sums nothing per hour and hands over one row per check:
   * - SQLite walks each check's rows by the primary key (check_id, hour_start, …) in check order, the checks
   *   named by a sub-select of the account's (rows of deleted checks never match), and packs them with
   *   `group_concat`;
   * - PostgreSQL reads the account's last hours as one range of (account_id, hour_start) and packs them with
   *   `string_agg` (hash-aggregated by check); rows of a check deleted meanwhile match no check of
   *   CheckStatusQueries.checks and are left out by the caller.
   * 10,000 checks × 24 hours: 240,000 rollup rows read, 10,000 handed over.
   */
  hourly(accountId: string, fromHourMs: number, checkIds?: readonly string[]): Promise<PackedHours[]> {
    // Parenthesized: SQLite's `||` binds tighter than `/`.
    const slot = sql`((s.hour_start - ${fromHourMs}) / ${sql.lit(HOUR_MS)})`;
    if (isPostgres(this.#db)) {
      let q = this.#db
        .selectFrom('check_stats_hourly as s')
        .select([
          's.check_id',
          sql<string>`string_agg(${slot} || ' ' || s.runs || ' ' || s.failures || ' ' || s.response_time_sum, ' ')`.as(
            'hours',
          ),
        ])
        .where('s.account_id', '=', accountId)
        .where('s.hour_start', '>=', fromHourMs);
      if (checkIds) q = q.where('s.check_id', 'in', checkIds);
      return q.groupBy('s.check_id').execute();
    }
    let ofAccount = this.#db.selectFrom('checks').select('id').where('account_id', '=', accountId);
    if (checkIds) ofAccount = ofAccount.where('id', 'in', checkIds);
    return this.#db
      .selectFrom('check_stats_hourly as s')
      .select([
        's.check_id',
        sql<string>`group_concat(${slot} || ' ' || s.runs || ' ' || s.failures || ' ' || s.response_time_sum, ' ')`.as(
          'hours',
        ),
      ])
      .where('s.check_id', 'in', ofAccount)
      .where('s.hour_start', '>=', fromHourMs)
      .groupBy('s.check_id')
      .execute();
  }

  /** The account's {@link CheckStatusesVersion}: two aggregate reads, each over one index of the account. */
  async version(accountId: string): Promise<CheckStatusesVersion> {
    const [checks, last] = await Promise.all([
      this.#db
        .selectFrom('checks')
        .select((eb) => [
          eb.fn.countAll<number | string>().as('n'),
          sql<string | null>`cast(sum(created_at) as text)`.as('created_at'),
          sql<string | null>`cast(sum(updated_at) as text)`.as('updated_at'),
        ])
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
      this.#db
        .selectFrom('check_last_results')
        .select((eb) => [
          eb.fn.countAll<number | string>().as('n'),
          eb.fn.sum<number | string | null>('revision').as('revisions'),
        ])
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    ]);
    return {
      checks: Number(checks.n),
      createdAt: checks.created_at,
      updatedAt: checks.updated_at,
      lastResults: Number(last.n),
      revisions: Number(last.revisions ?? 0),
    };
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

/**
 * The parts of `GET /v1/check-statuses`' `ETag` for an account at `nowMs` (epoch ms): its
 * {@link CheckStatusesVersion}, the start of the current hour (the 24 hourly buckets move with it) and each
 * certificate's days remaining (`sslDaysRemaining` turns at any time of day). Two aggregate reads by index and
 * the account's handful of certificates, whatever the number of checks.
 */
export async function readCheckStatusesVersion(
  db: Kysely<Database>,
  accountId: string,
  nowMs: number,
): Promise<unknown[]> {
  const queries = new CheckStatusQueries(db);
  const [version, certificates] = await Promise.all([
    queries.version(accountId),
    queries.certificates(accountId),
  ]);
  const days = certificates
    .map((c) => `${c.check_id}:${Math.floor((Number(c.valid_to) - nowMs) / DAY_MS)}`)
    .sort();
  return [version, hourStart(nowMs), days];
}

/** One entry of `GET /v1/check-statuses` (CheckStatusSchema). */
export type CheckStatus = Static<typeof CheckStatusSchema>;

/** `value` rounded to 2 decimals. */
function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * The statuses of the account's checks (all, or those of `checkIds`; of those, only `page`'s when given), by
 * name then id, at `nowMs` (epoch ms): three queries whatever the number of checks (checks ⨝ latest results,
 * the hourly rollups of the last 24 UTC hours, the account's certificates); with `page`, the rollups of the
 * page's checks only, read once the page is known. A check without a result has false flags and null
 * figures; `responseTimes24h` always holds 24 entries, oldest first.
 */
export async function readCheckStatuses(
  db: Kysely<Database>,
  accountId: string,
  nowMs: number,
  checkIds?: readonly string[],
  page?: StatusesPage,
): Promise<CheckStatus[]> {
  const queries = new CheckStatusQueries(db);
  const firstHour = hourStart(nowMs) - (STATUS_HOURS - 1) * HOUR_MS;
  const [checks, hours, certificates] = page
    ? await queries.checks(accountId, checkIds, page).then(
        async (inPage) =>
          [
            inPage,
            inPage.length === 0
              ? []
              : await queries.hourly(
                  accountId,
                  firstHour,
                  inPage.map((c) => c.check_id),
                ),
            await queries.certificates(accountId),
          ] as const,
      )
    : await Promise.all([
        queries.checks(accountId, checkIds),
        queries.hourly(accountId, firstHour, checkIds),
        queries.certificates(accountId),
      ]);
  const byCheck = new Map(hours.map((row) => [row.check_id, row.hours]));
  // The soonest expiry among the certificates a check recorded last (one per domain).
  const expiry = new Map<string, number>();
  for (const cert of certificates) {
    const validTo = Number(cert.valid_to);
    const known = expiry.get(cert.check_id);
    if (known === undefined || validTo < known) expiry.set(cert.check_id, validTo);
  }
  const hourly: HourSums = new Float64Array(3 * STATUS_HOURS);
  return checks.map((c) => {
    const buckets: (number | null)[] = new Array<number | null>(STATUS_HOURS).fill(null);
    let runs = 0;
    let failures = 0;
    let sum = 0;
    const packed = byCheck.get(c.check_id);
    if (packed) {
      unpackHours(packed, STATUS_HOURS, hourly);
      for (let slot = 0; slot < STATUS_HOURS; slot++) {
        const hourRuns = hourly[3 * slot]!;
        if (hourRuns <= 0) continue;
        const hourSum = hourly[3 * slot + 2]!;
        buckets[slot] = round2(hourSum / hourRuns);
        runs += hourRuns;
        failures += hourly[3 * slot + 1]!;
        sum += hourSum;
      }
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
