import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimJobs, resultFor, type TestService, testService, triggerCheck } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());
beforeEach(async () => {
  await svc.context.db.deleteFrom('checks').execute();
});

/** Agent ids (the protocol wants UUIDs). */
const AGENT_UPTIME = '00000000-0000-4000-8000-0000000000a1';
const AGENT_BROWSER = '00000000-0000-4000-8000-0000000000b1';

const SCRIPT =
  "import { test, expect } from '@playwright/test';\ntest('home', async ({ page }) => { await page.goto('https://example.com'); });\n";
const browserBody = (over: Record<string, unknown> = {}) => ({ name: 'home page', script: SCRIPT, ...over });
const post = (body: unknown, account: 'A' | 'B' = 'A', query = '') =>
  svc.app.inject({
    method: 'POST',
    url: `/v1/checks/browser${query}`,
    headers: svc.auth(account),
    payload: body as object,
  });

async function countChecks(): Promise<number> {
  const row = await svc.context.db
    .selectFrom('checks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('POST /v1/checks/browser', () => {
  it('creates a browser check with the spec defaults', async () => {
    const res = await post(browserBody());
    expect(res.statusCode).toBe(201);
    const check = res.json();
    expect(check).toMatchObject({
      checkType: 'BROWSER',
      name: 'home page',
      script: SCRIPT,
      activated: true,
      muted: false,
      doubleCheck: true,
      shouldFail: false,
      useGlobalAlertSettings: true,
      runParallel: false,
      frequency: 10,
      frequencyOffset: null,
      sslCheckDomain: null,
      dependencies: null,
      timeoutSeconds: 240,
      runtimeId: null,
      locations: ['us-east-1'],
      privateLocations: null,
      environmentVariables: null,
      tags: [],
      alertChannels: { email: [], webhook: [], slack: [], sms: [] },
      updated_at: null,
    });
    expect(check.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(check.created_at)).not.toBeNaN();
    expect(check).not.toHaveProperty('request');
    expect(check).not.toHaveProperty('degradedResponseTime');
  });

  it('stores every browser field and reads it back through GET /v1/checks/{id}', async () => {
    const dependencies = [
      { path: 'helpers/login.ts', content: 'export const user = "me";' },
      { path: 'data.json', content: '' },
    ];
    const res = await post(
      browserBody({
        frequency: 1440,
        frequencyOffset: 24,
        sslCheckDomain: 'www.example.com',
        dependencies,
        runtimeId: '2025.04',
        locations: ['eu-west-1', 'us-east-1'],
        tags: ['web'],
        environmentVariables: [{ key: 'PASSWORD', value: 'hunter2-planted', secret: true }],
      }),
      'A',
      '?autoAssignAlerts=false',
    );
    expect(res.statusCode).toBe(201);
    expect(res.body).not.toContain('hunter2-planted');
    const read = await svc.app.inject({
      method: 'GET',
      url: `/v1/checks/${res.json().id}`,
      headers: svc.auth(),
    });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      checkType: 'BROWSER',
      frequency: 1440,
      frequencyOffset: 24,
      sslCheckDomain: 'www.example.com',
      dependencies,
      runtimeId: '2025.04',
      locations: ['eu-west-1', 'us-east-1'],
      environmentVariables: [{ key: 'PASSWORD', value: '*****', secret: true, locked: false }],
    });
  });

  it('accepts the limits at their edges', async () => {
    for (const frequency of [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440]) {
      expect((await post(browserBody({ frequency }))).statusCode).toBe(201);
    }
    expect((await post(browserBody({ script: null }))).statusCode).toBe(201);
    expect((await post(browserBody({ script: 'x'.repeat(131_072) }))).statusCode).toBe(201);
    expect((await post(browserBody({ frequency: 10, frequencyOffset: 100 }))).statusCode).toBe(201);
    expect((await post(browserBody({ timeoutSeconds: 1 }))).statusCode).toBe(201);
    expect((await post(browserBody({ timeoutSeconds: 240 }))).statusCode).toBe(201);
    const deps = Array.from({ length: 100 }, (_, i) => ({ path: `f${i}.js`, content: '' }));
    expect((await post(browserBody({ dependencies: deps }))).statusCode).toBe(201);
    expect(
      (
        await post(
          browserBody({
            sslCheckDomain: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
          }),
        )
      ).statusCode,
    ).toBe(201);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing name', { name: undefined }, 'name'],
    ['missing script', { script: undefined }, 'script'],
    ['script not a string', { script: 5 }, 'script'],
    ['script of 131 073 characters', { script: 'x'.repeat(131_073) }, 'script'],
    ['frequency 0 (no sub-minute browser runs)', { frequency: 0, frequencyOffset: 10 }, 'frequency'],
    ['frequency 3', { frequency: 3 }, 'frequency'],
    ['frequency 1441', { frequency: 1441 }, 'frequency'],
    ['offset 101 at frequency 10', { frequency: 10, frequencyOffset: 101 }, 'frequencyOffset'],
    ['offset 0', { frequencyOffset: 0 }, 'frequencyOffset'],
    ['timeoutSeconds 241 (runs last at most 240 s)', { timeoutSeconds: 241 }, 'timeoutSeconds'],
    ['timeoutSeconds 0', { timeoutSeconds: 0 }, 'timeoutSeconds'],
    ['timeoutSeconds not an integer', { timeoutSeconds: 1.5 }, 'timeoutSeconds'],
    ['sslCheckDomain with a scheme', { sslCheckDomain: 'https://example.com' }, 'sslCheckDomain'],
    ['sslCheckDomain with a port', { sslCheckDomain: 'example.com:443' }, 'sslCheckDomain'],
    ['sslCheckDomain not fully qualified', { sslCheckDomain: 'localhost' }, 'sslCheckDomain'],
    ['sslCheckDomain an IP address', { sslCheckDomain: '10.0.0.1' }, 'sslCheckDomain'],
    ['sslCheckDomain a wildcard', { sslCheckDomain: '*.example.com' }, 'sslCheckDomain'],
    [
      'sslCheckDomain of 254 characters',
      { sslCheckDomain: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}` },
      'sslCheckDomain',
    ],
    [
      '101 dependencies',
      { dependencies: Array.from({ length: 101 }, (_, i) => ({ path: `f${i}.js`, content: '' })) },
      'dependencies',
    ],
    ['dependency without content', { dependencies: [{ path: 'a.js' }] }, 'dependencies[0].content'],
    ['dependency with an empty path', { dependencies: [{ path: '', content: '' }] }, 'dependencies[0].path'],
    [
      'dependency path escaping with ..',
      { dependencies: [{ path: 'lib/../../etc/passwd', content: '' }] },
      'dependencies[0].path',
    ],
    [
      'absolute dependency path',
      { dependencies: [{ path: '/etc/passwd', content: '' }] },
      'dependencies[0].path',
    ],
    [
      'dependency with an unknown field',
      { dependencies: [{ path: 'a.js', content: '', mode: 1 }] },
      'dependencies[0].mode',
    ],
    ['unknown runtime', { runtimeId: '2099.01' }, 'runtimeId'],
    ['unknown location', { locations: ['mars-1'] }, 'locations[0]'],
    ['description of 501 characters', { description: 'x'.repeat(501) }, 'description'],
    ['an ICMP request', { request: { hostname: 'example.com' } }, 'request.hostname'],
    ['degradedResponseTime over 300000', { degradedResponseTime: 300_001 }, 'degradedResponseTime'],
    ['heartbeat with a period', { heartbeat: { period: 1 } }, 'heartbeat.period'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field and stores nothing', async (_name, over, field) => {
    const res = await post(browserBody(over));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      attributes: { field, in: 'body' },
    });
    expect(await countChecks()).toBe(0);
  });

  it('rejects a non-boolean autoAssignAlerts with 400 naming it', async () => {
    const res = await post(browserBody(), 'A', '?autoAssignAlerts=maybe');
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field: 'autoAssignAlerts', in: 'querystring' });
    expect(await countChecks()).toBe(0);
  });

  it('requires authentication', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/checks/browser', payload: browserBody() });
    expect(res.statusCode).toBe(401);
    expect(await countChecks()).toBe(0);
  });

  it('runs: a session queues a main job carrying the script, its dependencies and sslCheckDomain', async () => {
    const dependencies = [{ path: 'helpers/login.js', content: 'module.exports = 1;' }];
    const id = (
      await post(browserBody({ dependencies, sslCheckDomain: 'example.com', timeoutSeconds: 90 }))
    ).json().id;
    const sessionId = await triggerCheck(svc, id);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // An agent advertising only uptime types gets nothing; one that runs browser checks gets the job.
    expect(await claimJobs(svc, AGENT_UPTIME)).toEqual([]);
    const [job, ...more] = await claimJobs(svc, AGENT_BROWSER, { checkTypes: ['BROWSER', 'MULTI_STEP'] });
    expect(more).toEqual([]);
    expect(job).toMatchObject({
      check: { id, checkType: 'BROWSER', runtimeId: '2026.04' },
      checkSessionId: sessionId,
      timeoutMs: 90_000,
    });
    expect(job?.check.request).toEqual({ script: SCRIPT, dependencies, sslCheckDomain: 'example.com' });
  });

  it('stores the browser part of a posted result and answers it on the result', async () => {
    const id = (await post(browserBody())).json().id;
    await triggerCheck(svc, id);
    const [job] = await claimJobs(svc, AGENT_BROWSER, { checkTypes: ['BROWSER'] });
    if (!job) throw new Error('no job claimed');
    const browserCheckResult = {
      scriptShape: 'TEST',
      runtimeId: '2026.04',
      playwrightVersion: '1.58.2',
      browserVersion: '156.0.8078.79',
      steps: [{ name: 'home', depth: 0, startMs: 0, durationMs: 120.5, status: 'PASSED', error: null }],
      pages: [
        {
          url: 'http://127.0.0.1:1/',
          webVitals: { FCP: 40, LCP: 41, CLS: 0, TBT: 0, INP: null, TTFB: 3 },
        },
      ],
      errors: [],
      droppedErrors: 0,
      timedOut: false,
      startupMs: 35,
      scrubbing: {
        secretValues: 0,
        credentialHeaders: 0,
        shortSecretsNotScrubbed: 0,
        artifactsWithheld: false,
      },
      trimmed: [],
    };
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': AGENT_BROWSER },
      payload: resultFor(job, 'PASSED', { browserCheckResult } as object),
    });
    expect(posted.statusCode, posted.body).toBeLessThan(300);
    const list = await svc.request('GET', `/v1/check-results/${id}`);
    const [item] = list.json();
    const one = await svc.request('GET', `/v1/check-results/${id}/${item.id}`);
    expect(one.json().browserCheckResult).toEqual(browserCheckResult);
  });

  it("keeps account B away from A's browser checks", async () => {
    const id = (await post(browserBody())).json().id;
    const asB = (method: 'GET' | 'DELETE') =>
      svc.app.inject({ method, url: `/v1/checks/${id}`, headers: svc.auth('B') });
    expect((await asB('GET')).statusCode).toBe(404);
    expect((await asB('DELETE')).statusCode).toBe(404);
    const list = await svc.app.inject({ method: 'GET', url: '/v1/checks', headers: svc.auth('B') });
    expect(list.json()).toEqual([]);
    expect(await countChecks()).toBe(1);
  });
});
