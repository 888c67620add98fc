import { afterEach, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../../src/protocol/index.js';
import { settleSession } from '../../../src/service/runs/sessions/sessions.js';
import {
  type TestService,
  claimJobs,
  createCheck,
  icmpBody,
  resultFor,
  TEST_DATABASE,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

// A check session ends with its last run. When the last two runs of a session end at once (two agents post
// their results together, through one replica or two), each transaction deletes its own job and then asks
// whether the session has any job left: neither may see the other's job still there and leave the session in
// PROGRESS for ever. On PostgreSQL the settling takes the session's row lock first, so the second sees the
// first's committed delete; SQLite runs one writer at a time.

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const LOCATIONS = ['eu-west-1', 'us-east-1', 'ap-southeast-1'];

describe('check sessions end with their last run', () => {
  // SQLite has one writer: its transactions cannot interleave like this (the second would wait for ever).
  it.runIf(TEST_DATABASE === 'postgres')(
    'of two runs that end in transactions open at once, the one settling last ends the session',
    async () => {
      svc = await testService();
      const checkId = await createCheck(
        svc,
        'icmp',
        icmpBody({ activated: false, locations: LOCATIONS.slice(0, 2), runParallel: true }),
      );
      const sessionId = await triggerCheck(svc, checkId);
      const db = svc.context.db;
      const jobs = await db
        .selectFrom('jobs')
        .select('id')
        .where('check_session_id', '=', sessionId)
        .execute();
      expect(jobs).toHaveLength(2);
      // Each run's transaction deletes its job, as storing its result does; the first settles while the
      // second's delete is not committed yet, the second settles before the first commits.
      const deferred = () => {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => {
          resolve = r;
        });
        return { promise, resolve };
      };
      const firstDeleted = deferred();
      const secondDeleted = deferred();
      const firstSettled = deferred();
      const secondSettling = deferred();
      const first = db.transaction().execute(async (tx) => {
        await tx.deleteFrom('jobs').where('id', '=', jobs[0]!.id).execute();
        firstDeleted.resolve();
        await secondDeleted.promise;
        const ended = await settleSession(tx, sessionId, Date.now());
        firstSettled.resolve();
        await secondSettling.promise;
        return ended;
      });
      const second = db.transaction().execute(async (tx) => {
        await firstDeleted.promise;
        await tx.deleteFrom('jobs').where('id', '=', jobs[1]!.id).execute();
        secondDeleted.resolve();
        await firstSettled.promise;
        const settling = settleSession(tx, sessionId, Date.now());
        // On PostgreSQL this settle waits for the first transaction's row lock; give it time to start.
        setTimeout(() => secondSettling.resolve(), 100);
        return settling;
      });
      const ended = await Promise.all([first, second]);
      expect(ended).toEqual([false, true]);
      const session = await svc.request('GET', `/v1/check-sessions/${sessionId}`);
      expect(session.json()).toMatchObject({ status: 'PASSED' });
    },
  );

  it('a session whose runs all end at once ends, every time', async () => {
    svc = await testService();
    const checkId = await createCheck(
      svc,
      'icmp',
      icmpBody({ activated: false, locations: LOCATIONS, runParallel: true }),
    );
    for (let round = 0; round < 15; round++) {
      const sessionId = await triggerCheck(svc, checkId);
      const jobs = (
        await Promise.all(
          LOCATIONS.map((location) =>
            claimJobs(svc!, `00000000-0000-4000-8000-00000000000${LOCATIONS.indexOf(location)}`, {
              locations: [location],
            }),
          ),
        )
      ).flat();
      expect(jobs.map((j) => j.runLocation).sort()).toEqual([...LOCATIONS].sort());
      const answers = await Promise.all(
        jobs.map((job, i) =>
          svc!.app.inject({
            method: 'POST',
            url: `/v1/agent/jobs/${job.jobId}/result`,
            headers: {
              ...svc!.auth(),
              'x-agent-id': `00000000-0000-4000-8000-00000000000${LOCATIONS.indexOf(job.runLocation)}`,
            },
            payload: resultFor(job, i === 0 ? 'FAILED' : 'PASSED'),
          }),
        ),
      );
      for (const res of answers) expect(res.statusCode, res.body).toBeLessThan(300);
      const session = await svc.request('GET', `/v1/check-sessions/${sessionId}`);
      expect(session.json(), `round ${round}`).toMatchObject({ status: 'FAILED' });
    }
  });

  it('ends with the worst status of its runs: FAILED over DEGRADED over PASSED, and only after its last run', async () => {
    svc = await testService();
    const checkId = await createCheck(
      svc,
      'icmp',
      icmpBody({ activated: false, locations: LOCATIONS, runParallel: true }),
    );
    const cases: [CheckResult['status'][], string][] = [
      [['PASSED', 'DEGRADED', 'FAILED'], 'FAILED'],
      [['DEGRADED', 'PASSED', 'PASSED'], 'DEGRADED'],
      [['PASSED', 'PASSED', 'PASSED'], 'PASSED'],
    ];
    for (const [statuses, expected] of cases) {
      const sessionId = await triggerCheck(svc, checkId);
      for (const [i, location] of LOCATIONS.entries()) {
        const agentId = `00000000-0000-4000-8000-00000000000${i}`;
        const [job] = await claimJobs(svc, agentId, { locations: [location] });
        const res = await svc.app.inject({
          method: 'POST',
          url: `/v1/agent/jobs/${job!.jobId}/result`,
          headers: { ...svc.auth(), 'x-agent-id': agentId },
          payload:
            statuses[i] === 'DEGRADED'
              ? resultFor(job!, 'PASSED', { status: 'DEGRADED', isDegraded: true })
              : resultFor(job!, statuses[i]),
        });
        expect(res.statusCode, res.body).toBe(200);
        const session = (await svc.request('GET', `/v1/check-sessions/${sessionId}`)).json();
        // In PROGRESS while a run is left, then the worst of the three.
        expect(session.status, `${statuses.join(' ')} after ${i + 1}`).toBe(
          i < LOCATIONS.length - 1 ? 'PROGRESS' : expected,
        );
      }
    }
  });
});
