/**
 * Where the check page says a check cannot run: its locations no connected agent serves, and its latest runs
 * that ended without running, with the reason (`GET /v1/checks/{id}/expired-runs`).
 */
import { listExpiredRuns } from '../../api/checks.js';
import type { Check } from '../../api/schemas.js';
import { useLoad } from '../../ui/hooks.js';
import { relativeTime } from '../labels.js';

/** How many expired runs the check page lists. */
const SHOWN = 5;

/**
 * A notice naming the check's locations no connected agent serves (their runs expire instead of running), and
 * the latest runs that expired, each with its reason. Nothing when every location is served and no run expired.
 */
export function UnservedLocations({ check, reloadKey }: { check: Check; reloadKey: number }) {
  const expired = useLoad(
    (signal) => listExpiredRuns(check.id, SHOWN, signal),
    [check.id, reloadKey],
    60_000,
  );
  const unserved = check.unservedLocations ?? [];
  const runs = expired.data ?? [];
  if (unserved.length === 0 && runs.length === 0) return null;
  return (
    <section class="notice notice-error" aria-labelledby="unserved-heading">
      <h2 id="unserved-heading" class="notice-title">
        {unserved.length > 0 ? 'Runs that cannot run' : 'Runs that did not run'}
      </h2>
      {unserved.length > 0 ? (
        <p>
          No connected agent serves {unserved.map((l, i) => [i > 0 ? ', ' : '', <code key={l}>{l}</code>])}:
          the check's runs there expire instead of running. Start an agent for it (see{' '}
          <a href="/private-locations">Private locations</a>) or choose another location.
        </p>
      ) : null}
      {runs.length > 0 ? (
        <ul class="expired-runs">
          {runs.map((r) => (
            <li key={r.id}>
              <time dateTime={r.expiredAt} title={new Date(r.expiredAt).toLocaleString()}>
                {relativeTime(Date.parse(r.expiredAt), Date.now())}
              </time>{' '}
              in <code>{r.runLocation}</code>: {r.reason}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
