import type { ServiceModule } from '../module.js';
import { maintenanceWindowRoutes } from './routes.js';

/**
 * Maintenance windows (docs/api.md, "Maintenance windows"): the `/v1/maintenance-windows` resource. The
 * scheduler and the alert recorder ask this module's index.ts whether a window pauses or silences a check.
 */
export const maintenanceWindowsModule: ServiceModule = {
  name: 'maintenance-windows',
  routes: maintenanceWindowRoutes,
};
