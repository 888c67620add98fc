import type { Static } from '@sinclair/typebox';
import {
  type Insertable,
  type Kysely,
  type QueryCreator,
  type RawBuilder,
  type Selectable,
  sql,
} from 'kysely';
import { isPostgres } from '../../platform/store/dialect.js';
import { Statement } from '../../platform/store/statement.js';
import { iso } from '../../platform/http/pagination.js';
import type { Tx } from '../../runs/index.js';
import type { Database } from '../../platform/store/database.js';
import type { CheckStatusSchema } from './schema.js';
import { StatusCache } from './status-cache.js';

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
  /** `check_last_results.revision` (null before the first result): moves whenever the check's rollups do. */
  revision: number | null;
};

/** The columns of a {@link CheckWithLastResult} that a kept entry is keyed by (CheckStatusQueries.versions). */
export type CheckVersion = Pick<
  CheckWithLastResult,
  'check_id' | 'name' | 'created_at' | 'updated_at' | 'result_id' | 'revision'
>;

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
 * All are upserts (`ON CONFLICT … DO UPDATE`, SQLite and PostgreSQL alike); on PostgreSQL the three run as one
 * statement (UPSERT_ROLLUPS).
 */
export async function recordFinalResult(tx: Tx, facts: FinalResultFacts): Promise<void> {
  const last = {
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
  } satisfies LastResultValues;
  const hourFailed = facts.hasFailures || facts.hasErrors ? 1 : 0;
  const dayStart = facts.startedAt - (((facts.startedAt % DAY_MS) + DAY_MS) % DAY_MS);
  const day = {
    passed: facts.status === 'PASSED' ? 1 : 0,
    degraded: facts.status === 'DEGRADED' ? 1 : 0,
    failed: facts.status === 'FAILED' ? 1 : 0,
  };
  if (isPostgres(tx)) {
    await UPSERT_ROLLUPS.run(tx, {
      ...last,
      hourStart: hourStart(facts.startedAt),
      hourFailed,
      dayStart,
      passed: day.passed,
      degraded: day.degraded,
      dayFailed: day.failed,
    });
    return;
  }
  await UPSERT_LAST_RESULT.run(tx, last);
  await UPSERT_HOURLY.run(tx, {
    checkId: facts.checkId,
    hourStart: hourStart(facts.startedAt),
    runLocation: facts.runLocation,
    accountId: facts.accountId,
    failed: hourFailed,
    degraded: facts.isDegraded ? 1 : 0,
    responseTime: facts.responseTime,
  });
  await UPSERT_DAILY.run(tx, { checkId: facts.checkId, dayStart, accountId: facts.accountId, ...day });
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
const upsertLastResult = (db: QueryCreator<Database>, v: LastResultValues) =>
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
    );
const UPSERT_LAST_RESULT = new Statement(upsertLastResult);

type HourlyValues = {
  checkId: string;
  hourStart: number;
  runLocation: string;
  accountId: string;
  failed: number;
  degraded: number;
  responseTime: number;
};
const upsertHourly = (db: QueryCreator<Database>, v: HourlyValues) =>
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
    );
const UPSERT_HOURLY = new Statement(upsertHourly);

type DailyValues = {
  checkId: string;
  dayStart: number;
  accountId: string;
  passed: number;
  degraded: number;
  failed: number;
};
const upsertDaily = (db: QueryCreator<Database>, v: DailyValues) =>
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
    );
const UPSERT_DAILY = new Statement(upsertDaily);

/**
 * The three upserts of a FINAL result in one statement on PostgreSQL: two of them as data-modifying CTEs of the
 * third (SQLite has none). Each table is written once and by one part, so the parts need not see each other's
 * rows; two statements fewer per result, which is most of what each costs PostgreSQL.
 */
