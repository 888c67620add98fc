import { randomInt } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { OutpostError } from '../common/errors.js';

/**
 * The uids of the processes alive now (owners of /proc/<pid>); empty where /proc cannot be read.
 * Synchronous: a few ms for a few hundred processes, once per process started.
 */
function uidsOfLiveProcesses(): Set<number> {
  const uids = new Set<number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return uids;
  }
  for (const name of entries) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      uids.add(statSync(`/proc/${name}`).uid);
    } catch {
      // Exited while listing.
    }
  }
  return uids;
}

/** A uid and gid a browser host or runner process runs as. */
export type BrowserIdentity = { uid: number; gid: number };

/**
 * The uids (and gids) browser hosts and runners of a root agent run as: 62 000 to 62 255, apart
 * from the 61 000 – 61 255 of the script sandbox, below the 65 534 of `nobody` and inside the
 * 65 536 ids a user-namespaced container maps. Numbers only: no user needs to exist.
 */
export const DEFAULT_BROWSER_UIDS = { first: 62_000, count: 256 } as const;

/**
 * Hands out uids from a range so that no two live processes share one: the kernel then refuses
 * a process's signals and ptrace to every other browser process and to the agent (EPERM), and
 * all processes of one uid can be found and killed together. A uid is given back with
 * {@link IdentityPool.release} only once its process was reaped.
 */
export class IdentityPool {
  readonly #range: { first: number; count: number } | null;
  readonly #inUse = new Set<number>();
  #next = 0;

  /**
   * @param range the uids to hand out; null hands out none ({@link take} returns null: the
   *   processes keep the agent's uid, as they must when the agent is not root).
   * @throws OutpostError OUTPOST_ERR_CONFIG when the range is not positive integers below 2³².
   */
  constructor(range: { first: number; count: number } | null) {
    if (
      range !== null &&
      (!Number.isInteger(range.first) ||
        !Number.isInteger(range.count) ||
        range.first < 1 ||
        range.count < 1 ||
        range.first + range.count > 4_294_967_295)
    ) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `browser uids must be a range of positive integers, got first ${range.first}, count ${range.count}`,
      );
    }
    this.#range = range;
    // A random start: two pools starting together are unlikely to pick the same uid first.
    this.#next = range === null ? 0 : randomInt(range.count);
  }

  /** How many uids are handed out now. */
  get inUse(): number {
    return this.#inUse.size;
  }

  /**
   * A uid no live process of this pool has, as uid and gid; null when the pool hands out none.
   * @throws OutpostError OUTPOST_ERR_CONFIG when every uid of the range is in use.
   */
  take(): BrowserIdentity | null {
    if (this.#range === null) return null;
    const { first, count } = this.#range;
    // Another pool (a second agent on the machine, a test) may use the same range: a uid some live
    // process has is not taken, since whoever closes a host or suite kills every process of its uid.
    const busy = uidsOfLiveProcesses();
    for (let n = 0; n < count; n++) {
      const uid = first + ((this.#next + n) % count);
      if (this.#inUse.has(uid) || busy.has(uid)) continue;
      this.#next = (this.#next + n + 1) % count;
      this.#inUse.add(uid);
      return { uid, gid: uid };
    }
    throw new OutpostError(
      'OUTPOST_ERR_CONFIG',
      `all ${count} browser uids from ${first} are in use: raise the browser pool's uid count`,
    );
  }

  /** Gives `identity` back, once the process that had it was reaped. Null does nothing. */
  release(identity: BrowserIdentity | null): void {
    if (identity !== null) this.#inUse.delete(identity.uid);
  }
}
