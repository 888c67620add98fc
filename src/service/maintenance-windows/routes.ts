import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../context.js';
import { offsetOf, PageQuery } from '../platform/http/pagination.js';
import { IntegerIdParams, NoContent } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { MaintenanceWindows, presentWindow } from './maintenance-windows.js';
import {
  CreateMaintenanceWindowBody,
  MaintenanceWindowSchema,
  UpdateMaintenanceWindowBody,
} from './schemas.js';

const tags = ['maintenance-windows'];

/**
 * Maintenance windows (docs/api.md, "Maintenance windows"): create (201), list (`limit` 1–100, default 10;
 * `page`), read, partial update, delete (204). Each answer says whether the window is on now and its
 * occurrence in progress or next.
 */
export async function maintenanceWindowRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const windows = new MaintenanceWindows(ctx.db);

  app.post(
    '/v1/maintenance-windows',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a maintenance window',
        body: CreateMaintenanceWindowBody,
        response: { 201: MaintenanceWindowSchema },
      },
    },
    async (request, reply) => {
      const now = Date.now();
      const row = await windows.create(request.accountId, request.body, now);
      return reply.code(201).send(presentWindow(row, now));
    },
  );

  app.get(
    '/v1/maintenance-windows',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List maintenance windows',
        querystring: PageQuery(10),
        response: { 200: Type.Array(MaintenanceWindowSchema) },
      },
    },
    async (request) => {
      const now = Date.now();
      const rows = await windows.list(request.accountId, request.query.limit, offsetOf(request.query));
      return rows.map((row) => presentWindow(row, now));
    },
  );

  app.get(
    '/v1/maintenance-windows/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Retrieve a maintenance window',
        params: IntegerIdParams,
        response: { 200: MaintenanceWindowSchema },
      },
    },
    async (request) => presentWindow(await windows.get(request.accountId, request.params.id), Date.now()),
  );

  app.put(
    '/v1/maintenance-windows/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Update a maintenance window',
        description: 'Fields left out keep their value.',
        params: IntegerIdParams,
        body: UpdateMaintenanceWindowBody,
        response: { 200: MaintenanceWindowSchema },
      },
    },
    async (request) => {
      const now = Date.now();
      const row = await windows.update(request.accountId, request.params.id, request.body, now);
      return presentWindow(row, now);
    },
  );

  app.delete(
    '/v1/maintenance-windows/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete a maintenance window',
        params: IntegerIdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await windows.delete(request.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
}
