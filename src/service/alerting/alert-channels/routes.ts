import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { credentialViewOf } from '../../platform/http/auth.js';
import {
  AlertChannels,
  assertOutboundUrl,
  assertSubscriptions,
  type ChannelDoc,
  newChannelDoc,
  presentChannel,
  validateConfig,
} from './alert-channels.js';
import type { ServiceContext } from '../../context.js';
import { badField } from '../../platform/http/errors.js';
import { NoContent, IntegerIdParams } from '../../platform/http/schema-helpers.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { AlertChannelSchema, CreateAlertChannelBody, UpdateAlertChannelBody } from './schema.js';

const tags = ['alert channels'];

/** `POST /v1/alert-channels`: 201 with the channel. @throws HttpError 400 for a config, url or subscription refused. */
function createChannelRoute(app: ServiceApp, ctx: ServiceContext, channels: AlertChannels): void {
  app.post(
    '/v1/alert-channels',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create an alert channel',
        body: CreateAlertChannelBody,
        response: { 201: AlertChannelSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const config = validateConfig(body.type, body.config);
      assertOutboundUrl(body.type, config, ctx.outbound);
      await assertSubscriptions(ctx.db, request.accountId, body.subscriptions ?? []);
      const row = await channels.insert(request.accountId, newChannelDoc(body, config), Date.now());
      ctx.log.info(
        { alertChannelId: row.id, type: body.type, accountId: request.accountId },
        'alert channel created',
      );
      return reply
        .code(201)
        .send(
          presentChannel(
            row,
            await channels.targets(request.accountId),
            credentialViewOf(request, ctx.apiCredentials),
            ctx.db,
          ),
        );
    },
  );
}

/** `GET /v1/alert-channels` (a page, oldest first) and `GET /v1/alert-channels/{id}` (404 when not the account's). */
function readChannelRoutes(app: ServiceApp, ctx: ServiceContext, channels: AlertChannels): void {
  app.get(
    '/v1/alert-channels',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List alert channels',
        querystring: PageQuery(10),
        response: { 200: Type.Array(AlertChannelSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await channels.list(request.accountId, query.limit, offsetOf(query));
      const targets = await channels.targets(request.accountId);
      return rows.map((row) =>
        presentChannel(row, targets, credentialViewOf(request, ctx.apiCredentials), ctx.db),
      );
    },
  );

  app.get(
    '/v1/alert-channels/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Retrieve an alert channel',
        params: IntegerIdParams,
        response: { 200: AlertChannelSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return presentChannel(
        await channels.get(request.accountId, id),
        await channels.targets(request.accountId),
        credentialViewOf(request, ctx.apiCredentials),
        ctx.db,
      );
    },
  );
}

/**
 * `PUT /v1/alert-channels/{id}`: given fields replace stored ones; a changed `type` needs a `config`.
 * @throws HttpError 404 when not the account's; 400 for a config, url or subscription refused.
 */
function updateChannelRoute(app: ServiceApp, ctx: ServiceContext, channels: AlertChannels): void {
  app.put(
    '/v1/alert-channels/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Update an alert channel',
        description:
          'Fields given replace the stored ones. A secret sent back as the mask `*****` keeps its stored value. ' +
          'Changing `type` needs a `config` of the new type.',
        params: IntegerIdParams,
        body: UpdateAlertChannelBody,
        response: { 200: AlertChannelSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const body = request.body;
      const before = await channels.get(request.accountId, id);
      const stored = channels.open(before);
      const type = body.type ?? stored.type;
      if (type !== stored.type && body.config === undefined) {
        throw badField(
          'config',
          `is required when type changes (from ${stored.type} to ${type})`,
          'required',
        );
      }
      const config = body.config === undefined ? stored.config : validateConfig(type, body.config, stored);
      if (body.config !== undefined) assertOutboundUrl(type, config, ctx.outbound);
      if (body.subscriptions) await assertSubscriptions(ctx.db, request.accountId, body.subscriptions);
      const doc: ChannelDoc = { ...stored, ...body, type, config };
      const row = await channels.update(request.accountId, before, doc, Date.now());
      return presentChannel(
        row,
        await channels.targets(request.accountId),
        credentialViewOf(request, ctx.apiCredentials),
        ctx.db,
      );
    },
  );
}

/** `DELETE /v1/alert-channels/{id}`: 204. @throws HttpError 404 when not the account's. */
function deleteChannelRoute(app: ServiceApp, channels: AlertChannels): void {
  app.delete(
    '/v1/alert-channels/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete an alert channel',
        params: IntegerIdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      await channels.delete(request.accountId, id);
      return reply.code(204).send();
    },
  );
}

/**
 * Alert channels (docs/api.md, "Alert channel"; `POST /v1/alert-channels`,
 * `GET /v1/alert-channels/{id}`): create (201), list (`limit` 1–100, default
 * 10; `page`), read, partial update, delete (204). `config` is validated per
 * `type`; integration secrets are answered masked and kept when sent back masked. A WEBHOOK or SLACK `url`
 * naming an address the outbound policy refuses (`ctx.outbound`) is a 400 on `config.url`.
 */
export async function alertChannelRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const channels = new AlertChannels(ctx.db);
  createChannelRoute(app, ctx, channels);
  readChannelRoutes(app, ctx, channels);
  updateChannelRoute(app, ctx, channels);
  deleteChannelRoute(app, channels);
}
