export { createSslExecutor, SslExecutor, type SslExecutorOptions } from './executor.js';
