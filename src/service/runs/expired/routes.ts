import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../platform/http/errors.js';
import { iso, offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { ResourceId, strict } from '../../platform/http/schema-helpers.js';
import { ExpiredRunSchema } from './schema.js';
import { ExpiredRunQueries } from './store.js';

/**
 * `GET /v1/checks/{id}/expired-runs`: runs of a check that ended without running, newest first, with the
 * reason (docs/protocol.md, "Run locations"). An Outpost extension; kept as long as results.
 * @throws HttpError 404 when the account has no check `id`.
 */
export async function expiredRunRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/checks/:id/expired-runs',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['checks'],
        summary: 'List the runs of a check that ended without running, and why',
        params: Type.Object({ id: ResourceId }, strict),
        querystring: PageQuery(10),
        response: { 200: Type.Array(ExpiredRunSchema) },
      },
    },
    async (request) => {
      const queries = new ExpiredRunQueries(ctx.db);
      const { id } = request.params;
      if (!(await queries.checkExists(request.accountId, id))) throw notFound('check', id);
      const rows = await queries.page(request.accountId, id, request.query.limit, offsetOf(request.query));
      return rows.map((r) => ({
        id: r.id,
        checkRunId: r.round_id,
        checkSessionId: r.check_session_id,
        runLocation: r.location,
        reason: r.reason,
        expiredAt: iso(r.expired_at)!,
      }));
    },
  );
}
