import type { Kysely } from 'kysely';
import { type CheckDoc, runLocationsOf } from '../../checks/index.js';
import type { Database } from '../../platform/store/database.js';
import { ScheduleQueries } from './store.js';

/**
 * Where runs go: the location rules of scheduling. A check that does not run in parallel runs in one
 * location per run, its locations taking turns (nextLocation); a retried attempt stays or moves on
 * (retryLocation). Locations are the slugs of `runLocationsOf` (public and private).
 */

/**
 * The location whose turn it is for a check whose cursor (`checks.location_cursor`) stands at `cursor`: the
 * scheduler's batches read the cursor with the check and write `cursor + 1` with its slot.
 * @returns a slug of the check's run locations.
 * @throws Error when the check has no run location (a stored check always has one; a damaged document may not).
 */
export function turnOf(check: CheckDoc, cursor: number): string {
  const locations = runLocationsOf(check);
  if (locations.length === 0) throw new Error(`check ${check.id} has no run location`);
  return locations[cursor % locations.length]!;
}

/**
 * Picks the check's next location round-robin and advances its cursor (`checks.location_cursor`),
 * in `tx`, the transaction that queues the run (scheduled runs, check sessions).
 * @returns a slug of the check's run locations.
 */
export async function nextLocation(
  tx: Kysely<Database>,
  accountId: string,
  check: CheckDoc,
): Promise<string> {
  return turnOf(check, await new ScheduleQueries(tx).takeLocationTurn(accountId, check.id));
}

/**
 * Where the next attempt of a retried run runs (the retry strategy's `sameRegion`, docs/api.md,
 * "Retry strategy"): `current` when `sameRegion`; otherwise the location after `current` in
 * `locations` (round robin, wrapping), so it differs whenever there are two or more; `current` when
 * it is the only one or no longer listed and nothing else is.
 */
export function retryLocation(locations: readonly string[], current: string, sameRegion: boolean): string {
  if (sameRegion) return current;
  const others = locations.filter((l) => l !== current);
  if (others.length === 0) return current;
  const index = locations.indexOf(current);
  if (index < 0) return others[0]!;
  for (let step = 1; step <= locations.length; step++) {
    const next = locations[(index + step) % locations.length]!;
    if (next !== current) return next;
  }
  return current;
}
