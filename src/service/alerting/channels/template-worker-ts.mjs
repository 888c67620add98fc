// The template worker from TypeScript sources (vitest, tsx): registers tsx in this worker thread,
// then serves template-worker.ts. The build runs template-worker.js directly.
import { register } from 'tsx/esm/api';

register();
const { default: render } = await import('./template-worker.ts');
export default render;
