import { Type } from '@sinclair/typebox';
import type { RoutePlugin } from '../module.js';
import { strict } from '../platform/http/schema-helpers.js';
import { UsageSchema } from './schemas.js';
import { AgenticQueries } from './store.js';

/** Query of `GET /v1/agentic-usage`: `month` as `YYYY-MM` (UTC), default the current one. */
const UsageQuery = Type.Object(
  { month: Type.Optional(Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', maxLength: 7 })) },
  strict,
);

/** `YYYY-MM` of a time, UTC. */
function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/**
 * `GET /v1/agentic-usage?month=YYYY-MM` (docs/api.md, "Agentic checks"): the account's AGENTIC runs whose
 * results were stored in that UTC month, with their model calls, the calls' time and tokens summed (one
 * aggregate over `agentic_runs`, written with each result). 400 naming `month` when it is not `YYYY-MM`.
 */
export const agenticUsageRoutes: RoutePlugin = async (app, ctx) => {
  app.get(
    '/v1/agentic-usage',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['checks'],
        summary: "The account's AGENTIC runs and model usage in a month",
        querystring: UsageQuery,
        response: { 200: UsageSchema },
      },
    },
    async (request) => {
      const month = request.query.month ?? monthOf(Date.now());
      const [year, mm] = month.split('-').map(Number) as [number, number];
      const fromMs = Date.UTC(year, mm - 1, 1);
      const toMs = Date.UTC(year, mm, 1);
      const sums = await new AgenticQueries(ctx.db).usage(request.accountId, fromMs, toMs);
      return { month, ...sums };
    },
  );
};
