import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { build, type BuildOptions, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import type { StoredResult } from '../../../src/service/context.js';
import { type Database, openSqliteDatabase } from '../../../src/service/platform/store/database.js';
import { BATCHED_DOC_CHARS } from '../../../src/service/runs/results/outbox-store.js';
import { icmpBody, resultFor } from '../../helpers/service.js';

// Issue 9, 2.13: work that follows a stored result is written with the result (an outbox row
// per hook) and done by a worker with retries, never inside the agent's result post.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Harness = { svc: Service; db: Kysely<Database>; key: string; accountId: string; dir: string };

async function start(
  dir: string,
  options: Partial<BuildOptions>,
  existing?: { key: string; accountId: string },
): Promise<Harness> {
  const db = await openSqliteDatabase(join(dir, 'outpost.db'));
  const accountId = existing?.accountId ?? (await createAccount(db, 'A'));
  const key = existing?.key ?? (await createApiKey(db, accountId));
  const svc = await build({
    db,
    log: pino({ level: 'silent' }),
    artifactsDir: join(dir, 'artifacts'),
    ...options,
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await svc.close();
    await db.destroy();
  };
  cleanups.push(close);
  return { svc: { ...svc, close }, db, key, accountId, dir };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'outpost-outbox-'));
  cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Creates a check, triggers it, claims its job as a new agent. */
async function runningJob(h: Harness, name = 'ping'): Promise<{ job: Job; agent: string }> {
  const auth = { authorization: `Bearer ${h.key}` };
  const check = await h.svc.app.inject({
    method: 'POST',
    url: '/v1/checks/icmp',
    headers: auth,
    payload: icmpBody({ name, activated: false }),
  });
  expect(check.statusCode, check.body).toBe(201);
  const trig = await h.svc.app.inject({
    method: 'POST',
    url: '/v1/check-sessions/trigger',
    headers: auth,
    payload: { target: { checkId: [check.json().id] } },
  });
  expect(trig.statusCode).toBe(201);
  const agent = randomUUID();
  const claim = await h.svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/claim',
    headers: { ...auth, 'x-agent-id': agent },
    payload: {
      agentVersion: 't',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['ICMP'],
      runtimes: [],
      freeSlots: { uptime: 1, main: 0 },
      waitSeconds: 0,
    },
  });
  const job = claim.json().jobs[0] as Job;
  expect(job).toBeDefined();
  return { job, agent };
}

function post(h: Harness, agent: string, job: Job) {
  return h.svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { authorization: `Bearer ${h.key}`, 'x-agent-id': agent },
    payload: resultFor(job, 'FAILED', { errorMessage: 'connection refused' }),
  });
}

const outboxRows = (h: Harness) =>
  h.db.selectFrom('result_outbox').select(['hook', 'attempts', 'last_error']).orderBy('id').execute();

