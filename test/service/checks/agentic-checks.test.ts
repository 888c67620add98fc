import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgenticCheckResult, AgenticScriptChange, Job } from '../../../src/protocol/index.js';
import { applyScriptChange } from '../../../src/service/agentic/repairs.js';
import {
  claimJobs,
  createCheck,
  expectBadField,
  resultFor,
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
  await svc.context.db.deleteFrom('agentic_repairs').execute();
  await svc.context.db.deleteFrom('agentic_runs').execute();
  await svc.context.db.deleteFrom('variables').execute();
});

const AGENT = '00000000-0000-4000-8000-0000000000c1';
const SECRET = 'hunter2-very-secret-value';
const PROMPT =
  'Open {{BASE_URL}}, sign in as {{ LOGIN_USER }} with {{LOGIN_PASSWORD}} and check the dashboard shows "Welcome".';
const SCRIPT_1 =
  "await page.goto(process.env.BASE_URL);\nawait expect(page.getByText('Welcome')).toBeVisible();\n";
const SCRIPT_2 =
  "await page.goto(process.env.BASE_URL);\nawait expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();\n";

/** A valid AGENTIC create body; override fields per test. */
function agenticBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'dashboard after sign-in',
    activated: false,
    prompt: PROMPT,
    environmentVariables: [
      { key: 'BASE_URL', value: 'http://127.0.0.1:1/' },
      { key: 'LOGIN_USER', value: 'ada' },
      { key: 'LOGIN_PASSWORD', value: SECRET, secret: true },
      { key: 'UNRELATED_TOKEN', value: 'not-for-the-model', secret: true },
    ],
    ...overrides,
  };
}

/** A script change as an agent reports it. */
function change(over: Partial<AgenticScriptChange> = {}): AgenticScriptChange {
  return {
    kind: 'REPAIRED',
    baseVersion: 1,
    script: SCRIPT_2,
    diff: '--- a\n+++ b\n@@ -1,2 +1,2 @@\n-old\n+new\n',
    reason: 'the greeting became a heading',
    verified: true,
    ...over,
  };
}

/** The agentic part of a result: a run in `mode` with `scriptChange` and some model usage. */
function agenticPart(scriptChange: AgenticScriptChange | null, over: Partial<AgenticCheckResult> = {}) {
  return {
    mode: scriptChange ? (scriptChange.kind === 'GENERATED' ? 'GENERATE' : 'REPAIR') : 'REPLAY',
    summary: 'signed in and saw the dashboard',
    assertions: [
      { condition: 'the dashboard shows "Welcome"', passed: true, actual: 'Welcome', expected: 'Welcome' },
    ],
    steps: [
      {
        kind: 'TOOL_CALL',
        tool: 'fill',
        input: '{"selector":"#password","value":"*****"}',
        output: 'ok',
        text: null,
        startedAt: new Date().toISOString(),
        durationMs: 12,
      },
      {
        kind: 'MESSAGE',
        tool: null,
        input: null,
        output: null,
        text: 'Done.',
        startedAt: new Date().toISOString(),
        durationMs: 800,
      },
    ],
    suggestions: ['add a data-testid to the greeting'],
    errors: [],
    modelUsage: {
      model: 'qwen3:8b',
      calls: 3,
      durationMs: 2400.5,
      promptTokens: 1500,
      completionTokens: 300,
    },
    scriptVersion: scriptChange?.baseVersion ?? 1,
    scriptChange,
    ...over,
  } satisfies AgenticCheckResult;
}

/** Triggers the check, claims its job as an agent that runs AGENTIC checks, and returns the job. */
async function claimRun(id: string): Promise<Job> {
  await triggerCheck(svc, id);
  const [job, ...more] = await claimJobs(svc, AGENT, { checkTypes: ['AGENTIC'] });
  expect(more).toEqual([]);
  if (!job) throw new Error('no job claimed');
  return job;
}

