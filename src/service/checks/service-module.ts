import type { ServiceModule } from '../module.js';
import { checkRoutes } from './routes.js';

/**
 * Checks (docs/checks.md): their documents, one schema per check type (types/), the check-type registry
 * every other part asks about a type, and `/v1/checks`.
 */
export const checksModule: ServiceModule = {
  name: 'checks',
  routes: checkRoutes,
};
