import type { DeliveryResult } from '../types.js';

/** A result without an answer: `outcome` for `error`, no status code, no Retry-After. */
export function failure(outcome: 'RETRY' | 'FAILED', error: string): DeliveryResult {
  return { outcome, statusCode: null, answer: null, error, retryAfterMs: null };
}

/**
 * A sender's result with its fields checked (a buggy sender must not break the worker): no outcome is RETRY;
 * a Retry-After that is not a positive finite number and a status code that is not an integer become null;
 * an error missing from a send that `signal` aborted after `timeoutMs` says so.
 */
export function normalise(result: DeliveryResult, signal: AbortSignal, timeoutMs: number): DeliveryResult {
  if (!result || !['DELIVERED', 'RETRY', 'FAILED'].includes(result.outcome)) {
    return failure('RETRY', 'the sender answered no outcome');
  }
  const retryAfterMs =
    typeof result.retryAfterMs === 'number' && Number.isFinite(result.retryAfterMs) && result.retryAfterMs > 0
      ? result.retryAfterMs
      : null;
  const statusCode = Number.isInteger(result.statusCode) ? result.statusCode : null;
  const error =
    result.outcome !== 'DELIVERED' && result.error === null && signal.aborted
      ? `no answer within ${timeoutMs} ms`
      : typeof result.error === 'string'
        ? result.error
        : null;
  return {
    outcome: result.outcome,
    statusCode,
    answer: typeof result.answer === 'string' ? result.answer : null,
    error,
    retryAfterMs,
  };
}
