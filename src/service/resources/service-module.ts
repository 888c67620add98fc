import { routesOf, type ServiceModule } from '../module.js';
import { agentsRoutes } from './agents/routes.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { checkGroupRoutes } from './check-groups/routes.js';
import { checkResultRoutes } from './check-results/routes.js';
import { checkStatusRecorder } from './check-statuses/recorder.js';
import { checkStatusRoutes } from './check-statuses/routes.js';
import { clientCertificateRoutes } from './client-certificates/routes.js';
import { errorGroupsHook, errorGroupsTake } from './error-groups/error-groups.js';
import { errorGroupRoutes } from './error-groups/routes.js';
import { privateLocationRoutes } from './private-locations/routes.js';
import { RESOURCES_RETENTION } from './retention.js';
import { runtimeRoutes } from './runtimes/routes.js';
import { snippetRoutes } from './snippets/routes.js';
import { variableRoutes } from './variables/routes.js';

/**
 * The plain resources (docs/api.md), each a folder of the resource template (docs/architecture.md,
 * "Adding a resource"): variables, client certificates, error groups, runtimes, check groups, snippets,
 * private locations, check results, check statuses, agents and API keys.
 */
export const resourcesModule: ServiceModule = {
  name: 'resources',
  routes: routesOf(
    variableRoutes,
    clientCertificateRoutes,
    errorGroupRoutes,
    runtimeRoutes,
    checkGroupRoutes,
    snippetRoutes,
    privateLocationRoutes,
    checkResultRoutes,
    checkStatusRoutes,
    agentsRoutes,
    apiKeyRoutes,
  ),
  recorders: () => [checkStatusRecorder()],
  // Named for their outbox rows: a row written before a restart finds its hook after.
  hooks: (ctx) => [{ name: 'error-groups', run: errorGroupsHook(ctx.db), takes: errorGroupsTake }],
  retention: () => RESOURCES_RETENTION,
};
