import { type CheckResult, MAX_RESULT_SIZE_BYTES } from '../protocol/index.js';
import { backoffMs, sleep } from '../common/abort.js';
import { hasCode } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import type { AgentMetrics } from './metrics.js';
import { fitResult } from './result-size.js';
import { isTransient, type ServiceClient } from './service-client.js';

/** Options of {@link postResultWithRetry}. */
export type PostResultOptions = {
  client: Pick<ServiceClient, 'postResult'>;
  jobId: string;
  result: CheckResult;
  /** The job's child logger. */
  log: Logger;
  /** Ends the retries: shutdown, lost lease or the retry deadline. */
  signal: AbortSignal;
  /** Jittered exponential back-off between tries, milliseconds. */
  backoff: { baseMs: number; capMs: number };
  metrics?: AgentMetrics | undefined;
};

/**
 * Posts one result (docs/protocol.md, "Retry rules"): network errors, 408, 429 and 5xx
 * are retried with back-off (a `Retry-After` is honoured up to the cap) until `signal`
 * aborts; 409 means the lease was lost and the job ran elsewhere, so the result is
 * dropped; any other refusal is final. Never throws: every ending is logged and counted.
 *
 * A result over the service's limit (MAX_RESULT_SIZE_BYTES) is trimmed first (`fitResult`:
 * logs and bodies first, marked, never dropped); when the service still answers 413 (a smaller
 * limit behind a proxy), it is trimmed to a quarter of its size (at most a quarter of the limit) and posted once more.
 */
export async function postResultWithRetry(options: PostResultOptions): Promise<void> {
  const { client, jobId, result, log, signal, backoff, metrics } = options;
  const giveUp = (tries: number, err?: unknown) => {
    metrics?.resultPosted('gave_up');
    log.error({ err, tries }, 'result not posted before its deadline or shutdown');
  };
  // Trimmed from the sizes alone (linear, no whole-result serialising); `sizeBytes` is exact.
  let fitted = fitResult(result);
  let body = fitted.result;
  if (body !== result) log.warn({ truncated: body.truncated }, 'result over the size limit; trimmed to fit');
  let trimmedHarder = false;
  for (let attempt = 0; ; attempt++) {
    try {
      const ack = await client.postResult(jobId, body, signal);
      metrics?.resultPosted(ack.duplicate ? 'duplicate' : 'stored');
      log.info({ duplicate: ack.duplicate, tries: attempt + 1 }, 'result posted');
      return;
    } catch (err) {
      if (signal.aborted || hasCode(err, 'OUTPOST_ERR_ABORTED')) return giveUp(attempt + 1, err);
      if (hasCode(err, 'OUTPOST_ERR_LEASE_LOST')) {
        metrics?.resultPosted('lease_lost');
        log.warn({ err }, 'result refused: lease lost, the job ran elsewhere');
        return;
      }
      if ((err as { statusCode?: number | null }).statusCode === 413 && !trimmedHarder) {
        trimmedHarder = true;
        fitted = fitResult(result, Math.floor(Math.min(MAX_RESULT_SIZE_BYTES, fitted.sizeBytes) / 4));
        body = fitted.result;
        log.warn(
          { err, truncated: body.truncated },
          'result refused as too large; trimmed harder, posting again',
        );
        continue;
      }
      if (!isTransient(err)) {
        metrics?.resultPosted('refused');
        log.error({ err }, 'result refused by the service');
        return;
      }
      const retryAfterMs = (err as { retryAfterMs?: number | null }).retryAfterMs ?? 0;
      const delayMs = Math.min(
        backoff.capMs,
        Math.max(retryAfterMs, backoffMs(attempt, backoff.baseMs, backoff.capMs)),
      );
      metrics?.resultPosted('retry');
      log.warn({ err, tries: attempt + 1, delayMs: Math.round(delayMs) }, 'result post failed; retrying');
      try {
        await sleep(delayMs, signal);
      } catch {
        return giveUp(attempt + 1);
      }
    }
  }
}
