import { monotonicDate } from '../../../common/clock.js';
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../platform/http/errors.js';
import { Incidents } from './incidents.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { IdParams, NoContent } from '../../platform/http/schema-helpers.js';
import { CursorQuery, cursorPage } from '../../platform/http/cursor.js';
import {
  CreateIncidentBody,
  CreatePageIncidentBody,
  PageIncidentParams,
  PageIncidentUpdateBody,
  PageIncidentUpdateParams,
  PatchPageIncidentBody,
  PutPageIncidentBody,
  StatusPageIncidentSchema,
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
  pageIncidentRoutes(app, ctx, incidents);
  pageIncidentUpdateRoutes(app, incidents);
}

/** `POST /v1/incidents`, `GET /v1/incidents` and `GET /v1/incidents/{id}`. */
function incidentCreateAndReadRoutes(app: ServiceApp, ctx: ServiceContext, incidents: Incidents): void {
  app.post(
    '/v1/incidents',
    {
      config: { permission: 'write' },
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
      config: { permission: 'read' },
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
      config: { permission: 'read' },
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
      config: { permission: 'write' },
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
      config: { permission: 'write' },
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
      config: { permission: 'write' },
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

const pageTags = ['status page incidents'];

/**
 * The hosted API's status-page incident routes, which its CLI uses (docs/api.md, "Status-page incidents"):
 * `GET` (cursor) and `POST /v1/status-pages/incidents`, `GET`, `PUT`, `PATCH` and `DELETE
 * /v1/status-pages/incidents/{incidentId}`. The same incidents as `/v1/incidents`, shown with `severity`.
 * The literal path wins over `/v1/status-pages/{id}` (a status page's id is a UUID, never `incidents`).
 */
function pageIncidentRoutes(app: ServiceApp, ctx: ServiceContext, incidents: Incidents): void {
  app.get(
    '/v1/status-pages/incidents',
    {
      config: { permission: 'read' },
      schema: {
        tags: pageTags,
        summary: 'List incidents with their updates (cursor pages, oldest first)',
        querystring: CursorQuery,
        response: { 200: cursorPage(StatusPageIncidentSchema) },
      },
    },
    async (request) => incidents.pageForPage(request.accountId, request.query, Date.now()),
  );

  app.post(
    '/v1/status-pages/incidents',
    {
      config: { permission: 'write' },
      schema: {
        tags: pageTags,
        summary: 'Create an incident on status-page services',
        description:
          'Started now. `incidentUpdates` are the first updates, oldest first (status INVESTIGATING when left out).',
        body: CreatePageIncidentBody,
        response: { 201: StatusPageIncidentSchema },
      },
    },
    async (request, reply) => {
      const incident = await incidents.createForPage(request.accountId, request.body, monotonicDate());
      ctx.log.info({ incidentId: incident.id, accountId: request.accountId }, 'incident created');
      return reply.code(201).send(incident);
    },
  );

  app.get(
    '/v1/status-pages/incidents/:incidentId',
    {
      config: { permission: 'read' },
      schema: {
        tags: pageTags,
        summary: 'Get an incident with all its updates, newest first',
        params: PageIncidentParams,
        response: { 200: StatusPageIncidentSchema },
      },
    },
    async (request) => incidents.getForPage(request.accountId, request.params.incidentId, Date.now()),
  );

  for (const [method, body] of [
    ['PUT', PutPageIncidentBody],
    ['PATCH', PatchPageIncidentBody],
  ] as const) {
    app.route({
      method,
      url: '/v1/status-pages/incidents/:incidentId',
      config: { permission: 'write' },
      schema: {
        tags: pageTags,
        summary: method === 'PUT' ? 'Replace an incident' : 'Change some fields of an incident',
        description:
          'A severity moves the impact with it; `services` replaces the services. Updates have routes of their own.',
        params: PageIncidentParams,
        body,
        response: { 200: StatusPageIncidentSchema },
      },
      handler: async (request) =>
        incidents.editForPage(request.accountId, request.params.incidentId, request.body, monotonicDate()),
    });
  }

  app.delete(
    '/v1/status-pages/incidents/:incidentId',
    {
      config: { permission: 'write' },
      schema: {
        tags: pageTags,
        summary: 'Delete an incident with its updates',
        params: PageIncidentParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { incidentId } = request.params;
      if (!(await incidents.delete(request.accountId, incidentId))) throw notFound('incident', incidentId);
      return reply.code(204).send();
    },
  );
}

/**
 * `GET` and `POST /v1/status-pages/incidents/{incidentId}/incident-updates`, `GET`, `PUT` and `DELETE
 * …/incident-updates/{incidentUpdateId}` (docs/api.md, "Status-page incidents").
 */
function pageIncidentUpdateRoutes(app: ServiceApp, incidents: Incidents): void {
  const base = '/v1/status-pages/incidents/:incidentId/incident-updates';
  app.get(
    base,
    {
      config: { permission: 'read' },
      schema: {
        tags: pageTags,
        summary: 'List the updates of an incident, newest first',
        params: PageIncidentParams,
        response: { 200: Type.Array(IncidentUpdateSchema) },
      },
    },
    async (request) => incidents.updatesOf(request.accountId, request.params.incidentId),
  );

  app.post(
    base,
    {
      config: { permission: 'write' },
      schema: {
        tags: pageTags,
        summary: 'Add an update to an incident',
        description:
          'Answers 200 with the update, as the hosted API does. A RESOLVED update sets the incident’s `stoppedAt` when it is null.',
        params: PageIncidentParams,
        body: PageIncidentUpdateBody,
        response: { 200: IncidentUpdateSchema },
      },
    },
    async (request) =>
      incidents.addPageUpdate(request.accountId, request.params.incidentId, request.body, monotonicDate()),
  );

  app.get(
    `${base}/:incidentUpdateId`,
    {
      config: { permission: 'read' },
      schema: {
        tags: pageTags,
        summary: 'Get an update of an incident',
        params: PageIncidentUpdateParams,
        response: { 200: IncidentUpdateSchema },
      },
    },
    async (request) => {
      const { incidentId, incidentUpdateId } = request.params;
      return incidents.getUpdate(request.accountId, incidentId, incidentUpdateId);
    },
  );

  app.put(
    `${base}/:incidentUpdateId`,
    {
      config: { permission: 'write' },
      schema: {
        tags: pageTags,
        summary: 'Change an update of an incident',
        description: 'Fields left out keep their values; no subscriber mail is sent for a change.',
        params: PageIncidentUpdateParams,
        body: PageIncidentUpdateBody,
        response: { 200: IncidentUpdateSchema },
      },
    },
    async (request) => {
      const { incidentId, incidentUpdateId } = request.params;
      return incidents.editUpdate(
        request.accountId,
        incidentId,
        incidentUpdateId,
        request.body,
        monotonicDate(),
      );
    },
  );

  app.delete(
    `${base}/:incidentUpdateId`,
    {
      config: { permission: 'write' },
      schema: {
        tags: pageTags,
        summary: 'Delete an update of an incident',
        params: PageIncidentUpdateParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { incidentId, incidentUpdateId } = request.params;
      if (!(await incidents.deleteUpdate(request.accountId, incidentId, incidentUpdateId))) {
        throw notFound('incident update', incidentUpdateId);
      }
      return reply.code(204).send();
    },
  );
}
