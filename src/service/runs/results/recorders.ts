import type { CheckResult } from '../../../protocol/index.js';
import type { Tx } from '../queue/store.js';
import { enqueueResultHooks, type ResultHookFilter } from './outbox.js';
import { type ResultAuthor, type ResultOwner, ResultWriteQueries, storedTimesOf } from './store.js';

/** A result just written, as recorders see it inside its transaction. Times are epoch ms. */
export type StoredResultRef = {
  resultId: string;
  accountId: string;
  checkId: string;
  /**
   * The run the result belongs to (column `round_id`; `checkRunId` in the protocol and API, "run"
   * in the docs): shared by every location of a parallel run, kept by retries; null for a result
   * stored before the column existed.
   */
  roundId: string | null;
  /** The check session of the run; null for a scheduled run. */
  checkSessionId: string | null;
  result: CheckResult;
  /** The row's `started_at` and `stopped_at` as stored (storedTimesOf: the result's, or `nowMs`). */
  startedAtMs: number;
  stoppedAtMs: number;
  /** When the result was stored: the row's `created_at`. */
  nowMs: number;
};

/**
 * Work done inside the transaction that stores each result, after the result row is written
 * (alerting: the alert state, alerts and notifications commit with the result or not at all;
 * docs/alerting.md, "Exactly once"; check statuses: the rollups). Recorders run in the order
 * given, one after the other.
 * @throws anything: what a recorder throws rolls the result back with it.
 */
export type ResultRecorder = (tx: Tx, stored: StoredResultRef) => Promise<void>;

/**
 * What is written with every result besides its row: one `result_outbox` row per hook of `hooks` that takes
 * the result (the hooks run later in the ResultOutbox worker, outbox.ts), and the `recorders`, run in the
 * result's transaction.
 */
export type ResultRecording = {
  hooks: readonly ResultHookFilter[];
  recorders: readonly ResultRecorder[];
};

/**
 * Writes a result row as `resultId`, one outbox row per result hook, and runs the recorders, all in
 * `tx` (the caller's transaction). The one way a result is stored: agents' results, the error
 * results of runs that ended without one, and the service's own (heartbeats).
 * @throws what the store or a recorder throws; the caller's transaction then rolls back.
 */
export async function recordResult(
  tx: Tx,
  recording: ResultRecording,
  stored: { resultId: string; owner: ResultOwner; result: CheckResult; by: ResultAuthor },
): Promise<void> {
  const { resultId, owner, result, by } = stored;
  await new ResultWriteQueries(tx).insertResult(resultId, owner, result, by);
  await enqueueResultHooks(tx, recording.hooks, result, {
    accountId: owner.account_id,
    resultId,
    nowMs: by.nowMs,
  });
  const times = storedTimesOf(result, by.nowMs);
  for (const record of recording.recorders) {
    await record(tx, {
      resultId,
      accountId: owner.account_id,
      checkId: owner.check_id,
      roundId: owner.round_id,
      checkSessionId: owner.check_session_id,
      result,
      ...times,
      nowMs: by.nowMs,
    });
  }
}
