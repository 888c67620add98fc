import { OutpostError } from './errors.js';

/**
 * Resolves after `delayMs`, or rejects with OUTPOST_ERR_ABORTED as soon as `signal` aborts.
 * The timer is unref()ed so it never keeps the process alive.
 */
export function sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new OutpostError('OUTPOST_ERR_ABORTED', 'aborted', { cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new OutpostError('OUTPOST_ERR_ABORTED', 'aborted', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Full-jitter exponential back-off: a random delay in [0, min(capMs, baseMs * 2^attempt)],
 * never below `baseMs / 2` so a storm of agents does not hammer a recovering service.
 */
export function backoffMs(attempt: number, baseMs = 1000, capMs = 30_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.max(baseMs / 2, Math.random() * ceiling);
}
