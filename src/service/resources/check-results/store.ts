import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../platform/store/database.js';

/** A stored result row (see CheckResultTable): its columns and the whole result as JSON text. */
export type ResultRow = Selectable<Database['check_results']>;

/** Filters of a page of a check's results; times in epoch ms, `from` inclusive and `to` exclusive. */
export type ResultFilter = {
  fromMs?: number | undefined;
  toMs?: number | undefined;
  resultType?: 'FINAL' | 'ATTEMPT' | undefined;
  hasFailures?: boolean | undefined;
  location?: string | undefined;
};

/** The `check_results` table's reads for the API, every one scoped to one account. */
export class ResultQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * One page of a check's results, newest first (`started_at` descending, then id), filtered.
   * Served by the index on (check_id, started_at).
   */
  list(
    accountId: string,
    checkId: string,
    filter: ResultFilter,
    page: { limit: number; offset: number },
  ): Promise<ResultRow[]> {
    let q = this.#db
      .selectFrom('check_results')
      .selectAll()
      .where('check_id', '=', checkId)
      .where('account_id', '=', accountId);
    if (filter.fromMs !== undefined) q = q.where('started_at', '>=', filter.fromMs);
    if (filter.toMs !== undefined) q = q.where('started_at', '<', filter.toMs);
    if (filter.resultType !== undefined) q = q.where('result_type', '=', filter.resultType);
    if (filter.hasFailures !== undefined) q = q.where('has_failures', '=', filter.hasFailures ? 1 : 0);
    if (filter.location !== undefined) q = q.where('run_location', '=', filter.location);
    return q
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  }

  /** One result of a check; undefined when it is not in the account. */
  get(accountId: string, checkId: string, resultId: string): Promise<ResultRow | undefined> {
    return this.#db
      .selectFrom('check_results')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .where('id', '=', resultId)
      .executeTakeFirst();
  }

  /** The job that produced a result (its artifacts are filed under it); undefined when the result is not in the account. */
  async jobIdOf(accountId: string, checkId: string, resultId: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('check_results')
      .select('job_id')
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .where('id', '=', resultId)
      .executeTakeFirst();
    return row?.job_id;
  }
}
