import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { OutpostError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { BrowserHost } from '../host.js';
import type { BrowserIdentity, IdentityPool } from '../identities.js';
import type { PoolSettings } from './options.js';
import type { PooledRunner, RunnerFactory } from './types.js';

/**
 * The state the parts of the browser pool share: its runtimes, each with its hosts (slots) and
 * spare runners, and what every part needs (settings, uids, logger, whether the pool closes).
 */

/** A runtime id is one folder name: `2026.04`. */
const RUNTIME_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Tries to get a started runner (or a healthy host) before a lease fails. */
export const ATTEMPTS = 3;

/** One browser host of a runtime, from its start until it is closed. */
export type HostSlot = {
  runtimeId: string;
  /** The run user it runs as; given back once it is closed. */
  identity: BrowserIdentity;
  /** Resolves once the host is up; rejects when it could not start. */
  starting: Promise<BrowserHost>;
  /** The host once it started; null before. */
  host: BrowserHost | null;
  /** Checks holding a lease on it. */
  active: number;
  /** Why it is being replaced; null while it is current. */
  retired: string | null;
  closing: Promise<void> | null;
  /** Last measured PSS of its processes, bytes; null before the first measurement. */
  pssBytes: number | null;
  /** The account whose checks it serves; null until one is given it (the compatibility check's host). */
  accountId: string | null;
  /** Checks waiting for it to start (not idle meanwhile: it is not closed to make room). */
  waiting: number;
  /** `performance.now()` when a check last took or left it. */
  lastUsedAt: number;
  /** Closes it once it has been idle for `hostIdleMs`. */
  idleTimer: NodeJS.Timeout | undefined;
};

/** A runner being started, with the run user it runs as. */
export type Spare<R> = Promise<{ runner: R; identity: BrowserIdentity }>;

/**
 * A spare runner: started before a job came, and prepared (connected to a host, a context open)
 * for the account whose check made it start, once it is ready. A prepared spare is handed only to a
 * check on the host it was prepared for: it never serves another account, since it held a
 * connection to that account's browser.
 */
export type SpareEntry<R> = {
  started: Spare<R>;
  /** The account to prepare it for once ready; null: not prepared (any account may take it). */
  account: string | null;
  /** The host it was prepared for; null while it is not. */
  preparedFor: HostSlot | null;
  /** Taken by a check: no longer prepared. */
  taken: boolean;
};

/** One runtime of the pool: its hosts, spare runners, availability and counters. */
export type RuntimeState<R> = {
  id: string;
  /** `runtimes/<id>`. */
  dir: string;
  /** Each account's host in service, by account id. */
  current: Map<string, HostSlot>;
  /** The compatibility check's host, until an account is given it. */
  unassigned: HostSlot | null;
  hosts: Set<HostSlot>;
  /** Runners started and waiting (oldest first). */
  spares: SpareEntry<R>[];
  /** Why its compatibility check failed; null while available. */
  unavailable: string | null;
  lastError: string | null;
  browserVersion: string | null;
  playwrightVersion: string | null;
  /** Checks admitted and not finished. */
  running: number;
  /** Hosts replaced so far. */
  replacements: number;
};

/** What every part of the pool shares. */
export type PoolContext<R extends PooledRunner> = {
  readonly settings: PoolSettings;
  readonly createRunner: RunnerFactory<R>;
  /** The run users of hosts and runners, one per live process. */
  readonly identities: IdentityPool;
  readonly logger: Logger | undefined;
  /** Each runtime in use, by id. */
  readonly runtimes: Map<string, RuntimeState<R>>;
  /** Set (once) when the pool starts closing: non-null from then on. */
  closing: Promise<void> | null;
};

/**
 * The state of a runtime, created on first use.
 *
 * @throws OutpostError OUTPOST_ERR_CONFIG when `runtimeId` is not a folder name, or no such
 *   runtime is installed under `settings.runtimesDir`.
 */
export function runtimeState<R extends PooledRunner>(
  ctx: PoolContext<R>,
  runtimeId: string,
): RuntimeState<R> {
  let state = ctx.runtimes.get(runtimeId);
  if (state !== undefined) return state;
  if (typeof runtimeId !== 'string' || !RUNTIME_ID.test(runtimeId)) {
    throw new OutpostError('OUTPOST_ERR_CONFIG', `${JSON.stringify(runtimeId)} is not a runtime name`);
  }
  const dir = join(ctx.settings.runtimesDir, runtimeId);
  if (!existsSync(dir)) {
    throw new OutpostError('OUTPOST_ERR_CONFIG', `runtime ${runtimeId} is not installed (no folder ${dir})`);
  }
  state = {
    id: runtimeId,
    dir,
    current: new Map(),
    unassigned: null,
    hosts: new Set(),
    spares: [],
    unavailable: null,
    lastError: null,
    browserVersion: null,
    playwrightVersion: null,
    running: 0,
    replacements: 0,
  };
  ctx.runtimes.set(runtimeId, state);
  return state;
}

/** `slot` is no longer the host in service of its account (or the unassigned one). */
export function forget<R>(state: RuntimeState<R>, slot: HostSlot): void {
  if (slot.accountId !== null && state.current.get(slot.accountId) === slot)
    state.current.delete(slot.accountId);
  if (state.unassigned === slot) state.unassigned = null;
}

/** Gives the runtime's host that served no account yet to `account`; null when there is none. */
export function claimUnassigned<R>(state: RuntimeState<R>, account: string): HostSlot | null {
  const slot = state.unassigned;
  if (slot === null || slot.retired !== null) return null;
  state.unassigned = null;
  slot.accountId = account;
  clearTimeout(slot.idleTimer);
  state.current.set(account, slot);
  return slot;
}
