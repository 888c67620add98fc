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

/** A JSON Schema or any other part of the document, as plain data. */
type Json = Record<string, unknown>;

/** Reason phrases of the 4xx statuses the routes answer, for their responses' descriptions. */
const CLIENT_ERRORS: Record<string, string> = {
  '400': 'Bad Request',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'Not Found',
  '408': 'Request Timeout',
  '409': 'Conflict',
  '411': 'Length Required',
  '413': 'Content Too Large',
  '415': 'Unsupported Media Type',
  '422': 'Unprocessable Content',
  '429': 'Too Many Requests',
};

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/**
 * The `operationId` of an operation: camelCase of its method and its path's segments after `/v1`, a parameter
 * as `By` and its name (`GET /v1/checks/{id}` → `getChecksById`, `POST /v1/check-sessions/test/icmp` →
 * `postCheckSessionsTestIcmp`). Stable: it changes only when the route does. Pure.
 */
export function operationIdOf(method: string, path: string): string {
  const words = [method.toLowerCase()];
  for (const segment of path.split('/').filter((s) => s !== '' && s !== 'v1')) {
    const param = /^\{(.+)\}$/.exec(segment);
    if (param) words.push('by', ...splitWords(param[1] as string));
    else words.push(...splitWords(segment));
  }
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

/** `check-sessions` → [check, sessions]; `checkSessionId` → [check, Session, Id]; `summary.json` → [summary, json]. */
function splitWords(segment: string): string[] {
  return segment.split(/[^A-Za-z0-9]+|(?=[A-Z])/).filter(Boolean);
}

/** Calls `visit` on every object in `node` (the node itself first), depth first. */
function eachObject(node: unknown, visit: (object: Json) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) eachObject(item, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  visit(node as Json);
  for (const value of Object.values(node)) eachObject(value, visit);
}

/**
 * Makes each schema with a `title` (e.g. `IcmpCheck`, `Check`: checks/responses.ts) a component of that name
 * and puts a `$ref` in its place, so the document holds each once however many operations answer it. Two
 * different schemas of one title are a programming error.
 * @throws Error naming the title when two schemas differ under it.
 */
function hoistTitledSchemas(doc: Json, components: Record<string, Json>): void {
  const texts = new Map<string, string>();
  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (node === null || typeof node !== 'object') return node;
    const object = node as Json;
    const copy: Json = {};
    for (const [key, value] of Object.entries(object)) copy[key] = hoist(value);
    const title = copy.title;
    // A schema is titled when it has a type or a composition; the document's own `info.title` is not one.
    if (typeof title !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(title)) return copy;
    if (!('type' in copy || 'oneOf' in copy || 'anyOf' in copy || 'allOf' in copy)) return copy;
    const text = JSON.stringify(copy);
    const known = texts.get(title);
    if (known !== undefined && known !== text) throw new Error(`two different schemas are titled ${title}`);
    texts.set(title, text);
    components[title] = copy;
    return { $ref: `#/components/schemas/${title}` };
  };
  doc.paths = hoist(doc.paths);
  for (const name of Object.keys(components)) {
    // Titled schemas inside components (a check type inside `Check`) are components of their own too.
    if (name !== 'Error') {
      const { title, ...rest } = components[name] as Json;
      components[name] = { title, ...(hoist(rest) as Json) };
    }
  }
}

/**
 * Adds a `discriminator` to each `oneOf` of component references that one property tells apart: a property
 * every branch requires with a single `enum` value (`checkType` of the check types' answers). Generated clients
 * pick the branch by it.
 */
function addDiscriminators(components: Record<string, Json>): void {
  for (const schema of Object.values(components)) {
    const branches = schema.oneOf as Json[] | undefined;
    if (!Array.isArray(branches) || !branches.every((b) => typeof b.$ref === 'string')) continue;
    const targets = branches.map((b) => components[(b.$ref as string).split('/').pop() as string]);
    const first = targets[0];
    if (!first) continue;
    for (const name of Object.keys((first.properties ?? {}) as Json)) {
      const values = targets.map((t) => {
        const property = (t?.properties as Record<string, Json> | undefined)?.[name];
        const required = (t?.required as string[] | undefined)?.includes(name);
        return required && Array.isArray(property?.enum) && property.enum.length === 1
          ? property.enum[0]
          : undefined;
      });
      if (values.some((v) => typeof v !== 'string') || new Set(values).size !== values.length) continue;
      schema.discriminator = {
        propertyName: name,
        mapping: Object.fromEntries(values.map((v, i) => [v, (branches[i] as Json).$ref])),
      };
      break;
    }
  }
}

