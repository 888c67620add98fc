import type { Admission } from './admission.js';
import type { HostRoom } from './host-room.js';
import type { HostSlot, PoolContext } from './state.js';
import type { BrowserHostStatus, BrowserPoolStatus, BrowserRuntimeStatus, PooledRunner } from './types.js';

/** One host as /health shows it. */
function hostStatus(slot: HostSlot): BrowserHostStatus {
  return {
    pid: slot.host?.pid ?? null,
    browserPid: slot.host?.browserPid ?? null,
    accountId: slot.accountId,
    state: slot.retired !== null ? 'draining' : slot.host === null ? 'starting' : 'ready',
    reason: slot.retired,
    checksRun: slot.host?.checksRun ?? 0,
    runningChecks: slot.active,
    pssBytes: slot.pssBytes,
  };
}

/**
 * The pool for /health (`BrowserPool.status`): per runtime its availability, versions, hosts,
 * PSS (bytes, last measurements), running and waiting checks; and the totals.
 */
export function poolStatus<R extends PooledRunner>(
  ctx: PoolContext<R>,
  admission: Admission<R>,
  room: HostRoom<R>,
): BrowserPoolStatus {
  const runtimes: BrowserRuntimeStatus[] = [];
  for (const state of ctx.runtimes.values()) {
    const hosts = [...state.hosts].map(hostStatus);
    runtimes.push({
      runtimeId: state.id,
      available: state.unavailable === null,
      reason: state.unavailable,
      browserVersion: state.browserVersion,
      playwrightVersion: state.playwrightVersion,
      hosts,
      pssBytes: hosts.reduce((sum, h) => sum + (h.pssBytes ?? 0), 0),
      running: state.running,
      waiting: admission.waitingFor(state),
      replacements: state.replacements,
      lastError: state.lastError,
    });
  }
  return {
    concurrency: ctx.settings.concurrency,
    liveHosts: room.liveHosts(),
    maxHosts: ctx.settings.maxHosts,
    running: admission.running,
    waiting: admission.waiting,
    waitingForMemory: admission.waitingForMemory,
    runtimes,
  };
}
