import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../platform/http/errors.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { ErrorBodySchema, NoContent } from '../../platform/http/schema-helpers.js';
import { CreateVariableBody, UpdateVariableBody, VariableKeyParams, VariableSchema } from './schema.js';
import { presentVariable, Variables } from './variables.js';

const tags = ['environment variables'];

/**
 * Account-level environment variables (docs/api.md, "Environment variable" and
 * "Environment variables"): list, create, read, replace, delete, addressed by
 * `key`. Secret values are never returned (see presentVariable).
 */
export async function variableRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const variables = new Variables(ctx.db);

  app.get(
    '/v1/variables',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List environment variables',
        querystring: PageQuery(10),
        response: { 200: Type.Array(VariableSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await variables.list(request.accountId, { limit: query.limit, offset: offsetOf(query) });
      return rows.map(presentVariable);
    },
  );

  app.post(
    '/v1/variables',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create an environment variable',
        body: CreateVariableBody,
        response: { 201: VariableSchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const row = await variables.create(request.accountId, request.body, Date.now());
      ctx.log.info(
        { accountId: request.accountId, key: row.key, secret: row.secret === 1 },
        'variable created',
      );
      return reply.code(201).send(presentVariable(row));
    },
  );

  app.get(
    '/v1/variables/:key',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Get an environment variable',
        params: VariableKeyParams,
        response: { 200: VariableSchema },
      },
    },
    async (request) => {
      const { key } = request.params;
      return presentVariable(await variables.get(request.accountId, key));
    },
  );

  app.put(
    '/v1/variables/:key',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Update an environment variable',
        params: VariableKeyParams,
        body: UpdateVariableBody,
        response: { 200: VariableSchema },
      },
    },
    async (request) => {
      const { key } = request.params;
      const row = await variables.update(request.accountId, key, request.body, Date.now());
      return presentVariable(row);
    },
  );

  app.delete(
    '/v1/variables/:key',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete an environment variable',
        params: VariableKeyParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { key } = request.params;
      if (!(await variables.delete(request.accountId, key))) throw notFound('variable', key);
      return reply.code(204).send();
    },
  );
}
