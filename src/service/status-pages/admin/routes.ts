import { monotonicDate } from '../../../common/clock.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { CursorQuery, cursorPage } from '../../platform/http/cursor.js';
import { notFound } from '../../platform/http/errors.js';
import { ErrorBodySchema, IdParams, NoContent } from '../../platform/http/schema-helpers.js';
import { ServiceSchema } from '../incidents/schema.js';
import {
  ServiceBodySchema,
  ServiceListQuery,
  ServiceWithChecksSchema,
  StatusPageSchema,
  statusPageBody,
} from './schema.js';
import { statusPageKeyRoutes } from './keys-routes.js';
import { StatusPageServices } from './status-page-services.js';
import { StatusPages } from './status-pages.js';
import { subscriberRoutes } from './subscribers-routes.js';

const tags = ['status pages'];

/**
 * Status pages, their services and the access keys of private pages (keys-routes.ts; docs/api.md,
 * "Status pages and services").
 * `/v1/status-pages/services` is a static route, so `/v1/status-pages/:id`
 * never captures it.
 */
export async function statusPageRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  // Every change of a page reloads the served custom domains before it is answered.
  const pages = new StatusPages(ctx.db, ctx.customDomains, () => ctx.statusPageDomains.pagesChanged());
  await statusPageKeyRoutes(app, ctx);
  pageCreateAndListRoutes(app, ctx, pages);
  serviceRoutes(app, new StatusPageServices(ctx.db));
  pageItemRoutes(app, ctx, pages);
  await subscriberRoutes(app, ctx);
}

/** `POST /v1/status-pages` and `GET /v1/status-pages`. */
function pageCreateAndListRoutes(app: ServiceApp, ctx: ServiceContext, pages: StatusPages): void {
  app.post(
    '/v1/status-pages',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a status page',
        description:
          'Cards list status-page services by id. A private page gets an access key, shown in clear only in this answer (`keys[0].key`). A `customDomain` starts `PENDING` until it is verified (`customDomainVerification`: the TXT record to add; then `POST /v1/status-pages/{id}/custom-domain/verify`), unless the operator’s allow-list covers it. 400 when `customDomain` is one of the service’s own host names; 409 when another status page (of any account) uses `url`.',
        body: statusPageBody(true),
        response: { 201: StatusPageSchema, 400: ErrorBodySchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const page = await pages.create(request.accountId, request.body, monotonicDate());
      ctx.log.info({ statusPageId: page.id, accountId: request.accountId }, 'status page created');
      return reply.code(201).send(page);
    },
  );

  app.get(
    '/v1/status-pages',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List status pages',
        description: 'Ordered by creation; `nextId` is an opaque cursor for the next page, null at the end.',
        querystring: CursorQuery,
        response: { 200: cursorPage(StatusPageSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const { entries, nextId } = await pages.list(request.accountId, query, Date.now());
      return { length: entries.length, entries, nextId };
    },
  );
}

/** The status-page services: `GET|POST /v1/status-pages/services`, `GET|PUT|DELETE /v1/status-pages/services/{id}`. */
function serviceRoutes(app: ServiceApp, services: StatusPageServices): void {
  app.get(
    '/v1/status-pages/services',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List status-page services',
        description:
          '`paginated` false answers every service at once, with `nextId` null. Each service lists its linked `checks` (`{ id, name, severity }`: the checks whose `triggerIncident` names it; an Outpost extension).',
        querystring: ServiceListQuery,
        response: { 200: cursorPage(ServiceWithChecksSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const { entries, nextId } = await services.list(request.accountId, query);
      return { length: entries.length, entries, nextId };
    },
  );

  app.post(
    '/v1/status-pages/services',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a status-page service',
        body: ServiceBodySchema,
        response: { 201: ServiceSchema },
      },
    },
    async (request, reply) => {
      const { name } = request.body;
      return reply.code(201).send(await services.create(request.accountId, name, monotonicDate().getTime()));
    },
  );

  app.get(
    '/v1/status-pages/services/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Get a status-page service',
        description:
          'With its linked `checks` (`{ id, name, severity }`: the checks whose `triggerIncident` names it, by name; an Outpost extension). Link or unlink a check with its `triggerIncident` (`PUT /v1/checks/{id}`).',
        params: IdParams,
        response: { 200: ServiceWithChecksSchema },
      },
    },
    async (request) => services.getWithChecks(request.accountId, request.params.id),
  );

  app.put(
    '/v1/status-pages/services/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Rename a status-page service',
        params: IdParams,
        body: ServiceBodySchema,
        response: { 200: ServiceWithChecksSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      await services.rename(request.accountId, id, request.body.name, Date.now());
      // Answered as GET answers it, linked checks included: what a client reads back after an update.
      return services.getWithChecks(request.accountId, id);
    },
  );

  app.delete(
    '/v1/status-pages/services/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete a status-page service',
        description:
          'Incidents that list the service lose the link. 409 while a card of a status page shows it (`attributes.statusPageIds`).',
        params: IdParams,
        response: { 204: NoContent, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      await services.delete(request.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
}

/** `GET|PUT|DELETE /v1/status-pages/{id}` and `POST /v1/status-pages/{id}/custom-domain/verify`. */
function pageItemRoutes(app: ServiceApp, ctx: ServiceContext, pages: StatusPages): void {
  app.get(
    '/v1/status-pages/:id',
    {
      config: { permission: 'read' },
      schema: { tags, summary: 'Get a status page', params: IdParams, response: { 200: StatusPageSchema } },
    },
    async (request) => pages.get(request.accountId, request.params.id, Date.now()),
  );

  app.put(
    '/v1/status-pages/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Update a status page',
        description:
          '`name`, `url` and `cards` are replaced; omitted optional fields keep their stored values. Cards sent with the `id` of one of the page’s cards keep it; others are new. A changed `customDomain` is `PENDING` again until verified; an unchanged one keeps its state. 400 when a new `customDomain` is one of the service’s own host names; 409 when another status page (of any account) uses `url`.',
        params: IdParams,
        body: statusPageBody(false),
        response: { 200: StatusPageSchema, 400: ErrorBodySchema, 409: ErrorBodySchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return pages.update(request.accountId, id, request.body, monotonicDate());
    },
  );

  app.post(
    '/v1/status-pages/:id/custom-domain/verify',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Verify the custom domain of a status page',
        description:
          'Checks the page’s `customDomain` now: `VERIFIED` when its TXT record `_outpost-challenge.{customDomain}` holds `customDomainVerification.value` (or the operator’s allow-list covers the domain) and no other status page holds the domain verified; the page is then served at the domain’s root. Otherwise it stays `PENDING`, with the reason in `customDomainProblem`. 400 when the page has no `customDomain`.',
        params: IdParams,
        response: { 200: StatusPageSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const page = await pages.verifyDomain(request.accountId, id, monotonicDate());
      ctx.log.info(
        { statusPageId: id, accountId: request.accountId, status: page.customDomainStatus },
        'status page custom domain checked',
      );
      return page;
    },
  );

  app.delete(
    '/v1/status-pages/:id',
    {
      config: { permission: 'write' },
      schema: { tags, summary: 'Delete a status page', params: IdParams, response: { 204: NoContent } },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await pages.delete(request.accountId, id))) throw notFound('status page', id);
      return reply.code(204).send();
    },
  );
}
