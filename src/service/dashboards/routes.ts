import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../context.js';
import { offsetOf, PageQuery } from '../platform/http/pagination.js';
import { NoContent } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { Dashboards } from './dashboards.js';
import { CreateDashboardBody, DashboardIdParams, DashboardSchema, UpdateDashboardBody } from './schema.js';

const tags = ['dashboards'];

/**
 * Dashboards (docs/api.md, "Dashboards"): create (201), list (`limit` 1–100, default 10; `page`), read,
 * update (fields left out keep their value) and delete (204), by the string `dashboardId`.
 */
export async function dashboardRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const dashboards = new Dashboards(ctx.db);

  app.post(
    '/v1/dashboards',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a dashboard',
        body: CreateDashboardBody,
        response: { 201: DashboardSchema },
      },
    },
    async (request, reply) => {
      const created = await dashboards.create(request.accountId, request.body, Date.now());
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/dashboards',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List dashboards',
        querystring: PageQuery(10),
        response: { 200: Type.Array(DashboardSchema) },
      },
    },
    async (request) => dashboards.list(request.accountId, request.query.limit, offsetOf(request.query)),
  );

  app.get(
    '/v1/dashboards/:dashboardId',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Retrieve a dashboard',
        params: DashboardIdParams,
        response: { 200: DashboardSchema },
      },
    },
    async (request) => dashboards.get(request.accountId, request.params.dashboardId),
  );

  app.put(
    '/v1/dashboards/:dashboardId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Update a dashboard',
        params: DashboardIdParams,
        body: UpdateDashboardBody,
        response: { 200: DashboardSchema },
      },
    },
    async (request) =>
      dashboards.update(request.accountId, request.params.dashboardId, request.body, Date.now()),
  );

  app.delete(
    '/v1/dashboards/:dashboardId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete a dashboard',
        params: DashboardIdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await dashboards.delete(request.accountId, request.params.dashboardId);
      return reply.code(204).send();
    },
  );
}
