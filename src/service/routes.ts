import type { RoutePlugin } from './platform/http/service-app.js';
import { agentRoutes } from './runs/queue/agent-routes.js';
import { alertRoutes } from './alerting/check-alert-routes.js';
import { alertingRoutes } from './alerting/notification-routes.js';
import { agentsRoutes } from './resources/agents/routes.js';
import { artifactRoutes } from './runs/artifacts/routes.js';
import { analyticsRoutes } from './analytics/routes.js';
import { checkResultRoutes } from './resources/check-results/routes.js';
import { checkStatusRoutes } from './resources/check-statuses/routes.js';
import { checkSessionRoutes } from './runs/sessions/routes.js';
import { checkRoutes } from './checks/routes.js';
import { alertChannelRoutes } from './alerting/alert-channels/routes.js';
import { checkGroupRoutes } from './resources/check-groups/routes.js';
import { privateLocationRoutes } from './resources/private-locations/routes.js';
import { snippetRoutes } from './resources/snippets/routes.js';
import { clientCertificateRoutes } from './resources/client-certificates/routes.js';
import { errorGroupRoutes } from './resources/error-groups/routes.js';
import { variableRoutes } from './resources/variables/routes.js';
import { incidentRoutes } from './status-pages/incidents/routes.js';
import { runtimeRoutes } from './resources/runtimes/routes.js';
import { statusPageRoutes } from './status-pages/admin/routes.js';

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
