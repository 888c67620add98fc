import { abortedError, raceAbort } from '../../common/abort.js';
import type { BrowserIdentity } from '../identities.js';
import {
  ATTEMPTS,
  type HostSlot,
  type PoolContext,
  type RuntimeState,
  type Spare,
  type SpareEntry,
} from './state.js';
import type { PooledRunner } from './types.js';

/**
 * The spare runners of the pool: `spareRunners` started runners per runtime in use, each as a run
 * user of its own, so a check never waits for Node to boot; a spare is prepared (connected, a
 * context open) for its account's host once ready, and then serves only checks on that host.
 */
export class SpareRunners<R extends PooledRunner> {
  readonly #ctx: PoolContext<R>;

  /** @param ctx the pool's shared state (settings, run users, runner factory, whether it closes). */
  constructor(ctx: PoolContext<R>) {
    this.#ctx = ctx;
  }

  /**
   * Starts spare runners for the runtime until `spareRunners` are waiting or starting; each is
   * prepared for `account`'s host once ready (null: not prepared). Does nothing once the pool closes.
   */
  ensure(state: RuntimeState<R>, account: string | null): void {
    if (this.#ctx.closing !== null) return;
    while (state.spares.length < this.#ctx.settings.spareRunners) {
      // Set right below: the runner, once ready, is prepared through its entry.
      const entry: SpareEntry<R> = {
        started: undefined as unknown as Spare<R>,
        account,
        preparedFor: null,
        taken: false,
      };
      entry.started = this.#spawn(state, entry);
      state.spares.push(entry);
    }
  }

  /** Disposes of the spares prepared for `slot` (a host taken out of service) and starts unprepared ones instead. */
  dropPreparedFor(state: RuntimeState<R>, slot: HostSlot): void {
    const prepared = state.spares.filter((spare) => spare.preparedFor === slot);
    if (prepared.length > 0) {
      state.spares = state.spares.filter((spare) => spare.preparedFor !== slot);
      for (const spare of prepared) void this.dispose(spare.started);
      this.ensure(state, null);
    }
  }

  /** Kills a runner (once started) and gives its run user back. Never rejects. */
  async dispose(spare: Spare<R>): Promise<void> {
    const started = await spare.catch(() => null);
    if (started === null) return;
    await started.runner.dispose().catch(() => {});
    this.#ctx.identities.release(started.identity);
  }

  /**
   * A spare runner for a check on `slot`, ready: one prepared for that host first, else the oldest
   * unprepared one (never one prepared for another host), else a new one; a new spare starts at
   * once in the background. Up to {@link ATTEMPTS} runners are tried.
   *
   * @throws OutpostError OUTPOST_ERR_ABORTED when `signal` aborts first or the pool closes.
   * @throws Error when no runner could be started; the message says why.
   */
  async take(
    state: RuntimeState<R>,
    slot: HostSlot,
    signal: AbortSignal | undefined,
  ): Promise<{ runner: R; identity: BrowserIdentity }> {
    let lastFailure = 'it ended before it was ready';
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (this.#ctx.closing !== null) throw abortedError(signal, 'the browser pool is closed');
      const mine = state.spares.findIndex((spare) => spare.preparedFor === slot);
      const at = mine !== -1 ? mine : state.spares.findIndex((spare) => spare.preparedFor === null);
      const entry = at === -1 ? null : (state.spares.splice(at, 1)[0] ?? null);
      if (entry !== null) entry.taken = true;
      const pending = entry?.started ?? this.#spawn(state, null);
      this.ensure(state, slot.accountId);
      let started: { runner: R; identity: BrowserIdentity };
      try {
        started = await raceAbort(pending, signal, 'acquiring a browser was aborted');
      } catch (err) {
        // Aborted: the runner still starting is disposed of once it is there.
        void this.dispose(pending);
        if (signal?.aborted) throw err;
        lastFailure = (err as Error).message;
        continue;
      }
      let ready = false;
      try {
        ready = await raceAbort(started.runner.ready, signal, 'acquiring a browser was aborted');
      } catch (err) {
        void this.dispose(Promise.resolve(started));
        throw err;
      }
      if (ready && started.runner.alive) return started;
      await this.dispose(Promise.resolve(started));
    }
    throw new Error(`no browser runner could be started for runtime ${state.id}: ${lastFailure}`);
  }

  /** Starts a runner as a run user of its own; prepared through `entry` once ready (null: a runner for a check at once). */
  #spawn(state: RuntimeState<R>, entry: SpareEntry<R> | null): Spare<R> {
    let identity: BrowserIdentity;
    try {
      identity = this.#ctx.identities.take();
    } catch (err) {
      const failed = Promise.reject(err as Error);
      // Whoever takes it sees the failure; a spare nobody takes is no unhandled rejection.
      failed.catch(() => {});
      return failed;
    }
    const spawned = this.#ctx
      .createRunner({
        runtimeDir: state.dir,
        runtimeId: state.id,
        tmpRoot: this.#ctx.settings.tmpRoot,
        runAs: identity,
      })
      .then(
        (runner) => {
          if (entry !== null) void this.#prepare(state, entry, runner);
          return { runner, identity };
        },
        (err: Error) => {
          this.#ctx.identities.release(identity);
          state.lastError = `a browser runner could not start: ${err.message}`;
          throw err;
        },
      );
    spawned.catch(() => {});
    return spawned;
  }

  /**
   * Once a spare runner is ready, names its account's current browser to it, so its connection
   * and context are made before a job comes; from then on only a check on that host takes it. Left
   * unprepared when it has no account, the account has no host up, it was taken meanwhile, or all
   * spares but one are prepared already (one stays for an account that has none). Never throws.
   */
  async #prepare(state: RuntimeState<R>, entry: SpareEntry<R>, runner: R): Promise<void> {
    if (typeof runner.prepare !== 'function' || !(await runner.ready.catch(() => false))) return;
    if (entry.taken || entry.account === null) return;
    const slot = state.current.get(entry.account);
    if (slot === undefined || slot.retired !== null) return;
    const host = await slot.starting.catch(() => null);
    if (host === null || slot.retired !== null || !runner.alive || entry.taken) return;
    const prepared = state.spares.filter((spare) => spare.preparedFor !== null).length;
    const { spareRunners } = this.#ctx.settings;
    if (spareRunners > 1 && prepared >= spareRunners - 1) return;
    if (!state.spares.includes(entry)) return;
    entry.preparedFor = slot;
    runner.prepare(host.wsEndpoint);
  }
}
