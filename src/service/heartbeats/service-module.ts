import type { ServiceModule } from '../module.js';
import { heartbeatPings } from './ping-routes.js';

/**
 * Heartbeat checks (docs/heartbeats.md): the keyless ping routes and the monitor that stores pings and
 * sweeps late heartbeats (named `heartbeats` in the context). What a HEARTBEAT check does beyond its
 * document (its heartbeat row, view fields and `/v1/checks/{id}/heartbeat-pings`) is its check type's
 * lifecycle hooks (check-type.ts), which the checks module's registry entry carries.
 */
export const heartbeatsModule: ServiceModule = {
  name: 'heartbeats',
  publicRoutes: heartbeatPings,
};
