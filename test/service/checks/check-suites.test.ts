import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CheckDoc, assertRuntimeFits } from '../../../src/service/checks/checks.js';
import { jobTimeoutMs } from '../../../src/service/checks/types/registry.js';
import {
  claimJobs,
  expectBadField,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());
beforeEach(async () => {
  await svc.context.db.deleteFrom('checks').execute();
  await svc.context.db.deleteFrom('check_groups').execute();
});

const MULTI_STEP_SCRIPT =
  "import { test, expect } from '@playwright/test';\n" +
  "test('api journey', async ({ request }) => {\n" +
  "  await test.step('health', async () => { expect((await request.get('https://api.example.com/health')).ok()).toBe(true); });\n" +
  '});\n';
const SPEC =
  "import { test } from '@playwright/test';\ntest('home', async ({ page }) => { await page.goto('/'); });\n";

/** A minimal Playwright project: package.json, a lock file, playwright.config.ts and one spec. */
const project = (over: { path: string; content: string }[] = []) => [
  {
    path: 'package.json',
    content: JSON.stringify({ name: 'suite', devDependencies: { '@playwright/test': '1.58.2' } }),
  },
  { path: 'package-lock.json', content: '{"lockfileVersion":3}' },
  { path: 'playwright.config.ts', content: "export default { testDir: 'tests' };" },
  { path: 'tests/home.spec.ts', content: SPEC },
  ...over,
];
const multiStepBody = (over: Record<string, unknown> = {}) => ({
  name: 'api journey',
  script: MULTI_STEP_SCRIPT,
  ...over,
});
const suiteBody = (over: Record<string, unknown> = {}) => ({
  name: 'suite',
  dependencies: project(),
  scriptPath: 'tests/home.spec.ts',
  ...over,
});

