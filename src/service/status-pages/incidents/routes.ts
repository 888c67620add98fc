import { monotonicDate } from '../../../common/clock.js';
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../platform/http/errors.js';
import { Incidents } from './incidents.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { IdParams, NoContent } from '../../platform/http/schema-helpers.js';
import {
  CreateIncidentBody,
  IncidentDetailQuery,
  IncidentIdParams,
  IncidentPutQuery,
  IncidentPutResponseSchema,
  IncidentSchema,
  IncidentUpdateBodySchema,
  IncidentUpdateSchema,
  UpdateIncidentBody,
} from './schema.js';

const tags = ['incidents'];

/**
 * Incidents and incident updates (docs/api.md, "Incidents"). The detail operation,
 * whose path the spec does not show, is `GET /v1/incidents/{id}`.
 */
export async function incidentRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const incidents = new Incidents(ctx.db, () => ctx.delivery.kick());
  incidentCreateAndReadRoutes(app, ctx, incidents);
  incidentChangeRoutes(app, incidents);
}

/** `POST /v1/incidents`, `GET /v1/incidents` and `GET /v1/incidents/{id}`. */
function incidentCreateAndReadRoutes(app: ServiceApp, ctx: ServiceContext, incidents: Incidents): void {
  app.post(
    '/v1/incidents',
    {
      schema: {
        tags,
        summary: 'Create an incident',
        description:
          '`services` are status-page services: the pages showing them show the incident. `incidentUpdates` are the first updates, oldest first.',
        body: CreateIncidentBody,
        response: { 201: IncidentSchema },
      },
    },
    async (request, reply) => {
      const incident = await incidents.create(request.accountId, request.body, monotonicDate());
      ctx.log.info({ incidentId: incident.id, accountId: request.accountId }, 'incident created');
      return reply.code(201).send(incident);
    },
  );

  app.get(
    '/v1/incidents',
    {
      schema: {
        tags,
        summary: 'List incidents',
        description: 'Newest first, each with its latest update only.',
        querystring: PageQuery(),
        response: { 200: Type.Array(IncidentSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      return incidents.list(request.accountId, query.limit, offsetOf(query));
    },
  );

  app.get(
    '/v1/incidents/:id',
    {
      schema: {
        tags,
        summary: 'Get an incident',
        description:
          'Updates newest first: all of them with `includeAllIncidentUpdates=true`, else only the latest.',
        params: IdParams,
        querystring: IncidentDetailQuery,
        response: { 200: IncidentSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { includeAllIncidentUpdates } = request.query;
      return incidents.get(request.accountId, id, includeAllIncidentUpdates);
    },
  );
}

/** `PUT` and `DELETE /v1/incidents/{id}`, `POST /v1/incidents/{incidentId}/updates`. */
function incidentChangeRoutes(app: ServiceApp, incidents: Incidents): void {
  app.put(
    '/v1/incidents/:id',
    {
      schema: {
        tags,
        summary: 'Update an incident',
        description:
          '`probe=true` is a dry run: the body is validated and the answer is what would be stored, but nothing is written. `incidentUpdates` in the answer is the latest update’s description, or null.',
        params: IdParams,
        querystring: IncidentPutQuery,
        body: UpdateIncidentBody,
        response: { 200: IncidentPutResponseSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { probe } = request.query;
      return incidents.update(request.accountId, id, request.body, monotonicDate(), probe);
    },
  );

  app.delete(
    '/v1/incidents/:id',
    {
      schema: {
        tags,
        summary: 'Delete an incident with its updates',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await incidents.delete(request.accountId, id))) throw notFound('incident', id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/incidents/:incidentId/updates',
    {
      schema: {
        tags,
        summary: 'Add an incident update',
        description:
          'Answers 201 with an array holding the created update. A RESOLVED update sets the incident’s `stoppedAt` when it is null.',
        params: IncidentIdParams,
        body: IncidentUpdateBodySchema,
        response: { 201: Type.Array(IncidentUpdateSchema) },
      },
    },
    async (request, reply) => {
      const { incidentId } = request.params;
      const update = await incidents.addUpdate(request.accountId, incidentId, request.body, monotonicDate());
      return reply.code(201).send([update]);
    },
  );
}
