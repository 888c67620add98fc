import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { CheckType } from '../../protocol/index.js';
import type { ServiceContext } from '../context.js';
import { alertChannelsForNewCheck } from '../alerting/index.js';
import { credentialViewOf } from '../platform/http/auth.js';
import { answerNotModified, queryStringOf, weakEtag } from '../platform/http/conditional.js';
import { badField, HttpError, notFound } from '../platform/http/errors.js';
import {
  IdParams,
  Ignored,
  IntegerIdParams,
  ResourceId,
  StringEnum,
  strict,
} from '../platform/http/schema-helpers.js';
import { readDoc } from '../platform/store/schema.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { validateBodyPart } from '../platform/http/validation.js';
import { defaultRunLocation, GroupQueries, loadRuntimes } from '../resources/index.js';
import {
  assertCheckReferences,
  assertRuntimeFits,
  type CheckUpdateBody,
  mergeCheckUpdate,
  newCheckDoc,
  withGroupSettings,
} from './checks.js';
import { createCheck, presentChecks, updateCheck } from './lifecycle.js';
import { type CheckResponse, CheckResponseSchema } from './responses.js';
import { CheckQueries } from './store.js';
import { AutoAssignAlertsQuery, type SharedCheckFields } from './types/common.js';
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
  genericCreateRoute(app, ctx, multiStepRuntimes);
  listRoute(app, ctx, checks);
  for (const entry of CHECK_TYPE_REGISTRY) {
    await entry.routes?.(app, ctx, (accountId, id) => checks.get(accountId, id));
  }
  getRoute(app, ctx, checks);
  groupChecksRoutes(app, ctx, checks);
  updateRoutes(app, ctx, checks, multiStepRuntimes);
  deleteRoute(app, checks);
}

/**
 * A type's create body as its route takes it: the body of the registry entry, and `checkType`, which clients
 * send back with the rest (accepted when it names the route's type, and ignored).
 */
function routeCreateBody(entry: CheckTypeEntry): TSchema {
  let body = routeCreateBodies.get(entry);
  if (!body) {
    const { properties } = entry.createBody as unknown as TObject;
    body = Type.Object(
      { ...properties, checkType: Ignored(StringEnum([entry.checkType]), 'the route names the type') },
      strict,
    );
    routeCreateBodies.set(entry, body);
  }
  return body;
}

/** The body of `PUT /v1/checks/{path}/{id}`: the generic update body, `checkType` accepted when it is the type's. */
function routeUpdateBody(entry: CheckTypeEntry): TSchema {
  let body = routeUpdateBodies.get(entry);
  if (!body) {
    body = Type.Object(
      {
        ...UpdateAnyCheckBody.properties,
        checkType: Ignored(StringEnum([entry.checkType]), 'the route names the type'),
      },
      strict,
    );
    routeUpdateBodies.set(entry, body);
  }
  return body;
}

/** The per-type update bodies made so far (see routeCreateBodies). */
const routeUpdateBodies = new Map<CheckTypeEntry, TSchema>();

/**
 * The route create bodies made so far, one per type: one schema object each, so its validator is compiled once
 * (validators are cached by schema object), also by `POST /v1/checks`, which validates each body against it.
 */
const routeCreateBodies = new Map<CheckTypeEntry, TSchema>();

/**
 * A zero-valued `heartbeat` (every field 0 or ""), which the Go SDK marshals with every check whatever its
 * type, is no heartbeat: dropped before validation, so a type without one is not refused for it, and an ICMP
 * check keeps its own settings.
 */
async function dropZeroHeartbeat(request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | null | undefined;
  const heartbeat = body?.heartbeat;
  if (heartbeat === null || typeof heartbeat !== 'object' || Array.isArray(heartbeat)) return;
  if (Object.values(heartbeat).every((v) => v === 0 || v === '')) delete body!.heartbeat;
}

/**
 * Creates a check of `entry`'s type from a validated create body for `request`'s account (its `autoAssignAlerts`
 * query, its credential view): the check as `GET /v1/checks/{id}` answers it. The check also subscribes to the channels that take new checks on their own
 * (`autoAssignAlerts`, `autoSubscribe`), after its explicit ones.
 * @throws HttpError 400 naming the field (references, rules of the type, runtime).
 */
