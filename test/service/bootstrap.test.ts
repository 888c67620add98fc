import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyAjv } from '../../src/service/platform/http/validation.js';
import { generateApiKey } from '../../src/service/platform/http/auth.js';
import { seededCheckDoc } from '../../src/service/bootstrap.js';
import { parseServiceConfig } from '../../src/service/config.js';
import { type RunningService, startService } from '../../src/service/main.js';
import { CheckResponseSchema } from '../../src/service/checks/responses.js';
import { icmpBody, type TestService, testService } from '../helpers/service.js';

const validCheck = bodyAjv.compile(CheckResponseSchema);

/** Asserts a document is valid against the check response schema, naming the failing field. */
function expectCheckResponseValid(doc: unknown): void {
  const ok = validCheck(doc);
  expect(ok ? [] : validCheck.errors).toEqual([]);
}

describe('a fresh `outpost up` store (seeded demo checks)', () => {
  let running: RunningService;
  let dataDir: string;
  const apiKey = generateApiKey();
  const get = (path: string) =>
    fetch(`${running.url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'outpost-bootstrap-'));
    const config = parseServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: apiKey,
    });
    // As `outpost up` starts it: embedded agent key and demo checks.
    running = await startService(config, {
      log: pino({ level: 'silent' }),
      embeddedAgent: true,
      seedDemo: true,
    });
  });
  afterAll(async () => {
    await running?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('GET /v1/checks answers 200 with every seeded check, each valid against the response schema', async () => {
    expect(running.seededChecks.length).toBeGreaterThanOrEqual(3);
    const res = await get('/v1/checks');
    expect(res.status).toBe(200);
    const checks = (await res.json()) as Record<string, unknown>[];
    expect(checks.map((c) => c.name).sort()).toEqual([...running.seededChecks].sort());
    for (const check of checks) {
      expectCheckResponseValid(check);
      expect(check).toMatchObject({ muted: false, shouldFail: false, runParallel: false, activated: true });
    }
  });

  it('GET /v1/checks/{id} answers 200 and a schema-valid check for every seeded check', async () => {
    const checks = (await (await get('/v1/checks')).json()) as { id: string; checkType: string }[];
    expect(checks.map((c) => c.checkType)).toContain('API');
    for (const { id } of checks) {
      const res = await get(`/v1/checks/${id}`);
      expect(res.status).toBe(200);
      expectCheckResponseValid(await res.json());
    }
  });

  it('every stored seeded document is valid as stored, before any presentation layer fills gaps', async () => {
    const rows = await running.service.context.db.selectFrom('checks').select('doc').execute();
    expect(rows.length).toBe(running.seededChecks.length);
    for (const row of rows) {
      const doc = JSON.parse(row.doc) as Record<string, unknown>;
      expectCheckResponseValid({ ...doc, alertChannels: { email: [], webhook: [], slack: [], sms: [] } });
    }
  });
});

describe('seededCheckDoc', () => {
  it('fills the create schema defaults the API applies', () => {
    const doc = seededCheckDoc('ICMP', icmpBody(), new Date());
    expect(doc).toMatchObject({
      muted: false,
      doubleCheck: true,
      shouldFail: false,
      runParallel: false,
      useGlobalAlertSettings: true,
      degradedResponseTime: 10_000,
      request: { pingCount: 3 },
    });
  });

  it('refuses a body the API would refuse, naming the field', () => {
    expect(() => seededCheckDoc('ICMP', icmpBody({ muted: 'no' }), new Date())).toThrow(/muted/);
    expect(() => seededCheckDoc('BROWSER', { name: 'x' }, new Date())).toThrow(/BROWSER/);
  });
});

describe('every check type as stored passes its response schema', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await testService();
  });
  afterAll(async () => svc.close());

  const minimal: Record<string, Record<string, unknown>> = {
    icmp: icmpBody(),
    dns: { name: 'dns', request: { recordType: 'A', query: 'example.com' } },
    tcp: { name: 'tcp', request: { hostname: '127.0.0.1', port: 9 } },
    url: { name: 'url', request: { url: 'http://127.0.0.1:9/' } },
    api: { name: 'api', request: { url: 'http://127.0.0.1:9/' } },
    browser: { name: 'browser', script: 'console.log(1)' },
  };

  for (const [type, body] of Object.entries(minimal)) {
    it(`${type}: create, get, list and the stored row are all schema-valid`, async () => {
      const created = await svc.request('POST', `/v1/checks/${type}`, body);
      expect(created.statusCode, created.body).toBe(201);
      expectCheckResponseValid(created.json());
      const id = created.json().id as string;
      const got = await svc.request('GET', `/v1/checks/${id}`);
      expect(got.statusCode).toBe(200);
      expectCheckResponseValid(got.json());
      const row = await svc.context.db
        .selectFrom('checks')
        .select('doc')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expectCheckResponseValid({
        ...(JSON.parse(row.doc) as object),
        alertChannels: { email: [], webhook: [], slack: [], sms: [] },
      });
    });
  }

  it('GET /v1/checks lists every type with 200', async () => {
    const res = await svc.request('GET', '/v1/checks');
    expect(res.statusCode).toBe(200);
    expect(new Set(res.json().map((c: { checkType: string }) => c.checkType)).size).toBe(6);
  });
});
