import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { alertChannelsForNewCheck } from '../alert-channels/alert-channels.js';
import {
  alertChannelsView,
  assertCheckReferences,
  type CheckDoc,
  CheckStore,
  mergeCheckUpdate,
  newCheckDoc,
  presentCheck,
} from './checks.js';
import { notFound } from '../../http/errors.js';
import { CreateBrowserCheckBody } from './browser-check-schema.js';
import {
  AutoAssignAlertsQuery,
  CreateApiCheckBody,
  CreateDnsCheckBody,
  CreateIcmpCheckBody,
  CreateTcpCheckBody,
  CreateUrlCheckBody,
  UpdateCheckBody,
} from './schema.js';
import { IdParams } from '../../http/schema-helpers.js';
import { CheckResponseSchema } from '../../http/responses.js';
import type { ServiceContext } from '../../context.js';

type Subscription = { alertChannelId: number; activated: boolean };

/** Check routes: create (ICMP, DNS, TCP, URL, API, browser), read, list, update, delete (docs/api.md, "Checks"). */
export async function checkRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const checks = new CheckStore(ctx.db);
  const present = async (accountId: string, doc: CheckDoc) =>
    presentCheck(
      doc,
      await alertChannelsView(ctx.db, accountId, doc.alertChannelSubscriptions as Subscription[]),
    );

  const creates = [
    ['icmp', 'ICMP', CreateIcmpCheckBody],
    ['dns', 'DNS', CreateDnsCheckBody],
    ['tcp', 'TCP', CreateTcpCheckBody],
    ['url', 'URL', CreateUrlCheckBody],
    ['api', 'API', CreateApiCheckBody],
    ['browser', 'BROWSER', CreateBrowserCheckBody],
  ] as const;
  for (const [path, checkType, body] of creates) {
    app.post(
      `/v1/checks/${path}`,
      {
        schema: {
          tags: ['checks'],
          summary: `Create a ${checkType} check`,
          body,
          querystring: AutoAssignAlertsQuery,
          response: { 201: CheckResponseSchema },
        },
      },
      async (request, reply) => {
        const now = new Date();
        const body = request.body as Record<string, unknown> & { alertChannelSubscriptions?: Subscription[] };
        const { autoAssignAlerts } = request.query as { autoAssignAlerts: boolean };
        await assertCheckReferences(ctx.db, request.accountId, body);
        // Channels the new check subscribes to on its own (autoAssignAlerts, autoSubscribe), after its explicit ones.
        const explicit = body.alertChannelSubscriptions ?? [];
        const automatic = (
          await alertChannelsForNewCheck(ctx.db, request.accountId, autoAssignAlerts)
        ).filter((a) => !explicit.some((e) => e.alertChannelId === a.alertChannelId));
        const doc = newCheckDoc(
          checkType,
          { ...body, alertChannelSubscriptions: [...explicit, ...automatic] },
          now,
        );
        await checks.insert(request.accountId, doc, now.getTime());
        ctx.log.info({ checkId: doc.id, checkType, accountId: request.accountId }, 'check created');
        return reply.code(201).send(await present(request.accountId, doc));
      },
    );
  }

  app.get(
    '/v1/checks',
    {
      schema: {
        tags: ['checks'],
        summary: 'List checks',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: Type.Array(CheckResponseSchema) },
      },
    },
    async (request) =>
      Promise.all((await checks.list(request.accountId)).map((doc) => present(request.accountId, doc))),
  );

  app.get(
    '/v1/checks/:id',
    {
      schema: {
        tags: ['checks'],
        summary: 'Get a check',
        params: IdParams,
        response: { 200: CheckResponseSchema },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      return present(request.accountId, await checks.get(request.accountId, id));
    },
  );

  app.put(
    '/v1/checks/:id',
    {
      schema: {
        tags: ['checks'],
        summary: 'Update a check',
        params: IdParams,
        body: UpdateCheckBody,
        querystring: AutoAssignAlertsQuery,
        response: { 200: CheckResponseSchema },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const now = new Date();
      const before = await checks.get(request.accountId, id);
      await assertCheckReferences(ctx.db, request.accountId, request.body as Record<string, unknown>);
      const doc = mergeCheckUpdate(before, request.body as Record<string, unknown>, now);
      await checks.update(request.accountId, before, doc, now.getTime());
      return present(request.accountId, doc);
    },
  );

  app.delete(
    '/v1/checks/:id',
    {
      schema: {
        tags: ['checks'],
        summary: 'Delete a check',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      if (!(await checks.delete(request.accountId, id))) throw notFound('check', id);
      return reply.code(204).send();
    },
  );
}
