import { Type } from '@sinclair/typebox';
import { alertChannelsForNewCheck } from '../alert-channels/alert-channels.js';
import {
  alertChannelsView,
  assertCheckReferences,
  assertRuntimeFits,
  type CheckDoc,
  mergeCheckUpdate,
  newCheckDoc,
  presentCheck,
} from './checks.js';
import { CheckStore } from './store.js';
import { CHECK_TYPE_REGISTRY } from './check-types.js';
import { loadRuntimes } from '../runtimes/runtimes.js';
import { notFound } from '../../http/errors.js';
import { AutoAssignAlertsQuery, UpdateCheckBody } from './schema.js';
import { IdParams } from '../../http/schema-helpers.js';
import { CheckResponseSchema } from '../../http/responses.js';
import type { ServiceApp } from '../../http/service-app.js';
import type { ServiceContext } from '../../context.js';

/**
 * Check routes (docs/api.md, "Checks"): create, one route per type of the registry
 * (`POST /v1/checks/{path}`, check-types.ts), read, list, update, delete. Runtimes are read once,
 * here, to know which have `multiStepSupport`.
 * @throws OutpostError OUTPOST_ERR_CONFIG when a runtime.json is invalid (see loadRuntimes).
 */
export async function checkRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const checks = new CheckStore(ctx.db);
  const present = async (accountId: string, doc: CheckDoc) =>
    presentCheck(doc, await alertChannelsView(ctx.db, accountId, doc.alertChannelSubscriptions));

  const multiStepRuntimes = new Set(
    loadRuntimes()
      .filter((r) => r.multiStepSupport)
      .map((r) => r.name as string),
  );

  for (const { checkType, path, createBody, bodyLimitBytes } of CHECK_TYPE_REGISTRY) {
    app.post(
      `/v1/checks/${path}`,
      {
        ...(bodyLimitBytes === null ? {} : { bodyLimit: bodyLimitBytes }),
        schema: {
          tags: ['checks'],
          summary: `Create a ${checkType} check`,
          body: createBody,
          querystring: AutoAssignAlertsQuery,
          response: { 201: CheckResponseSchema },
        },
      },
      async (request, reply) => {
        const now = new Date();
        const body = request.body;
        await assertCheckReferences(ctx.db, request.accountId, body);
        // Channels the new check subscribes to on its own (autoAssignAlerts, autoSubscribe), after its explicit ones.
        const explicit = body.alertChannelSubscriptions ?? [];
        const automatic = (
          await alertChannelsForNewCheck(ctx.db, request.accountId, request.query.autoAssignAlerts !== false)
        ).filter((a) => !explicit.some((e) => e.alertChannelId === a.alertChannelId));
        const doc = newCheckDoc(
          checkType,
          { ...body, alertChannelSubscriptions: [...explicit, ...automatic] },
          now,
        );
        await assertRuntimeFits(ctx.db, request.accountId, doc, multiStepRuntimes);
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
    async (request) => present(request.accountId, await checks.get(request.accountId, request.params.id)),
  );

  app.put(
    '/v1/checks/:id',
    {
      // The largest a check of any type takes: a Playwright check suite's project (check-types.ts).
      bodyLimit: Math.max(...CHECK_TYPE_REGISTRY.map((e) => e.bodyLimitBytes ?? 0), 1024 * 1024),
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
      const now = new Date();
      const before = await checks.get(request.accountId, request.params.id);
      await assertCheckReferences(ctx.db, request.accountId, request.body);
      const doc = mergeCheckUpdate(before, request.body, now);
      await assertRuntimeFits(ctx.db, request.accountId, doc, multiStepRuntimes);
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
      const { id } = request.params;
      if (!(await checks.delete(request.accountId, id))) throw notFound('check', id);
      return reply.code(204).send(null);
    },
  );
}
