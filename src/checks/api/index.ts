export {
  ApiExecutor,
  type ApiExecutorOptions,
  API_MAX_BODY_BYTES,
  createApiExecutor,
  runtimeVariables,
} from './executor.js';
