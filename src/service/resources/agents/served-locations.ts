import type { Kysely } from 'kysely';
import { LOCATIONS } from '../../../protocol/index.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { LocationQueries } from '../private-locations/store.js';
import { AGENT_CONNECTED_WINDOW_MS, isConnected } from './agents.js';
import { AgentQueries } from './store.js';

/**
 * The run locations of an account that connected agents serve at `nowMs`, each with how many agents serve it
 * (docs/protocol.md, "Run locations"): a private location by the agents holding one of its keys, a
 * data-center location by the account-key agents that named it (`OUTPOST_AGENT_LOCATIONS`) or named none
 * (they serve every data-center location). A location missing from the map has no connected agent: its runs
 * expire with that reason.
 */
export async function servedLocations(
  db: Kysely<Database>,
  accountId: string,
  nowMs: number,
): Promise<Map<string, number>> {
  const rows = await new AgentQueries(db).seenSince(accountId, nowMs - AGENT_CONNECTED_WINDOW_MS);
  const connected = rows.filter((row) => isConnected(row, nowMs));
  const privateIds = [
    ...new Set(connected.map((r) => r.location_id).filter((id): id is string => id !== null)),
  ];
  const slugs = new Map(
    (await new LocationQueries(db).byIds(accountId, privateIds)).map((l) => [l.id, l.slug] as const),
  );
  const served = new Map<string, number>();
  const add = (location: string) => served.set(location, (served.get(location) ?? 0) + 1);
  for (const row of connected) {
    if (row.location_id !== null) {
      const slug = slugs.get(row.location_id);
      if (slug) add(slug);
      continue;
    }
    const named = row.claim_report ? readDoc(row.claim_report).locations : null;
    for (const location of named ?? LOCATIONS) add(location);
  }
  return served;
}

/**
 * The locations of `locations` that no connected agent serves (see {@link servedLocations}), in their order.
 */
export function unservedOf(locations: readonly string[], served: ReadonlyMap<string, number>): string[] {
  return locations.filter((l) => !served.has(l));
}