async function countChecks(): Promise<number> {
  const row = await svc.context.db
    .selectFrom('checks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function rawRows(): Promise<string> {
  return JSON.stringify(await svc.context.db.selectFrom('checks').selectAll().execute());
}

describe.each([
  ['multistep', 'MULTI_STEP', multiStepBody, 240],
  ['playwright', 'PLAYWRIGHT', suiteBody, 1800],
] as const)('POST /v1/checks/%s', (path, checkType, body, maxSeconds) => {
  it('creates, reads, lists, updates and deletes the check', async () => {
    const created = await svc.request('POST', `/v1/checks/${path}`, body());
    expect(created.statusCode, created.body).toBe(201);
    const check = created.json();
    expect(check).toMatchObject({
      checkType,
      frequency: 10,
      timeoutSeconds: maxSeconds,
      sslCheckDomain: null,
      runtimeId: null,
      environmentVariables: null,
      locations: ['us-east-1'],
    });
    expect(check).not.toHaveProperty('request');
    expect((await svc.request('GET', `/v1/checks/${check.id}`)).json()).toEqual(check);
    expect((await svc.request('GET', '/v1/checks')).json()).toEqual([check]);

    const updated = await svc.request('PUT', `/v1/checks/${check.id}`, {
      heartbeat: {},
      script: check.script,
      frequency: 60,
      timeoutSeconds: 120,
      sslCheckDomain: 'shop.example.com',
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({
      checkType,
      frequency: 60,
      timeoutSeconds: 120,
      sslCheckDomain: 'shop.example.com',
    });
    expect(updated.json().updated_at).not.toBeNull();

    expect((await svc.request('DELETE', `/v1/checks/${check.id}`)).statusCode).toBe(204);
    expect((await svc.request('GET', `/v1/checks/${check.id}`)).statusCode).toBe(404);
  });

  it('takes the time limit up to its cap, and the job carries it as timeoutMs', async () => {
    const capped = await svc.request('POST', `/v1/checks/${path}`, body({ timeoutSeconds: maxSeconds }));
    expect(capped.statusCode, capped.body).toBe(201);
    expect(jobTimeoutMs(capped.json())).toBe(maxSeconds * 1000);
    const short = await svc.request('POST', `/v1/checks/${path}`, body({ timeoutSeconds: 1 }));
    expect(jobTimeoutMs(short.json())).toBe(1000);
    expectBadField(
      await svc.request('POST', `/v1/checks/${path}`, body({ timeoutSeconds: maxSeconds + 1 })),
      'timeoutSeconds',
    );
    expectBadField(
      await svc.request('POST', `/v1/checks/${path}`, body({ timeoutSeconds: 0 })),
      'timeoutSeconds',
    );
    expectBadField(
      await svc.request('PUT', `/v1/checks/${short.json().id}`, {
        heartbeat: {},
        script: short.json().script,
        timeoutSeconds: maxSeconds + 1,
      }),
      'timeoutSeconds',
    );
  });

  it('runs at most once a minute', async () => {
    expectBadField(
      await svc.request('POST', `/v1/checks/${path}`, body({ frequency: 0, frequencyOffset: 10 })),
      'frequency',
    );
    expect((await svc.request('POST', `/v1/checks/${path}`, body({ frequency: 1 }))).statusCode).toBe(201);
  });

  it('seals secret variables at rest and masks them in every answer', async () => {
    const planted = `planted-${path}-s3cr3t`;
    const created = await svc.request(
      'POST',
      `/v1/checks/${path}`,
      body({
        environmentVariables: [
          { key: 'PASSWORD', value: planted, secret: true },
          { key: 'USER', value: 'visible-user' },
        ],
      }),
    );
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    const updated = await svc.request('PUT', `/v1/checks/${id}`, {
      heartbeat: {},
      script: created.json().script,
      environmentVariables: created.json().environmentVariables,
      frequency: 5,
    });
    expect(updated.statusCode, updated.body).toBe(200);
    const answers = [
      created,
      updated,
      await svc.request('GET', `/v1/checks/${id}`),
      await svc.request('GET', '/v1/checks'),
    ];
    for (const res of answers) {
      expect(res.body).not.toContain(planted);
      expect(res.body).toContain('visible-user');
    }
    expect(updated.json().environmentVariables).toEqual([
      { key: 'PASSWORD', value: '*****', secret: true, locked: false },
      { key: 'USER', value: 'visible-user', secret: false, locked: false },
    ]);
    const rows = await rawRows();
    expect(rows).not.toContain(planted);
    expect(rows).toContain('visible-user');
  });

  it('starting a session queues its job for an agent with a browser', async () => {
    const id = (await svc.request('POST', `/v1/checks/${path}`, body())).json().id;
    const res = await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } });
    expect(res.statusCode).toBe(201);
    expect(res.json().sessions.map((s: { checkType: string }) => s.checkType)).toEqual([checkType]);
  });
});

describe('the job of a Playwright check suite', () => {
  it('carries the project, the spec path (or inline spec) and sslCheckDomain', async () => {
    const created = await svc.request(
      'POST',
      '/v1/checks/playwright',
      suiteBody({ sslCheckDomain: 'example.com' }),
    );
    expect(created.statusCode, created.body).toBe(201);
    await triggerCheck(svc, created.json().id);
    const [job] = await claimJobs(svc, '00000000-0000-4000-8000-0000000000d1', {
      checkTypes: ['PLAYWRIGHT'],
    });
    expect(job?.check).toMatchObject({ checkType: 'PLAYWRIGHT', runtimeId: '2026.04' });
    expect(job?.timeoutMs).toBe(1_800_000);
    expect(job?.check.request).toEqual({
      script: null,
      scriptPath: 'tests/home.spec.ts',
      dependencies: project(),
      sslCheckDomain: 'example.com',
    });
  });
});

