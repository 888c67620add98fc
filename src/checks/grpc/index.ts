export { createGrpcExecutor, GrpcExecutor, type GrpcExecutorOptions, methodOf } from './executor.js';
