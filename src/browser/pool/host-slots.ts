import { BrowserHost } from '../host.js';
import type { HostRoom } from './host-room.js';
import { MIB } from './options.js';
import type { SpareRunners } from './spares.js';
import { forget, type HostSlot, type PoolContext, type RuntimeState } from './state.js';
import type { PooledRunner } from './types.js';

/** A host that failed sooner than this after it started is replaced on demand only (no restart loop), ms. */
const EAGER_REPLACE_AFTER_MS = 30_000;

/**
 * The lifecycle of the pool's browser hosts (slots): started (each as a run user of its own),
 * retired (failed, too big, worn out, or idle for `hostIdleMs`) and closed once their running
 * checks finished; their PSS measured every `pssIntervalMs`.
 */
export class HostSlots<R extends PooledRunner> {
  readonly #ctx: PoolContext<R>;
  readonly #room: HostRoom<R>;
  readonly #spares: SpareRunners<R>;
  #pssTimer: NodeJS.Timeout | undefined;

  /**
   * @param ctx the pool's shared state.
   * @param room told whenever a host is closed, fails or becomes idle.
   * @param spares the spares prepared for a retired host are disposed of.
   */
  constructor(ctx: PoolContext<R>, room: HostRoom<R>, spares: SpareRunners<R>) {
    this.#ctx = ctx;
    this.#room = room;
    this.#spares = spares;
  }

  /**
   * Starts a host that becomes `account`'s current one (null: a host for the compatibility check,
   * which the first account needing one gets). Its `starting` rejects when it cannot start.
   *
   * @throws Error when no run user is free.
   */
  start(state: RuntimeState<R>, account: string | null): HostSlot {
    const { settings, identities } = this.#ctx;
    const identity = identities.take();
    const slot: HostSlot = {
      runtimeId: state.id,
      identity,
      starting: Promise.resolve(null as unknown as BrowserHost),
      host: null,
      active: 0,
      retired: null,
      closing: null,
      pssBytes: null,
      accountId: account,
      waiting: 0,
      lastUsedAt: performance.now(),
      idleTimer: undefined,
    };
    slot.starting = BrowserHost.start({
      runtimeDir: state.dir,
      runtimeId: state.id,
      tmpRoot: settings.tmpRoot,
      runAs: identity,
      ...(settings.chromiumPath === undefined ? {} : { chromiumPath: settings.chromiumPath }),
      startTimeoutMs: settings.hostStartTimeoutMs,
      healthIntervalMs: settings.healthIntervalMs,
      healthTimeoutMs: settings.healthTimeoutMs,
      onFailure: (reason) => this.#failed(state, slot, reason),
    }).then(
      (host) => {
        slot.host = host;
        state.browserVersion = host.browserVersion;
        state.playwrightVersion = host.playwrightVersion;
        this.#startPssTimer();
        if (this.#ctx.closing !== null) void this.close(state, slot);
        return host;
      },
      (err: Error) => {
        identities.release(identity);
        state.hosts.delete(slot);
        forget(state, slot);
        state.lastError = err.message;
        this.#ctx.logger?.error({ runtimeId: state.id, err }, 'browser host could not start');
        this.#room.notify();
        throw err;
      },
    );
    // Whoever waits on it sees the failure; nobody waiting is no unhandled rejection.
    slot.starting.catch(() => {});
    if (account === null) state.unassigned = slot;
    else state.current.set(account, slot);
    state.hosts.add(slot);
    return slot;
  }

  /** A started host failed (unhealthy, crashed): retired, and replaced at once when it ran a while. */
  #failed(state: RuntimeState<R>, slot: HostSlot, reason: string): void {
    this.#ctx.logger?.warn({ runtimeId: state.id, reason }, 'browser host failed; replacing it');
    const lived = slot.host === null ? 0 : performance.now() - slot.host.startedAt;
    this.retire(state, slot, reason);
    // A host that ran a while is replaced at once (when there is room); one failing right after
    // it started is replaced when the next check asks, so a broken Chromium does not restart in a loop.
    const owner = slot.accountId;
    if (
      lived >= EAGER_REPLACE_AFTER_MS &&
      this.#ctx.closing === null &&
      owner !== null &&
      !state.current.has(owner) &&
      this.#room.liveHosts() < this.#ctx.settings.maxHosts
    ) {
      this.start(state, owner).starting.catch(() => {});
    }
  }

