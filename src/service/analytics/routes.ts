import type { ServiceApp } from '../platform/http/service-app.js';
import { apiCheckAnalytics } from './api-checks.js';
import type { ServiceContext } from '../context.js';
import { checksSummary } from './batch.js';
import {
  AnalyticsBatchBodySchema,
  AnalyticsBatchQuerySchema,
  AnalyticsBatchResponseSchema,
  AnalyticsQuerySchema,
  AnalyticsResponseSchema,
  MAX_BATCH_CHECKS,
} from './schema.js';
import { IdParams } from '../platform/http/schema-helpers.js';

const tags = ['analytics'];

/**
 * Analytics routes (docs/api.md, "Analytics"):
 * - `GET /v1/analytics/api-checks/{id}`: 200 with the analytics response; 400 naming the
 *   parameter for a bad query; 404 when the check is not in the account or is not an API or URL
 *   check. See apiCheckAnalytics.
 * - `POST /v1/analytics/checks`: 200 with one summary per check of the account among `checkIds`
 *   (others left out); 400 naming `checkIds` or `quickRange` for bad input. See checksSummary.
 */
export async function analyticsRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/analytics/api-checks/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Analytics of an API or URL check',
        description:
          "Aggregates the check's final results in a window into buckets. Timing metrics are milliseconds (bare names mean _avg; percentiles interpolate linearly between closest ranks; _stddev is the population standard deviation); availability is the percent of runs that passed or degraded; retries counts runs that needed more than one attempt. Buckets without results are left out.",
        params: IdParams,
        querystring: AnalyticsQuerySchema,
        response: { 200: AnalyticsResponseSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return apiCheckAnalytics(ctx.db, request.accountId, id, request.query, {
        workers: ctx.analyticsWorkers,
      });
    },
  );

  app.post(
    '/v1/analytics/checks',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Analytics summary of several checks',
        description: `Summarizes each check's final runs over a quick range: availability for every type; responseTime_avg, _p50, _p95, _p99 (milliseconds) for API, URL, TCP, DNS and browser checks; latency_avg, _p50, _p95, _p99 (milliseconds) and packetLoss_avg, _p95, _p99 (percent) for ICMP checks. A null value means no data in the range; an absent field means the metric does not apply to the check's type. Ids that are not a check of the account are left out of the answer. At most ${MAX_BATCH_CHECKS} ids.`,
        querystring: AnalyticsBatchQuerySchema,
        body: AnalyticsBatchBodySchema,
        response: { 200: AnalyticsBatchResponseSchema },
      },
    },
    async (request) =>
      checksSummary(
        ctx.db,
        request.accountId,
        request.body.checkIds,
        request.query.quickRange ?? 'last24Hours',
        { workers: ctx.analyticsWorkers },
      ),
  );
}
