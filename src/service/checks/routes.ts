import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../context.js';
import { alertChannelsForNewCheck } from '../alerting/index.js';
import { notFound } from '../platform/http/errors.js';
import { IdParams } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { validateBodyPart } from '../platform/http/validation.js';
import { defaultRunLocation, loadRuntimes } from '../resources/index.js';
import { assertCheckReferences, assertRuntimeFits, mergeCheckUpdate, newCheckDoc } from './checks.js';
import { createCheck, presentChecks, updateCheck } from './lifecycle.js';
import { CheckResponseSchema } from './responses.js';
import { CheckQueries } from './store.js';
import { AutoAssignAlertsQuery } from './types/common.js';
import { CHECK_TYPE_REGISTRY, type CheckTypeEntry, checkTypeEntry } from './types/registry.js';
import { UpdateAnyCheckBody } from './types/update.js';

/** Names of the runtimes whose runtime.json says `multiStepSupport: true`. */
type MultiStepRuntimes = ReadonlySet<string>;

/**
 * Check routes (docs/api.md, "Checks"): create, one route per type of the registry
 * (`POST /v1/checks/{path}`, types/registry.ts), list, the types' own routes (CheckTypeHooks.routes), read,
 * update, delete. No route names a type: what a type does beyond its document is its registry entry's
 * hooks. Runtimes are read once, here, to know which have `multiStepSupport`.
 * @throws OutpostError OUTPOST_ERR_CONFIG when a runtime.json is invalid (see loadRuntimes).
 */
export async function checkRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const checks = new CheckQueries(ctx.db);
  const multiStepRuntimes: MultiStepRuntimes = new Set(
    loadRuntimes()
      .filter((r) => r.multiStepSupport)
      .map((r) => r.name as string),
  );
  for (const entry of CHECK_TYPE_REGISTRY) createRoute(app, ctx, entry, multiStepRuntimes);
  listRoute(app, ctx, checks);
  for (const entry of CHECK_TYPE_REGISTRY) {
    await entry.routes?.(app, ctx, (accountId, id) => checks.get(accountId, id));
  }
  getRoute(app, ctx, checks);
  updateRoute(app, ctx, checks, multiStepRuntimes);
  deleteRoute(app, checks);
}

/**
 * `POST /v1/checks/{path}` of one type: 201 with the check as `GET /v1/checks/{id}` answers it. The check
 * also subscribes to the channels that take new checks on their own (`autoAssignAlerts`, `autoSubscribe`),
 * after its explicit ones.
 * @throws HttpError 400 naming the field (schema, references, rules of the type, runtime).
 */
function createRoute(
  app: ServiceApp,
  ctx: ServiceContext,
  { checkType, path, createBody, bodyLimitBytes }: CheckTypeEntry,
  multiStepRuntimes: MultiStepRuntimes,
): void {
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
      const { accountId, body } = request;
      await assertCheckReferences(ctx.db, accountId, body);
      const explicit = body.alertChannelSubscriptions ?? [];
      const automatic = (
        await alertChannelsForNewCheck(ctx.db, accountId, request.query.autoAssignAlerts !== false)
      ).filter((a) => !explicit.some((e) => e.alertChannelId === a.alertChannelId));
      // A body naming no location runs where the embedded agent is (`local`), when there is one.
      const placed = (body.locations?.length ?? 0) + (body.privateLocations?.length ?? 0) > 0;
      const doc = newCheckDoc(
        checkType,
        {
          ...(placed ? {} : await defaultRunLocation(ctx.db, accountId)),
          ...body,
          alertChannelSubscriptions: [...explicit, ...automatic],
        },
        now,
      );
      await assertRuntimeFits(ctx.db, accountId, doc, multiStepRuntimes);
      await createCheck(ctx, accountId, doc, now.getTime());
      ctx.log.info({ checkId: doc.id, checkType, accountId }, 'check created');
      const [answer] = await presentChecks(ctx, accountId, [doc]);
      return reply.code(201).send(answer!);
    },
  );
}

/** `GET /v1/checks`: the account's checks, oldest first. */
function listRoute(app: ServiceApp, ctx: ServiceContext, checks: CheckQueries): void {
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
    async (request) => presentChecks(ctx, request.accountId, await checks.list(request.accountId)),
  );
}

/** `GET /v1/checks/{id}`. @throws HttpError 404 when the check is not in the account. */
function getRoute(app: ServiceApp, ctx: ServiceContext, checks: CheckQueries): void {
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
      const doc = await checks.get(request.accountId, request.params.id);
      const [answer] = await presentChecks(ctx, request.accountId, [doc]);
      return answer!;
    },
  );
}

/**
 * `PUT /v1/checks/{id}`: the body merged into the stored check (mergeCheckUpdate), checked as its type's
 * (its `heartbeat` against the type's `updateHeartbeat` first), stored with what its type writes beside it.
 * @throws HttpError 404 when the check is not in the account; 400 naming the field.
 */
function updateRoute(
  app: ServiceApp,
  ctx: ServiceContext,
  checks: CheckQueries,
  multiStepRuntimes: MultiStepRuntimes,
): void {
  app.put(
    '/v1/checks/:id',
    {
      // The largest a check of any type takes: a Playwright check suite's project (types/registry.ts).
      bodyLimit: Math.max(...CHECK_TYPE_REGISTRY.map((e) => e.bodyLimitBytes ?? 0), 1024 * 1024),
      schema: {
        tags: ['checks'],
        summary: 'Update a check',
        params: IdParams,
        body: UpdateAnyCheckBody,
        querystring: AutoAssignAlertsQuery,
        response: { 200: CheckResponseSchema },
      },
    },
    async (request) => {
      const now = new Date();
      const { accountId, body } = request;
      const before = await checks.get(accountId, request.params.id);
      await assertCheckReferences(ctx.db, accountId, body);
      const { updateHeartbeat } = checkTypeEntry(before.checkType);
      // Left out, the check keeps its own (the hosted API's current document requires neither it nor `script`).
      if (updateHeartbeat && body.heartbeat !== undefined) {
        validateBodyPart(updateHeartbeat, body.heartbeat, 'heartbeat');
      }
      const doc = mergeCheckUpdate(before, body, now);
      await assertRuntimeFits(ctx.db, accountId, doc, multiStepRuntimes);
      await updateCheck(ctx, accountId, before, doc, now.getTime());
      const [answer] = await presentChecks(ctx, accountId, [doc]);
      return answer!;
    },
  );
}

/** `DELETE /v1/checks/{id}`: 204. @throws HttpError 404 when the check is not in the account. */
function deleteRoute(app: ServiceApp, checks: CheckQueries): void {
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
