/**
 * The check results a status page's uptime strip is made from (docs/status-pages.md, "The 90-day uptime
 * strip"): the final runs of the linked checks counted per check, UTC day and status. The counts come from
 * the daily rollup `check_stats_daily` (migration `0024_daily_rollups`), which the check-status recorder
 * writes in each result's transaction, so a strip of 50 one-minute checks reads 4,500 rows, not the
 * 6,480,000 results of 90 days. Times are epoch ms.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import type { RunCounts } from './types.js';

/** One check's final runs of one UTC day, by status. */
export type CheckDayCounts = { checkId: string; dayStartMs: number; counts: RunCounts };

/** The reads of the run counts and the newest runs for status pages. */
export class StripResultQueries {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * The final runs of `checkIds` of the UTC days that start in `[fromMs, toMs)` (day starts, as the strip
   * passes them), per check, day and status: one read of `check_stats_daily` by its primary key (check_id,
   * day_start). The ids must be the account's own checks (the caller reads them scoped to the account).
   * Answers nothing for no ids.
   * @returns one entry per (check, day) with at least one run, in no particular order.
   */
  async dailyCounts(checkIds: readonly string[], fromMs: number, toMs: number): Promise<CheckDayCounts[]> {
    if (checkIds.length === 0 || toMs <= fromMs) return [];
    const rows = await this.#db
      .selectFrom('check_stats_daily')
      .select(['check_id', 'day_start', 'passed', 'degraded', 'failed'])
      .where('check_id', 'in', [...checkIds])
      .where('day_start', '>=', Math.ceil(fromMs))
      .where('day_start', '<', Math.ceil(toMs))
      .execute();
    return rows
      .filter((row) => Number(row.passed) + Number(row.degraded) + Number(row.failed) > 0)
      .map((row) => ({
        checkId: row.check_id,
        dayStartMs: Number(row.day_start),
        counts: { passed: Number(row.passed), degraded: Number(row.degraded), failed: Number(row.failed) },
      }));
  }

  /**
   * The newest `started_at` of a final run of each of `checkIds` (one index seek per check): a stamp that
   * changes with each new run, for the page's version. Answers a string of `checkId:ms` pairs.
   */
  async latestRuns(checkIds: readonly string[]): Promise<string> {
    if (checkIds.length === 0) return '';
    const rows = await Promise.all(
      checkIds.map((id) =>
        this.#db
          .selectFrom('check_results')
          .select((eb) => eb.fn.max('started_at').as('t'))
          .where('check_id', '=', id)
          .where('result_type', '=', 'FINAL')
          .executeTakeFirst(),
      ),
    );
    return checkIds.map((id, i) => `${id}:${rows[i]?.t ?? ''}`).join(',');
  }
}