/** Posts a result for `job` carrying `part`; expects it stored. */
async function postResult(
  job: Job,
  part: Record<string, unknown> | null,
  status: 'PASSED' | 'FAILED' = 'PASSED',
) {
  const res = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': AGENT },
    payload: resultFor(job, status, part ? ({ agenticCheckResult: part } as object) : {}),
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

/** Runs the check once with a result carrying `scriptChange`. */
async function runWith(id: string, scriptChange: AgenticScriptChange | null): Promise<Job> {
  const job = await claimRun(id);
  await postResult(job, agenticPart(scriptChange));
  return job;
}

const getCheck = async (id: string) => (await svc.request('GET', `/v1/checks/${id}`)).json();
const repairsOf = async (id: string) => {
  const res = await svc.request('GET', `/v1/checks/${id}/agentic-repairs`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    id: string;
    status: string;
    kind: string;
    baseVersion: number;
    newVersion: number | null;
    decidedBy: unknown;
  }[];
};

describe('/v1/checks/agentic: create, validate, update', () => {
  it('creates one with the defaults and answers it on every check route', async () => {
    const res = await svc.request('POST', '/v1/checks/agentic', agenticBody());
    expect(res.statusCode, res.body).toBe(201);
    const check = res.json();
    expect(check).toMatchObject({
      checkType: 'AGENTIC',
      prompt: PROMPT,
      frequency: 30,
      agentRuntime: { skills: [] },
      repairMode: 'AUTO',
      script: null,
      scriptVersion: 0,
      timeoutSeconds: 600,
      locations: ['us-east-1'],
    });
    expect(await getCheck(check.id)).toMatchObject({
      checkType: 'AGENTIC',
      scriptVersion: 0,
      prompt: PROMPT,
    });
    const list = (await svc.request('GET', '/v1/checks?checkType=AGENTIC')).json();
    expect(list.map((c: { id: string }) => c.id)).toEqual([check.id]);
    // The deprecated generic create route takes the type too.
    const generic = await svc.request('POST', '/v1/checks', { ...agenticBody(), checkType: 'AGENTIC' });
    expect(generic.statusCode, generic.body).toBe(201);
    // A person may give the first script: it is version 1.
    const withScript = await svc.request(
      'POST',
      '/v1/checks/agentic',
      agenticBody({
        script: SCRIPT_1,
        repairMode: 'REVIEW',
        agentRuntime: { skills: ['http'] },
        frequency: 5,
      }),
    );
    expect(withScript.json()).toMatchObject({
      script: SCRIPT_1,
      scriptVersion: 1,
      repairMode: 'REVIEW',
      agentRuntime: { skills: ['http'] },
      frequency: 5,
    });
  });

  it.each([
    ['no prompt', { prompt: undefined }, 'prompt'],
    ['an empty prompt', { prompt: '' }, 'prompt'],
    ['a blank prompt', { prompt: '   ' }, 'prompt'],
    ['a prompt over 10,000 characters', { prompt: 'x'.repeat(10_001) }, 'prompt'],
    ['a frequency below 5 minutes', { frequency: 2 }, 'frequency'],
    ['a sub-minute frequency', { frequency: 0 }, 'frequency'],
    ['an unknown repair mode', { repairMode: 'SOMETIMES' }, 'repairMode'],
    ['a skill that is no name', { agentRuntime: { skills: ['has space'] } }, 'agentRuntime.skills[0]'],
    ['a timeout over 600 s', { timeoutSeconds: 601 }, 'timeoutSeconds'],
    ['a request', { request: { url: 'http://x.test' } }, 'request.url'],
  ])('refuses %s with a 400 naming the field', async (_name, over, field) => {
    const body = agenticBody(over);
    for (const key of Object.keys(over))
      if ((over as Record<string, unknown>)[key] === undefined) delete body[key];
    expectBadField(await svc.request('POST', '/v1/checks/agentic', body), field);
  });

  it('takes a 10,000-character prompt', async () => {
    const res = await svc.request('POST', '/v1/checks/agentic', agenticBody({ prompt: 'y'.repeat(10_000) }));
    expect(res.statusCode, res.body).toBe(201);
  });

  it('updates: a person’s script edit counts the version up, the same script sent back does not', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody({ script: SCRIPT_1 }));
    const read = await getCheck(id);
    // The whole check sent back as read (scriptVersion included, read-only) changes nothing of the script.
    const same = await svc.request('PUT', `/v1/checks/agentic/${id}`, {
      ...read,
      name: 'renamed',
      scriptVersion: 99,
    });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json()).toMatchObject({ name: 'renamed', script: SCRIPT_1, scriptVersion: 1 });
    const edited = await svc.request('PUT', `/v1/checks/agentic/${id}`, {
      script: SCRIPT_2,
      repairMode: 'REVIEW',
    });
    expect(edited.json()).toMatchObject({
      script: SCRIPT_2,
      scriptVersion: 2,
      repairMode: 'REVIEW',
      prompt: PROMPT,
    });
    const generic = await svc.request('PUT', `/v1/checks/${id}`, { script: SCRIPT_1 });
    expect(generic.json()).toMatchObject({ script: SCRIPT_1, scriptVersion: 3 });
    // Cleared: the next run writes a script again, over version 0.
    const cleared = await svc.request('PUT', `/v1/checks/${id}`, { script: null });
    expect(cleared.json()).toMatchObject({ script: null, scriptVersion: 0 });
    expectBadField(await svc.request('PUT', `/v1/checks/${id}`, { frequency: 1 }), 'frequency');
    expectBadField(await svc.request('PUT', `/v1/checks/${id}`, { prompt: '' }), 'prompt');
    expectBadField(
      await svc.request('PUT', `/v1/checks/${id}`, { agentRuntime: { skills: ['has space'] } }),
      'agentRuntime.skills[0]',
    );
    expectBadField(await svc.request('PUT', `/v1/checks/${id}`, { repairMode: 'NEVER' }), 'repairMode');
    const skills = await svc.request('PUT', `/v1/checks/${id}`, {
      agentRuntime: { skills: ['http', 'files'] },
    });
    expect(skills.json().agentRuntime).toEqual({ skills: ['http', 'files'] });
  });

  it('refuses AGENTIC fields on a check of another type, and finds no browser check on its route', async () => {
    const browser = await createCheck(svc, 'browser', {
      name: 'b',
      activated: false,
      script: 'await page.goto("about:blank")',
    });
    expectBadField(await svc.request('PUT', `/v1/checks/${browser}`, { prompt: 'do things' }), 'prompt');
    expectBadField(await svc.request('PUT', `/v1/checks/${browser}`, { repairMode: 'REVIEW' }), 'repairMode');
    expect((await svc.request('PUT', `/v1/checks/agentic/${browser}`, { name: 'x' })).statusCode).toBe(404);
    expect((await svc.request('GET', `/v1/checks/${browser}/agentic-repairs`)).statusCode).toBe(404);
  });
});

