import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../context.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { ErrorBodySchema, NoContent } from '../../platform/http/schema-helpers.js';
import { ApiKeys } from './api-keys.js';
import { ApiKeyIdParams, ApiKeySchema, CreateApiKeyBody, CreatedApiKeySchema } from './schema.js';

const tags = ['API keys'];

/**
 * The account's API keys (docs/api.md, "API keys"): list (never a key nor its hash), create (the key
 * answered once, in `rawKey`), revoke (409 for the key of the request itself). The embedded agent's key is
 * not among them.
 */
export async function apiKeyRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const keys = new ApiKeys(ctx.db);

  app.get(
    '/v1/api-keys',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'List the account’s API keys (their first characters, never the keys)',
        response: { 200: Type.Array(ApiKeySchema) },
      },
    },
    async (request) => keys.list(request.accountId),
  );

  app.post(
    '/v1/api-keys',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'Create an API key; the answer holds the key once, in rawKey',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeySchema },
      },
    },
    async (request, reply) => {
      const principal = request.principal;
      // authorize() let only an ADMIN or OWNER key, or such a person, reach this route.
      const callerRole = principal.kind === 'private-location' ? 'READ_ONLY' : principal.role;
      // A person's key (made in their session, or with another key of theirs) is theirs.
      const userId =
        principal.kind === 'user'
          ? principal.id
          : principal.kind === 'api-key'
            ? (principal.userId ?? null)
            : null;
      const created = await keys.create(request.accountId, request.body, Date.now(), callerRole, userId);
      ctx.log.info({ accountId: request.accountId, apiKeyId: created.id }, 'API key created');
      return reply.code(201).send(created);
    },
  );

  app.delete(
    '/v1/api-keys/:id',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'Revoke an API key (not the one of the request)',
        params: ApiKeyIdParams,
        response: { 204: NoContent, 403: ErrorBodySchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const principal = request.principal;
      const callerRole = principal.kind === 'private-location' ? 'READ_ONLY' : principal.role;
      await keys.revoke(request.accountId, request.params.id, request.apiKeyId ?? null, callerRole);
      ctx.log.info({ accountId: request.accountId, apiKeyId: request.params.id }, 'API key revoked');
      return reply.code(204).send();
    },
  );
}
