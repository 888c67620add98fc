export {
  ApiExecutor,
  type ApiExecutorOptions,
  API_MAX_BODY_BYTES,
  createApiExecutor,
} from './executor.js';
export { runtimeVariables } from '../runtime-variables.js';
