import type { ResultRecorder } from '../../runs/index.js';
import { recordFinalResult } from './store.js';

/**
 * The result recorder of check statuses (QueueOptions.resultRecorders): runs in the transaction
 * that stores each result, agents' and the service's own (heartbeats) alike, so the rollups that
 * `GET /v1/check-statuses` and status pages read (`check_last_results`, `check_stats_hourly`,
 * `check_stats_daily`) commit with the result or not at all. FINAL results only: an ATTEMPT that a
 * retry followed changes nothing. The session and times are the ones the row was written with
 * (StoredResultRef), so the rollups hold exactly what `check_results` holds without reading it back.
 * @throws what the store throws; the result is then rolled back with it.
 */
export function checkStatusRecorder(): ResultRecorder {
  return async (tx, stored) => {
    const { result } = stored;
    if (result.resultType !== 'FINAL') return;
    await recordFinalResult(tx, {
      accountId: stored.accountId,
      checkId: stored.checkId,
      resultId: stored.resultId,
      checkSessionId: stored.checkSessionId,
      runLocation: result.runLocation,
      status: result.status,
      hasFailures: result.hasFailures,
      hasErrors: result.hasErrors,
      isDegraded: result.isDegraded,
      responseTime: result.responseTime,
      startedAt: stored.startedAtMs,
      stoppedAt: stored.stoppedAtMs,
    });
  };
}