async function createOfType(
  ctx: ServiceContext,
  request: Pick<FastifyRequest, 'accountId' | 'viaWebSession'> & {
    query: { autoAssignAlerts?: boolean | undefined };
  },
  { checkType }: CheckTypeEntry,
  body: SharedCheckFields & Record<string, unknown>,
  multiStepRuntimes: MultiStepRuntimes,
): Promise<CheckResponse> {
  const now = new Date();
  const { accountId } = request;
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
  const [answer] = await presentChecks(ctx, accountId, [doc], credentialViewOf(request, ctx.apiCredentials));
  return answer!;
}

/** `POST /v1/checks/{path}` of one type (createOfType). @throws HttpError 400 naming the field. */
function createRoute(
  app: ServiceApp,
  ctx: ServiceContext,
  entry: CheckTypeEntry,
  multiStepRuntimes: MultiStepRuntimes,
): void {
  app.post(
    `/v1/checks/${entry.path}`,
    {
      config: { permission: 'write' },
      ...(entry.bodyLimitBytes === null ? {} : { bodyLimit: entry.bodyLimitBytes }),
      preValidation: dropZeroHeartbeat,
      schema: {
        tags: ['checks'],
        summary: `Create a ${entry.checkType} check`,
        body: routeCreateBody(entry),
        querystring: AutoAssignAlertsQuery,
        response: { 201: CheckResponseSchema },
      },
    },
    async (request, reply) => {
      const body = request.body as SharedCheckFields & Record<string, unknown>;
      return reply.code(201).send(await createOfType(ctx, request, entry, body, multiStepRuntimes));
    },
  );
}

/**
 * `POST /v1/checks`: the hosted API's deprecated create route (Terraform's `checkly_check`, the Go SDK's
 * `Create`), a check of any type named by the body's `checkType`; the body is then validated as that type's
 * create route validates it.
 * @throws HttpError 400 naming the field (`checkType` missing or unknown, then as the type's route).
 */
function genericCreateRoute(
  app: ServiceApp,
  ctx: ServiceContext,
  multiStepRuntimes: MultiStepRuntimes,
): void {
  app.post(
    '/v1/checks',
    {
      config: { permission: 'write' },
      bodyLimit: Math.max(...CHECK_TYPE_REGISTRY.map((e) => e.bodyLimitBytes ?? 0), 1024 * 1024),
      preValidation: dropZeroHeartbeat,
      schema: {
        tags: ['checks'],
        summary: 'Create a check of any type (deprecated: use the route of its type)',
        description:
          "The body is the create body of the type named by `checkType` (POST /v1/checks/{type}); kept for the hosted API's older clients.",
        deprecated: true,
        body: Type.Object(
          { checkType: StringEnum(CHECK_TYPE_REGISTRY.map((e) => e.checkType)) },
          { additionalProperties: true },
        ),
        querystring: AutoAssignAlertsQuery,
        response: { 201: CheckResponseSchema },
      },
    },
    async (request, reply) => {
      const entry = checkTypeEntry(request.body.checkType as CheckType);
      if (entry.bodyLimitBytes === null && bodyBytes(request) > 1024 * 1024) {
        throw new HttpError(
          'OUTPOST_ERR_PAYLOAD_TOO_LARGE',
          `a ${entry.checkType} check body is at most 1 MiB`,
        );
      }
      const body = validateBodyPart(routeCreateBody(entry), request.body, '') as SharedCheckFields &
        Record<string, unknown>;
      return reply.code(201).send(await createOfType(ctx, request, entry, body, multiStepRuntimes));
    },
  );
}

/** Size of the request's body as its `content-length` says (0 without one). */
function bodyBytes(request: FastifyRequest): number {
  return Number(request.headers['content-length'] ?? 0) || 0;
}

/**
 * Query of `GET /v1/checks`, as the hosted API has it: `limit` (1–100) and `page` (from 1) page the list
 * (without `limit`, every check), `tag` keeps checks holding every tag given (repeat it for several),
 * `checkType` one type, `search` checks whose name contains it (case-insensitive). Outpost adds `nextId`, the
 * opaque cursor a previous page answered (`x-next-id`), to walk every check by `limit` without repeats or gaps
 * while checks are created and deleted.
 */
const ListChecksQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1 })),
    tag: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 20 })),
    checkType: Type.Optional(StringEnum(CHECK_TYPE_REGISTRY.map((e) => e.checkType))),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    nextId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'Outpost: the cursor a previous page answered in `x-next-id`; the list goes on from there (needs `limit`; not with `page`)',
      }),
    ),
  },
  strict,
);

