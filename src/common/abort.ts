import { OutpostError } from './errors.js';

/**
 * The OUTPOST_ERR_ABORTED error for an aborted `signal`, its reason as the cause.
 * @param message - the error's message; default `aborted`.
 */
export function abortedError(signal: AbortSignal | undefined, message = 'aborted'): OutpostError {
  return new OutpostError('OUTPOST_ERR_ABORTED', message, { cause: signal?.reason });
}

/**
 * Settles like `promise`, or rejects with {@link abortedError}(`signal`, `message`) as soon as
 * `signal` aborts first (at once when it already has). For work that cannot be cancelled
 * itself (a DNS query, a child process's exit): it goes on, unobserved. Without a signal,
 * `promise` as it is.
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  message = 'aborted',
): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortedError(signal, message));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal, message));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Resolves after `delayMs`, or rejects with OUTPOST_ERR_ABORTED as soon as `signal` aborts.
 * The timer is unref()ed so it never keeps the process alive.
 */
export function sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal));
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
