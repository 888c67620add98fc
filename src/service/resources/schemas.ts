// The resources module's published schemas (docs/architecture.md, "Modules"): leaf files only (TypeBox, the
// protocol, the platform's schema helpers, other modules' schemas.ts), so the web app imports them without
// the module's runtime.
export { AgentErrorReportSchema, AgentResponseSchema } from './agents/schema.js';
export { ApiKeySchema, CreatedApiKeySchema } from './api-keys/schema.js';
export { CheckGroupSchema } from './check-groups/schema.js';
export { CheckResultResponseSchema } from './check-results/schema.js';
export { CheckStatusSchema } from './check-statuses/schema.js';
export { ClientCertificateSchema } from './client-certificates/schema.js';
export { ErrorGroupSchema } from './error-groups/schema.js';
export { PrivateLocationKeySchema, PrivateLocationSchema } from './private-locations/schema.js';
export { RuntimeSchema } from './runtimes/schema.js';
export { SnippetSchema } from './snippets/schema.js';
export { VariableSchema } from './variables/schema.js';