describe('result outbox', () => {
  it('writes one row per hook with the result, and retries a hook that throws twice until it succeeds', async () => {
    const seen: StoredResult[] = [];
    let calls = 0;
    const flaky = async (stored: StoredResult) => {
      calls += 1;
      if (calls <= 2) throw new Error(`flaky failure ${calls}`);
      seen.push(stored);
    };
    const h = await start(await tempDir(), {
      resultHooks: [{ name: 'flaky', run: flaky }],
      resultOutbox: { baseDelayMs: 20, maxDelayMs: 50, pollMs: 10 },
    });
    const { job, agent } = await runningJob(h);
    expect((await post(h, agent, job)).statusCode).toBe(200);
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(1);
    expect(calls).toBe(3);
    expect(seen[0]).toMatchObject({ jobId: job.jobId, checkId: job.check.id, result: { status: 'FAILED' } });
    // Done rows are deleted; the error-groups hook ran from its own row too.
    await expect.poll(() => outboxRows(h), { timeout: 5000 }).toEqual([]);
    const groups = await h.db.selectFrom('error_groups').select('raw_error_message').execute();
    expect(groups).toEqual([{ raw_error_message: 'connection refused' }]);
  });

  it('writes a row only for the hooks that take the result: a passing result has none for error groups', async () => {
    const failures: string[] = [];
    // Started and never polled: the rows stay where the result's transaction wrote them.
    const h = await start(await tempDir(), {
      resultHooks: [
        {
          name: 'failures',
          run: async (stored) => void failures.push(stored.jobId),
          takes: (result) => result.status === 'FAILED',
        },
        { name: 'every', run: async () => {} },
      ],
      resultOutbox: { pollMs: 3_600_000 },
    });
    await h.svc.context.outbox.stop();
    const passing = await runningJob(h, 'passing');
    const passed = await h.svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${passing.job.jobId}/result`,
      headers: { authorization: `Bearer ${h.key}`, 'x-agent-id': passing.agent },
      payload: resultFor(passing.job, 'PASSED'),
    });
    expect(passed.statusCode, passed.body).toBe(200);
    expect((await outboxRows(h)).map((row) => row.hook)).toEqual(['every']);
    const failing = await runningJob(h, 'failing');
    expect((await post(h, failing.agent, failing.job)).statusCode).toBe(200);
    expect((await outboxRows(h)).map((row) => row.hook)).toEqual([
      'every',
      'error-groups',
      'failures',
      'every',
    ]);
  });

  it('hands every hook its whole result: the pass reads short ones together and a long one on its own', async () => {
    const seen = new Map<string, StoredResult>();
    const h = await start(await tempDir(), {
      resultHooks: [{ name: 'seen', run: async (stored) => void seen.set(stored.jobId, stored) }],
      resultOutbox: { pollMs: 10 },
    });
    const logs = Array.from({ length: 40 }, (_, i) => ({
      time: new Date().toISOString(),
      level: 'INFO' as const,
      msg: `line ${i} ${'x'.repeat(Math.ceil(BATCHED_DOC_CHARS / 40))}`,
    }));
    const long = await runningJob(h, 'long');
    const short = await runningJob(h, 'short');
    const posted = await h.svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${long.job.jobId}/result`,
      headers: { authorization: `Bearer ${h.key}`, 'x-agent-id': long.agent },
      payload: resultFor(long.job, 'PASSED', { logs }),
    });
    expect(posted.statusCode, posted.body).toBe(200);
    expect((await post(h, short.agent, short.job)).statusCode).toBe(200);
    await expect.poll(() => seen.size, { timeout: 5000 }).toBe(2);
    expect(seen.get(long.job.jobId)?.result.logs).toEqual(logs);
    expect(JSON.stringify(seen.get(long.job.jobId)?.result).length).toBeGreaterThan(BATCHED_DOC_CHARS);
    expect(seen.get(short.job.jobId)).toMatchObject({
      checkId: short.job.check.id,
      result: { status: 'FAILED' },
    });
  });

  it('answers the result post without waiting for hooks', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let ran = false;
    const slow = async () => {
      await gate;
      ran = true;
    };
    const h = await start(await tempDir(), {
      resultHooks: [{ name: 'slow', run: slow }],
      resultOutbox: { pollMs: 10 },
    });
    cleanups.push(async () => release());
    const { job, agent } = await runningJob(h);
    const started = performance.now();
    const res = await post(h, agent, job);
    expect(res.statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(ran).toBe(false);
    release();
    await expect.poll(() => ran, { timeout: 5000 }).toBe(true);
  });

  it('runs the hooks of a result stored before a restart', async () => {
    const dir = await tempDir();
    // First life: the result is stored, then the process dies before any hook ran.
    const first = await start(dir, {
      resultHooks: [{ name: 'seen', run: () => expect.unreachable('no hook runs in the first life') }],
      resultOutbox: { start: false },
    });
    const { job, agent } = await runningJob(first);
    expect((await post(first, agent, job)).statusCode).toBe(200);
    expect((await outboxRows(first)).map((r) => r.hook)).toEqual(['error-groups', 'seen']);
    await first.svc.close();

    const seen: string[] = [];
    const second = await start(
      dir,
      {
        resultHooks: [{ name: 'seen', run: async (s) => void seen.push(s.jobId) }],
        resultOutbox: { pollMs: 10 },
      },
      { key: first.key, accountId: first.accountId },
    );
    await expect.poll(() => seen, { timeout: 5000 }).toEqual([job.jobId]);
    await expect.poll(() => outboxRows(second), { timeout: 5000 }).toEqual([]);
    expect(await second.db.selectFrom('error_groups').select('check_id').execute()).toEqual([
      { check_id: job.check.id },
    ]);
  });

  it('never lets a failing row block the others; counts its attempts and keeps its error', async () => {
    const done: string[] = [];
    let poisonJob = '';
    const hook = async (s: StoredResult) => {
      if (s.jobId === poisonJob) throw new Error('poison');
      done.push(s.jobId);
    };
    const h = await start(await tempDir(), {
      resultHooks: [{ name: 'hook', run: hook }],
      resultOutbox: { baseDelayMs: 10, maxDelayMs: 20, pollMs: 10, maxAttempts: 1000 },
    });
    const poison = await runningJob(h, 'poison');
    poisonJob = poison.job.jobId;
    expect((await post(h, poison.agent, poison.job)).statusCode).toBe(200);
    const others = [await runningJob(h, 'one'), await runningJob(h, 'two')];
    for (const o of others) expect((await post(h, o.agent, o.job)).statusCode).toBe(200);
    await expect
      .poll(() => [...done].sort(), { timeout: 5000 })
      .toEqual(others.map((o) => o.job.jobId).sort());
    await expect
      .poll(async () => (await outboxRows(h)).find((r) => r.hook === 'hook')?.attempts ?? 0, {
        timeout: 5000,
      })
      .toBeGreaterThan(2);
    const [row] = await outboxRows(h);
    expect(row).toMatchObject({ hook: 'hook', last_error: 'poison' });
  });
});