describe('AGENTIC jobs', () => {
  it('carries the prompt, the script and its version, and only the variables the prompt names', async () => {
    // Account variables: one the prompt names (the check's own wins over it), one it does not.
    for (const v of [
      { key: 'BASE_URL', value: 'http://account.test/' },
      { key: 'ACCOUNT_ONLY', value: 'account-secret', secret: true },
    ]) {
      expect((await svc.request('POST', '/v1/variables', v)).statusCode).toBeLessThan(300);
    }
    const id = await createCheck(
      svc,
      'agentic',
      agenticBody({
        script: SCRIPT_1,
        repairMode: 'REVIEW',
        agentRuntime: { skills: ['http'] },
        timeoutSeconds: 300,
      }),
    );
    const job = await claimRun(id);
    expect(job.check).toMatchObject({ id, checkType: 'AGENTIC', runtimeId: '2026.04' });
    expect(job.timeoutMs).toBe(300_000);
    expect(job.check.request).toEqual({
      prompt: PROMPT,
      script: SCRIPT_1,
      scriptVersion: 1,
      repairMode: 'REVIEW',
      skills: ['http'],
      maxModelCalls: 40,
    });
    expect(job.environmentVariables.map((v) => v.key).sort()).toEqual([
      'BASE_URL',
      'LOGIN_PASSWORD',
      'LOGIN_USER',
    ]);
    expect(job.environmentVariables.find((v) => v.key === 'BASE_URL')?.value).toBe('http://127.0.0.1:1/');
    expect(job.environmentVariables.find((v) => v.key === 'LOGIN_PASSWORD')).toMatchObject({
      value: SECRET,
      secret: true,
    });
    expect(JSON.stringify(job)).not.toContain('not-for-the-model');
    expect(JSON.stringify(job)).not.toContain('account-secret');
  });

  it('is claimed only by an agent that says it runs AGENTIC checks and holds the runtime', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody());
    await triggerCheck(svc, id);
    expect(await claimJobs(svc, AGENT, { checkTypes: ['BROWSER'] })).toEqual([]);
    expect(await claimJobs(svc, AGENT, { checkTypes: ['AGENTIC'], runtimes: [] })).toEqual([]);
    const [job] = await claimJobs(svc, AGENT, { checkTypes: ['AGENTIC'] });
    expect(job?.check.request).toMatchObject({ script: null, scriptVersion: 0 });
  });
});

