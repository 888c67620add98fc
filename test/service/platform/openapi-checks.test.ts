import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckDoc } from '../../../src/service/checks/checks.js';
import { CheckQueries } from '../../../src/service/checks/store.js';
import { presentChecks } from '../../../src/service/checks/lifecycle.js';
import { CHECK_TYPE_REGISTRY } from '../../../src/service/checks/types/registry.js';
import { checkSchemaTitle } from '../../../src/service/checks/types/response-schemas.js';
import { operationIdOf } from '../../../src/service/platform/http/openapi.js';
import { apiBody, createCheck, icmpBody, type TestService, testService } from '../../helpers/service.js';

// Secrets planted in an API check: no answer and not the document may hold them.
const SECRET_VARIABLE = 'planted-variable-7f3a9c';
const SECRET_PASSWORD = 'planted-password-51be02';
const SECRET_TOKEN = 'planted-token-c0ffee42';

const SPEC =
  "import { test } from '@playwright/test';\ntest('home', async ({ page }) => { await page.goto('/'); });\n";
const rich = {
  activated: false,
  tags: ['compat'],
  alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
  retryStrategy: { type: 'FIXED', baseBackoffSeconds: 60, maxRetries: 2, sameRegion: true },
};

/** A create body of each type the registry has, with the fields generated clients lost before. */
const BODIES: Record<string, Record<string, unknown>> = {
  icmp: icmpBody({ ...rich, degradedPacketLossThreshold: 5 }),
  dns: { name: 'dns', ...rich, request: { recordType: 'A', query: 'example.test' } },
  tcp: { name: 'tcp', ...rich, request: { hostname: '127.0.0.1', port: 8080, data: 'PING' } },
  url: { name: 'url', ...rich, request: { url: 'https://example.test/' } },
  ssl: {
    name: 'ssl',
    ...rich,
    degradedResponseTime: 2000,
    request: { sslConfig: { hostname: 'shop.example.test', port: 443, alertDaysBeforeExpiry: 14 } },
  },
  traceroute: {
    name: 'traceroute',
    ...rich,
    request: { url: 'example.test', protocol: 'ICMP', maxHops: 20 },
  },
  grpc: {
    name: 'grpc',
    ...rich,
    request: { url: 'grpc.example.test', port: 443, grpcConfig: { mode: 'HEALTH', tls: true, service: '' } },
  },
  api: apiBody({
    ...rich,
    environmentVariables: [{ key: 'TOKEN', value: SECRET_VARIABLE, secret: true }],
    request: {
      method: 'POST',
      url: 'https://api.example.test/login',
      headers: [{ key: 'Authorization', value: `Bearer ${SECRET_TOKEN}` }],
      basicAuth: { username: 'ops', password: SECRET_PASSWORD },
      body: '{"a":1}',
      bodyType: 'JSON',
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
    },
  }),
  browser: { name: 'browser', ...rich, script: SPEC, timeoutSeconds: 120 },
  multistep: { name: 'multistep', ...rich, script: SPEC },
  playwright: {
    name: 'suite',
    ...rich,
    scriptPath: 'tests/home.spec.ts',
    dependencies: [
      { path: 'package.json', content: '{"name":"suite"}' },
      { path: 'playwright.config.ts', content: 'export default {};' },
      { path: 'tests/home.spec.ts', content: SPEC },
    ],
  },
  agentic: {
    name: 'agentic',
    ...rich,
    prompt: 'Sign in to {{BASE_URL}} and check the dashboard greets the user',
    agentRuntime: { skills: ['http'] },
    repairMode: 'REVIEW',
    script: SPEC,
  },
  heartbeat: {
    name: 'backup',
    ...rich,
    heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' },
  },
};

/** Fields of each type's own that its answer holds (the shared ones are checked for all). */
const OWN_FIELDS: Record<string, string[]> = {
  icmp: ['request', 'heartbeat', 'degradedPacketLossThreshold', 'maxPacketLossThreshold', 'maxResponseTime'],
  dns: ['request', 'degradedResponseTime', 'maxResponseTime'],
  tcp: ['request', 'degradedResponseTime'],
  url: ['request', 'maxResponseTime'],
  ssl: ['request', 'degradedResponseTime', 'maxResponseTime'],
  traceroute: ['request', 'degradedResponseTime', 'maxResponseTime'],
  grpc: ['request', 'degradedResponseTime', 'maxResponseTime'],
  api: ['request', 'degradedResponseTime', 'maxResponseTime'],
  browser: ['script', 'timeoutSeconds', 'dependencies'],
  multistep: ['script', 'timeoutSeconds'],
  playwright: ['dependencies', 'scriptPath', 'timeoutSeconds'],
  heartbeat: ['heartbeat', 'pingUrl', 'heartbeatState'],
  agentic: ['prompt', 'agentRuntime', 'repairMode', 'script', 'scriptVersion', 'timeoutSeconds'],
};

