/**
 * Which run locations the check form offers, and which a new check starts with (docs/web-app.md, "The check
 * pages"): the locations agents serve, never the 22 data-center names for their own sake.
 */
import { LOCATIONS } from '../../../../../src/protocol/enums.js';
import type { Agent, PrivateLocation } from '../../../api/schemas.js';

/**
 * The data-center locations connected agents serve, each with how many: an account-key agent serves the
 * locations it names, or every one when it names none. Private-location agents serve no data-center location.
 */
export function servedRegions(agents: readonly Agent[]): Map<string, number> {
  const served = new Map<string, number>();
  for (const agent of agents) {
    if (!agent.connected || agent.scope !== 'ACCOUNT') continue;
    for (const location of agent.locations ?? LOCATIONS)
      served.set(location, (served.get(location) ?? 0) + 1);
  }
  return served;
}

/**
 * The data-center locations the form lists: those agents serve, then those the check already has (kept so
 * they can be unticked), in the order of LOCATIONS.
 */
export function offeredRegions(served: ReadonlyMap<string, number>, chosen: readonly string[]): string[] {
  return LOCATIONS.filter((l) => served.has(l) || chosen.includes(l));
}

/**
 * Where a new check runs at first: the embedded location (`local`, this machine) when there is one, else the
 * first private location with a connected agent, else the first data-center location an agent serves, else
 * nowhere chosen (the service then applies its own default).
 */
export function defaultLocations(
  privateLocations: readonly PrivateLocation[] | undefined,
  agents: readonly Agent[] | undefined,
): { locations: string[]; privateLocations: string[] } {
  const embedded = privateLocations?.find((p) => p.embedded);
  if (embedded) return { locations: [], privateLocations: [embedded.slugName] };
  const staffed = privateLocations?.find((p) => p.agentCount > 0);
  if (staffed) return { locations: [], privateLocations: [staffed.slugName] };
  const [region] = offeredRegions(servedRegions(agents ?? []), []);
  return { locations: region ? [region] : [], privateLocations: [] };
}

/** How a private location's agents stand, in words: `2 agents connected`, `no agent connected`. */
export function agentState(count: number): string {
  if (count === 0) return 'no agent connected';
  return count === 1 ? '1 agent connected' : `${count} agents connected`;
}
