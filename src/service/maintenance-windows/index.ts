// What other modules may use of this one (docs/architecture.md, "Modules"): they import it from here
// only. Leaf files only: the module's routes are registered through its ServiceModule (service-module.ts).
export {
  type CoveringOccurrence,
  isPausedAt,
  isSilencedAt,
  MaintenanceLookup,
  maintenanceCovering,
  type MaintenanceTarget,
  type MaintenanceWindowDoc,
} from './maintenance-windows.js';
export { MaintenanceWindowQueries } from './store.js';
export { occurrenceAt, occurrencesFrom, type Occurrence } from './repeat.js';
