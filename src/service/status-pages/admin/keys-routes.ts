import { Type } from '@sinclair/typebox';
import { monotonicDate } from '../../../common/clock.js';
import type { ServiceContext } from '../../context.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { ErrorBodySchema, NoContent, ResourceId, strict } from '../../platform/http/schema-helpers.js';
import { StatusPageKeySchema } from './schema.js';
import { MAX_PAGE_KEYS, StatusPages } from './status-pages.js';

const tags = ['status pages'];

const PageKeyParams = Type.Object({ id: ResourceId, keyId: ResourceId }, strict);
const PageIdParams = Type.Object({ id: ResourceId }, strict);

/**
 * Access keys of private status pages (docs/api.md, "Status pages and services"; docs/status-pages.md,
 * "Private pages"): `POST /v1/status-pages/{id}/keys` makes one (shown in clear once),
 * `DELETE /v1/status-pages/{id}/keys/{keyId}` revokes one at once (every visitor it let in loses access).
 */
export async function statusPageKeyRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const pages = new StatusPages(ctx.db, ctx.customDomains, () => ctx.statusPageDomains.pagesChanged());

  app.post(
    '/v1/status-pages/:id/keys',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Add an access key to a private status page',
        description: `The answer holds the key in clear (\`key\`) once; later answers show only \`maskedKey\`. 400 when the page is public; 409 when it already holds ${MAX_PAGE_KEYS} keys.`,
        params: PageIdParams,
        response: { 201: StatusPageKeySchema, 400: ErrorBodySchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const key = await pages.addKey(request.accountId, id, monotonicDate());
      ctx.log.info(
        { statusPageId: id, keyId: key.id, accountId: request.accountId },
        'status page key added',
      );
      return reply.code(201).send(key);
    },
  );

  app.delete(
    '/v1/status-pages/:id/keys/:keyId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete an access key of a status page',
        description:
          'Visitors the key let in (its session cookies and feed tokens) get the page’s 404 from their next request.',
        params: PageKeyParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { id, keyId } = request.params;
      await pages.deleteKey(request.accountId, id, keyId);
      ctx.log.info({ statusPageId: id, keyId, accountId: request.accountId }, 'status page key deleted');
      return reply.code(204).send();
    },
  );
}
