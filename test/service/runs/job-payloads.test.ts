import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  apiBody,
  claimJobs,
  createCheck,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

// Issue 9, 1.7: job rows carried the merged secrets forever. Now a job's payload is sealed at
// rest and the job row is deleted as soon as the job ends, however it ends.

let svc: TestService;
afterEach(async () => svc?.close());

const SECRET = `s3cret-${randomUUID()}`;

/** Every text stored in the queue's and results' tables, to look for the secret. */
async function storedText(): Promise<string> {
  const db = svc.context.db;
  const tables = [
    await db.selectFrom('jobs').selectAll().execute(),
    await db.selectFrom('check_results').selectAll().execute(),
    await db.selectFrom('check_sessions').selectAll().execute(),
    await db.selectFrom('result_outbox').selectAll().execute(),
  ];
  return JSON.stringify(tables);
}

async function secretJob(): Promise<string> {
  svc = await testService({ leaseMs: 10_000, queueExpiryMs: 60_000 });
  const checkId = await createCheck(
    svc,
    'api',
    apiBody({ environmentVariables: [{ key: 'TOKEN', value: SECRET, secret: true }] }),
  );
  await triggerCheck(svc, checkId);
  return checkId;
}

describe('job payloads', () => {
  it('are sealed at rest, opened for the claiming agent, and deleted with the job when its result is stored', async () => {
    await secretJob();
    const [stored] = await svc.context.db.selectFrom('jobs').select('payload').execute();
    expect(stored!.payload).toMatch(/^v1:/);
    expect(await storedText()).not.toContain(SECRET);
    const agent = randomUUID();
    const [job] = await claimJobs(svc, agent);
    expect(job!.environmentVariables).toContainEqual({ key: 'TOKEN', value: SECRET, secret: true });
    const res = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': agent },
      payload: resultFor(job!),
    });
    expect(res.statusCode).toBe(200);
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
  });

  it('are deleted when a job expires unclaimed, and when a lapsed lease ends the run', async () => {
    await secretJob();
    const row = await svc.context.db.selectFrom('jobs').select('enqueued_at').executeTakeFirstOrThrow();
    await svc.queue.expireStale(Number(row.enqueued_at) + 60_000);
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
    await svc.close();

    await secretJob();
    const spec = { checkTypes: ['API'] as const, freeSlots: { uptime: 0, main: 1 }, runtimes: [] };
    const t0 = Date.now() + 10;
    let now = t0;
    for (let i = 0; i < 3; i++) {
      const scope = { accountId: svc.accountA.id, agentId: randomUUID(), locations: null };
      expect(await svc.queue.claim(scope, { ...spec, checkTypes: [...spec.checkTypes] }, now)).toHaveLength(
        1,
      );
      now += 10_001;
      await svc.queue.expireStale(now);
    }
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
    const results = await svc.context.db.selectFrom('check_results').select('status').execute();
    expect(results).toEqual([{ status: 'FAILED' }]);
    expect(await storedText()).not.toContain(SECRET);
  });
});