/**
 * The answer headers of a page that has a next one: `x-next-id`, the cursor, and `link` (RFC 8288) with the
 * next page's path and query (`rel="next"`): the same filters and `limit`, `nextId` in place of `page`.
 */
function nextPageHeaders(
  query: {
    limit?: number | undefined;
    tag?: string[] | undefined;
    checkType?: string | undefined;
    search?: string | undefined;
  },
  nextId: string,
): Record<string, string> {
  const params = new URLSearchParams();
  params.set('limit', String(query.limit));
  for (const t of query.tag ?? []) params.append('tag', t);
  if (query.checkType !== undefined) params.set('checkType', query.checkType);
  if (query.search !== undefined) params.set('search', query.search);
  params.set('nextId', nextId);
  return { 'x-next-id': nextId, link: `</v1/checks?${params.toString()}>; rel="next"` };
}

/**
 * `GET /v1/checks`: the account's checks, oldest first, filtered and paged by {@link ListChecksQuery} in the
 * store (CheckQueries.find): only the page's checks are read, opened and presented. A page that has a next one
 * answers its cursor (nextPageHeaders); the body is the array of checks, as without paging.
 * @throws HttpError 400 naming `nextId` (not a cursor this service answered), `limit` (missing with `nextId`)
 *   or `page` (above 1 with `nextId`).
 */
function listRoute(app: ServiceApp, ctx: ServiceContext, checks: CheckQueries): void {
  app.get(
    '/v1/checks',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['checks'],
        summary: 'List checks',
        description:
          'Oldest first. With `limit`, a page: the `page`th, or the one after the cursor `nextId`; a page followed by more answers `x-next-id` (that cursor) and `link` (`rel="next"`). Without `limit`, every check. Outpost answers an `ETag` and, to a request whose `If-None-Match` names it, `304 Not Modified` without a body.',
        querystring: ListChecksQuery,
        response: { 200: Type.Array(CheckResponseSchema) },
      },
    },
    async (request, reply) => {
      const { limit, page = 1, tag, checkType, search, nextId } = request.query;
      if (nextId !== undefined && limit === undefined) {
        throw badField('limit', 'is required with nextId', 'required', 'querystring');
      }
      if (nextId !== undefined && page > 1) {
        throw badField('page', 'cannot be given with nextId', 'nextId', 'querystring');
      }
      const found = await checks.find(
        request.accountId,
        { tags: tag, checkType, search },
        limit === undefined ? undefined : { limit, page, nextId },
      );
      if (found.nextId !== null) reply.headers(nextPageHeaders(request.query, found.nextId));
      const presented = await presentChecks(
        ctx,
        request.accountId,
        found.docs,
        credentialViewOf(request, ctx.apiCredentials),
      );
      // The ETag is the answer's own (its bytes as the schema writes them, with the account and query): what a
      // check shows also moves with its heartbeat, its alert channels and the agents serving its locations, so
      // no cheaper read vouches for it. A 304 still reads the page but sends nothing.
      const body = reply.serialize(presented);
      const etag = weakEtag(['checks', request.accountId, queryStringOf(request), body]);
      if (answerNotModified(request, reply, etag)) return reply;
      // A string with its JSON type set is sent as it is, not serialized again.
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );
}

/** `GET /v1/checks/{id}`. @throws HttpError 404 when the check is not in the account. */
function getRoute(app: ServiceApp, ctx: ServiceContext, checks: CheckQueries): void {
  app.get(
    '/v1/checks/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['checks'],
        summary: 'Get a check',
        params: IdParams,
        response: { 200: CheckResponseSchema },
      },
    },
    async (request) => {
      const doc = await checks.get(request.accountId, request.params.id);
      const [answer] = await presentChecks(
        ctx,
        request.accountId,
        [doc],
        credentialViewOf(request, ctx.apiCredentials),
      );
      return answer!;
    },
  );
}

/**
 * `GET /v1/check-groups/{id}/checks` and `GET /v1/check-groups/{id}/checks/{checkId}`: the group's checks, oldest
 * first, with the group's settings applied (withGroupSettings).
 * @throws HttpError 404 when the group is not in the account, or the check is not in the group.
 */
