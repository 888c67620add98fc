import { abortedError } from '../common/abort.js';
import type { BrowserHost } from './host.js';
import { DEFAULT_BROWSER_UIDS, IdentityPool } from './identities.js';
import { Admission } from './pool/admission.js';
import { checkRuntime } from './pool/compatibility.js';
import { hostFor } from './pool/host-choice.js';
import { HostRoom } from './pool/host-room.js';
import { HostSlots } from './pool/host-slots.js';
import { checkTmpRoot, poolSettings } from './pool/options.js';
import { SpareRunners } from './pool/spares.js';
import { type HostSlot, type PoolContext, runtimeState } from './pool/state.js';
import { poolStatus } from './pool/status.js';
import type {
  BrowserLease,
  BrowserPoolOptions,
  BrowserPoolStatus,
  PooledRunner,
  RuntimeCheck,
} from './pool/types.js';

export type {
  BrowserHostStatus,
  BrowserLease,
  BrowserPoolOptions,
  BrowserPoolStatus,
  BrowserRuntimeStatus,
  PooledRunner,
  RunnerFactory,
  RunnerSpawnOptions,
  RuntimeCheck,
} from './pool/types.js';

/**
 * The agent's browsers (docs/architecture.md, "Browser checks"): one warm Chromium host per
 * account and runtime in use, started on its first check (each host its own uid: the browser of one
 * account can read nothing of another's), and `spareRunners` started runners per runtime kept
 * spare, so a check neither waits for Node to boot nor, once its account ran one, for Chromium.
 * At most `maxHosts` hosts are up at once; an account's host idle for `hostIdleMs` is closed.
 *
 * {@link acquire} admits a check when fewer than `browserConcurrency` run AND the memory
 * headroom covers `memoryPerCheckMiB` (plus the checks started moments ago, plus a reserve);
 * otherwise it waits, first come first served. A host is replaced when it fails a health check,
 * crashes, passes `maxHostPssMiB` or has run `maxChecksPerHost` checks; the replaced one drains
 * (its running checks finish) and is then closed. A runtime whose compatibility check
 * ({@link checkRuntime}) failed is unavailable: acquiring it fails with the reason.
 *
 * The parts live in pool/: admission (slots and memory), host-room (`maxHosts`), host-slots (a
 * host's lifecycle), host-choice (which host a check gets), spares (spare runners), compatibility,
 * status, options and the shared state.
 */
export class BrowserPool<R extends PooledRunner> {
  readonly #ctx: PoolContext<R>;
  readonly #admission: Admission<R>;
  readonly #room: HostRoom<R>;
  readonly #spares: SpareRunners<R>;
  readonly #hosts: HostSlots<R>;
  /** Runners of leases not yet released, killed by `close`. */
  readonly #leasedRunners = new Set<R>();

