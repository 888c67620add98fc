import { abortedError } from '../../common/abort.js';
import type { PoolContext, RuntimeState } from './state.js';
import type { PooledRunner } from './types.js';

/** A check waiting to be admitted. */
type Waiter<R> = {
  state: RuntimeState<R>;
  admit: () => void;
  reject: (err: Error) => void;
};

/**
 * Admission of browser checks to the pool: a check runs when fewer than `browserConcurrency` run
 * AND the memory headroom covers `memoryPerCheckMiB` for it (plus the checks started moments ago,
 * plus a reserve); otherwise it waits, first come first served.
 */
export class Admission<R extends PooledRunner> {
  readonly #ctx: PoolContext<R>;
  readonly #waiters: Waiter<R>[] = [];
  /** `performance.now()` of recently started checks, for the memory not yet visible in the headroom. */
  #recentStarts: number[] = [];
  /** Checks admitted whose host or runner is still starting: their memory is not visible yet either. */
  #admittedNotStarted = 0;
  #running = 0;
  #pumping = false;
  #pumpAgain = false;
  #memoryTimer: NodeJS.Timeout | undefined;
  #waitingForMemory = false;

  /** @param ctx the pool's shared state (settings, and whether it closes). */
  constructor(ctx: PoolContext<R>) {
    this.#ctx = ctx;
  }

  /** Checks admitted and not finished, all runtimes. */
  get running(): number {
    return this.#running;
  }

  /** Checks waiting to be admitted, all runtimes. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** True while waiting checks are held back by memory rather than by concurrency. */
  get waitingForMemory(): boolean {
    return this.#waitingForMemory;
  }

  /** Checks of `state`'s runtime waiting to be admitted. */
  waitingFor(state: RuntimeState<R>): number {
    return this.#waiters.filter((w) => w.state === state).length;
  }

  /** True when no check waits and fewer than `browserConcurrency` run. */
  hasFreeSlot(): boolean {
    return !(this.#waiters.length > 0 || this.#running >= this.#ctx.settings.concurrency);
  }

  /** Resolves once the check may run (a slot and memory), or rejects on abort or close. */
  admit(state: RuntimeState<R>, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.#waiters.indexOf(waiter);
        if (at === -1) return;
        this.#waiters.splice(at, 1);
        reject(abortedError(signal, 'acquiring a browser was aborted'));
      };
      const waiter: Waiter<R> = {
        state,
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.pump();
    });
  }

  /** An admitted check got its host and runner: its memory shows in the headroom soon. */
  started(): void {
    this.#admittedNotStarted--;
    this.#recentStarts.push(performance.now());
  }

  /** An admitted check failed before it started. */
  abandoned(): void {
    this.#admittedNotStarted--;
  }

  /** Gives back an admission. */
  finish(state: RuntimeState<R>): void {
    this.#running--;
    state.running--;
    this.pump();
  }

  /** Fails the checks waiting for `state`'s runtime, each with an error of `error()`. */
  rejectWaitersOf(state: RuntimeState<R>, error: () => Error): void {
    for (const waiter of [...this.#waiters]) {
      if (waiter.state === state) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.reject(error());
      }
    }
  }

  /** Stops retrying the headroom and fails every waiting check, each with an error of `error()`. */
  close(error: () => Error): void {
    clearTimeout(this.#memoryTimer);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error());
  }

  /**
   * Admits waiting checks, first come first served, while a slot is free and the headroom
   * covers one more. Runs one at a time (the headroom read is async); a call meanwhile makes
   * it go round once more.
   */
  pump(): void {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    void (async () => {
      try {
        do {
          this.#pumpAgain = false;
          const { concurrency, memoryRetryMs } = this.#ctx.settings;
          while (this.#waiters.length > 0 && this.#running < concurrency && this.#ctx.closing === null) {
            if (!(await this.memoryCoversOneMore())) {
              this.#waitingForMemory = true;
              clearTimeout(this.#memoryTimer);
              this.#memoryTimer = setTimeout(() => this.pump(), memoryRetryMs);
              this.#memoryTimer.unref();
              break;
            }
            this.#waitingForMemory = false;
            const waiter = this.#waiters.shift();
            // Aborted while the headroom was read.
            if (waiter === undefined) break;
            this.#running++;
            waiter.state.running++;
            this.#admittedNotStarted++;
            waiter.admit();
          }
          if (this.#waiters.length === 0) this.#waitingForMemory = false;
        } while (this.#pumpAgain);
      } finally {
        this.#pumping = false;
      }
    })();
  }

  /**
   * Whether the headroom covers one more check: `memoryPerCheckMiB` for it and for every check
   * admitted or started moments ago (not yet visible in the headroom), plus the reserve. True
   * when the headroom is unknown.
   */
  async memoryCoversOneMore(): Promise<boolean> {
    const { settings } = this.#ctx;
    const { memorySettleMs, memoryPerCheckBytes, memoryReserveBytes } = settings;
    const now = performance.now();
    this.#recentStarts = this.#recentStarts.filter((t) => now - t < memorySettleMs);
    const unsettled = this.#recentStarts.length + this.#admittedNotStarted;
    const needed = memoryPerCheckBytes * (1 + unsettled) + memoryReserveBytes;
    const headroom = await settings.readHeadroom().catch(() => null);
    return headroom === null || headroom >= needed;
  }
}
