/**
 * The check results a status page's uptime strip is made from (docs/status-pages.md, "The 90-day uptime
 * strip"): the final runs of the linked checks counted per check, UTC day and status inside the store, so
 * no result row crosses into JavaScript. Reads only columns the index `check_results_analytics` covers
 * (`check_id, result_type, started_at, status`; migration `0003_analytics`), so the table rows (which hold
 * the JSON doc) are never read. Times are epoch ms.
 */
import { type Kysely, sql } from 'kysely';
import type { RunStatus } from '../../../protocol/index.js';
import type { Database } from '../../platform/store/database.js';
import type { RunCounts } from './types.js';
import { DAY_MS } from './uptime.js';

/** One check's final runs of one UTC day, by status. */
export type CheckDayCounts = { checkId: string; dayStartMs: number; counts: RunCounts };

/** The reads of `check_results` for status pages. */
export class StripResultQueries {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * The final runs of `checkIds` whose `started_at` is in `[fromMs, toMs)`, counted per check, UTC day and
   * status: one grouped statement over one index range per check. The ids must be the account's own
   * checks (the caller reads them scoped to the account: filtering on `account_id` here would leave the
   * covering index). Answers nothing for no ids.
   * @returns one entry per (check, day) with at least one run, in no particular order.
   */
  async dailyCounts(checkIds: readonly string[], fromMs: number, toMs: number): Promise<CheckDayCounts[]> {
    if (checkIds.length === 0 || toMs <= fromMs) return [];
    // Integer division: `started_at` is an integer (bigint on PostgreSQL), so both stores floor it.
    const { rows } = await sql<{
      check_id: string;
      day: number | string;
      status: RunStatus;
      n: number | string;
    }>`
      SELECT r.check_id AS check_id, r.started_at / ${sql.lit(DAY_MS)} AS day, r.status AS status, count(*) AS n
      FROM check_results r
      WHERE r.check_id IN (${sql.join([...checkIds])}) AND r.result_type = 'FINAL'
        AND r.started_at >= ${sql.lit(Math.floor(fromMs))} AND r.started_at < ${sql.lit(Math.ceil(toMs))}
      GROUP BY r.check_id, r.started_at / ${sql.lit(DAY_MS)}, r.status`.execute(this.#db);
    const byKey = new Map<string, CheckDayCounts>();
    for (const row of rows) {
      const dayStartMs = Number(row.day) * DAY_MS;
      const key = `${row.check_id}|${dayStartMs}`;
      let entry = byKey.get(key);
      if (!entry) {
        entry = { checkId: row.check_id, dayStartMs, counts: { passed: 0, degraded: 0, failed: 0 } };
        byKey.set(key, entry);
      }
      const n = Number(row.n);
      if (row.status === 'FAILED') entry.counts.failed += n;
      else if (row.status === 'DEGRADED') entry.counts.degraded += n;
      else entry.counts.passed += n;
    }
    return [...byKey.values()];
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
