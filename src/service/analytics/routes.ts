import type { ServiceApp } from '../platform/http/service-app.js';
import { apiCheckAnalytics } from './api-checks.js';
import type { ServiceContext } from '../context.js';
import { AnalyticsQuerySchema, AnalyticsResponseSchema } from './schema.js';
import { IdParams } from '../platform/http/schema-helpers.js';

const tags = ['analytics'];

/**
 * Analytics of API-check results (docs/api.md, "Analytics"): `GET /v1/analytics/api-checks/{id}`.
 * 200 with the analytics response; 400 naming the parameter for a bad query; 404 when the
 * check is not in the account or is not an API or URL check. See apiCheckAnalytics.
 */
export async function analyticsRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/analytics/api-checks/:id',
    {
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
}
