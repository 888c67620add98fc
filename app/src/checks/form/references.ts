/**
 * Loads the lists the check form offers choices from, each on its own.
 */
import { listAlertChannels } from '../../api/alerting.js';
import { listCheckGroups } from '../../api/check-groups.js';
import { listAgents, listPrivateLocations } from '../../api/locations.js';
import { listRuntimes, listSnippets } from '../../api/references.js';
import { listServices } from '../../api/status-pages.js';
import type { References } from './sections/general.js';
import type { CheckType } from '../../api/schemas.js';

/**
 * Loads the lists the form offers choices from, each on its own: one that fails leaves its part of the form
 * as the check has it (with a notice) instead of failing the page.
 */
export async function loadReferences(type: CheckType, signal: AbortSignal): Promise<References> {
  const settle = async <T>(load: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await load();
    } catch (err) {
      if (signal.aborted) throw err;
      return undefined;
    }
  };
  const [groups, privateLocations, runtimes, alertChannels, snippets, services, agents] = await Promise.all([
    settle(() => listCheckGroups(signal)),
    settle(() => listPrivateLocations(signal)),
    settle(() => listRuntimes(signal)),
    settle(() => listAlertChannels(signal)),
    type === 'API' ? settle(() => listSnippets(signal)) : Promise.resolve([]),
    settle(() => listServices(signal)),
    settle(() => listAgents(signal)),
  ]);
  const refs: References = {};
  if (groups) refs.groups = groups;
  if (privateLocations) refs.privateLocations = privateLocations;
  if (runtimes) refs.runtimes = runtimes;
  if (alertChannels) refs.alertChannels = alertChannels;
  if (snippets) refs.snippets = snippets;
  if (services) refs.services = services;
  if (agents) refs.agents = agents;
  return refs;
}
