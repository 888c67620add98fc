import type { ServiceModule } from '../module.js';
import { agenticRecorder } from './recorder.js';
import { agenticUsageRoutes } from './usage-routes.js';

/**
 * AGENTIC checks (docs/checks.md, "Agentic"): the result recorder that stores each run's model usage and
 * applies the script change it reported, and `GET /v1/agentic-usage`. What an AGENTIC check does beyond its
 * document (its version counting on update, its repairs and their routes) is its check type's lifecycle
 * hooks (check-type.ts), which the checks module's registry entry carries.
 */
export const agenticModule: ServiceModule = {
  name: 'agentic',
  routes: agenticUsageRoutes,
  recorders: () => [agenticRecorder()],
};
