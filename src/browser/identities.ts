import { type RunUser, RunUserPool } from '../common/run-users.js';

/** A uid and gid a browser host or runner process runs as. */
export type BrowserIdentity = RunUser;

/**
 * The uids (and gids) browser hosts and runners run as (run users: src/common/run-users.ts): 62 000 to 62 255, apart
 * from the 61 000 – 61 255 of the script sandbox, below the 65 534 of `nobody` and inside the
 * 65 536 ids a user-namespaced container maps. Numbers only: no user needs to exist.
 */
export const DEFAULT_BROWSER_UIDS = { first: 62_000, count: 256 } as const;

/**
 * Hands out the run users of browser hosts and runners ({@link RunUserPool}): no two live
 * processes share one, so the kernel refuses a process's signals and ptrace to every other
 * browser process and to the agent (EPERM), and a uid is handed out again only once every
 * process and temp file it had is gone.
 */
export class IdentityPool extends RunUserPool {
  /**
   * @param range the uids to hand out; default {@link DEFAULT_BROWSER_UIDS}.
   * @throws OutpostError OUTPOST_ERR_CONFIG when the range is out of bounds.
   */
  constructor(range: { first: number; count: number } = DEFAULT_BROWSER_UIDS) {
    super(range, { what: 'browser' });
  }

  /** Ends the run of `identity` (see {@link RunUserPool.release}); null does nothing. Never rejects. */
  override release(identity: BrowserIdentity | null): Promise<void> {
    return identity === null ? Promise.resolve() : super.release(identity);
  }
}