const UPSERT_ROLLUPS = new Statement(
  (
    db: Kysely<Database>,
    v: LastResultValues & {
      hourStart: number;
      hourFailed: number;
      dayStart: number;
      passed: number;
      degraded: number;
      dayFailed: number;
    },
  ) =>
    upsertDaily(
      // The daily upsert itself, with the other two as its CTEs.
      db
        .with('last_result', (qc) => upsertLastResult(qc as unknown as QueryCreator<Database>, v))
        .with('hourly', (qc) =>
          upsertHourly(qc as unknown as QueryCreator<Database>, {
            checkId: v.check_id as string,
            hourStart: v.hourStart,
            runLocation: v.run_location as string,
            accountId: v.account_id as string,
            failed: v.hourFailed,
            degraded: v.is_degraded as number,
            responseTime: v.response_time as number,
          }),
        ) as unknown as QueryCreator<Database>,
      {
        checkId: v.check_id as string,
        dayStart: v.dayStart,
        accountId: v.account_id as string,
        passed: v.passed,
        degraded: v.degraded,
        failed: v.dayFailed,
      },
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
        'l.revision',
      ])
      .where('c.account_id', '=', accountId);
    if (checkIds) q = q.where('c.id', 'in', checkIds);
    q = q.orderBy('c.name').orderBy('c.id');
    if (page) q = q.limit(page.limit).offset(page.offset);
    return q.execute();
  }

  /**
   * What a kept entry of each check is keyed by (CheckVersion), for the same checks in the same order as
   * {@link checks}: the check's name and times and its latest result's id and revision, without the rest of
   * the result's columns (on PostgreSQL, 24 ms against 37 ms for 10,000 checks: `pg` parses every column).
   */
  versions(accountId: string, checkIds?: readonly string[], page?: StatusesPage): Promise<CheckVersion[]> {
    let q = this.#db
      .selectFrom('checks as c')
      .leftJoin('check_last_results as l', 'l.check_id', 'c.id')
      .select(['c.id as check_id', 'c.name', 'c.created_at', 'c.updated_at', 'l.result_id', 'l.revision'])
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

/** What each store's reads keep between answers (StatusCache), by the store's Kysely instance. */
const statusCaches = new WeakMap<object, StatusCache>();

/** The StatusCache of `db`'s reads. */
function statusCacheOf(db: Kysely<Database>): StatusCache {
  let cache = statusCaches.get(db);
  if (!cache) {
    cache = new StatusCache();
    statusCaches.set(db, cache);
  }
  return cache;
}

/**
 * Checks whose sums are read by name (chunks of `in` lists) when the cache misses them; more than this, and a
 * read of every check of the account reads the account's rollups as one range instead.
 */
const NAMED_HOURLY_READ_MAX = 1000;
/** Check ids per `in` list of a read by name. */
const HOURLY_IDS_PER_READ = 500;

/**
 * The hourly sums of `checks` (slot 0 at `firstHourMs`) by check id: from the store's StatusCache where it
 * holds them at the version the checks were read at, the rest read from `check_stats_hourly` and kept. A check
 * without a latest result has no rollups and no entry. `whole`: `checks` are every check of the account (the
 * cache then forgets the account's deleted checks).
 */
async function hourSumsOf(
  db: Kysely<Database>,
  queries: CheckStatusQueries,
  accountId: string,
  firstHourMs: number,
  checks: readonly CheckWithLastResult[],
  whole: boolean,
): Promise<Map<string, HourSums>> {
  const cache = statusCacheOf(db);
  const sums = new Map<string, HourSums>();
  const missing = new Map<string, string>();
  for (const c of checks) {
    if (c.result_id === null || c.revision === null) continue;
    const version = `${c.revision}:${c.result_id}`;
    const kept = cache.read(accountId, c.check_id, version, firstHourMs);
    if (kept) sums.set(c.check_id, kept);
    else missing.set(c.check_id, version);
  }
  if (missing.size > 0) {
    const ids = [...missing.keys()];
    const rows: PackedHours[] = [];
    if (whole && ids.length > NAMED_HOURLY_READ_MAX)
      rows.push(...(await queries.hourly(accountId, firstHourMs)));
    else {
      for (let at = 0; at < ids.length; at += HOURLY_IDS_PER_READ) {
        rows.push(...(await queries.hourly(accountId, firstHourMs, ids.slice(at, at + HOURLY_IDS_PER_READ))));
      }
    }
    const packed = new Map(rows.map((row) => [row.check_id, row.hours]));
    for (const [checkId, version] of missing) {
      const hours = packed.get(checkId);
      const read =
        hours === undefined ? new Float64Array(3 * STATUS_HOURS) : unpackHours(hours, STATUS_HOURS);
      cache.keep(accountId, checkId, version, firstHourMs, read);
      sums.set(checkId, read);
    }
  }
  if (whole) cache.retainOnly(accountId, new Set(checks.map((c) => c.check_id)));
  return sums;
}

/** What the entries of a read are made of (see readCheckStatuses). */
type StatusReads = {
  checks: CheckWithLastResult[];
  /** Hourly sums by check id (a check without a result has none). */
  sums: Map<string, HourSums>;
  /** The soonest expiry (epoch ms) among the certificates each check recorded last, by check id. */
  expiry: Map<string, number>;
  /** Start of the hour of slot 0 of the sums, epoch ms. */
  firstHourMs: number;
};

/** The reads of readCheckStatuses and readCheckStatusesJson. */
async function readStatusParts(
  db: Kysely<Database>,
  accountId: string,
  nowMs: number,
  checkIds?: readonly string[],
  page?: StatusesPage,
): Promise<StatusReads> {
  const queries = new CheckStatusQueries(db);
  const firstHourMs = hourStart(nowMs) - (STATUS_HOURS - 1) * HOUR_MS;
  // The checks first: the sums read after them are at least as new as the versions they are kept under.
  const [checks, certificates] = await Promise.all([
    queries.checks(accountId, checkIds, page),
    queries.certificates(accountId),
  ]);
  const sums = await hourSumsOf(db, queries, accountId, firstHourMs, checks, !page && !checkIds);
  return { checks, sums, expiry: soonestExpiry(certificates), firstHourMs };
}

/** The soonest expiry (epoch ms) among the certificates each check recorded last, by check id. */
function soonestExpiry(
  certificates: readonly { check_id: string; valid_to: number | string }[],
): Map<string, number> {
  const expiry = new Map<string, number>();
  for (const cert of certificates) {
    const validTo = Number(cert.valid_to);
    const known = expiry.get(cert.check_id);
    if (known === undefined || validTo < known) expiry.set(cert.check_id, validTo);
  }
  return expiry;
}

/** The entry of check `c` at `nowMs`, from its hourly sums (`hourly`) and its certificates' soonest expiry. */
function statusOf(
  c: Omit<CheckWithLastResult, 'check_type'>,
  hourly: HourSums | undefined,
  validTo: number | undefined,
  nowMs: number,
): CheckStatus {
  const buckets: (number | null)[] = new Array<number | null>(STATUS_HOURS).fill(null);
  let runs = 0;
  let failures = 0;
  let sum = 0;
  if (hourly) {
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
}

/**
 * The statuses of the account's checks (all, or those of `checkIds`; of those, only `page`'s when given), by
 * name then id, at `nowMs` (epoch ms): the checks with their latest results (checks ⨝ check_last_results), the
 * account's certificates, and the hourly rollups of the last 24 UTC hours of the checks whose rollups moved
 * since this service last read them (hourSumsOf: all of them on the first read, one after one new result).
 * A check without a result has false flags and null figures; `responseTimes24h` always holds 24 entries,
 * oldest first.
 */
export async function readCheckStatuses(
  db: Kysely<Database>,
  accountId: string,
  nowMs: number,
  checkIds?: readonly string[],
  page?: StatusesPage,
): Promise<CheckStatus[]> {
  const { checks, sums, expiry } = await readStatusParts(db, accountId, nowMs, checkIds, page);
  return checks.map((c) => statusOf(c, sums.get(c.check_id), expiry.get(c.check_id), nowMs));
}

/**
 * readCheckStatuses as the JSON array `JSON.stringify` makes of it, byte for byte. Each check's entry is written
 * once and kept (StatusCache) under the key of what it is made of: its row's version (`updated_at`, the name and
 * creation time), its latest result and rollups' version, the hour the 24 buckets start at and its certificates'
 * days remaining. At 10,000 checks, a read after one new result writes one entry and joins the others' kept
 * text, instead of building and serializing 10,000 objects (35 ms).
 */
export async function readCheckStatusesJson(
  db: Kysely<Database>,
  accountId: string,
  nowMs: number,
  checkIds?: readonly string[],
  page?: StatusesPage,
): Promise<string> {
  const queries = new CheckStatusQueries(db);
  const cache = statusCacheOf(db);
  const firstHourMs = hourStart(nowMs) - (STATUS_HOURS - 1) * HOUR_MS;
  const whole = !page && !checkIds;
  // The keys first (each check's version), then only the full rows of the checks whose entries are not kept.
  const [versions, certificates] = await Promise.all([
    queries.versions(accountId, checkIds, page),
    queries.certificates(accountId),
  ]);
  const expiry = soonestExpiry(certificates);
  const keyOf = (c: CheckVersion): string | null => {
    if (c.revision === null) return null;
    const validTo = expiry.get(c.check_id);
    const days = validTo === undefined ? '' : Math.floor((validTo - nowMs) / DAY_MS);
    // Every column of the last result comes from the result `result_id` names; `revision` versions the sums.
    return `${c.revision}\n${c.result_id}\n${c.updated_at}\n${c.created_at}\n${firstHourMs}\n${days}\n${c.name}`;
  };
  const parts: (string | undefined)[] = new Array<string | undefined>(versions.length);
  const missing: string[] = [];
  for (let i = 0; i < versions.length; i++) {
    const c = versions[i]!;
    if (c.result_id === null) {
      // No result yet: the version row holds all the entry shows.
      parts[i] = JSON.stringify(statusOf({ ...c, ...NO_RESULT }, undefined, expiry.get(c.check_id), nowMs));
      continue;
    }
    const key = keyOf(c);
    const text = key === null ? undefined : cache.json(accountId, c.check_id, key);
    if (text === undefined) missing.push(c.check_id);
    parts[i] = text;
  }
  // Many missing (a first read): the same list read whole, and hourSumsOf forgets deleted checks then.
  const readWhole = missing.length > NAMED_CHECKS_READ_MAX;
  if (missing.length > 0) {
    // Read after the versions, so what is built is at least as new as they are; each entry is kept under the
    // key of the row it is built from.
    const rows = await (readWhole
      ? queries.checks(accountId, checkIds, page)
      : queries.checks(accountId, missing));
    const sums = await hourSumsOf(db, queries, accountId, firstHourMs, rows, whole && readWhole);
    const built = new Map<string, string>();
    const wanted = new Set(missing);
    for (const c of rows) {
      if (!wanted.has(c.check_id)) continue;
      const text = JSON.stringify(statusOf(c, sums.get(c.check_id), expiry.get(c.check_id), nowMs));
      const key = keyOf(c);
      if (key !== null) cache.keepJson(accountId, c.check_id, key, text);
      built.set(c.check_id, text);
    }
    // A check deleted since its version was read has no row: it is left out.
    for (let i = 0; i < versions.length; i++) parts[i] ??= built.get(versions[i]!.check_id);
  }
  if (whole && !readWhole) cache.retainOnly(accountId, new Set(versions.map((c) => c.check_id)));
  return `[${parts.filter((text) => text !== undefined).join(',')}]`;
}

/** The result columns of a check without a result (check_last_results has no row for it). */
const NO_RESULT = {
  check_session_id: null,
  run_location: null,
  has_failures: null,
  has_errors: null,
  is_degraded: null,
  response_time: null,
  started_at: null,
} as const;

/**
 * Most checks whose full rows a status read names (a page and `checkId` never name more); past it, it reads its
 * whole list again (a first read: the entries of every check are built).
 */
const NAMED_CHECKS_READ_MAX = 500;
