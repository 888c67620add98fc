import { routesOf, type ServiceModule } from '../module.js';
import { projectRoutes } from './routes.js';
import { storageRoutes } from './storage-routes.js';

/**
 * Projects (docs/api.md, "Projects (monitoring as code)"): the Checkly CLI's `deploy` and `destroy` of a
 * monitoring-as-code project, applied through the service's own routes, and its code-bundle upload.
 */
export const projectsModule: ServiceModule = {
  name: 'projects',
  routes: routesOf(storageRoutes, projectRoutes),
};
