import type { ServiceApp } from '../../platform/http/service-app.js';
import { Type } from '@sinclair/typebox';
import { CheckResults } from './check-results.js';
import type { ServiceContext } from '../../context.js';
import { CheckResultParams, CheckResultResponseSchema, CheckResultsQuery } from './schema.js';
import { CheckIdParams } from '../../platform/http/schema-helpers.js';

/**
 * Check results of scheduled and triggered runs alike (not in the spec; the field's
 * `GET /v1/check-results/{checkId}` and `…/{checkResultId}`). Artifact downloads are in
 * runs/artifact-routes.ts.
 */
export async function checkResultRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const results = new CheckResults(ctx.db);

  app.get(
    '/v1/check-results/:checkId',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['check results'],
        summary: 'List the results of a check, newest first',
        description:
          'Scheduled and triggered runs. Items leave out `logs` and HTTP bodies: read one result for them.',
        params: CheckIdParams,
        querystring: CheckResultsQuery,
        response: { 200: Type.Array(CheckResultResponseSchema) },
      },
    },
    async (request) => {
      const { checkId } = request.params;
      return results.list(request.accountId, checkId, request.query);
    },
  );

  app.get(
    '/v1/check-results/:checkId/:checkResultId',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['check results'],
        summary: 'Get one result of a check',
        description: 'With its logs, HTTP bodies and the download path of each artifact.',
        params: CheckResultParams,
        response: { 200: CheckResultResponseSchema },
      },
    },
    async (request) => {
      const { checkId, checkResultId } = request.params;
      return results.get(request.accountId, checkId, checkResultId);
    },
  );
}
