import { routesOf, type ServiceModule } from '../module.js';
import { alertChannelRoutes } from './alert-channels/routes.js';
import { alertRoutes } from './check-alert-routes.js';
import { alertingRoutes } from './notification-routes.js';
import { alertRecorder } from './recorder.js';
import { ALERTING_RETENTION } from './retention.js';

/**
 * Alerting (docs/alerting.md): alert channels, the recorder that evaluates each result in its transaction
 * (engine.ts), the notifications and their delivery worker (named `delivery` in the context), and the
 * senders of each channel type (channels/).
 */
export const alertingModule: ServiceModule = {
  name: 'alerting',
  routes: routesOf(alertChannelRoutes, alertRoutes, alertingRoutes),
  // Alerting runs in each result's transaction (docs/alerting.md, "Exactly once").
  recorders: (ctx) => [alertRecorder({ appUrl: ctx.appUrl, onQueued: () => ctx.delivery.kick() })],
  retention: () => ALERTING_RETENTION,
};
