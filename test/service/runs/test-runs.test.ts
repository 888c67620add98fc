import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CheckResult, type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { build, type Service } from '../../../src/service/app.js';
import { retentionTasks } from '../../../src/service/modules.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { RetentionWorker } from '../../../src/service/platform/store/retention.js';
import { fileArtifacts, expectBadField, resultFor, testStore } from '../../helpers/service.js';
import { expectNoSecret } from '../../helpers/secrets.js';

/** Secrets planted in test-run bodies: a secret variable and a credential header. */
const SECRET_VARIABLE = 'tv-planted-Secret-7f3a91c2d4';
const SECRET_HEADER = 'hdr-planted-Secret-0b8e6d5a13';
/** The agent's id (agents send a UUID). */
const AGENT_A = '5d0c2b8e-1f4a-4c2e-9a77-3e1b2c4d5e6f';

type Harness = {
  svc: Service;
  key: string;
  accountId: string;
  /** Every log line the service wrote, at every level. */
  logs: string[];
  request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
};

/** A real service on a store of its own (`testStore`), logging everything (trace) into `logs`. */
async function harness(): Promise<Harness> {
  const store = await testStore();
  const db = store.db;
  const accountId = await createAccount(db, 'A');
  const key = await createApiKey(db, accountId);
  const artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-test-runs-'));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const svc = await build({ db, log: pino({ level: 'trace' }, sink), artifactsDir, retention: false });
  return {
    svc,
    key,
    accountId,
    logs,
    request: (method, url, payload) =>
      svc.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}` },
        ...(payload === undefined ? {} : { payload: payload as object }),
      }),
    close: async () => {
      await svc.close();
      await store.drop();
      await rm(artifactsDir, { recursive: true, force: true });
    },
  };
}

/** Claims as `agentId` (account key, every data-center location unless `locations`), leased at once. */
async function claim(h: Harness, agentId: string, over: Record<string, unknown> = {}): Promise<Job[]> {
  const res = await h.svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/claim',
    headers: { authorization: `Bearer ${h.key}`, 'x-agent-id': agentId },
    payload: {
      agentVersion: '0.0.0-test',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['ICMP', 'DNS', 'TCP', 'URL', 'API'],
      runtimes: ['2026.04'],
      freeSlots: { uptime: 10, main: 10 },
      waitSeconds: 0,
      ...over,
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().jobs as Job[];
}

/** An API check body with the planted secrets, as `POST /v1/checks/api` takes it. */
function apiTestBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'try it first',
    activated: true,
    locations: ['us-east-1'],
    request: {
      method: 'GET',
      url: 'http://127.0.0.1:9/{{PATH}}',
      headers: [{ key: 'Authorization', value: `Bearer ${SECRET_HEADER}` }],
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', property: '' }],
    },
    environmentVariables: [
      { key: 'PATH', value: 'health' },
      { key: 'TOKEN', value: SECRET_VARIABLE, secret: true },
    ],
    ...over,
  };
}

/** What an API agent posts: FAILED (so alerting would have something to say), an assertion and an artifact. */
function failedApiResult(job: Job): CheckResult {
  return resultFor(job, 'FAILED', {
    errorMessage: 'expected 200, got 503',
    assertions: [
      {
        source: 'STATUS_CODE',
        comparison: 'EQUALS',
        property: '',
        target: '200',
        regex: null,
        actual: 503,
        error: 'expected 200, got 503',
      },
    ],
    artifacts: [{ name: 'trace.txt', sizeBytes: 5 }] as unknown as CheckResult['artifacts'],
  });
}

describe('test runs (POST /v1/check-sessions/test/{type})', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('runs the body once in a served location, shows the result in its session, and records nothing else', async () => {
    // A saved check beside it: its history must stay empty.
    const saved = await h.request('POST', '/v1/checks/api', apiTestBody({ name: 'saved', activated: false }));
    expect(saved.statusCode, saved.body).toBe(201);
    const savedId = saved.json().id as string;
    // Agent A serves eu-west-1 only: the first served of the body's locations is chosen.
    expect(await claim(h, AGENT_A, { locations: ['eu-west-1'] })).toEqual([]);
    const started = await h.request(
      'POST',
      '/v1/check-sessions/test/api',
      apiTestBody({ locations: ['us-east-1', 'eu-west-1'], doubleCheck: true }),
    );
    expect(started.statusCode, started.body).toBe(201);
    const session = started.json();
    expect(session).toMatchObject({
      status: 'PROGRESS',
      triggerSource: 'TEST_NO_RECORD',
      runLocations: ['eu-west-1'],
      name: 'try it first',
      checkType: 'API',
      results: [],
    });
    const testCheckId = session.checkId as string;
    expect(testCheckId).not.toBe(savedId);

    const [job, ...more] = await claim(h, AGENT_A, { locations: ['eu-west-1'] });
    expect(more).toEqual([]);
    expect(job).toMatchObject({
      runSource: 'TEST_NO_RECORD',
      checkSessionId: session.checkSessionId,
      runLocation: 'eu-west-1',
      retryStrategy: null,
      check: { id: testCheckId, checkType: 'API', name: 'try it first' },
    });
    // Variables resolve as for a saved check: the agent gets them (with the secret flag) to fill {{PATH}}.
    expect(job!.environmentVariables).toContainEqual({ key: 'TOKEN', value: SECRET_VARIABLE, secret: true });
    const upload = await h.svc.app.inject({
      method: 'PUT',
      url: `/v1/agent/jobs/${job!.jobId}/artifacts/trace.txt`,
      headers: {
        authorization: `Bearer ${h.key}`,
        'x-agent-id': AGENT_A,
        'content-type': 'application/octet-stream',
      },
      payload: Buffer.from('trace'),
    });
    expect(upload.statusCode, upload.body).toBe(201);
    const posted = await h.svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { authorization: `Bearer ${h.key}`, 'x-agent-id': AGENT_A },
      payload: failedApiResult(job!),
    });
    // FAILED with doubleCheck: a saved check would retry; a test run is FINAL at once.
    expect(posted.json()).toMatchObject({ stored: true, resultType: 'FINAL' });

    const done = await h.request(
      'GET',
      `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=5`,
    );
    expect(done.statusCode, done.body).toBe(200);
    const final = done.json();
    expect(final.status).toBe('FAILED');
    expect(final.results).toHaveLength(1);
    expect(final.results[0]).toMatchObject({
      runLocation: 'eu-west-1',
      status: 'FAILED',
      errorMessage: 'expected 200, got 503',
      assertions: [{ source: 'STATUS_CODE', actual: 503, error: 'expected 200, got 503' }],
      artifacts: [{ name: 'trace.txt' }],
    });
    const resultId = final.results[0].id as string;
    const artifact = await h.request(
      'GET',
      `/v1/check-results/${testCheckId}/${resultId}/artifacts/trace.txt`,
    );
    expect(artifact.statusCode).toBe(200);
    expect(artifact.body).toBe('trace');

    // Nothing else knows of it.
    expect((await h.request('GET', '/v1/checks')).json().map((c: { id: string }) => c.id)).toEqual([savedId]);
    expect((await h.request('GET', `/v1/checks/${testCheckId}`)).statusCode).toBe(404);
    const statuses = (await h.request('GET', '/v1/check-statuses')).json() as { checkId: string }[];
    expect(statuses.map((s) => s.checkId)).not.toContain(testCheckId);
    expect((await h.request('GET', `/v1/check-results/${savedId}`)).json()).toEqual([]);
    expect((await h.request('GET', '/v1/check-alerts')).json()).toEqual([]);
    expect((await h.request('GET', `/v1/error-groups/checks/${testCheckId}`)).statusCode).toBe(404);
    const db = h.svc.context.db;
    for (const table of [
      'result_outbox',
      'check_last_results',
      'check_stats_hourly',
      'alert_states',
      'check_alerts',
      'alert_notifications',
      'error_groups',
    ] as const) {
      const rows = await db.selectFrom(table).selectAll().execute();
      expect(rows, table).toEqual([]);
    }
    expect(await db.selectFrom('checks').select('id').execute()).toEqual([{ id: savedId }]);
  });

  it('retention deletes the run, its session, result and artifacts an hour after it was made', async () => {
    await claim(h, AGENT_A);
    const started = await h.request('POST', '/v1/check-sessions/test/api', apiTestBody());
    expect(started.statusCode, started.body).toBe(201);
    const { checkSessionId, checkId } = started.json();
    const [job] = await claim(h, AGENT_A);
    await h.svc.app.inject({
      method: 'PUT',
      url: `/v1/agent/jobs/${job!.jobId}/artifacts/trace.txt`,
      headers: {
        authorization: `Bearer ${h.key}`,
        'x-agent-id': AGENT_A,
        'content-type': 'application/octet-stream',
      },
      payload: Buffer.from('trace'),
    });
    await h.svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { authorization: `Bearer ${h.key}`, 'x-agent-id': AGENT_A },
      payload: failedApiResult(job!),
    });
    const artifactsDir = fileArtifacts(h.svc).dir;
    expect(await readdir(join(artifactsDir, h.accountId))).toEqual([job!.jobId]);
    const worker = new RetentionWorker(
      h.svc.context.db,
      retentionTasks({ artifacts: h.svc.context.artifacts }),
      {
        resultDays: 90,
        artifactDays: 30,
        agentDays: 30,
        log: pino({ level: 'silent' }),
      },
    );
    const now = Date.now();
    // Half an hour on: still kept.
    expect((await worker.runOnce(now + 30 * 60_000)).testRuns).toBe(0);
    expect((await h.request('GET', `/v1/check-sessions/${checkSessionId}`)).statusCode).toBe(200);
    // An hour and a minute on: gone, with its file.
    expect((await worker.runOnce(now + 61 * 60_000)).testRuns).toBe(1);
    expect((await h.request('GET', `/v1/check-sessions/${checkSessionId}`)).statusCode).toBe(404);
    const db = h.svc.context.db;
    expect(
      await db.selectFrom('check_results').select('id').where('check_id', '=', checkId).execute(),
    ).toEqual([]);
    expect(await db.selectFrom('test_runs').select('id').execute()).toEqual([]);
    expect(await readdir(join(artifactsDir, h.accountId))).toEqual([]);
  });

  it('drops the job of a test run retention deleted before an agent claimed it', async () => {
    await claim(h, AGENT_A, { checkTypes: ['ICMP'] });
    const started = await h.request('POST', '/v1/check-sessions/test/api', apiTestBody());
    expect(started.statusCode, started.body).toBe(201);
    const worker = new RetentionWorker(
      h.svc.context.db,
      retentionTasks({ artifacts: h.svc.context.artifacts }),
      {
        resultDays: 90,
        artifactDays: 30,
        agentDays: 30,
        log: pino({ level: 'silent' }),
      },
    );
    expect((await worker.runOnce(Date.now() + 2 * 3_600_000)).testRuns).toBe(1);
    expect(await claim(h, AGENT_A)).toEqual([]);
    expect(await h.svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
  });

  it('answers 400 naming the field for bodies the create route refuses', async () => {
    await claim(h, AGENT_A);
    expectBadField(await h.request('POST', '/v1/check-sessions/test/api', { name: 'no request' }), 'request');
    // Cross-field rules of the type: frequency 0 needs frequencyOffset.
    expectBadField(
      await h.request('POST', '/v1/check-sessions/test/api', apiTestBody({ frequency: 0 })),
      'frequencyOffset',
    );
    // References: a group the account does not have.
    expectBadField(
      await h.request('POST', '/v1/check-sessions/test/api', apiTestBody({ groupId: 4242 })),
      'groupId',
    );
    expectBadField(
      await h.request(
        'POST',
        '/v1/check-sessions/test/url',
        apiTestBody({ frequency: 0, frequencyOffset: 10 }),
      ),
      'frequency',
    );
    // Heartbeats are not run by an agent.
    expectBadField(
      await h.request('POST', '/v1/check-sessions/test/heartbeat', {
        name: 'beat',
        heartbeat: { period: 1, periodUnit: 'hours', grace: 1, graceUnit: 'hours' },
      }),
      'type',
      'params',
    );
    expect(await h.svc.context.db.selectFrom('test_runs').select('id').execute()).toEqual([]);
    expect(await h.svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
  });

  it('answers 400 naming locations when no connected agent serves any of them', async () => {
    const none = await h.request('POST', '/v1/check-sessions/test/api', apiTestBody());
    expectBadField(none, 'locations');
    // An agent serving other locations does not help.
    await claim(h, AGENT_A, { locations: ['ap-south-1'] });
    expectBadField(
      await h.request(
        'POST',
        '/v1/check-sessions/test/api',
        apiTestBody({ locations: ['us-east-1', 'eu-west-1'] }),
      ),
      'locations',
    );
    expect(await h.svc.context.db.selectFrom('check_sessions').select('id').execute()).toEqual([]);
  });

  it('runs a masked secret with the saved check’s value when the form came from it (checkId)', async () => {
    await claim(h, AGENT_A);
    const saved = await h.request('POST', '/v1/checks/api', apiTestBody({ activated: false }));
    const shown = (await h.request('GET', `/v1/checks/${saved.json().id}`)).json();
    expect(shown.request.headers[0].value).toBe('*****');
    const { id: _id, alertChannels: _c, created_at: _a, updated_at: _u, checkType: _t, ...form } = shown;
    for (const field of ['unservedLocations']) delete form[field];
    const started = await h.request('POST', `/v1/check-sessions/test/api?checkId=${shown.id}`, {
      ...form,
      name: 'edited',
    });
    expect(started.statusCode, started.body).toBe(201);
    const [job] = await claim(h, AGENT_A);
    expect(job!.check.request.headers).toEqual([{ key: 'Authorization', value: `Bearer ${SECRET_HEADER}` }]);
    expect(job!.check.name).toBe('edited');
  });

  it('never answers or logs the planted secrets, nor stores them in clear', async () => {
    await claim(h, AGENT_A);
    const answers: string[] = [];
    const started = await h.request('POST', '/v1/check-sessions/test/api', apiTestBody());
    answers.push(started.body);
    const { checkSessionId } = started.json();
    // A refused body holding them too.
    answers.push(
      (await h.request('POST', '/v1/check-sessions/test/api', apiTestBody({ frequency: 7 }))).body,
    );
    const [job] = await claim(h, AGENT_A);
    await h.svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { authorization: `Bearer ${h.key}`, 'x-agent-id': AGENT_A },
      payload: resultFor(job!),
    });
    answers.push((await h.request('GET', `/v1/check-sessions/${checkSessionId}/completion`)).body);
    answers.push((await h.request('GET', `/v1/check-sessions/${checkSessionId}`)).body);
    const stored = JSON.stringify([
      await h.svc.context.db.selectFrom('check_sessions').selectAll().execute(),
      await h.svc.context.db.selectFrom('check_results').selectAll().execute(),
      await h.svc.context.db.selectFrom('test_runs').selectAll().execute(),
    ]);
    expect(h.logs.join('\n')).toContain('test run started');
    for (const secret of [SECRET_VARIABLE, SECRET_HEADER]) {
      for (const answer of answers) expectNoSecret(answer, secret);
      expectNoSecret(h.logs.join('\n'), secret);
      expectNoSecret(stored, secret);
    }
  });
});
