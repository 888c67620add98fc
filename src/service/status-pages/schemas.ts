// The status-pages module's published schemas (docs/architecture.md, "Modules"): leaf files only (TypeBox,
// the protocol, the platform's schema helpers), so the web app imports them without the module's runtime.
export { StatusPageSchema } from './admin/schema.js';
export { IncidentSchema, IncidentUpdateSchema, ServiceSchema } from './incidents/schema.js';
