export { summarizeCertificate } from './certificate.js';
export {
  connectionOf,
  createCheckConnector,
  createTracingConnector,
  REDIRECT_STATUSES,
  type HopTrace,
  startTrace,
  type TracingConnectorOptions,
} from './connector.js';
export { scrubHeaders } from './headers.js';
export { type RequestOnceOptions, type RequestOnceResult, requestOnce } from './request.js';
export { timingsOf } from './timings.js';
