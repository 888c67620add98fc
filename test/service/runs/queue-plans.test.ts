import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactStore } from '../../../src/service/runs/artifacts/artifacts.js';
import { retentionTasks } from '../../../src/service/modules.js';
import { RetentionWorker } from '../../../src/service/platform/store/retention.js';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import type { Database } from '../../../src/service/platform/store/schema.js';
import { type CapturedQuery, planningStore } from '../../helpers/query-plans.js';
import { claimJobs, icmpBody, resultFor } from '../../helpers/service.js';

// Issue 9, 2.3: every hot query of the queue (claim, renew, submit, expire, session settle,
// retention, outbox, result listing) is served by an index: no full scan of a growing table
// and no temporary b-tree for ORDER BY, read from SQLite's own EXPLAIN QUERY PLAN of the SQL
// the service really runs.

type Captured = CapturedQuery;

/** Tables that grow with use; a full scan of one is a bug. */
const GROWING = ['jobs', 'check_results', 'check_sessions', 'agent_events', 'agents', 'result_outbox'];

let db: Kysely<Database>;
let svc: Service;
let key: string;
let captured: Captured[];
let planOf: (query: Captured) => string[];

/** Plan lines that show a full scan of a growing table or a sort in a temporary b-tree. */
function badSteps(plan: string[]): string[] {
  return plan.filter(
    (d) =>
      d.includes('USE TEMP B-TREE') ||
      GROWING.some((t) => new RegExp(`^SCAN ${t}\\b`).test(d) && !/USING (COVERING )?INDEX/.test(d)),
  );
}

beforeAll(async () => {
  ({ db, captured, planOf } = await planningStore());
  const accountId = await createAccount(db, 'A');
  key = await createApiKey(db, accountId);
  svc = await build({ db, log: pino({ level: 'silent' }), resultOutbox: { pollMs: 10 } });
});
afterAll(async () => {
  await svc.close();
  await db.destroy();
});

const auth = () => ({ authorization: `Bearer ${key}` });

describe('query plans of the queue', () => {
  it('use an index for every hot query and never sort in a temporary b-tree', async () => {
    const service = { ...svc, auth } as unknown as Parameters<typeof claimJobs>[0];
    const check = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: auth(),
      payload: icmpBody({ activated: false }),
    });
    const checkId = check.json().id as string;
    const trigger = () =>
      svc.app.inject({
        method: 'POST',
        url: '/v1/check-sessions/trigger',
        headers: auth(),
        payload: { target: { checkId: [checkId] } },
      });
    await trigger();
    await trigger();
    captured.length = 0;

    // The hot paths, as agents and the scheduler run them.
    expect(
      await claimJobs(service, randomUUID(), { waitSeconds: 0, freeSlots: { uptime: 0, main: 0 } }),
    ).toEqual([]);
    const agent = randomUUID();
    const jobs = await claimJobs(service, agent);
    expect(jobs).toHaveLength(2);
    const headers = { ...auth(), 'x-agent-id': agent };
    await svc.app.inject({ method: 'POST', url: `/v1/agent/jobs/${jobs[0]!.jobId}/lease`, headers });
    await svc.app.inject({
      method: 'PUT',
      url: `/v1/agent/jobs/${jobs[0]!.jobId}/artifacts/a.txt`,
      headers: { ...headers, 'content-type': 'application/octet-stream' },
      payload: Buffer.from('x'),
    });
    for (const job of jobs) {
      await svc.app.inject({
        method: 'POST',
        url: `/v1/agent/jobs/${job.jobId}/result`,
        headers,
        payload: resultFor(job),
      });
    }
    // A repeated post (duplicate detection after the job is gone).
    await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${jobs[0]!.jobId}/result`,
      headers,
      payload: resultFor(jobs[0]!),
    });
    await svc.queue.expireStale(Date.now() + 10 * 60_000);
    await trigger();
    await svc.queue.claim(
      { accountId: jobs[0]!.accountId, agentId: agent, locations: null },
      {
        checkTypes: ['ICMP'],
        freeSlots: { uptime: 1, main: 0 },
      },
      Date.now() + 400_000,
    );
    await svc.outbox.runDue();
    await new RetentionWorker(db, retentionTasks({ artifacts: new ArtifactStore() }), {
      resultDays: 90,
      artifactDays: 30,
      agentDays: 30,
      log: pino({ level: 'silent' }),
    }).runOnce(Date.now());
    // Result listing by check and time, newest first (GET /v1/check-results/{checkId}).
    await db
      .selectFrom('check_results')
      .select(['id', 'doc'])
      .where('account_id', '=', jobs[0]!.accountId)
      .where('check_id', '=', checkId)
      .where('started_at', '>=', 0)
      .where('started_at', '<=', Date.now())
      .orderBy('started_at', 'desc')
      .limit(100)
      .execute();

    const hot = captured.filter(
      (q) => /^(select|update|delete)/i.test(q.sql) && GROWING.some((t) => q.sql.includes(`"${t}"`)),
    );
    expect(hot.length).toBeGreaterThan(20);
    const bad = hot.map((q) => ({ sql: q.sql, plan: planOf(q) })).filter((q) => badSteps(q.plan).length > 0);
    expect(bad).toEqual([]);
  });

  it('claims through jobs_claimable, expiry through the state/expiry indexes', () => {
    const claim = captured.find((q) => /from "jobs" where "account_id" = \? and "state" = \?/.test(q.sql));
    expect(claim).toBeDefined();
    expect(planOf(claim!).join('\n')).toMatch(/SEARCH jobs USING INDEX jobs_claimable/);
    // The jobs' own statements: the delivery worker's on alert_notifications, running beside, read alike.
    const expiry = captured.find((q) => /from "jobs" where "state" = \? and "expires_at" <= \?/.test(q.sql));
    expect(planOf(expiry!).join('\n')).toMatch(/SEARCH jobs USING (COVERING )?INDEX jobs_queue_expiry/);
    const lapsed = captured.find((q) =>
      /from "jobs" where "state" = \? and "lease_expires_at" <= \?/.test(q.sql),
    );
    expect(planOf(lapsed!).join('\n')).toMatch(/SEARCH jobs USING (COVERING )?INDEX jobs_lease_expiry/);
  });
});
