import { routesOf, type ServiceModule } from '../module.js';
import { artifactRoutes } from './artifacts/routes.js';
import { expiredRunRoutes } from './expired/routes.js';
import { agentRoutes } from './queue/agent-routes.js';
import { queueMetricsRoutes } from './queue/metrics-routes.js';
import { runRetention } from './retention.js';
import { checkSessionRoutes } from './sessions/routes.js';
import { testRunRetention } from './test-runs/retention.js';
import { testRunRoutes } from './test-runs/routes.js';

/**
 * The run pipeline (docs/architecture.md, "The data path of one run"): the scheduler, the job queue and the
 * agents' routes (claim, lease, result), result ingestion with retries and the outbox, check sessions and
 * artifacts, and the runs that expired without running. Its workers (queue, outbox, scheduler) are named in the context.
 */
export const runsModule: ServiceModule = {
  name: 'runs',
  routes: routesOf(
    checkSessionRoutes,
    testRunRoutes,
    agentRoutes,
    artifactRoutes,
    expiredRunRoutes,
    queueMetricsRoutes,
  ),
  retention: ({ artifacts }) => [...runRetention(artifacts), ...testRunRetention(artifacts)],
};
