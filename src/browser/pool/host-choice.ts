import { abortedError, raceAbort } from '../../common/abort.js';
import type { BrowserHost } from '../host.js';
import type { HostRoom } from './host-room.js';
import type { HostSlots } from './host-slots.js';
import { ATTEMPTS, claimUnassigned, type HostSlot, type PoolContext, type RuntimeState } from './state.js';
import type { PooledRunner } from './types.js';

/** The parts of the pool that choosing a host uses. */
export type HostChoiceParts<R extends PooledRunner> = {
  ctx: PoolContext<R>;
  hosts: HostSlots<R>;
  room: HostRoom<R>;
};

/**
 * A healthy, started host serving `account` with one more check counted on it: the account's
 * current host, else the runtime's host that served no account yet, else a new one (see
 * {@link startHostWithRoom}). A host that ran `maxChecksPerHost` checks is retired as it is handed
 * out. Up to {@link ATTEMPTS} hosts are tried.
 *
 * @throws OutpostError OUTPOST_ERR_ABORTED when `signal` aborts first or the pool closes.
 * @throws Error when no healthy host could be had; the message says why.
 */
export async function hostFor<R extends PooledRunner>(
  parts: HostChoiceParts<R>,
  state: RuntimeState<R>,
  account: string,
  signal: AbortSignal | undefined,
): Promise<HostSlot> {
  const { ctx, hosts } = parts;
  let lastFailure = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (ctx.closing !== null) throw abortedError(signal, 'the browser pool is closed');
    let slot = state.current.get(account) ?? null;
    if (slot === null || slot.retired !== null) {
      slot = claimUnassigned(state, account) ?? (await startHostWithRoom(parts, state, account, signal));
    }
    slot.waiting++;
    let host: BrowserHost;
    try {
      host = await raceAbort(slot.starting, signal, 'acquiring a browser was aborted');
    } finally {
      slot.waiting--;
    }
    if (slot.retired !== null || !host.healthy) {
      lastFailure = slot.retired ?? host.failure ?? 'unhealthy';
      continue;
    }
    slot.active++;
    slot.lastUsedAt = performance.now();
    clearTimeout(slot.idleTimer);
    host.checksRun++;
    if (host.checksRun >= ctx.settings.maxChecksPerHost) {
      hosts.retire(state, slot, `it ran ${host.checksRun} checks`);
    }
    return slot;
  }
  throw new Error(`no healthy browser host for runtime ${state.id}: ${lastFailure}`);
}

/**
 * Starts a host for `account` once fewer than `maxHosts` are up: closes the least recently used
 * idle host when needed, else waits until a host is closed or idle. Another check of the same
 * account that started one meanwhile shares it.
 *
 * @throws OutpostError OUTPOST_ERR_ABORTED when `signal` aborts first or the pool closes.
 */
export async function startHostWithRoom<R extends PooledRunner>(
  parts: HostChoiceParts<R>,
  state: RuntimeState<R>,
  account: string,
  signal: AbortSignal | undefined,
): Promise<HostSlot> {
  const { ctx, hosts, room } = parts;
  for (;;) {
    if (ctx.closing !== null) throw abortedError(signal, 'the browser pool is closed');
    const existing = state.current.get(account);
    if (existing !== undefined && existing.retired === null) return existing;
    hosts.makeRoomNow();
    if (room.liveHosts() < ctx.settings.maxHosts) return hosts.start(state, account);
    await room.wait(signal);
  }
}