function groupChecksRoutes(app: ServiceApp, ctx: ServiceContext, checks: CheckQueries): void {
  const groupOf = async (accountId: string, id: number) => {
    const row = await new GroupQueries(ctx.db).get(accountId, id);
    if (!row) throw notFound('check group', String(id));
    return readDoc(row.doc) as unknown as Record<string, unknown>;
  };
  app.get(
    '/v1/check-groups/:id/checks',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['check groups'],
        summary: "List a group's checks, the group's settings applied",
        params: IntegerIdParams,
        response: { 200: Type.Array(CheckResponseSchema) },
      },
    },
    async (request) => {
      const group = await groupOf(request.accountId, request.params.id);
      const members = (await checks.list(request.accountId)).filter((c) => c.groupId === request.params.id);
      return presentChecks(
        ctx,
        request.accountId,
        members.map((c) => withGroupSettings(c, group)),
        credentialViewOf(request, ctx.apiCredentials),
      );
    },
  );
  app.get(
    '/v1/check-groups/:id/checks/:checkId',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['check groups'],
        summary: "Get one of a group's checks, the group's settings applied",
        params: Type.Object({ id: IntegerIdParams.properties.id, checkId: ResourceId }, strict),
        response: { 200: CheckResponseSchema },
      },
    },
    async (request) => {
      const group = await groupOf(request.accountId, request.params.id);
      const check = await checks.get(request.accountId, request.params.checkId);
      if (check.groupId !== request.params.id) throw notFound('check', request.params.checkId);
      const [answer] = await presentChecks(
        ctx,
        request.accountId,
        [withGroupSettings(check, group)],
        credentialViewOf(request, ctx.apiCredentials),
      );
      return answer!;
    },
  );
}

/**
 * `PUT /v1/checks/{id}`, and `PUT /v1/checks/{path}/{id}` of each type (the routes the hosted API's clients
 * update monitors by; a check of another type is not found there): the body merged into the stored check
 * (mergeCheckUpdate), checked as its type's (its `heartbeat` against the type's `updateHeartbeat` first),
 * stored with what its type writes beside it.
 * @throws HttpError 404 when the check is not in the account (or not of the route's type); 400 naming the field.
 */
function updateRoutes(
  app: ServiceApp,
  ctx: ServiceContext,
  checks: CheckQueries,
  multiStepRuntimes: MultiStepRuntimes,
): void {
  // The largest a check of any type takes: a Playwright check suite's project (types/registry.ts).
  const bodyLimit = Math.max(...CHECK_TYPE_REGISTRY.map((e) => e.bodyLimitBytes ?? 0), 1024 * 1024);
  const routes: { url: string; entry: CheckTypeEntry | null }[] = [
    { url: '/v1/checks/:id', entry: null },
    ...CHECK_TYPE_REGISTRY.map((entry) => ({ url: `/v1/checks/${entry.path}/:id`, entry })),
  ];
  for (const { url, entry } of routes) {
    app.put(
      url,
      {
        config: { permission: 'write' },
        bodyLimit,
        preValidation: dropZeroHeartbeat,
        schema: {
          tags: ['checks'],
          summary: entry ? `Update a ${entry.checkType} check` : 'Update a check',
          params: IdParams,
          body: entry ? routeUpdateBody(entry) : UpdateAnyCheckBody,
          querystring: AutoAssignAlertsQuery,
          response: { 200: CheckResponseSchema },
        },
      },
      async (request) => {
        const now = new Date();
        const { accountId } = request;
        // Either body schema: the generic update body, or it with `checkType` ignored (routeUpdateBody).
        const body = request.body as CheckUpdateBody;
        const before = await checks.get(accountId, request.params.id);
        if (entry && before.checkType !== entry.checkType) {
          throw notFound(`${entry.checkType} check`, request.params.id);
        }
        await assertCheckReferences(ctx.db, accountId, body);
        const { updateHeartbeat } = checkTypeEntry(before.checkType);
        // Left out, the check keeps its own (the hosted API's current document requires neither it nor `script`).
        if (updateHeartbeat && body.heartbeat !== undefined) {
          validateBodyPart(updateHeartbeat, body.heartbeat, 'heartbeat');
        }
        const doc = mergeCheckUpdate(before, body, now);
        await assertRuntimeFits(ctx.db, accountId, doc, multiStepRuntimes);
        await updateCheck(ctx, accountId, before, doc, now.getTime());
        const [answer] = await presentChecks(
          ctx,
          accountId,
          [doc],
          credentialViewOf(request, ctx.apiCredentials),
        );
        return answer!;
      },
    );
  }
}

/** `DELETE /v1/checks/{id}`: 204. @throws HttpError 404 when the check is not in the account. */
function deleteRoute(app: ServiceApp, checks: CheckQueries): void {
  app.delete(
    '/v1/checks/:id',
    {
      config: { permission: 'write' },
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
