import { Gauge, Registry } from 'prom-client';
import type { ServiceContext } from '../../context.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { JobQueries } from './store.js';

/**
 * `GET /metrics`: the account's job queues in Prometheus text, for an autoscaler of agents (KEDA's
 * Prometheus trigger) and for dashboards. Needs an API key like `/v1` (Prometheus: `authorization:
 * credentials_file`), and answers that account's queues only:
 * - `outpost_service_queued_jobs{location}`: jobs queued for the location, due and not claimed yet;
 * - `outpost_service_queue_oldest_seconds{location}`: how long the oldest of them has waited, seconds.
 * Read from the store, so every replica on one PostgreSQL store answers the same figures (aggregate with
 * `max`, not `sum`). Not in the OpenAPI document: it is no resource of the hosted API.
 */
export async function queueMetricsRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  app.get('/metrics', { config: { permission: 'read' }, schema: { hide: true } }, async (request, reply) => {
    const nowMs = Date.now();
    const rows = await new JobQueries(ctx.db).queuedByLocation(request.accountId, nowMs);
    const registry = new Registry();
    const queued = new Gauge({
      name: 'outpost_service_queued_jobs',
      help: 'Jobs queued for a run location, due and not claimed by an agent yet.',
      labelNames: ['location'],
      registers: [registry],
    });
    const oldest = new Gauge({
      name: 'outpost_service_queue_oldest_seconds',
      help: 'How long the oldest job queued for a run location has waited, seconds.',
      labelNames: ['location'],
      registers: [registry],
    });
    for (const row of rows) {
      queued.set({ location: row.location }, row.queued);
      oldest.set({ location: row.location }, Math.max(0, (nowMs - row.oldestEnqueuedAtMs) / 1000));
    }
    return reply
      .header('content-type', registry.contentType)
      .header('cache-control', 'no-store')
      .send(await registry.metrics());
  });
}
