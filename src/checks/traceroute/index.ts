export { createTracerouteExecutor, TracerouteExecutor, type TracerouteExecutorOptions } from './executor.js';
