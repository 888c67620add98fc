import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { credentialViewOf } from '../../platform/http/auth.js';
import {
  assertGroupReferences,
  CheckGroups,
  mergeGroupUpdate,
  newGroupDoc,
  presentGroup,
} from './check-groups.js';
import type { ServiceContext } from '../../context.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { CheckGroupSchema, CreateCheckGroupBody, UpdateCheckGroupBody } from './schema.js';
import { ErrorBodySchema, NoContent, IntegerIdParams } from '../../platform/http/schema-helpers.js';

const tags = ['check groups'];

/**
 * Check groups (docs/api.md, "Check group"; `GET /v1/check-groups/{id}`): create (201),
 * list (`limit` 1–100, default 10; `page` from 1), read, partial update, delete
 * (204; 409 while checks still belong to the group). Ids of other accounts are 404.
 */
export async function checkGroupRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const groups = new CheckGroups(ctx.db);

  app.post(
    '/v1/check-groups',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a check group',
        body: CreateCheckGroupBody,
        response: { 201: CheckGroupSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      await assertGroupReferences(ctx.db, request.accountId, body);
      const row = await groups.insert(request.accountId, newGroupDoc(body), Date.now());
      ctx.log.info({ groupId: row.id, accountId: request.accountId }, 'check group created');
      return reply.code(201).send(presentGroup(row, credentialViewOf(request, ctx.apiCredentials), ctx.db));
    },
  );

  app.get(
    '/v1/check-groups',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List check groups',
        querystring: PageQuery(10),
        response: { 200: Type.Array(CheckGroupSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await groups.list(request.accountId, query.limit, offsetOf(query));
      return rows.map((row) => presentGroup(row, credentialViewOf(request, ctx.apiCredentials), ctx.db));
    },
  );

  app.get(
    '/v1/check-groups/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Retrieve a check group',
        params: IntegerIdParams,
        response: { 200: CheckGroupSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return presentGroup(
        await groups.get(request.accountId, id),
        credentialViewOf(request, ctx.apiCredentials),
        ctx.db,
      );
    },
  );

  app.put(
    '/v1/check-groups/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Update a check group',
        description:
          'Fields given replace the stored ones (objects and arrays whole); fields left out keep their value.',
        params: IntegerIdParams,
        body: UpdateCheckGroupBody,
        response: { 200: CheckGroupSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const body = request.body;
      const before = await groups.get(request.accountId, id);
      const doc = mergeGroupUpdate(groups.open(before), body);
      await assertGroupReferences(ctx.db, request.accountId, body);
      return presentGroup(
        await groups.update(request.accountId, before, doc, Date.now()),
        credentialViewOf(request, ctx.apiCredentials),
        ctx.db,
      );
    },
  );

  app.delete(
    '/v1/check-groups/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete a check group',
        description: 'Refused with 409 while checks still belong to the group (their `groupId`).',
        params: IntegerIdParams,
        response: { 204: NoContent, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      await groups.delete(request.accountId, id);
      return reply.code(204).send();
    },
  );
}
