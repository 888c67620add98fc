import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { CHECK_TYPES, TRIGGER_SOURCES } from '../../../protocol/index.js';
import { sendError } from '../../platform/http/errors.js';
import {
  ErrorBodySchema,
  StringEnum,
  strict,
  ResourceId,
  Defaulted,
  NoContent,
} from '../../platform/http/schema-helpers.js';
import { CheckSessionSchema } from '../../platform/http/responses.js';
import { linkSignal } from '../../../common/linked-signal.js';
import { abortWhenClientGone } from '../../platform/http/client-gone.js';
import type { ServiceContext } from '../../context.js';

const TriggerBody = Type.Object(
  {
    target: Type.Optional(
      Type.Object(
        {
          checkId: Type.Optional(Type.Array(ResourceId, { maxItems: 1000 })),
          tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 100 })),
          groupId: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100 })),
          checkType: Type.Optional(Type.Array(StringEnum(CHECK_TYPES), { maxItems: CHECK_TYPES.length })),
          matchTags: Type.Optional(
            Type.Array(Type.Array(Type.String({ minLength: 1, maxLength: 129 }), { maxItems: 100 }), {
              maxItems: 100,
            }),
          ),
        },
        strict,
      ),
    ),
    triggerSource: Type.Optional(StringEnum(TRIGGER_SOURCES, { default: 'TRIGGER_API' })),
  },
  strict,
);

const SessionParams = Type.Object({ checkSessionId: ResourceId }, strict);

/** Body of `POST /v1/check-sessions/{id}/cancel`: `sequenceId`, the runs to cancel (all when left out). */
const CancelBody = Type.Object(
  { sequenceId: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100 })) },
  strict,
);

/** Check sessions: start, read, cancel, await completion (docs/api.md, "Check sessions"). */
export async function checkSessionRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  app.post(
    '/v1/check-sessions/trigger',
    {
      config: { permission: 'write' },
      schema: {
        tags: ['check sessions'],
        summary: 'Start check sessions for the checks matching the target filters',
        // Left out (no body, or an empty one as application/json): every activated check. Fastify validates an
        // absent body as null, so null is part of the schema.
        body: Type.Union([TriggerBody, Type.Null()]),
        response: { 201: Type.Object({ sessions: Type.Array(CheckSessionSchema) }) },
      },
    },
    async (request, reply) => {
      // The body may be left out: every activated check, triggered by the API.
      const sessions = await ctx.sessions.start(
        request.accountId,
        request.body?.target ?? {},
        request.body?.triggerSource ?? 'TRIGGER_API',
      );
      return reply.code(201).send({ sessions });
    },
  );

  app.get(
    '/v1/check-sessions/:checkSessionId',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['check sessions'],
        summary: 'Get a check session',
        params: SessionParams,
        response: { 200: CheckSessionSchema },
      },
    },
    async (request) => {
      const { checkSessionId } = request.params;
      return ctx.sessions.get(request.accountId, checkSessionId);
    },
  );

  app.post(
    '/v1/check-sessions/:checkSessionId/cancel',
    {
      config: { permission: 'write' },
      schema: {
        tags: ['check sessions'],
        summary: 'Cancel a check session',
        description:
          'Its queued runs are removed and the session ends CANCELLED at once; a run an agent already holds runs to its end (its result is stored). ' +
          '`sequenceId` cancels only those runs; the session then ends when none of it is left. A final session is left as it is. 204, or 404.',
        params: SessionParams,
        // Left out, or an empty application/json body: everything. Fastify validates an absent body as null.
        body: Type.Union([CancelBody, Type.Null()]),
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { checkSessionId } = request.params;
      await ctx.sessions.cancel(request.accountId, checkSessionId, request.body?.sequenceId);
      return reply.code(204).send();
    },
  );

  app.get(
    '/v1/check-sessions/:checkSessionId/completion',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['check sessions'],
        summary: 'Wait until a check session is final (408 with the error body while it still runs)',
        params: SessionParams,
        response: { 200: CheckSessionSchema, 408: ErrorBodySchema },
        querystring: Type.Object(
          { maxWaitSeconds: Defaulted(Type.Integer({ minimum: 1, maximum: 30, default: 30 })) },
          strict,
        ),
      },
    },
    async (request, reply) => {
      const { checkSessionId } = request.params;
      const { maxWaitSeconds } = request.query;
      // Stop waiting when the client goes away or the service closes.
      const wait = linkSignal([ctx.shutdown]);
      abortWhenClientGone(reply, wait);
      const session = await ctx.sessions
        .waitForCompletion(request.accountId, checkSessionId, maxWaitSeconds * 1000, wait.signal)
        .finally(() => wait.dispose());
      if (session) return session;
      return sendError(
        reply,
        'OUTPOST_ERR_COMPLETION_TIMEOUT',
        `check session ${checkSessionId} is still running after ${maxWaitSeconds} s; call again`,
        {
          checkSessionId,
          retryable: true,
        },
      );
    },
  );
}