/** Drops the branches of each `anyOf` that repeat an earlier one word for word (they add nothing). */
function dropRepeatedBranches(doc: Json): void {
  eachObject(doc, (object) => {
    if (!Array.isArray(object.anyOf)) return;
    const seen = new Set<string>();
    object.anyOf = (object.anyOf as unknown[]).filter((branch) => {
      const text = JSON.stringify(branch);
      if (seen.has(text)) return false;
      seen.add(text);
      return true;
    });
  });
}

/**
 * Every 4xx of an operation answers the error body (docs/errors.md): a response a route declares with a copy
 * of it refers to the `Error` component instead, and its description is the status's reason phrase; 400,
 * 401 and 404 (any route: a bad field, a missing key, an unknown id) and 429 (too many failed
 * authentications, auth.ts) are added where the route declares none.
 */
function documentClientErrors(op: Json, errorText: string): void {
  const responses = (op.responses ?? {}) as Record<string, Json>;
  for (const code of ['400', '401', '404']) responses[code] ??= {};
  responses['429'] ??= {
    description: 'Too Many Requests: failed authentications over the limit; wait retry-after seconds',
    headers: {
      'retry-after': { description: 'Seconds to wait', schema: { type: 'integer', minimum: 1 } },
    },
  };
  for (const [code, response] of Object.entries(responses)) {
    if (!/^4\d\d$/.test(code)) continue;
    const content = response.content as Record<string, Json> | undefined;
    const schema = content?.['application/json']?.schema;
    if (schema === undefined || JSON.stringify(schema) === errorText) {
      response.content = { ...content, 'application/json': { schema: ERROR_REF } };
    }
    if (response.description === undefined || response.description === 'Default Response') {
      response.description = CLIENT_ERRORS[code] ?? `Client error ${code}`;
    }
  }
  op.responses = responses;
}

/**
 * Registers @fastify/swagger so the OpenAPI 3.1 document is generated from the
 * same TypeBox schemas that validate requests; `app.swagger()` answers it, served at
 * `GET /openapi.json` (no authentication: it holds no account data). The document passes redocly's
 * `recommended` rules (test/service/platform/openapi-lint.test.ts): each operation has an `operationId`
 * (operationIdOf), titled schemas are components (hoistTitledSchemas) and every 4xx answers the error body.
 * @throws Error when the document is built (`app.swagger()`) and two operations would share an operationId.
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
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        contact: { name: 'Outpost' },
      },
      // The service that serves the document: a client resolves paths against the URL it read it from.
      servers: [{ url: '/', description: 'This service' }],
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
    // Each operation names the permission its route declares (permissions.ts), so a client knows which
    // role a call needs; the roles test walks the document by it.
    transform: ({ schema, url, route }) => {
      const permission = (route.config as { permission?: string } | undefined)?.permission;
      if (schema === undefined || permission === undefined) return { schema, url };
      return { schema: { ...schema, 'x-outpost-permission': permission } as typeof schema, url };
    },
    transformObject: (documentObject) => {
      const openapiObject = (documentObject as { openapiObject: Json & { paths?: Record<string, unknown> } })
        .openapiObject;
      const components = ((openapiObject.components as Json).schemas ?? {}) as Record<string, Json>;
      const errorText = JSON.stringify(components.Error);
      const operationIds = new Map<string, string>();
      for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
        for (const method of METHODS) {
          const op = (item as Record<string, Json | undefined>)[method];
          if (!op) continue;
          const name = `${method.toUpperCase()} ${path}`;
          if (!SPEC_OPERATIONS.has(name)) op['x-outpost-not-in-spec'] = true;
          if (path.startsWith('/v1/agent/')) op.tags = ['agent protocol'];
          const operationId = operationIdOf(method, path);
          const other = operationIds.get(operationId);
          if (other !== undefined)
            throw new Error(`${name} and ${other} would share operationId ${operationId}`);
          operationIds.set(operationId, name);
          op.operationId ??= operationId;
          documentClientErrors(op, errorText);
        }
      }
      hoistTitledSchemas(openapiObject, components);
      addDiscriminators(components);
      dropRepeatedBranches(openapiObject);
      return openapiObject as never;
    },
  });
  // `GET /openapi.json`: the document, for clients and code generators that have no key yet.
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
