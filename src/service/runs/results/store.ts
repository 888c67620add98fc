import type { Insertable, Kysely, Transaction } from 'kysely';
import type { CheckResult } from '../../../protocol/index.js';
import { analyticsColumnsOf } from '../../analytics/index.js';
import type { Database } from '../../platform/store/database.js';
import { writeDoc } from '../../platform/store/schema.js';
import { Statement } from '../../platform/store/statement.js';
import type { JobRow } from '../queue/store.js';

/**
 * What a stored result takes from its job: ids of the job, account, check, session and run.
 * `round_id` is the run (`checkRunId` in the protocol and API, "run" in the docs; see JobRow).
 */
export type ResultOwner = Pick<JobRow, 'id' | 'account_id' | 'check_id' | 'check_session_id' | 'round_id'>;

/**
 * Who wrote a result and when: `agentId` null for a result the service wrote (a run ended without
 * its agent's result, a heartbeat); `hash` the SHA-256 (hex) of the posted body, null then too;
 * `nowMs` epoch ms, the row's `created_at` and the fallback of unreadable start and stop times.
 */
export type ResultAuthor = { agentId: string | null; hash: string | null; nowMs: number };

/**
 * The start and stop times a result row holds (epoch ms): the result's own, or `nowMs` for one that does not
 * parse (the agent's clock is not trusted to be readable).
 */
export function storedTimesOf(
  result: CheckResult,
  nowMs: number,
): { startedAtMs: number; stoppedAtMs: number } {
  return {
    startedAtMs: Date.parse(result.startedAt) || nowMs,
    stoppedAtMs: Date.parse(result.stoppedAt) || nowMs,
  };
}

/** The values of a result row (`check_results`), by column. */
type ResultRowValues = Insertable<Database['check_results']>;

/**
 * The columns a result row is written with: every column of `check_results` but `details_settled`, which
 * starts at its default (checked below).
 */
const RESULT_COLUMNS = [
  'id',
  'account_id',
  'check_id',
  'job_id',
  'check_session_id',
  'round_id',
  'run_location',
  'status',
  'has_failures',
  'has_errors',
  'is_degraded',
  'response_time',
  'result_type',
  'started_at',
  'stopped_at',
  'doc',
  'phase_wait',
  'phase_dns',
  'phase_tcp',
  'phase_first_byte',
  'phase_download',
  'status_code',
  'attempts',
  'created_at',
  'agent_id',
  'result_hash',
  'has_artifacts',
] as const satisfies readonly (keyof ResultRowValues)[];
// A column added to the table and not to the list fails to compile here (the statement would leave it out).
const EVERY_COLUMN: Exclude<
  keyof ResultRowValues,
  (typeof RESULT_COLUMNS)[number] | 'details_settled'
> extends never
  ? true
  : never = true;
void EVERY_COLUMN;

/** Every result's row, built once (platform/store/statement.ts). */
const INSERT_RESULT = new Statement((db: Kysely<Database>, v: ResultRowValues) =>
  db
    .insertInto('check_results')
    .values(Object.fromEntries(RESULT_COLUMNS.map((c) => [c, v[c]])) as ResultRowValues),
);

/**
 * The statement that writes a result row (`check_results`), for the result ingest (ingest.ts). One
 * instance per store handle or transaction; the caller keeps the transaction. Portable SQL only.
 */
export class ResultWriteQueries {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction the result commits with. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /** Inserts the result `stored` of `job` as row `resultId`, with its analytics columns. */
  async insertResult(
    resultId: string,
    job: ResultOwner,
    stored: CheckResult,
    by: ResultAuthor,
  ): Promise<void> {
    const { startedAtMs, stoppedAtMs } = storedTimesOf(stored, by.nowMs);
    await INSERT_RESULT.run(this.#db, {
      id: resultId,
      account_id: job.account_id,
      check_id: job.check_id,
      job_id: job.id,
      check_session_id: job.check_session_id,
      round_id: job.round_id,
      run_location: stored.runLocation,
      status: stored.status,
      has_failures: stored.hasFailures ? 1 : 0,
      has_errors: stored.hasErrors ? 1 : 0,
      is_degraded: stored.isDegraded ? 1 : 0,
      response_time: stored.responseTime,
      result_type: stored.resultType,
      started_at: startedAtMs,
      stopped_at: stoppedAtMs,
      doc: writeDoc(stored),
      ...analyticsColumnsOf(stored),
      created_at: by.nowMs,
      agent_id: by.agentId,
      result_hash: by.hash,
      has_artifacts: stored.artifacts.length > 0 ? 1 : 0,
    });
  }
}
