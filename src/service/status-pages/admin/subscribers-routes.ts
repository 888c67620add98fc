import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../platform/http/errors.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import {
  IdParams,
  NoContent,
  Nullable,
  ResourceId,
  strict,
  Timestamp,
} from '../../platform/http/schema-helpers.js';
import { PageQueries } from './store.js';
import { SubscriberQueries } from './subscriber-store.js';

const tags = ['status pages'];

/** A subscriber as the API shows it; `services` null: the whole page. */
const SubscriberSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  services: Nullable(Type.Array(Type.String())),
  confirmed: Type.Boolean(),
  created_at: Timestamp,
  confirmed_at: Nullable(Timestamp),
});

const SubscriberParams = Type.Object({ id: ResourceId, subscriberId: ResourceId }, strict);

/**
 * The email subscribers of a status page (docs/api.md, "Status pages and services"; docs/status-pages.md,
 * "Subscriptions"): `GET /v1/status-pages/{id}/subscribers` (paged by `limit`/`page`, oldest first) and
 * `DELETE /v1/status-pages/{id}/subscribers/{subscriberId}` (204; 404 for an unknown page or subscriber).
 * Registered by the status pages' routes.
 */
export async function subscriberRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const pages = new PageQueries(ctx.db);
  const subscribers = new SubscriberQueries(ctx.db);

  app.get(
    '/v1/status-pages/:id/subscribers',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List the email subscribers of a status page',
        description:
          'Oldest first. `services`: the status-page services subscribed to, null for the whole page. Only `confirmed` subscribers are mailed.',
        params: IdParams,
        querystring: PageQuery(),
        response: { 200: Type.Array(SubscriberSchema) },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await pages.get(request.accountId, id))) throw notFound('status page', id);
      return subscribers.list(request.accountId, id, request.query.limit, offsetOf(request.query));
    },
  );

  app.delete(
    '/v1/status-pages/:id/subscribers/:subscriberId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete an email subscriber of a status page',
        description: 'Mails still queued for the subscriber are not sent.',
        params: SubscriberParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { id, subscriberId } = request.params;
      if (!(await pages.get(request.accountId, id))) throw notFound('status page', id);
      if (!(await subscribers.delete(id, subscriberId))) throw notFound('subscriber', subscriberId);
      ctx.log.info({ statusPageId: id, subscriberId, accountId: request.accountId }, 'subscriber deleted');
      return reply.code(204).send();
    },
  );
}
