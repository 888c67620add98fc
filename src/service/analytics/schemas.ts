// The analytics module's published schemas (docs/architecture.md, "Modules"): leaf files only (TypeBox, the
// protocol, the platform's schema helpers), so the web app imports them without the query engine.
export { AnalyticsResponseSchema } from './schema.js';
