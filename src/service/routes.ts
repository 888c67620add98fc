import type { RoutePlugin } from './http/service-app.js';
import { agentRoutes } from './runs/agent-routes.js';
import { alertRoutes } from './alerting/alert-routes.js';
import { alertingRoutes } from './alerting/routes.js';
import { agentsRoutes } from './resources/agents/routes.js';
import { artifactRoutes } from './runs/artifact-routes.js';
import { analyticsRoutes } from './analytics/routes.js';
import { checkResultRoutes } from './resources/check-results/routes.js';
import { checkStatusRoutes } from './resources/check-statuses/routes.js';
import { checkSessionRoutes } from './runs/session-routes.js';
import { checkRoutes } from './resources/checks/routes.js';
import { alertChannelRoutes } from './resources/alert-channels/routes.js';
import { checkGroupRoutes } from './resources/check-groups/routes.js';
import { privateLocationRoutes } from './resources/private-locations/routes.js';
import { snippetRoutes } from './resources/snippets/routes.js';
import { clientCertificateRoutes } from './resources/client-certificates/routes.js';
import { errorGroupRoutes } from './resources/error-groups/routes.js';
import { variableRoutes } from './resources/variables/routes.js';
import { incidentRoutes } from './resources/incidents/routes.js';
import { runtimeRoutes } from './resources/runtimes/routes.js';
import { statusPageRoutes } from './resources/status-pages/routes.js';

/** Every `/v1` route plugin, one per resource. Add a resource by adding its plugin here. */
export const ROUTES: readonly RoutePlugin[] = [
  checkRoutes,
  checkSessionRoutes,
  agentRoutes,
  artifactRoutes,
  variableRoutes,
  clientCertificateRoutes,
  errorGroupRoutes,
  statusPageRoutes,
  incidentRoutes,
  runtimeRoutes,
  checkGroupRoutes,
  alertChannelRoutes,
  snippetRoutes,
  privateLocationRoutes,
  analyticsRoutes,
  checkResultRoutes,
  checkStatusRoutes,
  agentsRoutes,
  alertRoutes,
  alertingRoutes,
];