  /** @throws OutpostError OUTPOST_ERR_CONFIG naming the option when one is out of range. */
  constructor(options: BrowserPoolOptions<R>) {
    const settings = poolSettings(options);
    const identities = new IdentityPool(options.browserUids ?? DEFAULT_BROWSER_UIDS);
    checkTmpRoot(settings.tmpRoot);
    this.#ctx = {
      settings,
      createRunner: options.createRunner,
      identities,
      logger: options.logger,
      runtimes: new Map(),
      closing: null,
    };
    this.#admission = new Admission(this.#ctx);
    this.#room = new HostRoom(this.#ctx.runtimes);
    this.#spares = new SpareRunners(this.#ctx);
    this.#hosts = new HostSlots(this.#ctx, this.#room, this.#spares);
  }

  /**
   * Waits for a slot and memory, then leases the browser of `runtimeId` that serves
   * `options.accountId` (its host is started when the account has none: a few seconds; when
   * `maxHosts` are up, the least recently used idle one is closed first, or the check waits until
   * one is idle) and a started runner, one prepared for that host when there is one.
   *
   * @param options.accountId the account whose check runs: checks of one account share a host,
   *   checks of different accounts never do. Checks acquired without one share a host of their own.
   * @throws OutpostError OUTPOST_ERR_ABORTED when `signal` aborts first or the pool closes.
   * @throws OutpostError OUTPOST_ERR_CONFIG when `runtimeId` is not an installed runtime.
   * @throws Error when the runtime is unavailable (its compatibility check failed), or its
   *   host or a runner could not start; the message says why.
   */
  async acquire(
    runtimeId: string,
    options: { signal?: AbortSignal; accountId?: string } = {},
  ): Promise<BrowserLease<R>> {
    const { signal } = options;
    const account = options.accountId ?? '';
    if (this.#ctx.closing !== null) throw abortedError(signal, 'the browser pool is closed');
    if (signal?.aborted) throw abortedError(signal, 'acquiring a browser was aborted');
    const state = runtimeState(this.#ctx, runtimeId);
    if (state.unavailable !== null) {
      throw new Error(`runtime ${runtimeId} is unavailable: ${state.unavailable}`);
    }
    this.#spares.ensure(state, account);
    await this.#admission.admit(state, signal);
    let slot: HostSlot | null = null;
    try {
      slot = await hostFor({ ctx: this.#ctx, hosts: this.#hosts, room: this.#room }, state, account, signal);
      const { runner, identity } = await this.#spares.take(state, slot, signal);
      const host = slot.host as BrowserHost;
      const leased = slot;
      let released: Promise<void> | null = null;
      this.#leasedRunners.add(runner);
      this.#admission.started();
      return {
        runtimeId,
        wsEndpoint: host.wsEndpoint,
        browserVersion: host.browserVersion,
        playwrightVersion: host.playwrightVersion,
        runner,
        release: (outcome) => {
          released ??= (async () => {
            await runner.dispose().catch(() => {});
            this.#leasedRunners.delete(runner);
            this.#ctx.identities.release(identity);
            this.#hosts.leave(state, leased, outcome.browserFailed);
            this.#admission.finish(state);
          })();
          return released;
        },
      };
    } catch (err) {
      if (slot !== null) this.#hosts.leave(state, slot, false);
      this.#admission.abandoned();
      this.#admission.finish(state);
      throw err;
    }
  }

  /**
   * The runtime's start-up compatibility check: starts its host (which becomes the runtime's
   * warm host when the check passes), opens a page with `data:` content, evaluates a script
   * and takes a screenshot. A runtime failing it is marked unavailable with the reason (its
   * jobs should not be claimed); passing clears an earlier failure. Never throws.
   */
  checkRuntime(runtimeId: string): Promise<RuntimeCheck> {
    const parts = { ctx: this.#ctx, hosts: this.#hosts, spares: this.#spares, admission: this.#admission };
    return checkRuntime(parts, runtimeId);
  }

  /**
   * Whether a browser check of `runtimeId` would be admitted at once: the runtime is not
   * unavailable, no check waits, a slot is free and the memory headroom covers one more. For
   * the claim loop, which claims browser jobs only while this holds (one headroom read).
   *
   * @param runtimeId a runtime id; unknown or not installed ones answer false.
   */
  async hasCapacity(runtimeId: string): Promise<boolean> {
    if (this.#ctx.closing !== null) return false;
    const state = this.#ctx.runtimes.get(runtimeId);
    if (state === undefined) {
      try {
        runtimeState(this.#ctx, runtimeId);
      } catch {
        return false;
      }
    } else if (state.unavailable !== null) {
      return false;
    }
    if (!this.#admission.hasFreeSlot()) return false;
    return this.#admission.memoryCoversOneMore();
  }

  /** The pool for /health: per runtime its availability, versions, hosts, PSS, running and waiting checks. */
  status(): BrowserPoolStatus {
    return poolStatus(this.#ctx, this.#admission, this.#room);
  }

  /**
   * Fails waiting checks (OUTPOST_ERR_ABORTED), kills every host and runner (spare or leased),
   * and waits until they are reaped and their temp dirs removed. Leases still out may be
   * released after (it does nothing more then).
   * Idempotent.
   */
  close(): Promise<void> {
    this.#ctx.closing ??= (async () => {
      this.#hosts.stopPss();
      this.#admission.close(() =>
        abortedError(undefined, 'the browser pool closed while a check waited for a browser'),
      );
      this.#room.notify();
      const work: Promise<unknown>[] = [...this.#leasedRunners].map((runner) =>
        runner.dispose().catch(() => {}),
      );
      for (const state of this.#ctx.runtimes.values()) {
        for (const spare of state.spares.splice(0)) work.push(this.#spares.dispose(spare.started));
        for (const slot of state.hosts) {
          clearTimeout(slot.idleTimer);
          work.push(this.#hosts.close(state, slot));
        }
      }
      await Promise.allSettled(work);
      // Every run user reaped: no process or temp file of a browser check outlives the pool.
      await this.#ctx.identities.settled();
    })();
    return this.#ctx.closing;
  }
}
