/**
 * Runs a pass of background work one at a time, for workers woken both by a timer and by events
 * (the result outbox, alert delivery): `kick()` starts a pass, or, while one runs, asks for one more
 * right after it (any number of kicks during a pass make one), so work queued mid-pass is never
 * missed and passes never overlap. A pass that throws goes to `onError`; the next kick runs again.
 */
export class CoalescedPasses {
  readonly #pass: () => Promise<unknown>;
  readonly #onError: (err: unknown) => void;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(pass: () => Promise<unknown>, onError: (err: unknown) => void) {
    this.#pass = pass;
    this.#onError = onError;
  }

  /** Starts a pass soon (not awaited), or one more after the pass in progress. Nothing after `stop`. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        await this.#pass();
      } while (this.#again && !this.#stopped);
    })()
      .catch(this.#onError)
      .finally(() => {
        this.#running = undefined;
      });
  }

  /** No more passes; resolves when the one in progress (if any) ended. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }
}
