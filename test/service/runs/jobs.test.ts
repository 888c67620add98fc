import { randomUUID } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiRequestSchema, type Job, JobSchema } from '../../../src/protocol/index.js';
import { applyApiCheckDefaults } from '../../../src/service/checks/types/api.js';
import { mergeVariables } from '../../../src/service/runs/queue/jobs.js';
import {
  DOUBLE_CHECK_RETRY_STRATEGY,
  resolveRetryStrategy,
} from '../../../src/service/runs/results/retries.js';
import { retryLocation } from '../../../src/service/runs/scheduler/locations.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';
import {
  apiBody,
  claimJobs,
  createCheck,
  icmpBody,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

let svc: TestService;
let ca: TestCa;
beforeAll(() => {
  ca = createTestCa();
});
afterAll(() => ca.destroy());
beforeEach(async () => {
  await svc?.close();
  svc = await testService();
});
afterAll(async () => svc?.close());

/** Creates the check, starts a session for it and claims its one job. */
async function jobOf(type: string, body: Record<string, unknown>): Promise<Job> {
  const checkId = await createCheck(svc, type, body);
  await triggerCheck(svc, checkId);
  const jobs = await claimJobs(svc, randomUUID());
  expect(jobs).toHaveLength(1);
  const job = jobs[0]!;
  // What the agent checks before running it.
  expect(Value.Check(JobSchema, job), JSON.stringify([...Value.Errors(JobSchema, job)].slice(0, 3))).toBe(
    true,
  );
  if (type === 'api') expect(Value.Check(ApiRequestSchema, job.check.request)).toBe(true);
  return job;
}

async function createGroup(body: Record<string, unknown>): Promise<number> {
  const res = await svc.request('POST', '/v1/check-groups', {
    name: 'g',
    activated: true,
    apiCheckDefaults: {},
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as number;
}

async function createSnippet(name: string, script: string): Promise<number> {
  const res = await svc.request('POST', '/v1/snippets', { name, script });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as number;
}

async function createVariable(key: string, value: string, secret = false): Promise<void> {
  expect((await svc.request('POST', '/v1/variables', { key, value, secret })).statusCode).toBe(201);
}

const byKey = (vars: Job['environmentVariables']) => [...vars].sort((a, b) => a.key.localeCompare(b.key));

describe('the job of an API check', () => {
  it('merges variables check > group > account, each keeping its secret flag', async () => {
    await createVariable('ACCOUNT_ONLY', 'a');
    await createVariable('SHARED', 'from-account', true);
    await createVariable('EVERYWHERE', 'from-account');
    const groupId = await createGroup({
      environmentVariables: [
        { key: 'SHARED', value: 'from-group' },
        { key: 'GROUP_ONLY', value: 'g', secret: true },
        { key: 'EVERYWHERE', value: 'from-group', secret: true },
      ],
    });
    const job = await jobOf(
      'api',
      apiBody({
        groupId,
        environmentVariables: [
          { key: 'EVERYWHERE', value: 'from-check' },
          { key: 'CHECK_ONLY', value: 'c', secret: true },
        ],
      }),
    );
    expect(byKey(job.environmentVariables)).toEqual([
      { key: 'ACCOUNT_ONLY', value: 'a', secret: false },
      { key: 'CHECK_ONLY', value: 'c', secret: true },
      { key: 'EVERYWHERE', value: 'from-check', secret: false },
      { key: 'GROUP_ONLY', value: 'g', secret: true },
      { key: 'SHARED', value: 'from-group', secret: false },
    ]);
  });

  it('applies the group’s apiCheckDefaults: base url, headers, query parameters, assertions, basicAuth', async () => {
    const groupId = await createGroup({
      apiCheckDefaults: {
        url: 'https://api.example.test/v1/',
        headers: [
          { key: 'X-Team', value: 'core' },
          { key: 'Accept', value: 'text/group' },
        ],
        queryParameters: [
          { key: 'lang', value: 'en' },
          { key: 'V', value: 'group' },
        ],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        basicAuth: { username: 'group-user', password: 'group-pass' },
      },
    });
    const job = await jobOf(
      'api',
      apiBody({
        groupId,
        request: {
          url: '{{GROUP_BASE_URL}}/users',
          headers: [{ key: 'accept', value: 'application/json', locked: true }],
          queryParameters: [{ key: 'v', value: '2' }],
          assertions: [{ source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 'true' }],
        },
      }),
    );
    expect(job.check.request).toMatchObject({
      url: 'https://api.example.test/v1/users',
      headers: [
        { key: 'accept', value: 'application/json' },
        { key: 'X-Team', value: 'core' },
      ],
      queryParameters: [
        { key: 'v', value: '2' },
        { key: 'lang', value: 'en' },
        { key: 'V', value: 'group' },
      ],
      assertions: [
        { source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 'true' },
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
      ],
      basicAuth: { username: 'group-user', password: 'group-pass' },
    });
    expect(job.environmentVariables).toContainEqual({
      key: 'GROUP_BASE_URL',
      value: 'https://api.example.test/v1/',
      secret: false,
    });
    // A check's own basicAuth and a url without the placeholder stay as they are.
    await svc.close();
    svc = await testService();
    const other = await createGroup({
      apiCheckDefaults: { url: 'https://group.test', basicAuth: { username: 'g', password: 'g' } },
    });
    const own = await jobOf(
      'api',
      apiBody({
        groupId: other,
        request: { url: 'https://own.test/x', basicAuth: { username: 'me', password: 'mine' } },
      }),
    );
    expect(own.check.request).toMatchObject({
      url: 'https://own.test/x',
      basicAuth: { username: 'me', password: 'mine' },
    });
  });

  it('resolves setup and teardown: local script, else snippet, else the group’s', async () => {
    const login = await createSnippet('login', 'request.headers.token = "t"');
    const job = await jobOf(
      'api',
      apiBody({ setupSnippetId: login, localTearDownScript: 'console.log(response.statusCode)' }),
    );
    expect(job.setupScript).toEqual({
      source: 'SNIPPET',
      snippetId: login,
      name: `snippet "login" (${login})`,
      code: 'request.headers.token = "t"',
    });
    expect(job.tearDownScript).toEqual({
      source: 'LOCAL',
      snippetId: null,
      name: 'teardown script',
      code: 'console.log(response.statusCode)',
    });

    await svc.close();
    svc = await testService();
    const groupSetup = await createSnippet('group setup', 'g()');
    const groupTearDown = await createSnippet('group teardown', 't()');
    const groupId = await createGroup({ setupSnippetId: groupSetup, tearDownSnippetId: groupTearDown });
    const inGroup = await jobOf(
      'api',
      apiBody({ groupId, localSetupScript: 'mine()', tearDownSnippetId: null }),
    );
    expect(inGroup.setupScript).toEqual({
      source: 'LOCAL',
      snippetId: null,
      name: 'setup script',
      code: 'mine()',
    });
    expect(inGroup.tearDownScript).toMatchObject({
      source: 'SNIPPET',
      snippetId: groupTearDown,
      code: 't()',
    });
  });

  it('has no scripts when neither the check nor its group has one', async () => {
    const job = await jobOf('api', apiBody({ localSetupScript: '   ' }));
    expect(job.setupScript).toBeNull();
    expect(job.tearDownScript).toBeNull();
  });

  it('attaches the client certificate of the request host: exact, then *. wildcard, else none', async () => {
    const exact = ca.issue({ commonName: 'exact', extendedKeyUsage: 'clientAuth' });
    const wild = ca.issue({ commonName: 'wild', extendedKeyUsage: 'clientAuth' });
    for (const [host, pair] of [
      ['api.example.test', exact],
      ['*.wild.test', wild],
    ] as const) {
      const res = await svc.request('POST', '/v1/client-certificates', {
        host,
        cert: pair.cert,
        key: pair.key,
        ca: ca.caCert,
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    await createVariable('API_HOST', 'https://API.example.test');
    const cases: [string, string | null][] = [
      ['https://api.example.test/users', 'api.example.test'],
      ['{{API_HOST}}/users', 'api.example.test'],
      ['https://a.wild.test/x', '*.wild.test'],
      ['http://b.wild.test:8080/x', '*.wild.test'],
      ['https://a.b.wild.test/x', null],
      ['https://wild.test/x', null],
      ['https://other.test/x', null],
      ['{{UNKNOWN}}/x', null],
    ];
    for (const [url, host] of cases) {
      const checkId = await createCheck(svc, 'api', apiBody({ request: { url } }));
      await triggerCheck(svc, checkId);
      const [job] = await claimJobs(svc, randomUUID());
      const pair = host === 'api.example.test' ? exact : wild;
      expect(job!.clientCertificate, url).toEqual(
        host === null ? null : { host, cert: pair.cert, key: pair.key, ca: ca.caCert, passphrase: null },
      );
    }
  });

  it('uses the group base url to find the client certificate', async () => {
    const pair = ca.issue({ commonName: 'group', extendedKeyUsage: 'clientAuth' });
    await svc.request('POST', '/v1/client-certificates', {
      host: 'mtls.example.test',
      cert: pair.cert,
      key: pair.key,
    });
    const groupId = await createGroup({ apiCheckDefaults: { url: 'https://mtls.example.test' } });
    const job = await jobOf('api', apiBody({ groupId, request: { url: '{{GROUP_BASE_URL}}/me' } }));
    expect(job.clientCertificate).toMatchObject({ host: 'mtls.example.test', cert: pair.cert });
  });

  it('picks the runtime: the check’s, else the group’s, else 2026.04', async () => {
    expect((await jobOf('api', apiBody())).check.runtimeId).toBe('2026.04');
    const groupId = await createGroup({ runtimeId: '2025.04' });
    expect((await jobOf('api', apiBody({ groupId }))).check.runtimeId).toBe('2025.04');
    expect((await jobOf('api', apiBody({ groupId, runtimeId: '2024.09' }))).check.runtimeId).toBe('2024.09');
  });

  it('resolves the retry strategy: check’s, else the group’s object, else doubleCheck, else none', async () => {
    const fixed = await jobOf('api', apiBody({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 10 } }));
    expect(fixed.retryStrategy).toEqual({
      type: 'FIXED',
      baseBackoffSeconds: 10,
      maxRetries: 2,
      maxDurationSeconds: 600,
      sameRegion: true,
      onlyOn: [],
    });
    const linear = { type: 'LINEAR', baseBackoffSeconds: 3, maxRetries: 4, onlyOn: ['NETWORK_ERROR'] };
    const groupId = await createGroup({ retryStrategy: linear });
    expect((await jobOf('api', apiBody({ groupId }))).retryStrategy).toEqual({
      ...linear,
      maxDurationSeconds: 600,
      sameRegion: true,
    });
    // The group's strategy overrides the check's own (as the market leader's groups do)…
    expect(
      (await jobOf('api', apiBody({ groupId, retryStrategy: { type: 'EXPONENTIAL', sameRegion: false } })))
        .retryStrategy,
    ).toMatchObject({ type: 'LINEAR', baseBackoffSeconds: 3 });
    // …unless the group says FALLBACK: then each check's own counts.
    const fallback = await createGroup({ retryStrategy: 'FALLBACK' });
    expect(
      (
        await jobOf(
          'api',
          apiBody({ groupId: fallback, retryStrategy: { type: 'EXPONENTIAL', sameRegion: false } }),
        )
      ).retryStrategy,
    ).toMatchObject({ type: 'EXPONENTIAL', sameRegion: false, baseBackoffSeconds: 60 });
    expect((await jobOf('api', apiBody({ groupId: fallback }))).retryStrategy).toEqual(
      DOUBLE_CHECK_RETRY_STRATEGY,
    );
    expect((await jobOf('api', apiBody({ groupId: fallback, doubleCheck: false }))).retryStrategy).toBeNull();
    expect(
      (await jobOf('api', apiBody({ retryStrategy: { type: 'NO_RETRIES' }, doubleCheck: true })))
        .retryStrategy,
    ).toMatchObject({ type: 'NO_RETRIES' });
  });

  it('starts a run: checkRunId is the job id, runStartedAt the enqueue time, attempt 1', async () => {
    const before = Date.now();
    const job = await jobOf('api', apiBody());
    expect(job.checkRunId).toBe(job.jobId);
    expect(Date.parse(job.runStartedAt!)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(job.runStartedAt!)).toBeLessThanOrEqual(Date.now());
    expect(job).toMatchObject({ attempt: 1, timeoutMs: 30_000, check: { checkType: 'API' } });
  });
});

describe('the job of an uptime check', () => {
  it('gets merged variables and keeps the uptime shape (no scripts, certificate or retries)', async () => {
    await createVariable('A', 'account', true);
    const job = await jobOf('icmp', icmpBody({ environmentVariables: [{ key: 'B', value: 'check' }] }));
    expect(byKey(job.environmentVariables)).toEqual([
      { key: 'A', value: 'account', secret: true },
      { key: 'B', value: 'check', secret: false },
    ]);
    expect(job.check.runtimeId).toBeNull();
    for (const extra of [
      'setupScript',
      'tearDownScript',
      'clientCertificate',
      'retryStrategy',
      'checkRunId',
    ]) {
      expect(job).not.toHaveProperty(extra);
    }
  });

  it('retries only under a strategy set on the monitor or its group, never from doubleCheck', async () => {
    const plain = await jobOf('icmp', icmpBody({ doubleCheck: true }));
    expect(plain).not.toHaveProperty('retryStrategy');
    const own = await jobOf('icmp', icmpBody({ retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 2 } }));
    expect(own.retryStrategy).toMatchObject({ type: 'LINEAR', baseBackoffSeconds: 2, maxRetries: 2 });
    expect(own.checkRunId).toBe(own.jobId);
    const groupId = await createGroup({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1 } });
    expect((await jobOf('icmp', icmpBody({ groupId }))).retryStrategy).toMatchObject({ type: 'FIXED' });
  });
});

describe('job building helpers', () => {
  it('mergeVariables keeps the first list’s value and flag per key', () => {
    expect(
      mergeVariables([{ key: 'K', value: '1' }], null, [
        { key: 'K', value: '2', secret: true },
        { key: 'L', value: '3', secret: true },
      ]),
    ).toEqual([
      { key: 'K', value: '1', secret: false },
      { key: 'L', value: '3', secret: true },
    ]);
  });

  it('applyApiCheckDefaults leaves a request alone without a group', () => {
    const request = { url: '{{GROUP_BASE_URL}}/x', headers: [{ key: 'a', value: 'b', locked: true }] };
    expect(applyApiCheckDefaults(request, null)).toEqual({
      url: '{{GROUP_BASE_URL}}/x',
      headers: [{ key: 'a', value: 'b' }],
      queryParameters: [],
      assertions: [],
      basicAuth: null,
    });
    // A group without a base url leaves the placeholder for a variable of that name.
    expect(applyApiCheckDefaults(request, { url: '' }).url).toBe('{{GROUP_BASE_URL}}/x');
  });

  it('retryLocation stays with sameRegion, else moves round robin to another location', () => {
    expect(retryLocation(['a', 'b', 'c'], 'b', true)).toBe('b');
    expect(retryLocation(['a', 'b', 'c'], 'b', false)).toBe('c');
    expect(retryLocation(['a', 'b', 'c'], 'c', false)).toBe('a');
    expect(retryLocation(['a'], 'a', false)).toBe('a');
    expect(retryLocation([], 'a', false)).toBe('a');
    expect(retryLocation(['x', 'y'], 'gone', false)).toBe('x');
  });

  it('resolveRetryStrategy ignores a FALLBACK group and honours doubleCheck', () => {
    expect(
      resolveRetryStrategy({ retryStrategy: null, doubleCheck: false }, { retryStrategy: 'FALLBACK' }),
    ).toBeNull();
    expect(resolveRetryStrategy({ retryStrategy: null }, null)).toEqual(DOUBLE_CHECK_RETRY_STRATEGY);
  });
});