  /**
   * Takes a host out of service: no new checks; closed once its running checks finished. Spares
   * prepared for it are disposed of. `replaced`: it failed or wore out (counted, logged as a
   * replacement); else it was idle.
   */
  retire(state: RuntimeState<R>, slot: HostSlot, reason: string, replaced = true): void {
    if (slot.retired !== null) return;
    slot.retired = reason;
    clearTimeout(slot.idleTimer);
    forget(state, slot);
    if (replaced) {
      state.replacements++;
      this.#ctx.logger?.info({ runtimeId: state.id, reason, running: slot.active }, 'browser host replaced');
    } else {
      this.#ctx.logger?.info({ runtimeId: state.id, reason }, 'browser host closed');
    }
    this.#spares.dropPreparedFor(state, slot);
    if (slot.active === 0 || slot.host?.exited === undefined) void this.close(state, slot);
    else void slot.host.exited.then(() => this.close(state, slot));
    this.#room.notify();
  }

  /**
   * A check left `slot`: close it when it is retired and was the last; probe it when the check saw
   * it fail; start its idle time when it was the last.
   */
  leave(state: RuntimeState<R>, slot: HostSlot, browserFailed: boolean): void {
    slot.active--;
    slot.lastUsedAt = performance.now();
    if (slot.retired !== null) {
      if (slot.active === 0) void this.close(state, slot);
      return;
    }
    if (browserFailed) void slot.host?.checkHealth();
    if (slot.active === 0) {
      this.armIdle(state, slot);
      this.#room.notify();
    }
  }

  /** Closes a host (once), then forgets it and gives its uid back. Never rejects. */
  close(state: RuntimeState<R>, slot: HostSlot): Promise<void> {
    slot.closing ??= (async () => {
      clearTimeout(slot.idleTimer);
      forget(state, slot);
      const host = await slot.starting.catch(() => null);
      if (host !== null) await host.close();
      state.hosts.delete(slot);
      if (host !== null) this.#ctx.identities.release(slot.identity);
      this.#room.notify();
    })();
    return slot.closing;
  }

  /** Closes `slot` once it has been idle for `hostIdleMs`. */
  armIdle(state: RuntimeState<R>, slot: HostSlot): void {
    const { hostIdleMs } = this.#ctx.settings;
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.retired === null && slot.active === 0 && slot.waiting === 0 && this.#ctx.closing === null) {
        this.retire(state, slot, `it ran no check for ${hostIdleMs} ms`, false);
      }
    }, hostIdleMs);
    slot.idleTimer.unref();
  }

  /** Closes idle hosts, least recently used first, until fewer than `maxHosts` are up, as far as idle ones allow. */
  makeRoomNow(): void {
    const { maxHosts } = this.#ctx.settings;
    while (this.#room.liveHosts() >= maxHosts) {
      const oldest = this.#room.leastRecentlyUsedIdle();
      if (oldest === null) return;
      this.retire(
        oldest.state,
        oldest.slot,
        `another account needed a browser and ${maxHosts} hosts were up`,
        false,
      );
    }
  }

  /** Stops measuring PSS (the pool closes). */
  stopPss(): void {
    clearInterval(this.#pssTimer);
  }

  /** Measures every ready host's PSS every `pssIntervalMs`; a host past the bound is replaced. */
  #startPssTimer(): void {
    if (this.#pssTimer !== undefined || this.#ctx.closing !== null) return;
    let measuring = false;
    this.#pssTimer = setInterval(() => {
      if (measuring) return;
      measuring = true;
      void this.#measure().finally(() => {
        measuring = false;
      });
    }, this.#ctx.settings.pssIntervalMs);
    this.#pssTimer.unref();
  }

  /** Measures each started host's PSS once; retires one past `maxHostPssMiB`. */
  async #measure(): Promise<void> {
    const { maxHostPssBytes } = this.#ctx.settings;
    for (const state of this.#ctx.runtimes.values()) {
      for (const slot of [...state.hosts]) {
        if (slot.host === null || slot.closing !== null) continue;
        slot.pssBytes = await slot.host.pssBytes();
        if (slot.retired === null && slot.pssBytes !== null && slot.pssBytes > maxHostPssBytes) {
          this.retire(
            state,
            slot,
            `its processes use ${Math.round(slot.pssBytes / MIB)} MiB (PSS), more than ${maxHostPssBytes / MIB} MiB`,
          );
        }
      }
    }
  }
}
