import { Type } from '@sinclair/typebox';
import { alertChannelsForNewCheck } from '../alerting/alert-channels/alert-channels.js';
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
import { CHECK_TYPE_REGISTRY } from './types/registry.js';
import { loadRuntimes } from '../resources/runtimes/runtimes.js';
import { notFound } from '../platform/http/errors.js';
import { AutoAssignAlertsQuery, HeartbeatSchema, UpdateCheckBody } from './types/schema.js';
import { heartbeatExpectation, HeartbeatCheckSchema, storedHeartbeat } from './types/heartbeat.js';
import { HeartbeatMonitor, newPingToken } from '../heartbeats/monitor.js';
import { HeartbeatStore } from '../heartbeats/store.js';
import { validateBodyPart } from '../platform/http/validation.js';
import { IdParams } from '../platform/http/schema-helpers.js';
import { CheckResponseSchema } from '../platform/http/responses.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import type { ServiceContext } from '../context.js';

/**
 * Body of `PUT /v1/checks/{id}`: the generic update body, whose `heartbeat` also takes a HEARTBEAT
 * check's fields (`schedule`, `timezone`, `pingToken`); other types validate it as before.
 */
const UpdateBody = Type.Object(
  {
    ...UpdateCheckBody.properties,
    heartbeat: Type.Object(
      {
        ...HeartbeatSchema.properties,
        ...HeartbeatCheckSchema.properties,
        grace: Type.Optional(HeartbeatCheckSchema.properties.grace),
        graceUnit: Type.Optional(HeartbeatCheckSchema.properties.graceUnit),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/**
 * Check routes (docs/api.md, "Checks"): create, one route per type of the registry
 * (`POST /v1/checks/{path}`, check-types.ts), read, list, update, delete. Runtimes are read once,
 * here, to know which have `multiStepSupport`.
 * @throws OutpostError OUTPOST_ERR_CONFIG when a runtime.json is invalid (see loadRuntimes).
 */
export async function checkRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const checks = new CheckStore(ctx.db);
  const heartbeats = HeartbeatMonitor.of(ctx);
  type HeartbeatRow = Awaited<ReturnType<HeartbeatStore['byCheck']>>;
  // A HEARTBEAT check also answers its `pingUrl` and live state (docs/heartbeats.md).
  const heartbeatView = (doc: CheckDoc, row: HeartbeatRow) => {
    if (doc.checkType !== 'HEARTBEAT' || !row) return {};
    const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
    return {
      pingUrl: heartbeats.pingUrl(row.token),
      heartbeatState: {
        status: row.status,
        lastPingAt: iso(row.last_ping_at),
        startedAt: iso(row.started_at),
        dueAt: iso(row.due_at),
      },
    };
  };
  const present = async (accountId: string, doc: CheckDoc, row?: HeartbeatRow) => ({
    ...presentCheck(doc, await alertChannelsView(ctx.db, accountId, doc.alertChannelSubscriptions)),
    ...heartbeatView(
      doc,
      row ??
        (doc.checkType === 'HEARTBEAT'
          ? await new HeartbeatStore(ctx.db).byCheck(accountId, doc.id)
          : undefined),
    ),
  });

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
        if (checkType === 'HEARTBEAT') {
          const nowMs = heartbeats.now();
          const expectation = heartbeatExpectation(doc.heartbeat, nowMs);
          const token = newPingToken();
          doc.heartbeat = storedHeartbeat(doc.heartbeat as Record<string, unknown>, expectation, token);
          const due = await ctx.db.transaction().execute(async (tx) => {
            await new CheckStore(tx).insert(request.accountId, doc, now.getTime());
            return heartbeats.create(
              tx,
              { accountId: request.accountId, checkId: doc.id, token, expectation, activated: doc.activated },
              nowMs,
            );
          });
          heartbeats.deadlineMoved(due);
        } else {
          await checks.insert(request.accountId, doc, now.getTime());
        }
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
    async (request) => {
      const rows = new Map(
        (await new HeartbeatStore(ctx.db).ofAccount(request.accountId)).map((r) => [r.check_id, r]),
      );
      return Promise.all(
        (await checks.list(request.accountId)).map((doc) =>
          present(request.accountId, doc, rows.get(doc.id)),
        ),
      );
    },
  );

  app.get(
    '/v1/checks/:id/heartbeat-pings',
    {
      schema: {
        tags: ['checks'],
        summary: "A heartbeat check's last 100 pings, newest first",
        params: IdParams,
        response: {
          200: Type.Array(
            Type.Object({
              id: Type.Integer(),
              kind: Type.String(),
              exitCode: Type.Union([Type.Integer(), Type.Null()]),
              method: Type.String(),
              remoteAddress: Type.Union([Type.String(), Type.Null()]),
              userAgent: Type.Union([Type.String(), Type.Null()]),
              body: Type.Union([Type.String(), Type.Null()]),
              bodySizeBytes: Type.Integer(),
              receivedAt: Type.String({ format: 'date-time' }),
            }),
          ),
        },
      },
    },
    async (request) => {
      const doc = await checks.get(request.accountId, request.params.id);
      if (doc.checkType !== 'HEARTBEAT') throw notFound('heartbeat check', request.params.id);
      const rows = await new HeartbeatStore(ctx.db).pings(request.accountId, doc.id);
      return rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        exitCode: r.exit_code,
        method: r.method,
        remoteAddress: r.remote_address,
        userAgent: r.user_agent,
        body: r.body,
        bodySizeBytes: r.body_size_bytes,
        receivedAt: new Date(Number(r.received_at)).toISOString(),
      }));
    },
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
        body: UpdateBody,
        querystring: AutoAssignAlertsQuery,
        response: { 200: CheckResponseSchema },
      },
    },
    async (request) => {
      const now = new Date();
      const before = await checks.get(request.accountId, request.params.id);
      await assertCheckReferences(ctx.db, request.accountId, request.body);
      if (before.checkType !== 'HEARTBEAT') {
        // Other types keep the generic `heartbeat` object (ICMP's), as before.
        validateBodyPart(HeartbeatSchema, request.body.heartbeat, 'heartbeat');
        const doc = mergeCheckUpdate(before, request.body, now);
        await assertRuntimeFits(ctx.db, request.accountId, doc, multiStepRuntimes);
        await checks.update(request.accountId, before, doc, now.getTime());
        return present(request.accountId, doc);
      }
      const doc = mergeCheckUpdate(before, request.body, now);
      const nowMs = heartbeats.now();
      const expectation = heartbeatExpectation(doc.heartbeat, nowMs);
      // The token stays: a value sent back is ignored.
      const token = String((before.heartbeat as { pingToken?: unknown } | undefined)?.pingToken ?? '');
      doc.heartbeat = storedHeartbeat(doc.heartbeat as Record<string, unknown>, expectation, token);
      const due = await ctx.db.transaction().execute(async (tx) => {
        await new CheckStore(tx).update(request.accountId, before, doc, now.getTime());
        return heartbeats.reconfigure(
          tx,
          { accountId: request.accountId, checkId: doc.id, expectation, activated: doc.activated },
          nowMs,
        );
      });
      heartbeats.deadlineMoved(due);
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
