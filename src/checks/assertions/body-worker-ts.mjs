// The body worker from TypeScript sources (vitest, tsx): registers tsx in this worker thread,
// then serves body-worker.ts. The build runs body-worker.js directly.
import { register } from 'tsx/esm/api';

register();
const { default: bodyWork } = await import('./body-worker.ts');
export default bodyWork;
