import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { ErrorGroups, presentErrorGroup } from './error-groups.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { IdParams, CheckIdParams } from '../../platform/http/schema-helpers.js';
import { ErrorGroupSchema, PatchErrorGroupBody } from './schema.js';

const tags = ['error groups'];

/**
 * Error groups (docs/api.md, "Error group" and "Error groups"): read, list (the account's, or a
 * check's), archive. Groups are created by the result hook (see errorGroupsHook), never by a route.
 */
export async function errorGroupRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const groups = new ErrorGroups(ctx.db);

  app.patch(
    '/v1/error-groups/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Archive or unarchive an error group',
        params: IdParams,
        body: PatchErrorGroupBody,
        response: { 200: ErrorGroupSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const row = await groups.patch(request.accountId, id, request.body, Date.now());
      return presentErrorGroup(row);
    },
  );

  app.get(
    '/v1/error-groups',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: "List the account's error groups, most recently seen first",
        description: 'The groups of every check the account has (a deleted check’s are not listed).',
        querystring: PageQuery(10),
        response: { 200: Type.Array(ErrorGroupSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await groups.list(request.accountId, { limit: query.limit, offset: offsetOf(query) });
      return rows.map(presentErrorGroup);
    },
  );

  app.get(
    '/v1/error-groups/checks/:checkId',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: "List a check's error groups, most recently seen first",
        params: CheckIdParams,
        querystring: PageQuery(10),
        response: { 200: Type.Array(ErrorGroupSchema) },
      },
    },
    async (request) => {
      const { checkId } = request.params;
      const query = request.query;
      const rows = await groups.listForCheck(request.accountId, checkId, {
        limit: query.limit,
        offset: offsetOf(query),
      });
      return rows.map(presentErrorGroup);
    },
  );

  app.get(
    '/v1/error-groups/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Get an error group',
        params: IdParams,
        response: { 200: ErrorGroupSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return presentErrorGroup(await groups.get(request.accountId, id));
    },
  );
}
