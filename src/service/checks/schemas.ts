// The checks module's published schemas (docs/architecture.md, "Modules"): leaf files only (TypeBox, the
// protocol, the platform's schema helpers), so other modules' schemas and the web app import them without
// the module's runtime.
export { ApiKeyValueSchema, BasicAuthSchema } from './types/api.js';
export { AlertSettingsSchema, EnvironmentVariableSchema, RetryStrategySchema } from './types/common.js';
export { CheckResponseSchema } from './responses.js';
