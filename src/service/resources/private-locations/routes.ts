import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { PrivateLocations } from './private-locations.js';
import { ErrorBodySchema, NoContent, strict, IdParams } from '../../platform/http/schema-helpers.js';
import {
  CreatePrivateLocationBody,
  LocationKeyParams,
  PrivateLocationKeySchema,
  PrivateLocationSchema,
  UpdatePrivateLocationBody,
} from './schema.js';

const tags = ['private locations'];

/**
 * Private locations (docs/architecture.md, docs/protocol.md; not in the spec's endpoint list): create
 * (201, with its first key in clear once), list, read, rename (PUT; `slugName`
 * immutable), delete (204; its keys stop working at once), and key rotation:
 * add a key (201; at most two, else 409), delete a key (204).
 */
export async function privateLocationRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const locations = new PrivateLocations(ctx.db);

  app.post(
    '/v1/private-locations',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'Create a private location',
        description: 'The answer holds the first key in clear (`keys[0].rawKey`); it is never shown again.',
        body: CreatePrivateLocationBody,
        response: { 201: PrivateLocationSchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const location = await locations.create(request.accountId, request.body, Date.now());
      ctx.log.info(
        { privateLocationId: location.id, slug: location.slugName, accountId: request.accountId },
        'private location created',
      );
      return reply.code(201).send(location);
    },
  );

  app.get(
    '/v1/private-locations',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List private locations',
        querystring: Type.Object({}, strict),
        response: { 200: Type.Array(PrivateLocationSchema) },
      },
    },
    async (request) => locations.list(request.accountId, Date.now()),
  );

  app.get(
    '/v1/private-locations/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Retrieve a private location',
        params: IdParams,
        response: { 200: PrivateLocationSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return locations.get(request.accountId, id, Date.now());
    },
  );

  app.put(
    '/v1/private-locations/:id',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'Update a private location',
        description:
          'Changes `name` and/or `icon`. `slugName` cannot change: sending another value is a 400.',
        params: IdParams,
        body: UpdatePrivateLocationBody,
        response: { 200: PrivateLocationSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return locations.update(request.accountId, id, request.body, Date.now());
    },
  );

  app.delete(
    '/v1/private-locations/:id',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'Delete a private location',
        description:
          'Its keys stop working at once; checks naming its slug keep the slug and their runs expire unclaimed.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      await locations.delete(request.accountId, id);
      return reply.code(204).send();
    },
  );
  registerKeyRoutes(app, ctx, locations);
}

/** Key rotation: add a key (201, at most two, else 409) and delete one (204). */
function registerKeyRoutes(app: ServiceApp, ctx: ServiceContext, locations: PrivateLocations): void {
  app.post(
    '/v1/private-locations/:id/keys',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'Add a key to a private location',
        description:
          'For rotation: a location holds at most two keys (409 beyond). The answer holds the key in clear once.',
        params: IdParams,
        response: { 201: PrivateLocationKeySchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const key = await locations.addKey(request.accountId, id, Date.now());
      ctx.log.info(
        { privateLocationId: id, keyId: key.id, accountId: request.accountId },
        'private location key added',
      );
      return reply.code(201).send(key);
    },
  );

  app.delete(
    '/v1/private-locations/:id/keys/:keyId',
    {
      config: { permission: 'admin' },
      schema: {
        tags,
        summary: 'Delete a key of a private location',
        description: 'Agents using the key get 401 from their next request.',
        params: LocationKeyParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { id, keyId } = request.params;
      await locations.deleteKey(request.accountId, id, keyId);
      ctx.log.info(
        { privateLocationId: id, keyId, accountId: request.accountId },
        'private location key deleted',
      );
      return reply.code(204).send();
    },
  );
}
