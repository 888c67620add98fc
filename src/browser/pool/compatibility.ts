import type { BrowserHost } from '../host.js';
import type { Admission } from './admission.js';
import type { HostSlots } from './host-slots.js';
import type { SpareRunners } from './spares.js';
import { type HostSlot, type PoolContext, type RuntimeState, runtimeState } from './state.js';
import type { PooledRunner, RuntimeCheck } from './types.js';

/** The parts of the pool a compatibility check uses. */
export type CompatibilityParts<R extends PooledRunner> = {
  ctx: PoolContext<R>;
  hosts: HostSlots<R>;
  spares: SpareRunners<R>;
  admission: Admission<R>;
};

/**
 * A runtime's start-up compatibility check (`BrowserPool.checkRuntime`): starts its host (which
 * becomes the runtime's warm host when the check passes), opens a page with `data:` content,
 * evaluates a script and takes a screenshot, within `compatibilityTimeoutMs`. A runtime failing it
 * is marked unavailable with the reason and the checks waiting for it fail; passing clears an
 * earlier failure and starts its spare runners. Never throws.
 */
export async function checkRuntime<R extends PooledRunner>(
  parts: CompatibilityParts<R>,
  runtimeId: string,
): Promise<RuntimeCheck> {
  const { ctx, hosts, spares, admission } = parts;
  const t0 = performance.now();
  const result = (reason: string | null, host: BrowserHost | null): RuntimeCheck => ({
    runtimeId,
    ok: reason === null,
    reason,
    browserVersion: host?.browserVersion ?? null,
    playwrightVersion: host?.playwrightVersion ?? null,
    durationMs: performance.now() - t0,
  });
  let state: RuntimeState<R>;
  try {
    state = runtimeState(ctx, runtimeId);
  } catch (err) {
    return result((err as Error).message, null);
  }
  if (ctx.closing !== null) return result('the browser pool is closed', null);
  // A host not yet given to an account, else any of the runtime's, else a new one (which the
  // first account needing a host gets: it served no other).
  let slot: HostSlot | null =
    state.unassigned ?? [...state.current.values()].find((s) => s.retired === null) ?? null;
  let host: BrowserHost | null = null;
  try {
    if (slot === null || slot.retired !== null) {
      hosts.makeRoomNow();
      slot = hosts.start(state, null);
    }
    host = await slot.starting;
    await host.selfTest(ctx.settings.compatibilityTimeoutMs);
    state.unavailable = null;
    if (slot.active === 0) hosts.armIdle(state, slot);
    // The runtime's first check should not wait for Node to boot either.
    spares.ensure(state, null);
    return result(null, host);
  } catch (err) {
    const reason = (err as Error).message;
    state.unavailable = reason;
    ctx.logger?.error({ runtimeId, reason }, 'browser runtime failed its compatibility check');
    if (slot !== null && state.hosts.has(slot))
      hosts.retire(state, slot, `the compatibility check failed: ${reason}`);
    // Checks already waiting for this runtime would only fail one by one: fail them now.
    admission.rejectWaitersOf(state, () => new Error(`runtime ${runtimeId} is unavailable: ${reason}`));
    return result(reason, host);
  }
}
