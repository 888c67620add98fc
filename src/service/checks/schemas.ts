// The checks module's published schemas (docs/architecture.md, "Modules"): leaf files only (TypeBox, the
// protocol, the platform's schema helpers), so other modules' schemas and the web app import them without
// the module's runtime.
export { ApiKeyValueSchema, BasicAuthSchema } from './types/api.js';
export {
  AlertSettingsSchema,
  assertionPresentationFields,
  EnvironmentVariableSchema,
  RetryStrategySchema,
} from './types/common.js';
// A check's shared answer under the web app's name: the union of the types' answers (responses.ts) loads the
// type registry, no leaf; its static type is this schema's.
export { CheckSharedResponseSchema as CheckResponseSchema } from './types/response-schemas.js';
