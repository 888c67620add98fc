// What other modules may use of this one (docs/architecture.md, "Modules"): they import it from here
// only. Leaf files only (schemas, types, queries): a module's routes are registered through its
// ServiceModule (service-module.ts), so importing this file never loads them.
export {
  assertCheckReferences,
  assertRuntimeFits,
  newCheckDoc,
  openCheckSecrets,
  runLocationsOf,
} from './checks.js';
export type { CheckDoc } from './checks.js';
export { CheckQueries } from './store.js';
export { ApiKeyValueSchema, BasicAuthSchema } from './types/api.js';
export { AlertSettingsSchema, EnvironmentVariableSchema, RetryStrategySchema } from './types/common.js';
export { heartbeatExpectation, storedHeartbeat } from './types/heartbeat.js';
export type { CheckTypeHooks, CheckTypeWrite } from './types/hooks.js';
export { CHECK_TYPE_REGISTRY, RUNNABLE_CHECK_TYPES, checkTypeEntry, jobTimeoutMs } from './types/registry.js';
