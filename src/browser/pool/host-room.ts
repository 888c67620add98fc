import { abortedError } from '../../common/abort.js';
import type { HostSlot, RuntimeState } from './state.js';

/**
 * The bound on hosts alive at once (`maxHosts`, all runtimes and accounts together): counting
 * them, finding the idle one to close first, and the checks waiting until one is closed or idle.
 */
export class HostRoom<R> {
  readonly #runtimes: Map<string, RuntimeState<R>>;
  /** Checks waiting for a host to be closed or to become idle (all `maxHosts` busy). */
  readonly #waiters = new Set<() => void>();

  /** @param runtimes the pool's runtimes (read, never changed). */
  constructor(runtimes: Map<string, RuntimeState<R>>) {
    this.#runtimes = runtimes;
  }

  /** Hosts up or starting and not draining, all runtimes and accounts. */
  liveHosts(): number {
    let live = 0;
    for (const state of this.#runtimes.values()) {
      for (const slot of state.hosts) if (slot.retired === null) live++;
    }
    return live;
  }

  /** The least recently used idle host (started, no check on it or waiting for it), or null. */
  leastRecentlyUsedIdle(): { state: RuntimeState<R>; slot: HostSlot } | null {
    let oldest: { state: RuntimeState<R>; slot: HostSlot } | null = null;
    for (const state of this.#runtimes.values()) {
      for (const slot of state.hosts) {
        if (slot.retired !== null || slot.host === null || slot.active > 0 || slot.waiting > 0) continue;
        if (oldest === null || slot.lastUsedAt < oldest.slot.lastUsedAt) oldest = { state, slot };
      }
    }
    return oldest;
  }

  /**
   * Resolves when a host was closed, failed, or became idle ({@link notify}).
   *
   * @throws OutpostError OUTPOST_ERR_ABORTED when `signal` aborts first.
   */
  wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(wake);
        reject(abortedError(signal, 'acquiring a browser was aborted'));
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(wake);
    });
  }

  /** Wakes the checks waiting for a host. */
  notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
