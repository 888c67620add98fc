import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentScope, ClaimSpec } from '../../../src/service/runs/queue/queue.js';
import { Scheduler } from '../../../src/service/runs/scheduler/scheduler.js';
import {
  apiBody,
  createCheck,
  icmpBody,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

// Issue 9, 2.4, 2.5 and 2.11 (service side), with the clock injected through the queue's
// `nowMs` arguments: leases that lapse, capped claims, no re-lease to the agent that lost it,
// runtimes, deleted checks, and a scheduler tick that one bad check cannot roll back.

let svc: TestService;
afterEach(async () => svc?.close());

const LEASE_MS = 10_000;
const EXPIRY_MS = 60_000;
const spec: ClaimSpec = { checkTypes: ['ICMP', 'API'], freeSlots: { uptime: 5, main: 5 }, runtimes: [] };
const scopeOf = (agentId: string): AgentScope => ({ accountId: svc.accountA.id, agentId, locations: null });

async function session(id: string) {
  return (await svc.request('GET', `/v1/check-sessions/${id}`)).json();
}

async function lapsedSetup(over: { leaseMs?: number; queueExpiryMs?: number } = {}) {
  svc = await testService({ leaseMs: LEASE_MS, queueExpiryMs: EXPIRY_MS, ...over });
  const checkId = await createCheck(svc, 'icmp', icmpBody({ activated: false }));
  const sessionId = await triggerCheck(svc, checkId);
  const row = await svc.context.db.selectFrom('jobs').select(['id', 'enqueued_at']).executeTakeFirstOrThrow();
  return { checkId, sessionId, jobId: row.id, t0: Number(row.enqueued_at) };
}

describe('a lease that lapses', () => {
  it('is queued again for another agent; the agent that lost it gets 409 and never gets it back', async () => {
    const { jobId, t0 } = await lapsedSetup();
    const a = randomUUID();
    const b = randomUUID();
    const [job] = await svc.queue.claim(scopeOf(a), spec, t0);
    expect(job?.jobId).toBe(jobId);
    // A is stopped (SIGSTOP) past its lease; the expiry pass takes the job back.
    const pass = await svc.queue.expireStale(t0 + LEASE_MS + 1);
    expect(pass.requeued).toEqual([jobId]);
    // A wakes up (SIGCONT): its renewal, upload and result are refused, and its claims never
    // return the same job id, even with nobody else around.
    await expect(svc.queue.renewLease(scopeOf(a), jobId, t0 + LEASE_MS + 2)).rejects.toMatchObject({
      statusCode: 409,
      attributes: { code: 'OUTPOST_ERR_LEASE_LOST' },
    });
    await expect(svc.queue.assertHeldBy(scopeOf(a), jobId)).rejects.toMatchObject({ statusCode: 409 });
    await expect(
      svc.queue.results.submitResult(scopeOf(a), jobId, resultFor(job!), t0 + LEASE_MS + 3),
    ).rejects.toMatchObject({ statusCode: 409 });
    expect(await svc.queue.claim(scopeOf(a), spec, t0 + LEASE_MS + 4)).toEqual([]);
    const [again] = await svc.queue.claim(scopeOf(b), spec, t0 + LEASE_MS + 5);
    expect(again?.jobId).toBe(jobId);
    // After B loses it too, A still never gets it back.
    await svc.queue.expireStale(t0 + 2 * LEASE_MS + 10);
    expect(await svc.queue.claim(scopeOf(a), spec, t0 + 2 * LEASE_MS + 11)).toEqual([]);
    expect(await svc.queue.claim(scopeOf(b), spec, t0 + 2 * LEASE_MS + 12)).toEqual([]);
  });

  it('is lost at once: renewal, upload and result of the lapsed holder are refused before anyone took the job', async () => {
    const { jobId, t0 } = await lapsedSetup();
    const a = randomUUID();
    const [job] = await svc.queue.claim(scopeOf(a), spec, t0);
    const late = t0 + LEASE_MS;
    await expect(svc.queue.renewLease(scopeOf(a), jobId, late)).rejects.toMatchObject({ statusCode: 409 });
    await expect(svc.queue.assertHeldBy(scopeOf(a), jobId, late)).rejects.toMatchObject({ statusCode: 409 });
    await expect(
      svc.queue.results.submitResult(scopeOf(a), jobId, resultFor(job!), late),
    ).rejects.toMatchObject({
      statusCode: 409,
    });
    expect(await svc.context.db.selectFrom('check_results').select('id').execute()).toEqual([]);
    // Within its lease the same holder is served.
    await svc.close();
    const again = await lapsedSetup();
    const [fresh] = await svc.queue.claim(scopeOf(a), spec, again.t0);
    expect(await svc.queue.renewLease(scopeOf(a), again.jobId, again.t0 + LEASE_MS - 1)).toBe(
      again.t0 + 2 * LEASE_MS - 1,
    );
    await svc.queue.results.submitResult(
      scopeOf(a),
      fresh!.jobId,
      resultFor(fresh!),
      again.t0 + 2 * LEASE_MS - 2,
    );
  });

  it('is taken back by a claim of another agent even before the expiry pass runs', async () => {
    const { jobId, t0 } = await lapsedSetup();
    await svc.queue.claim(scopeOf(randomUUID()), spec, t0);
    const [job] = await svc.queue.claim(scopeOf(randomUUID()), spec, t0 + LEASE_MS);
    expect(job?.jobId).toBe(jobId);
  });

  it('with no other agent, ends its session TIMED_OUT once the run expires instead of PROGRESS forever', async () => {
    const { jobId, sessionId, t0 } = await lapsedSetup();
    await svc.queue.claim(scopeOf(randomUUID()), spec, t0);
    await svc.queue.expireStale(t0 + LEASE_MS + 1);
    expect((await session(sessionId)).status).toBe('PROGRESS');
    const pass = await svc.queue.expireStale(t0 + EXPIRY_MS);
    expect(pass.expired).toEqual([jobId]);
    expect(pass.endedSessions).toEqual([sessionId]);
    expect((await session(sessionId)).status).toBe('TIMED_OUT');
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
  });

  it('past the run’s deadline ends the run with an error result stored as the location’s result', async () => {
    // A lease longer than the queue expiry: when it lapses, re-running is no longer useful.
    const { jobId, sessionId, checkId, t0 } = await lapsedSetup({ leaseMs: EXPIRY_MS * 2 });
    const [job] = await svc.queue.claim(scopeOf(randomUUID()), spec, t0 + 1000);
    const pass = await svc.queue.expireStale(t0 + 1000 + EXPIRY_MS * 2);
    expect(pass.failed).toEqual([jobId]);
    expect(pass.endedSessions).toEqual([sessionId]);
    const done = await session(sessionId);
    expect(done.status).toBe('FAILED');
    expect(done.results).toHaveLength(1);
    expect(done.results[0]).toMatchObject({
      resultType: 'FINAL',
      status: 'FAILED',
      hasErrors: true,
      runLocation: job!.runLocation,
      errorMessage: expect.stringContaining('stopped renewing its lease'),
    });
    const rows = await svc.context.db.selectFrom('check_results').select(['check_id', 'job_id']).execute();
    expect(rows).toEqual([{ check_id: checkId, job_id: jobId }]);
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
  });

  it('is re-leased at most maxClaims (3) times; then the job fails saying it was claimed 3 times', async () => {
    svc = await testService({ leaseMs: LEASE_MS, queueExpiryMs: 10 * EXPIRY_MS });
    const checkId = await createCheck(svc, 'icmp', icmpBody({ activated: false }));
    const sessionId = await triggerCheck(svc, checkId);
    const t0 = Date.now();
    let now = t0;
    const agents: string[] = [];
    for (let i = 0; i < 3; i++) {
      agents.push(randomUUID());
      now += 1;
      expect(await svc.queue.claim(scopeOf(agents[i]!), spec, now)).toHaveLength(1);
      now += LEASE_MS;
      const pass = await svc.queue.expireStale(now);
      expect(pass[i < 2 ? 'requeued' : 'failed']).toHaveLength(1);
    }
    // A poison job that crashes every agent is not handed out a fourth time.
    expect(await svc.queue.claim(scopeOf(randomUUID()), spec, now + 1)).toEqual([]);
    const done = await session(sessionId);
    expect(done.status).toBe('FAILED');
    expect(done.results[0].errorMessage).toMatch(/claimed 3 times without a result/);
  });
});

describe('lease renewal', () => {
  it('is one conditional update: it never extends a lease a concurrent claim gave to another agent', async () => {
    const { jobId, t0 } = await lapsedSetup();
    let now = t0;
    const holders = [randomUUID()];
    await svc.queue.claim(scopeOf(holders[0]!), spec, now);
    // Rounds of: the holder's lease lapses, then its renewal races another agent's claim.
    for (let round = 0; round < 2; round++) {
      now += LEASE_MS + 1;
      const stale = holders.at(-1)!;
      const next = randomUUID();
      const [renewed, claimed] = await Promise.allSettled([
        svc.queue.renewLease(scopeOf(stale), jobId, now),
        svc.queue.claim(scopeOf(next), spec, now),
      ]);
      const row = await svc.context.db
        .selectFrom('jobs')
        .select(['agent_id', 'lease_expires_at'])
        .executeTakeFirstOrThrow();
      const claimedIt = claimed.status === 'fulfilled' && claimed.value.length === 1;
      if (claimedIt) {
        // The new holder's lease is exactly its own, and the stale renewal was refused.
        expect(renewed.status).toBe('rejected');
        expect(row).toEqual({ agent_id: next, lease_expires_at: now + LEASE_MS });
        holders.push(next);
      } else {
        expect(renewed.status).toBe('fulfilled');
        expect(row.agent_id).toBe(stale);
      }
    }
  });

  it('refuses a renewal after the job ended, and for an unknown job answers 404', async () => {
    const { jobId, t0 } = await lapsedSetup();
    const a = randomUUID();
    const [job] = await svc.queue.claim(scopeOf(a), spec, t0);
    await svc.queue.results.submitResult(scopeOf(a), jobId, resultFor(job!), t0 + 5);
    await expect(svc.queue.renewLease(scopeOf(a), jobId, t0 + 6)).rejects.toMatchObject({ statusCode: 409 });
    await expect(svc.queue.renewLease(scopeOf(a), randomUUID(), t0 + 6)).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});

describe('claims', () => {
  it('hand a job whose script needs runtime X only to agents that advertise X', async () => {
    svc = await testService();
    const scripted = await createCheck(
      svc,
      'api',
      apiBody({ localSetupScript: 'request.headers["x"] = "1";', runtimeId: '2025.04' }),
    );
    const plain = await createCheck(svc, 'api', apiBody({ name: 'plain' }));
    await triggerCheck(svc, scripted);
    await triggerCheck(svc, plain);
    const now = Date.now() + 10;
    const api: ClaimSpec = { checkTypes: ['API'], freeSlots: { uptime: 0, main: 5 } };
    // No runtime advertised: only the job without a script.
    const none = await svc.queue.claim(scopeOf(randomUUID()), { ...api, runtimes: [] }, now);
    expect(none.map((j) => j.check.id)).toEqual([plain]);
    const other = await svc.queue.claim(scopeOf(randomUUID()), { ...api, runtimes: ['2026.04'] }, now);
    expect(other).toEqual([]);
    const holder = await svc.queue.claim(
      scopeOf(randomUUID()),
      { ...api, runtimes: ['2026.04', '2025.04'] },
      now,
    );
    expect(holder.map((j) => [j.check.id, j.check.runtimeId])).toEqual([[scripted, '2025.04']]);
  });

  it('drop the jobs of a deleted check instead of handing them out, and end their session', async () => {
    svc = await testService();
    const checkId = await createCheck(svc, 'icmp', icmpBody({ activated: false }));
    const sessionId = await triggerCheck(svc, checkId);
    expect((await svc.request('DELETE', `/v1/checks/${checkId}`)).statusCode).toBe(204);
    expect(await svc.queue.claim(scopeOf(randomUUID()), spec, Date.now() + 10)).toEqual([]);
    expect(await svc.context.db.selectFrom('jobs').select('id').execute()).toEqual([]);
    expect((await session(sessionId)).status).not.toBe('PROGRESS');
  });
});

describe('scheduler tick', () => {
  it('enqueues the other checks when one check’s enqueue throws, logs its id, and moves its next run on', async () => {
    svc = await testService();
    const good = await createCheck(svc, 'icmp', icmpBody({ name: 'good', activated: true, frequency: 1 }));
    const bad = await createCheck(svc, 'icmp', icmpBody({ name: 'bad', activated: true, frequency: 1 }));
    const db = svc.context.db;
    // The bad check's document names no location: building its job fails inside enqueue.
    const doc = JSON.parse(
      (await db.selectFrom('checks').select('doc').where('id', '=', bad).executeTakeFirstOrThrow()).doc,
    );
    await db
      .updateTable('checks')
      .set({ doc: JSON.stringify({ ...doc, locations: [], privateLocations: [] }) })
      .where('id', '=', bad)
      .execute();
    const now = Date.now() + 120_000;
    await db
      .updateTable('checks')
      .set({ next_run_at: now - 1 })
      .execute();
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: 'error' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    const scheduler = new Scheduler(db, svc.queue, { log });
    expect(await scheduler.tick(now)).toBe(1);
    const jobs = await db.selectFrom('jobs').select('check_id').execute();
    expect(jobs).toEqual([{ check_id: good }]);
    expect(lines).toEqual([
      expect.objectContaining({ checkId: bad, msg: expect.stringContaining('could not be enqueued') }),
    ]);
    const next = await db.selectFrom('checks').select(['id', 'next_run_at']).execute();
    for (const row of next) expect(Number(row.next_run_at)).toBeGreaterThan(now);
    // The next tick, a moment later, neither retries the bad check nor repeats the good one (a
    // second later could already be the next slot of a check running every minute).
    expect(await scheduler.tick(now + 1)).toBe(0);
    expect(lines).toHaveLength(1);
  });
});
