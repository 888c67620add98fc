import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { ErrorBodySchema, NoContent, IntegerIdParams } from '../../platform/http/schema-helpers.js';
import { CreateSnippetBody, SnippetSchema, UpdateSnippetBody } from './schema.js';
import { assertScriptSize, presentSnippet, Snippets } from './snippets.js';

const tags = ['snippets'];

/**
 * Snippets (docs/api.md, "Snippets": `DELETE /v1/snippets/{id}`): reusable setup and
 * teardown code. Create (201), list (`limit` 1–100, default 10; `page`), read,
 * partial update, delete (204; 409 while a check or group uses it).
 */
export async function snippetRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const snippets = new Snippets(ctx.db);

  app.post(
    '/v1/snippets',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a snippet',
        body: CreateSnippetBody,
        response: { 201: SnippetSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      assertScriptSize(body.script);
      const row = await snippets.insert(request.accountId, body, Date.now());
      return reply.code(201).send(presentSnippet(row));
    },
  );

  app.get(
    '/v1/snippets',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List snippets',
        querystring: PageQuery(10),
        response: { 200: Type.Array(SnippetSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      return (await snippets.list(request.accountId, query.limit, offsetOf(query))).map(presentSnippet);
    },
  );

  app.get(
    '/v1/snippets/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Retrieve a snippet',
        params: IntegerIdParams,
        response: { 200: SnippetSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return presentSnippet(await snippets.get(request.accountId, id));
    },
  );

  app.put(
    '/v1/snippets/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Update a snippet',
        params: IntegerIdParams,
        body: UpdateSnippetBody,
        response: { 200: SnippetSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const body = request.body;
      assertScriptSize(body.script);
      return presentSnippet(await snippets.update(request.accountId, id, body, Date.now()));
    },
  );

  app.delete(
    '/v1/snippets/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete a snippet',
        description: 'Refused with 409 while a check or check group uses it as setup or teardown snippet.',
        params: IntegerIdParams,
        response: { 204: NoContent, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      await snippets.delete(request.accountId, id);
      return reply.code(204).send();
    },
  );
}
