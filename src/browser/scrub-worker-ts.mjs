// The artifact worker from TypeScript sources (vitest, tsx): registers tsx in this worker thread,
// then serves scrub-worker.ts. The build runs scrub-worker.js directly.
import { register } from 'tsx/esm/api';

register();
const { default: artifactWork } = await import('./scrub-worker.ts');
export default artifactWork;
