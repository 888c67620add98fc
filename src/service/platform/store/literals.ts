import { sql } from 'kysely';

/*
 * Values a statement must write into its SQL rather than bind, because a partial index's condition names their
 * column. SQLite decides whether a partial index can serve a statement by comparing the statement's terms with the
 * index's condition; when a term compares the column with a bound value (`result_type = ?`), it uses the value
 * bound, and so plans the statement again on every run (every bind of that parameter marks the statement expired).
 * On `check_results`, whose ten indexes make planning dear, that tripled the cost of a lookup: the alerting's
 * "newer run" probe took 21 µs with the value bound and 6 µs with it written (20,000 runs of each on a store of
 * 10,000 results, better-sqlite3 12). A literal is planned once, on either engine.
 */

/**
 * `check_results.result_type` as a literal (index `check_results_final_job`: `WHERE result_type = 'FINAL'`).
 * @param type - FINAL or ATTEMPT: only these two, so nothing else can reach the SQL text.
 */
export function resultTypeLiteral(type: 'FINAL' | 'ATTEMPT') {
  return type === 'FINAL' ? FINAL : ATTEMPT;
}

const FINAL = sql.lit<'FINAL'>('FINAL');
const ATTEMPT = sql.lit<'ATTEMPT'>('ATTEMPT');

/**
 * `check_results.details_settled = 0` as a literal (index `check_results_details_pending`:
 * `WHERE details_settled = 0`).
 */
export const DETAILS_NOT_SETTLED = sql.lit<0>(0);