describe('multi-step checks and their runtime', () => {
  it('accepts a runtime with multiStepSupport', async () => {
    const res = await svc.request('POST', '/v1/checks/multistep', multiStepBody({ runtimeId: '2023.09' }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().runtimeId).toBe('2023.09');
  });

  it('refuses a runtime without multiStepSupport, its own or its group’s, on create and update', async () => {
    expectBadField(
      await svc.request('POST', '/v1/checks/multistep', multiStepBody({ runtimeId: '2022.10' })),
      'runtimeId',
    );
    const group = await svc.request('POST', '/v1/check-groups', {
      name: 'old runtime',
      activated: true,
      apiCheckDefaults: {},
      runtimeId: '2023.02',
    });
    expect(group.statusCode, group.body).toBe(201);
    const refused = await svc.request(
      'POST',
      '/v1/checks/multistep',
      multiStepBody({ groupId: group.json().id }),
    );
    expectBadField(refused, 'runtimeId');
    expect(refused.json().message).toContain("2023.02 (the group's)");
    expect(await countChecks()).toBe(0);

    // Its own runtime wins over the group's.
    const own = await svc.request(
      'POST',
      '/v1/checks/multistep',
      multiStepBody({ groupId: group.json().id, runtimeId: '2026.04' }),
    );
    expect(own.statusCode, own.body).toBe(201);
    expectBadField(
      await svc.request('PUT', `/v1/checks/${own.json().id}`, {
        heartbeat: {},
        script: MULTI_STEP_SCRIPT,
        runtimeId: null,
      }),
      'runtimeId',
    );
    expect((await svc.request('GET', `/v1/checks/${own.json().id}`)).json().runtimeId).toBe('2026.04');
  });

  it('checks the default runtime when neither the check nor its group names one', async () => {
    const doc = { checkType: 'MULTI_STEP', runtimeId: null, groupId: null } as unknown as CheckDoc;
    await expect(assertRuntimeFits(svc.context.db, svc.accountA.id, doc, new Set(['2026.04']))).resolves.toBe(
      undefined,
    );
    await expect(
      assertRuntimeFits(svc.context.db, svc.accountA.id, doc, new Set(['2025.04'])),
    ).rejects.toMatchObject({ attributes: { field: 'runtimeId' } });
    const browser = { ...doc, checkType: 'BROWSER' } as CheckDoc;
    await expect(assertRuntimeFits(svc.context.db, svc.accountA.id, browser, new Set())).resolves.toBe(
      undefined,
    );
  });
});

describe('Playwright check suites', () => {
  it('stores the project and an inline spec instead of a scriptPath', async () => {
    const res = await svc.request(
      'POST',
      '/v1/checks/playwright',
      suiteBody({ scriptPath: undefined, script: SPEC }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ script: SPEC, scriptPath: null, dependencies: project() });
  });

  it('accepts a project without a lock file and each config extension', async () => {
    for (const ext of ['ts', 'js', 'mjs', 'cjs']) {
      const files = project()
        .filter((f) => f.path !== 'package-lock.json' && f.path !== 'playwright.config.ts')
        .concat({ path: `playwright.config.${ext}`, content: 'module.exports = {};' });
      const res = await svc.request('POST', '/v1/checks/playwright', suiteBody({ dependencies: files }));
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  it('accepts the size limits at their edges', async () => {
    const big = 'x'.repeat(128 * 1024);
    const files = project().concat(
      Array.from({ length: 36 }, (_, i) => ({ path: `data/f${i}.txt`, content: big })),
    );
    const res = await svc.request('POST', '/v1/checks/playwright', suiteBody({ dependencies: files }));
    expect(res.statusCode, res.body).toBe(201);
  });

  const without = (path: string) => project().filter((f) => f.path !== path);
  const invalid: [string, Record<string, unknown>, string][] = [
    ['no dependencies', { dependencies: undefined }, 'dependencies'],
    ['null dependencies', { dependencies: null }, 'dependencies'],
    ['no package.json', { dependencies: without('package.json') }, 'dependencies'],
    [
      'a package.json that is not JSON',
      { dependencies: [{ path: 'package.json', content: '{' }, ...without('package.json')] },
      'dependencies[0].content',
    ],
    [
      'a package.json that is an array',
      { dependencies: [{ path: 'package.json', content: '[]' }, ...without('package.json')] },
      'dependencies[0].content',
    ],
    ['no playwright.config', { dependencies: without('playwright.config.ts') }, 'dependencies'],
    [
      'a playwright.config of another extension',
      {
        dependencies: [...without('playwright.config.ts'), { path: 'playwright.config.json', content: '{}' }],
      },
      'dependencies',
    ],
    ['two lock files', { dependencies: project([{ path: 'yarn.lock', content: '' }]) }, 'dependencies'],
    [
      'a path given twice',
      { dependencies: project([{ path: 'tests/home.spec.ts', content: '' }]) },
      'dependencies[4].path',
    ],
    [
      'a path escaping the project',
      { dependencies: project([{ path: '../outside.ts', content: '' }]) },
      'dependencies[4].path',
    ],
    [
      '101 files',
      {
        dependencies: project(Array.from({ length: 97 }, (_, i) => ({ path: `f${i}.ts`, content: '' }))),
      },
      'dependencies',
    ],
    [
      'a file over 128 KiB of UTF-8',
      { dependencies: project([{ path: 'data.txt', content: 'é'.repeat(64 * 1024 + 1) }]) },
      'dependencies[4].content',
    ],
    [
      'a project over 5 MiB',
      {
        dependencies: project(
          Array.from({ length: 41 }, (_, i) => ({ path: `data/f${i}.txt`, content: 'x'.repeat(128 * 1024) })),
        ),
      },
      'dependencies',
    ],
    ['neither script nor scriptPath', { scriptPath: undefined }, 'script'],
    ['an empty script and no scriptPath', { scriptPath: undefined, script: '' }, 'script'],
    ['both script and scriptPath', { script: SPEC }, 'scriptPath'],
    ['a scriptPath not among the dependencies', { scriptPath: 'tests/missing.spec.ts' }, 'scriptPath'],
    ['a request', { request: { url: 'https://example.com' } }, 'request.url'],
    ['degradedResponseTime over 300000', { degradedResponseTime: 300_001 }, 'degradedResponseTime'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field and stores nothing', async (_name, over, field) => {
    expectBadField(await svc.request('POST', '/v1/checks/playwright', suiteBody(over)), field);
    expect(await countChecks()).toBe(0);
  });

  it('applies the project rules to an update', async () => {
    const id = (await svc.request('POST', '/v1/checks/playwright', suiteBody())).json().id;
    const put = (over: Record<string, unknown>) =>
      svc.request('PUT', `/v1/checks/${id}`, { heartbeat: {}, script: null, ...over });
    expectBadField(await put({ dependencies: without('package.json') }), 'dependencies');
    expectBadField(await put({ dependencies: null }), 'dependencies');
    expectBadField(await put({ scriptPath: 'nowhere.spec.ts' }), 'scriptPath');
    expectBadField(await put({ script: SPEC }), 'scriptPath');
    const ok = await put({ scriptPath: null, script: SPEC });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ script: SPEC, scriptPath: null });
  });
});

describe('timeoutSeconds on the other types', () => {
  it('a browser check takes it up to 240 s, defaulting to 240', async () => {
    const res = await svc.request('POST', '/v1/checks/browser', { name: 'b', script: SPEC });
    expect(res.json().timeoutSeconds).toBe(240);
    expect(jobTimeoutMs(res.json())).toBe(240_000);
    expectBadField(
      await svc.request('POST', '/v1/checks/browser', { name: 'b', script: SPEC, timeoutSeconds: 241 }),
      'timeoutSeconds',
    );
  });

  it('an API check refuses it, on create and update', async () => {
    const api = { name: 'api', activated: false, request: { url: 'https://api.example.com/health' } };
    expectBadField(
      await svc.request('POST', '/v1/checks/api', { ...api, timeoutSeconds: 10 }),
      'timeoutSeconds',
    );
    const created = await svc.request('POST', '/v1/checks/api', api);
    expect(jobTimeoutMs(created.json())).toBe(30_000);
    expectBadField(
      await svc.request('PUT', `/v1/checks/${created.json().id}`, {
        heartbeat: {},
        script: null,
        timeoutSeconds: 10,
      }),
      'timeoutSeconds',
    );
  });
});
