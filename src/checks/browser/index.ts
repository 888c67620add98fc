export {
  BrowserExecutor,
  type BrowserExecutorOptions,
  type BrowserLease,
  type BrowserPoolPort,
  captureMarginMs,
  createBrowserExecutor,
  FINISH_RESERVE_MS,
} from './executor.js';