let svc: TestService;
let doc: {
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
  servers?: { url: string }[];
  info: Record<string, unknown>;
};
let validateCheck: (data: unknown) => boolean;
let validateErrors: () => unknown;
const ids: Record<string, string> = {};

beforeAll(async () => {
  svc = await testService();
  doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  // The document's own schemas, as a client's validator reads them (OpenAPI 3.1: JSON Schema).
  const ajv = addFormats.default(new Ajv({ strict: false, allErrors: true }));
  ajv.addSchema({ $id: 'openapi.json', components: doc.components });
  const validate = ajv.compile({ $ref: 'openapi.json#/components/schemas/Check' });
  validateCheck = (data) => validate(data);
  validateErrors = () => validate.errors;
  for (const [path, body] of Object.entries(BODIES)) ids[path] = await createCheck(svc, path, body);
});
afterAll(async () => svc.close());

describe('the check answer in the OpenAPI document', () => {
  it('is a oneOf of one component per check type, told apart by checkType', () => {
    expect(Object.keys(BODIES).sort()).toEqual(CHECK_TYPE_REGISTRY.map((e) => e.path).sort());
    const check = doc.components.schemas.Check as { oneOf: { $ref: string }[]; discriminator: unknown };
    const titles = CHECK_TYPE_REGISTRY.map((e) => checkSchemaTitle(e.checkType));
    expect(check.oneOf.map((b) => b.$ref)).toEqual(titles.map((t) => `#/components/schemas/${t}`));
    expect(check.discriminator).toEqual({
      propertyName: 'checkType',
      mapping: Object.fromEntries(
        CHECK_TYPE_REGISTRY.map((e) => [
          e.checkType,
          `#/components/schemas/${checkSchemaTitle(e.checkType)}`,
        ]),
      ),
    });
    const api = doc.components.schemas.ApiCheck as { properties: Record<string, Record<string, unknown>> };
    // What generated clients lost with the open object: typed now.
    expect(Object.keys(api.properties)).toEqual(
      expect.arrayContaining(['request', 'alertSettings', 'retryStrategy', 'degradedResponseTime']),
    );
    expect(Object.keys(api.properties.request?.properties as object)).toEqual(
      expect.arrayContaining(['method', 'url', 'headers', 'basicAuth', 'assertions']),
    );
    expect(api.properties.checkType).toEqual({ type: 'string', enum: ['API'] });
    const heartbeat = doc.components.schemas.HeartbeatCheck as { properties: Record<string, unknown> };
    expect(Object.keys(heartbeat.properties)).toEqual(expect.arrayContaining(['pingUrl', 'heartbeatState']));
  });

  it('is what every check route answers', () => {
    const ref = { $ref: '#/components/schemas/Check' };
    const schemaOf = (path: string, method: string, code: string) => {
      const response = doc.paths[path]?.[method]?.responses[code] as
        | { content?: Record<string, { schema: unknown }> }
        | undefined;
      return response?.content?.['application/json']?.schema;
    };
    expect(schemaOf('/v1/checks/{id}', 'get', '200')).toEqual(ref);
    expect(schemaOf('/v1/checks/{id}', 'put', '200')).toEqual(ref);
    expect(schemaOf('/v1/checks', 'get', '200')).toEqual({ type: 'array', items: ref });
    for (const { path } of CHECK_TYPE_REGISTRY)
      expect(schemaOf(`/v1/checks/${path}`, 'post', '201')).toEqual(ref);
  });
});

