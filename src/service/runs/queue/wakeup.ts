import type { EventEmitter } from 'node:events';

/**
 * A wake-up armed before its waiter looks at the store: it listens to `event` from the moment it is made,
 * so an emit that lands while the waiter is still reading (a job queued, or a session ended, between the
 * claim's read and the wait) is kept instead of lost to the safety poll. The pattern of a condition
 * variable: subscribe, check, then wait.
 *
 * Use: `const wake = armWakeup(events, name); try { if (await check()) return; await wake.wait(ms, signal); }
 * finally { wake.dispose(); }`.
 */
export type Wakeup = {
  /** True once `event` was emitted after the wake-up was armed. */
  readonly woken: boolean;
  /**
   * Resolves true at once when already woken, else at the next emit; false after `timeoutMs` or when
   * `signal` aborts (never rejects).
   */
  wait(timeoutMs: number, signal: AbortSignal): Promise<boolean>;
  /** Stops listening; idempotent. A pending `wait` resolves false. */
  dispose(): void;
};

/** Arms a {@link Wakeup} on `event` of `events`. */
export function armWakeup(events: EventEmitter, event: string): Wakeup {
  let woken = false;
  let settle: ((value: boolean) => void) | null = null;
  const onEvent = () => {
    woken = true;
    settle?.(true);
  };
  events.on(event, onEvent);
  const dispose = () => {
    events.off(event, onEvent);
    settle?.(false);
  };
  return {
    get woken() {
      return woken;
    },
    wait(timeoutMs, signal) {
      if (woken) return Promise.resolve(true);
      if (signal.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => finish(false), timeoutMs);
        const onAbort = () => finish(false);
        signal.addEventListener('abort', onAbort, { once: true });
        function finish(value: boolean) {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          settle = null;
          resolve(value);
        }
        settle = finish;
      });
    },
    dispose,
  };
}
