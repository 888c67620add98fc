import type { FastifyReply } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { notFound } from '../platform/http/errors.js';
import type { TriggerKind } from './store.js';
import { Triggers } from './triggers.js';

type CheckCall = { Params: { checkId: string; token: string } };
type GroupCall = { Params: { groupId: string; token: string } };

/**
 * The trigger URLs, without a key (docs/api.md, "Triggers"): `GET` or `POST`
 * `/checks/{checkId}/trigger/{token}` and `/check-groups/{groupId}/trigger/{token}` start the runs and answer
 * 200 `{ checkSessionIds }`. A wrong token, an unknown or deleted target and a deleted trigger all answer the
 * same 404 (nothing tells them apart); a second call within 10 s answers 429 with `Retry-After`. A body is
 * ignored.
 */
export const triggerPublicRoutes: RoutePlugin = async (app, ctx) => {
  const triggers = new Triggers(ctx);

  const handle = async (reply: FastifyReply, kind: TriggerKind, targetId: string, token: string) => {
    const call = await triggers.call(kind, targetId, token, Date.now());
    if (!call) throw notFound('trigger', targetId);
    if (call.outcome === 'RATE_LIMITED') {
      return reply
        .code(429)
        .header('retry-after', String(Math.max(1, Math.ceil(call.retryAfterMs / 1000))))
        .type('text/plain; charset=utf-8')
        .send('rate limited: a trigger starts runs at most once every 10 s');
    }
    return reply
      .code(200)
      .header('cache-control', 'no-store')
      .send({ checkSessionIds: call.checkSessionIds });
  };

  const options = { schema: { hide: true }, exposeHeadRoute: false } as const;
  app.route<CheckCall>({
    ...options,
    method: ['GET', 'POST'],
    url: '/checks/:checkId/trigger/:token',
    handler: (request, reply) => handle(reply, 'CHECK', request.params.checkId, request.params.token),
  });
  app.route<GroupCall>({
    ...options,
    method: ['GET', 'POST'],
    url: '/check-groups/:groupId/trigger/:token',
    handler: (request, reply) => {
      const { groupId, token } = request.params;
      // A group id is a positive integer written plainly: anything else is no group.
      if (!/^[1-9]\d{0,9}$/.test(groupId)) throw notFound('trigger', groupId);
      return handle(reply, 'GROUP', groupId, token);
    },
  });
};
