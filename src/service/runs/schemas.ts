// The run pipeline's published schemas (docs/architecture.md, "Modules"): leaf files only (TypeBox and the
// platform's schema helpers), so the web app imports them without the queue.
export { ExpiredRunSchema } from './expired/schema.js';
