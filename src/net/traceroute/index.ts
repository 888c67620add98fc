export { formatRouteTrace } from './format.js';
export { type ProbeAnswer, TRACE_PROTOCOLS, type TraceProtocol } from './probe-socket.js';
export {
  type RouteHop,
  type RouteProbe,
  type RouteTrace,
  type TraceRouteOptions,
  traceRoute,
} from './trace.js';
