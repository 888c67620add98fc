export {
  AgenticExecutor,
  type AgenticExecutorOptions,
  createAgenticExecutor,
  NO_MODEL_MESSAGE,
} from './executor.js';
export { type ModelEndpoint, modelEndpointFromEnv } from './model-client.js';