describe('AGENTIC results and script changes', () => {
  it('stores the agentic part with the result and answers it on the result and the session', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody());
    const job = await claimRun(id);
    const part = agenticPart(change({ kind: 'GENERATED', baseVersion: 0, script: SCRIPT_1 }));
    await postResult(job, part);
    const [item] = (await svc.request('GET', `/v1/check-results/${id}`)).json();
    const one = (await svc.request('GET', `/v1/check-results/${id}/${item.id}`)).json();
    expect(one.agenticCheckResult).toEqual(part);
    const session = (await svc.request('GET', `/v1/check-sessions/${job.checkSessionId}`)).json();
    expect(session.results[0].agenticCheckResult).toEqual(part);
  });

  it('AUTO: stores a generated script as version 1 and a verified repair as the next; keeps unverified ones out', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody());
    await runWith(id, change({ kind: 'GENERATED', baseVersion: 0, script: SCRIPT_1 }));
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_1, scriptVersion: 1 });
    await runWith(id, change({ baseVersion: 1, verified: false, script: 'unverified' }));
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_1, scriptVersion: 1 });
    await runWith(id, change({ baseVersion: 1, script: SCRIPT_2 }));
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_2, scriptVersion: 2 });
    const repairs = await repairsOf(id);
    expect(repairs.map((r) => [r.kind, r.status, r.baseVersion, r.newVersion, r.decidedBy])).toEqual([
      ['REPAIRED', 'APPLIED', 1, 2, null],
      ['GENERATED', 'APPLIED', 0, 1, null],
    ]);
    expect(repairs[0]).toMatchObject({
      reason: 'the greeting became a heading',
      script: SCRIPT_2,
      agentId: AGENT,
    });
    // A replay changes nothing.
    await runWith(id, null);
    expect((await getCheck(id)).scriptVersion).toBe(2);
    expect(await repairsOf(id)).toHaveLength(2);
  });

  it('keeps a change made over a version that moved STALE, and never applies it', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody({ script: SCRIPT_1 }));
    const job = await claimRun(id);
    // A person edits the script while the run repairs version 1.
    expect(
      (await svc.request('PUT', `/v1/checks/${id}`, { script: 'edited by a person' })).json().scriptVersion,
    ).toBe(2);
    await postResult(job, agenticPart(change({ baseVersion: 1 })));
    expect(await getCheck(id)).toMatchObject({ script: 'edited by a person', scriptVersion: 2 });
    const [stale] = await repairsOf(id);
    expect(stale).toMatchObject({ status: 'STALE', baseVersion: 1, newVersion: null });
  });

  it('REVIEW: a generated script is stored; a repair waits PENDING until a person applies or rejects it', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody({ repairMode: 'REVIEW' }));
    await runWith(id, change({ kind: 'GENERATED', baseVersion: 0, script: SCRIPT_1 }));
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_1, scriptVersion: 1 });
    await runWith(id, change({ baseVersion: 1, script: SCRIPT_2 }));
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_1, scriptVersion: 1 });
    const [pending] = await repairsOf(id);
    expect(pending).toMatchObject({ status: 'PENDING', newVersion: null, decidedBy: null });

    const applied = await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${pending!.id}/apply`);
    expect(applied.statusCode, applied.body).toBe(200);
    expect(applied.json()).toMatchObject({
      status: 'APPLIED',
      newVersion: 2,
      decidedBy: { kind: 'api-key' },
    });
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_2, scriptVersion: 2 });
    const again = await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${pending!.id}/apply`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      attributes: { code: 'OUTPOST_ERR_REPAIR_NOT_PENDING', status: 'APPLIED' },
    });

    await runWith(id, change({ baseVersion: 2, script: 'third' }));
    const [second] = await repairsOf(id);
    const rejected = await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${second!.id}/reject`);
    expect(rejected.json()).toMatchObject({ status: 'REJECTED', newVersion: null });
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_2, scriptVersion: 2 });
    expect(
      (await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${second!.id}/apply`)).statusCode,
    ).toBe(409);

    // Two repairs over version 2: applying one makes the other stale, and it cannot be applied after.
    await runWith(id, change({ baseVersion: 2, script: 'fourth' }));
    await runWith(id, change({ baseVersion: 2, script: 'fifth' }));
    const [fifth, fourth] = await repairsOf(id);
    expect(
      (await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${fourth!.id}/apply`)).json(),
    ).toMatchObject({ status: 'APPLIED', newVersion: 3 });
    const late = await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${fifth!.id}/apply`);
    expect(late.statusCode).toBe(409);
    expect(late.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_REPAIR_NOT_PENDING', status: 'STALE' });
    expect(await getCheck(id)).toMatchObject({ script: 'fourth', scriptVersion: 3 });

    // A person's edit makes a pending repair stale too.
    await runWith(id, change({ baseVersion: 3, script: 'sixth' }));
    await svc.request('PUT', `/v1/checks/${id}`, { script: 'by hand' });
    expect((await repairsOf(id))[0]).toMatchObject({ status: 'STALE' });

    expect((await svc.request('POST', `/v1/checks/${id}/agentic-repairs/nope/apply`)).statusCode).toBe(404);
    expect(
      (await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${fourth!.id}/reject`, undefined, 'B'))
        .statusCode,
    ).toBe(404);
    expect((await svc.request('GET', `/v1/checks/${id}/agentic-repairs`, undefined, 'B')).statusCode).toBe(
      404,
    );
  });

  it('two locations reporting changes over the same version: one applies, the other is STALE', async () => {
    const id = await createCheck(
      svc,
      'agentic',
      agenticBody({ script: SCRIPT_1, locations: ['us-east-1', 'eu-west-1'], runParallel: true }),
    );
    await triggerCheck(svc, id);
    const jobs = await claimJobs(svc, AGENT, { checkTypes: ['AGENTIC'] });
    expect(jobs).toHaveLength(2);
    await Promise.all(
      jobs.map((job, i) => postResult(job, agenticPart(change({ baseVersion: 1, script: `parallel ${i}` })))),
    );
    const check = await getCheck(id);
    expect(check.scriptVersion).toBe(2);
    const repairs = await repairsOf(id);
    expect(repairs.map((r) => r.status).sort()).toEqual(['APPLIED', 'STALE']);
    const applied = repairs.find((r) => r.status === 'APPLIED') as unknown as { script: string };
    expect(check.script).toBe(applied.script);
  });

  /**
   * Opens a transaction that applies `first` and holds it open until the returned `release` is called, so
   * another writer can be started while it is uncommitted.
   */
  async function holdChange(id: string, first: AgenticScriptChange) {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let applied!: () => void;
    const ready = new Promise<void>((resolve) => {
      applied = resolve;
    });
    const done = svc.context.db.transaction().execute(async (tx) => {
      const status = await applyScriptChange(tx, {
        accountId: svc.accountA.id,
        checkId: id,
        resultId: 'result-a',
        agentId: null,
        change: first,
        nowMs: Date.now(),
      });
      applied();
      await held;
      return status;
    });
    await ready;
    return { release, done };
  }

  it('a second change over the same version, ingested while the first is uncommitted, waits and is STALE', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody({ script: SCRIPT_1 }));
    const a = await holdChange(id, change({ baseVersion: 1, script: 'from replica A' }));
    const b = svc.context.db.transaction().execute((tx) =>
      applyScriptChange(tx, {
        accountId: svc.accountA.id,
        checkId: id,
        resultId: 'result-b',
        agentId: null,
        change: change({ baseVersion: 1, script: 'from replica B' }),
        nowMs: Date.now(),
      }),
    );
    // B has read (or is waiting to read) the check while A's change is uncommitted.
    await new Promise((resolve) => setTimeout(resolve, 300));
    a.release();
    expect(await a.done).toBe('APPLIED');
    expect(await b).toBe('STALE');
    expect(await getCheck(id)).toMatchObject({ script: 'from replica A', scriptVersion: 2 });
  });

  it('an update that read the check before a run stored a script never puts the old script back', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody({ script: SCRIPT_1 }));
    const a = await holdChange(id, change({ baseVersion: 1, script: 'stored by a run' }));
    // On PostgreSQL the update reads version 1 now and reaches its write once the run's change committed: 409.
    // On SQLite (one writer) it reads the check after that commit and changes only the name.
    const put = svc.request('PUT', `/v1/checks/${id}`, { name: 'renamed meanwhile' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    a.release();
    await a.done;
    const res = await put;
    if (res.statusCode === 409) {
      expect(res.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_SCRIPT_MOVED', scriptVersion: 2 });
    } else expect(res.statusCode, res.body).toBe(200);
    expect(await getCheck(id)).toMatchObject({ script: 'stored by a run', scriptVersion: 2 });
  });

  it('ignores an agentic part posted for a check of another type', async () => {
    const id = await createCheck(svc, 'browser', { name: 'b', activated: false, script: SCRIPT_1 });
    await triggerCheck(svc, id);
    const [job] = await claimJobs(svc, AGENT, { checkTypes: ['BROWSER'] });
    await postResult(job!, agenticPart(change({ baseVersion: 0, kind: 'GENERATED', script: 'injected' })));
    expect(await getCheck(id)).toMatchObject({ script: SCRIPT_1 });
    expect((await svc.context.db.selectFrom('agentic_repairs').selectAll().execute()).length).toBe(0);
    expect((await svc.request('GET', '/v1/agentic-usage')).json().runs).toBe(0);
  });

  it('deletes a check’s repairs with it', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody());
    await runWith(id, change({ kind: 'GENERATED', baseVersion: 0 }));
    expect(await repairsOf(id)).toHaveLength(1);
    expect((await svc.request('DELETE', `/v1/checks/${id}`)).statusCode).toBe(204);
    expect((await svc.context.db.selectFrom('agentic_repairs').selectAll().execute()).length).toBe(0);
  });
});

describe('GET /v1/agentic-usage', () => {
  it('sums the month’s runs and model usage of the account', async () => {
    const id = await createCheck(svc, 'agentic', agenticBody());
    await runWith(id, change({ kind: 'GENERATED', baseVersion: 0 }));
    const job = await claimRun(id);
    await postResult(
      job,
      agenticPart(null, {
        modelUsage: { model: null, calls: 0, durationMs: 0, promptTokens: null, completionTokens: null },
      }),
    );
    const month = new Date().toISOString().slice(0, 7);
    const res = await svc.request('GET', `/v1/agentic-usage?month=${month}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      month,
      runs: 2,
      modelCalls: 3,
      durationMs: 2400.5,
      promptTokens: 1500,
      completionTokens: 300,
    });
    expect((await svc.request('GET', '/v1/agentic-usage')).json()).toMatchObject({ month, runs: 2 });
    expect((await svc.request('GET', '/v1/agentic-usage?month=2020-01')).json()).toEqual({
      month: '2020-01',
      runs: 0,
      modelCalls: 0,
      durationMs: 0,
      promptTokens: 0,
      completionTokens: 0,
    });
    expect((await svc.request('GET', `/v1/agentic-usage?month=${month}`, undefined, 'B')).json().runs).toBe(
      0,
    );
    expectBadField(await svc.request('GET', '/v1/agentic-usage?month=2026-13'), 'month', 'querystring');
    expectBadField(await svc.request('GET', '/v1/agentic-usage?month=May'), 'month', 'querystring');
  });
});

describe('secrets', () => {
  it("never answers the check's secret variable value, on any route that shows the check or its runs", async () => {
    const id = await createCheck(svc, 'agentic', agenticBody({ repairMode: 'REVIEW', script: SCRIPT_1 }));
    const job = await claimRun(id);
    expect(JSON.stringify(job)).toContain(SECRET);
    await postResult(job, agenticPart(change({ baseVersion: 1 })));
    const [item] = (await svc.request('GET', `/v1/check-results/${id}`)).json();
    const urls = [
      `/v1/checks/${id}`,
      '/v1/checks',
      `/v1/checks/${id}/agentic-repairs`,
      `/v1/check-results/${id}`,
      `/v1/check-results/${id}/${item.id}`,
      `/v1/check-sessions/${job.checkSessionId}`,
      '/v1/agentic-usage',
    ];
    for (const url of urls) {
      const res = await svc.request('GET', url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).not.toContain(SECRET);
    }
    const [pending] = await repairsOf(id);
    const applied = await svc.request('POST', `/v1/checks/${id}/agentic-repairs/${pending!.id}/apply`);
    expect(applied.body).not.toContain(SECRET);
    expect((await svc.request('GET', `/v1/checks/${id}`)).body).not.toContain(SECRET);
  });
});