describe('check answers', () => {
  it.each(Object.keys(BODIES))(
    '%s: the answer holds its own fields and passes its schema in the document',
    async (path) => {
      const res = await svc.request('GET', `/v1/checks/${ids[path]}`);
      expect(res.statusCode, res.body).toBe(200);
      const check = res.json();
      for (const field of [
        ...(OWN_FIELDS[path] ?? []),
        'alertSettings',
        'retryStrategy',
        'tags',
        'alertChannels',
      ]) {
        expect(check, field).toHaveProperty(field);
      }
      expect(check.retryStrategy).toMatchObject(rich.retryStrategy);
      expect(check.alertSettings).toMatchObject(rich.alertSettings);
      expect(validateCheck(check) ? [] : validateErrors()).toEqual([]);
    },
  );

  it('drops no field: each answer is the check as the service presents it, serialised whole', async () => {
    const checks = new CheckQueries(svc.context.db);
    const listed = (await svc.request('GET', '/v1/checks')).json() as { id: string }[];
    const presented = await presentChecks(svc.context, svc.accountA.id, await checks.list(svc.accountA.id));
    expect(listed).toEqual(JSON.parse(JSON.stringify(presented)));
    expect(listed).toHaveLength(Object.keys(BODIES).length);
  });

  it('keeps fields the schema does not know, at any depth, in stored checks', async () => {
    const checks = new CheckQueries(svc.context.db);
    const stored = await checks.get(svc.accountA.id, ids.api as string);
    const request = stored.request as Record<string, unknown>;
    // A check stored by a later (or earlier) version: fields this one's schemas do not declare.
    const changed = {
      ...stored,
      laterField: { deep: [1, 'two'] },
      request: { ...request, laterRequestField: 'kept' },
      retryStrategy: { ...(stored.retryStrategy as object), laterRetryField: 3 },
    } as unknown as CheckDoc;
    await checks.update(svc.accountA.id, stored, changed, Date.now());
    const res = await svc.request('GET', `/v1/checks/${ids.api}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      laterField: { deep: [1, 'two'] },
      request: { laterRequestField: 'kept', method: 'POST' },
      retryStrategy: { laterRetryField: 3, type: 'FIXED' },
    });
  });

  it('masks the planted secrets in every answer and the document holds none', async () => {
    const answers = [
      (await svc.request('GET', `/v1/checks/${ids.api}`)).body,
      (await svc.request('GET', '/v1/checks')).body,
      (await svc.request('PUT', `/v1/checks/${ids.api}`, { name: 'api renamed' })).body,
      JSON.stringify(doc),
    ];
    for (const text of answers) {
      for (const secret of [SECRET_VARIABLE, SECRET_PASSWORD, SECRET_TOKEN])
        expect(text).not.toContain(secret);
    }
    const check = JSON.parse(answers[0] as string);
    expect(check.environmentVariables[0].value).toBe('*****');
    expect(check.request.basicAuth.password).toBe('*****');
    expect(check.request.headers[0].value).toBe('*****');
  });
});

describe('operations', () => {
  it('each has a unique operationId made of its method and path', () => {
    const seen = new Map<string, string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.operationId, `${method} ${path}`).toBe(operationIdOf(method, path));
        expect(seen.get(op.operationId as string), op.operationId).toBeUndefined();
        seen.set(op.operationId as string, `${method} ${path}`);
      }
    }
    expect(seen.size).toBeGreaterThan(100);
    expect(operationIdOf('get', '/v1/checks/{id}')).toBe('getChecksById');
    expect(operationIdOf('post', '/v1/check-sessions/test/icmp')).toBe('postCheckSessionsTestIcmp');
    expect(operationIdOf('get', '/v1/check-sessions/{checkSessionId}/completion')).toBe(
      'getCheckSessionsByCheckSessionIdCompletion',
    );
  });

  it('answers every 4xx with the error body, and the document names its server and license', () => {
    let count = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [code, response] of Object.entries(op.responses)) {
          if (!code.startsWith('4')) continue;
          count++;
          const r = response as { description: string; content?: Record<string, { schema: unknown }> };
          expect(r.content?.['application/json']?.schema, `${method} ${path} ${code}`).toEqual({
            $ref: '#/components/schemas/Error',
          });
          expect(r.description).not.toBe('Default Response');
        }
      }
    }
    expect(count).toBeGreaterThan(400);
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
  });

  it('holds no component twice', () => {
    const texts = Object.values(doc.components.schemas).map((s) => {
      const { title: _title, ...rest } = s;
      return JSON.stringify(rest);
    });
    expect(new Set(texts).size).toBe(texts.length);
  });
});
