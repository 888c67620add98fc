// The proto worker from TypeScript sources (vitest, tsx): registers tsx in this worker thread,
// then serves proto-worker.ts. The build runs proto-worker.js directly.
import { register } from 'tsx/esm/api';

register();
const { default: protoWork } = await import('./proto-worker.ts');
export default protoWork;
