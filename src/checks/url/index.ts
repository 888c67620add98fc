export { createUrlExecutor, UrlExecutor, type UrlExecutorOptions } from './executor.js';
