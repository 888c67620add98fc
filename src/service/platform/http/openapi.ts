import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../../common/paths.js';
import { ErrorBodySchema } from './schema-helpers.js';

/**
 * Operations the spec lists with method and path (docs/api.md, "Endpoints").
 * Every other operation in the document is marked `x-outpost-not-in-spec: true`:
 * the natural remaining operations of a resource, the agent protocol, and the
 * two operations whose path the spec does not show (session start, incident detail).
 */
export const SPEC_OPERATIONS = new Set([
  'POST /v1/checks/icmp',
  'POST /v1/checks/browser',
  'PUT /v1/checks/{id}',
  'DELETE /v1/checks/{id}',
  'GET /v1/check-groups/{id}',
  'POST /v1/alert-channels',
  'GET /v1/alert-channels/{id}',
  'POST /v1/status-pages',
  'GET /v1/status-pages',
  'GET /v1/status-pages/services',
  'PUT /v1/incidents/{id}',
  'POST /v1/incidents/{incidentId}/updates',
  'GET /v1/runtimes',
  'GET /v1/analytics/api-checks/{id}',
  'GET /v1/variables',
  'GET /v1/client-certificates/{id}',
  'DELETE /v1/snippets/{id}',
  'PATCH /v1/error-groups/{id}',
  'GET /v1/error-groups/checks/{checkId}',
  'GET /v1/check-sessions/{checkSessionId}',
  'GET /v1/check-sessions/{checkSessionId}/completion',
]);

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Registers @fastify/swagger so the OpenAPI 3.1 document is generated from the
 * same TypeBox schemas that validate requests; `app.swagger()` answers it, served at
 * `GET /openapi.json` (no authentication: it holds no account data).
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Outpost service API',
        version: VERSION,
        description:
          'Synthetic monitoring control plane. Contract: docs/api.md; extensions are marked x-outpost-not-in-spec.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
        },
        schemas: { Error: ErrorBodySchema as never },
      },
      security: [{ bearer: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}`,
    },
    transformObject: (documentObject) => {
      const openapiObject = (documentObject as { openapiObject: { paths?: Record<string, unknown> } })
        .openapiObject;
      for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
        for (const method of METHODS) {
          const op = (item as Record<string, Record<string, unknown> | undefined>)[method];
          if (!op) continue;
          if (!SPEC_OPERATIONS.has(`${method.toUpperCase()} ${path}`)) op['x-outpost-not-in-spec'] = true;
          if (path.startsWith('/v1/agent/')) op.tags = ['agent protocol'];
          const responses = (op.responses ?? {}) as Record<string, unknown>;
          for (const code of ['400', '401', '404']) {
            responses[code] ??= {
              description: code === '400' ? 'Bad Request' : code === '401' ? 'Unauthorized' : 'Not Found',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            };
          }
          // Any authenticated route: too many failed authentications from the client (auth.ts).
          responses['429'] ??= {
            description: 'Too Many Requests: failed authentications over the limit; wait retry-after seconds',
            headers: {
              'retry-after': { description: 'Seconds to wait', schema: { type: 'integer', minimum: 1 } },
            },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          };
          op.responses = responses;
        }
      }
      return openapiObject as never;
    },
  });
  // `GET /openapi.json`: the document, for clients and code generators that have no key yet.
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
