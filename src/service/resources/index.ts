// What other modules may use of this one (docs/architecture.md, "Modules"): they import it from here
// only. Leaf files only (schemas, types, queries): a module's routes are registered through its
// ServiceModule (service-module.ts), so importing this file never loads them.
export { recordClaimReport } from './agents/agents.js';
export { AgentQueries } from './agents/store.js';
export { servedLocations, unservedOf } from './agents/served-locations.js';
export { openGroupSecrets } from './check-groups/check-groups.js';
export type { GroupDoc } from './check-groups/check-groups.js';
export { GroupQueries } from './check-groups/store.js';
export { ResultQueries } from './check-results/store.js';
export { deleteCheckStatuses } from './check-statuses/store.js';
export { CERTIFICATE_SECRETS, clientCertificateForHost } from './client-certificates/client-certificates.js';
export {
  assertAlertChannelsExist,
  assertGroupExists,
  assertPrivateLocationsExist,
  assertSnippetExists,
} from './references.js';
export { DEFAULT_RUNTIME_ID, loadRuntimes } from './runtimes/runtimes.js';
export { SnippetQueries } from './snippets/store.js';
export {
  defaultRunLocation,
  EMBEDDED_LOCATION_SLUG,
} from './private-locations/private-locations.js';
export { accountVariables } from './variables/variables.js';
