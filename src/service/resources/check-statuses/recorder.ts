import type { ResultRecorder } from '../../runs/index.js';
import { CheckStatusQueries, recordFinalResult } from './store.js';

/**
 * The result recorder of check statuses (QueueOptions.resultRecorders): runs in the transaction
 * that stores each result, agents' and the service's own (heartbeats) alike, so the rollups that
 * `GET /v1/check-statuses` reads (`check_last_results`, `check_stats_hourly`) commit with the
 * result or not at all. FINAL results only: an ATTEMPT that a retry followed changes nothing.
 * Reads back the stored row's session and times (one lookup by primary key), so the rollups hold
 * exactly what `check_results` holds.
 * @throws what the store throws; the result is then rolled back with it.
 */
export function checkStatusRecorder(): ResultRecorder {
  return async (tx, stored) => {
    const { result } = stored;
    if (result.resultType !== 'FINAL') return;
    // `nowMs` is the row's `created_at` (recordResult writes both from one clock reading).
    const row = await new CheckStatusQueries(tx).storedResult(stored.resultId, stored.nowMs);
    if (!row) return;
    await recordFinalResult(tx, {
      accountId: stored.accountId,
      checkId: stored.checkId,
      resultId: stored.resultId,
      checkSessionId: row.check_session_id,
      runLocation: result.runLocation,
      status: result.status,
      hasFailures: result.hasFailures,
      hasErrors: result.hasErrors,
      isDegraded: result.isDegraded,
      responseTime: result.responseTime,
      startedAt: Number(row.started_at),
      stoppedAt: Number(row.stopped_at),
    });
  };
}
