import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckResult, Job } from '../../../src/protocol/index.js';
import type { Certificate } from '../../../src/protocol/http-result.js';
import { sslMilestone } from '../../../src/service/alerting/ssl-milestones.js';
import {
  claimJobs,
  createCheck,
  expectBadField,
  resultFor,
  TEST_DATABASE,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

const AGENT = randomUUID();
let svc: TestService;
beforeEach(async () => {
  // The channels point at loopback (port 9, nothing delivered): the outbound policy must allow it.
  svc = await testService({ outbound: { allow: ['127.0.0.1/32'] } });
});
afterEach(async () => svc.close());

const urlBody = (over: Record<string, unknown> = {}) => ({
  name: 'shop',
  activated: false,
  request: { url: 'https://shop.example.test/', assertions: [] },
  ...over,
});

async function channel(over: Record<string, unknown> = {}): Promise<number> {
  const res = await svc.request('POST', '/v1/alert-channels', {
    type: 'WEBHOOK',
    config: { name: 'hook', url: 'http://127.0.0.1:9/hook' },
    ...over,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as number;
}

async function post(job: Job, result: CheckResult): Promise<void> {
  const res = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': AGENT },
    payload: result,
  });
  expect(res.statusCode, res.body).toBe(200);
}

/** One run of the check: a session, its jobs claimed, each location's result from `outcome`. */
async function run(
  checkId: string,
  outcome: (job: Job) => 'PASSED' | 'FAILED' | 'DEGRADED',
  extra: (job: Job) => Partial<CheckResult> = () => ({}),
): Promise<Job[]> {
  await triggerCheck(svc, checkId);
  const jobs = (await claimJobs(svc, AGENT)).filter((j) => j.check.id === checkId);
  for (const job of jobs) {
    const o = outcome(job);
    await post(
      job,
      resultFor(job, o === 'FAILED' ? 'FAILED' : 'PASSED', { isDegraded: o === 'DEGRADED', ...extra(job) }),
    );
  }
  return jobs;
}

async function alerts(checkId?: string) {
  const res = await svc.request('GET', `/v1/check-alerts${checkId ? `?checkId=${checkId}` : ''}`);
  expect(res.statusCode, res.body).toBe(200);
  return (
    res.json() as { alertType: string; notified: boolean; episodeId: string; incidentId: string | null }[]
  ).reverse();
}

async function notifications() {
  return svc.context.db.selectFrom('alert_notifications').selectAll().orderBy('id').execute();
}

describe('alerts written with the result', () => {
  it('a failure and its recovery raise ALERT_FAILURE then ALERT_RECOVERY, one notification each per subscribed channel', async () => {
    const hook = await channel();
    const checkId = await createCheck(svc, 'url', urlBody());
    await run(
      checkId,
      () => 'FAILED',
      () => ({ errorMessage: 'expected status 200, got 503' }),
    );
    await run(checkId, () => 'FAILED');
    await run(checkId, () => 'PASSED');
    const raised = await alerts(checkId);
    expect(raised.map((a) => a.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
    expect(raised.every((a) => a.notified)).toBe(true);
    expect(raised[0]!.episodeId).toBe(raised[1]!.episodeId);
    const sent = await notifications();
    // Queued, or already taken by the delivery worker (which a slower store gives time to start).
    const queued = expect.stringMatching(/^(PENDING|SENDING)$/);
    expect(sent.map((n) => [n.channel_id, n.alert_type, n.state])).toEqual([
      [hook, 'ALERT_FAILURE', queued],
      [hook, 'ALERT_RECOVERY', queued],
    ]);
    expect(new Set(sent.map((n) => n.idempotency_key)).size).toBe(2);
    const doc = JSON.parse(sent[0]!.doc);
    expect(doc).toMatchObject({
      ALERT_TYPE: 'ALERT_FAILURE',
      CHECK_NAME: 'shop',
      CHECK_ID: checkId,
      CHECK_TYPE: 'URL',
      CHECK_ERROR_MESSAGE: 'expected status 200, got 503',
      IS_REMINDER: false,
    });
    expect(doc.RESULT_LINK).toMatch(new RegExp(`/checks/${checkId}/results/`));
  });

  it("answers the failing run's HTTP status as text (the hosted API's type), null without a response", async () => {
    await channel();
    const checkId = await createCheck(svc, 'url', urlBody());
    const exchange = (statusCode: number | null) => () => ({
      httpCheckResult: {
        request: { method: 'GET', url: 'https://shop.example.test/' },
        response:
          statusCode === null
            ? null
            : {
                statusCode,
                statusText: 'Service Unavailable',
                url: 'https://shop.example.test/',
                headers: {},
                bodySizeBytes: 0,
                bodyTruncated: false,
              },
        timings: {
          socket: null,
          lookup: null,
          connect: null,
          secureConnect: null,
          response: null,
          end: null,
        },
        timingPhases: {
          wait: null,
          dns: null,
          tcp: null,
          tls: null,
          firstByte: null,
          download: null,
          total: 3,
        },
        redirects: [],
        certificate: null,
        resolvedIp: null,
        resolver: 'dns' as const,
        errorCode: null,
      },
    });
    await run(checkId, () => 'FAILED', exchange(503));
    await run(checkId, () => 'PASSED', exchange(200));
    await run(checkId, () => 'FAILED', exchange(null));
    const raised = (await alerts(checkId)) as unknown as { alertType: string; statusCode: string | null }[];
    expect(raised.map((a) => [a.alertType, a.statusCode])).toEqual([
      ['ALERT_FAILURE', '503'],
      ['ALERT_RECOVERY', '200'],
      ['ALERT_FAILURE', null],
    ]);
    const one = (await svc.request('GET', `/v1/check-alerts/${checkId}`)).json();
    expect(one[0].statusCode).toBeNull();
    expect(one[2].statusCode).toBe('503');
  });

  it('runs are judged in the order they ran: a failure posted after two newer passing runs is recorded, not alerted on', async () => {
    await channel();
    const checkId = await createCheck(svc, 'url', urlBody());
    // Three runs, claimed in order; their results arrive newest first (the oldest was delayed by a crash).
    const jobs: Job[] = [];
    for (let i = 0; i < 3; i++) {
      await triggerCheck(svc, checkId);
      jobs.push(...(await claimJobs(svc, AGENT)).filter((j) => j.check.id === checkId));
    }
    expect(jobs).toHaveLength(3);
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 28, 9, minute)).toISOString();
    const timed = (minute: number) => ({ startedAt: at(minute), stoppedAt: at(minute) });
    await post(jobs[2]!, resultFor(jobs[2]!, 'PASSED', timed(3)));
    await post(jobs[1]!, resultFor(jobs[1]!, 'PASSED', timed(2)));
    await post(jobs[0]!, resultFor(jobs[0]!, 'FAILED', { ...timed(1), errorMessage: 'connection reset' }));
    expect(await alerts(checkId)).toEqual([]);
    expect(await notifications()).toEqual([]);
    // The late failure is stored and listed like any result.
    const results = await svc.request('GET', `/v1/check-results/${checkId}`);
    expect(
      results
        .json()
        .map((r: { hasFailures: boolean }) => r.hasFailures)
        .sort(),
    ).toEqual([false, false, true]);
    // A newer failure alerts as usual, in its own episode.
    await run(checkId, () => 'FAILED');
    expect((await alerts(checkId)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
  });

  it('ATTEMPT results and passing runs raise nothing; a channel without sendRecovery gets only the failure', async () => {
    await channel({ sendRecovery: false });
    const checkId = await createCheck(svc, 'url', urlBody());
    await run(checkId, () => 'PASSED');
    expect(await alerts(checkId)).toEqual([]);
    await run(checkId, () => 'FAILED');
    await run(checkId, () => 'PASSED');
    expect((await notifications()).map((n) => n.alert_type)).toEqual(['ALERT_FAILURE']);
  });

  it('an alert is "notified" only when a channel was sent it: not for a check with no channel, nor for a type no channel takes', async () => {
    const lonely = await createCheck(svc, 'url', urlBody({ name: 'no channel' }));
    await run(lonely, () => 'FAILED');
    expect((await alerts(lonely)).map((a) => [a.alertType, a.notified])).toEqual([['ALERT_FAILURE', false]]);
    expect(await notifications()).toEqual([]);

    await channel({ sendRecovery: false });
    const checkId = await createCheck(svc, 'url', urlBody());
    await run(checkId, () => 'FAILED');
    await run(checkId, () => 'PASSED');
    expect((await alerts(checkId)).map((a) => [a.alertType, a.notified])).toEqual([
      ['ALERT_FAILURE', true],
      ['ALERT_RECOVERY', false],
    ]);
    expect((await notifications()).map((n) => n.alert_type)).toEqual(['ALERT_FAILURE']);
  });

  it('a muted check records its alerts and sends nothing, and nothing is replayed on unmute', async () => {
    await channel();
    const checkId = await createCheck(svc, 'url', urlBody({ muted: true }));
    await run(checkId, () => 'FAILED');
    const raised = await alerts(checkId);
    expect(raised.map((a) => [a.alertType, a.notified])).toEqual([['ALERT_FAILURE', false]]);
    expect(await notifications()).toEqual([]);
    const res = await svc.request('PUT', `/v1/checks/${checkId}`, {
      muted: false,
      heartbeat: {},
      script: '',
    });
    expect(res.statusCode, res.body).toBe(200);
    await run(checkId, () => 'PASSED');
    // The recovery of an episode nobody heard of is recorded, never sent.
    expect(await notifications()).toEqual([]);
  });

  it('a parallel run is judged once, when every location ended, against its failure threshold', async () => {
    await channel({ sendDegraded: true });
    const checkId = await createCheck(
      svc,
      'url',
      urlBody({
        runParallel: true,
        locations: ['eu-west-1', 'us-east-1'],
        useGlobalAlertSettings: false,
        alertSettings: { parallelRunFailureThreshold: { enabled: true, percentage: 100 } },
      }),
    );
    // One of two locations failed: below 100 %, the run is degraded, not failing.
    await run(checkId, (job) => (job.runLocation === 'eu-west-1' ? 'FAILED' : 'PASSED'));
    expect((await alerts(checkId)).map((a) => a.alertType)).toEqual(['ALERT_DEGRADED']);
    await run(checkId, () => 'FAILED');
    expect((await alerts(checkId)).map((a) => a.alertType)).toEqual([
      'ALERT_DEGRADED',
      'ALERT_DEGRADED_FAILURE',
    ]);
  });

  it('a parallel run whose first location reported is not judged until the last one does', async () => {
    await channel();
    const checkId = await createCheck(
      svc,
      'url',
      urlBody({ runParallel: true, locations: ['eu-west-1', 'us-east-1'] }),
    );
    await triggerCheck(svc, checkId);
    const jobs = await claimJobs(svc, AGENT);
    expect(jobs).toHaveLength(2);
    await post(jobs[0]!, resultFor(jobs[0]!, 'FAILED'));
    expect(await alerts(checkId)).toEqual([]);
    await post(jobs[1]!, resultFor(jobs[1]!, 'PASSED'));
    expect((await alerts(checkId)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
  });

  // Results of one check stored at the same moment: unless the check's alerting lock makes them take turns,
  // both read the same alert state (one failure counted where there were two), and the two last locations of a
  // parallel run each find the other's job still there, so neither judges the run. Both transactions are held
  // here until both are past alerting: a test transaction keeps the check's daily rollup row locked, which every
  // FINAL result updates after alerting. PostgreSQL only: SQLite's one writer runs one transaction at a time.
  describe.runIf(TEST_DATABASE === 'postgres')('results of one check stored at the same moment', () => {
    /** Posts every job's result from `resultOf` while the check's daily rollup row is locked by a test transaction. */
    async function postTogether(checkId: string, jobs: Job[], resultOf: (job: Job) => CheckResult) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let holding!: () => void;
      const held = new Promise<void>((resolve) => {
        holding = resolve;
      });
      const blocker = svc.context.db.transaction().execute(async (tx) => {
        await tx
          .updateTable('check_stats_daily')
          .set((eb) => ({ passed: eb.ref('passed') }))
          .where('check_id', '=', checkId)
          .execute();
        holding();
        await released;
      });
      await held;
      const posts = jobs.map((job) => post(job, resultOf(job)));
      // Every result is in its transaction by now, held on the rollup row or on the check's lock.
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await blocker;
      await Promise.all(posts);
    }

    it('the last two locations of a parallel run: the run is judged, once', async () => {
      await channel();
      const checkId = await createCheck(
        svc,
        'url',
        urlBody({ runParallel: true, locations: ['eu-west-1', 'us-east-1'] }),
      );
      await run(checkId, () => 'PASSED');
      await triggerCheck(svc, checkId);
      const jobs = await claimJobs(svc, AGENT);
      expect(jobs).toHaveLength(2);
      await postTogether(checkId, jobs, (job) => resultFor(job, 'FAILED'));
      expect((await alerts(checkId)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
    });

    it('two runs of a check that alerts at its second failed run: both failures count', async () => {
      await channel();
      const checkId = await createCheck(
        svc,
        'url',
        urlBody({
          useGlobalAlertSettings: false,
          alertSettings: { runBasedEscalation: { failedRunThreshold: 2 } },
        }),
      );
      await run(checkId, () => 'PASSED');
      await triggerCheck(svc, checkId);
      await triggerCheck(svc, checkId);
      const jobs = await claimJobs(svc, AGENT);
      expect(jobs).toHaveLength(2);
      // Started at the same instant: neither run is older than the other, so each is judged.
      const startedAt = new Date().toISOString();
      await postTogether(checkId, jobs, (job) =>
        resultFor(job, 'FAILED', { startedAt, stoppedAt: startedAt }),
      );
      expect((await alerts(checkId)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
    });
  });
});

describe('account alert settings', () => {
  it('answers the defaults, takes a new threshold that checks with useGlobalAlertSettings follow, and refuses values outside the field’s ranges', async () => {
    const got = await svc.request('GET', '/v1/alert-settings');
    expect(got.json()).toEqual({
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 1 },
      timeBasedEscalation: { minutesFailingThreshold: 5 },
      reminders: { amount: 0, interval: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    });
    const put = await svc.request('PUT', '/v1/alert-settings', {
      runBasedEscalation: { failedRunThreshold: 2 },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().runBasedEscalation).toEqual({ failedRunThreshold: 2 });
    expect(
      (await svc.request('GET', '/v1/alert-settings', undefined, 'B')).json().runBasedEscalation,
    ).toEqual({
      failedRunThreshold: 1,
    });

    await channel();
    const checkId = await createCheck(svc, 'url', urlBody());
    await run(checkId, () => 'FAILED');
    expect(await alerts(checkId)).toEqual([]);
    await run(checkId, () => 'FAILED');
    expect((await alerts(checkId)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);

    expectBadField(
      await svc.request('PUT', '/v1/alert-settings', { timeBasedEscalation: { minutesFailingThreshold: 7 } }),
      'timeBasedEscalation.minutesFailingThreshold',
    );
    expectBadField(
      await svc.request('PUT', '/v1/alert-settings', { reminders: { amount: 6 } }),
      'reminders.amount',
    );
  });

  it('a group’s own settings apply to its checks', async () => {
    const group = await svc.request('POST', '/v1/check-groups', {
      name: 'g',
      activated: true,
      apiCheckDefaults: {},
      locations: ['eu-west-1'],
      useGlobalAlertSettings: false,
      alertSettings: { runBasedEscalation: { failedRunThreshold: 3 } },
    });
    expect(group.statusCode, group.body).toBe(201);
    await channel();
    const checkId = await createCheck(svc, 'url', urlBody({ groupId: group.json().id }));
    await run(checkId, () => 'FAILED');
    await run(checkId, () => 'FAILED');
    expect(await alerts(checkId)).toEqual([]);
    await run(checkId, () => 'FAILED');
    expect((await alerts(checkId)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
  });
});

describe('incident trigger', () => {
  it('opens an incident on the named service at the first notified failure and resolves it on recovery, once per episode', async () => {
    const service = (await svc.request('POST', '/v1/status-pages/services', { name: 'Checkout' })).json();
    await channel();
    const checkId = await createCheck(
      svc,
      'url',
      urlBody({
        triggerIncident: {
          serviceId: service.id,
          severity: 'CRITICAL',
          name: 'Checkout is down',
          description: 'We are looking into it.',
          notifySubscribers: true,
        },
      }),
    );
    await run(checkId, () => 'FAILED');
    await run(checkId, () => 'FAILED');
    const incidents = (await svc.request('GET', '/v1/incidents')).json();
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatchObject({
      name: 'Checkout is down',
      impact: 'MAJOR',
      services: [{ id: service.id }],
    });
    await run(checkId, () => 'PASSED');
    const incident = (await svc.request('GET', `/v1/incidents/${incidents[0].id}`)).json();
    expect(incident.stoppedAt).not.toBeNull();
    const updates = await svc.context.db
      .selectFrom('incident_updates')
      .select(['seq', 'doc'])
      .where('incident_id', '=', incidents[0].id)
      .orderBy('seq')
      .execute();
    const docs = updates.map((u) => JSON.parse(u.doc) as { status: string; notifySubscribers: boolean });
    expect(docs.map((u) => u.status)).toEqual(['INVESTIGATING', 'RESOLVED']);
    expect(docs.every((u) => u.notifySubscribers)).toBe(true);
    const raised = await alerts(checkId);
    expect(raised[0]!.incidentId).toBe(incidents[0].id);
    // A new episode opens a new incident.
    await run(checkId, () => 'FAILED');
    expect((await svc.request('GET', '/v1/incidents')).json()).toHaveLength(2);
  });
});

describe('SSL certificate expiry', () => {
  it('milestones: the channel threshold, then 7, 3, 1 and 0 days; skipped ones are not sent late', () => {
    expect(sslMilestone(31, 30)).toBeNull();
    expect(sslMilestone(30, 30)).toBe(30);
    expect(sslMilestone(12, 30)).toBe(30);
    expect(sslMilestone(7, 30)).toBe(7);
    expect(sslMilestone(2, 30)).toBe(3);
    expect(sslMilestone(1, 30)).toBe(1);
    expect(sslMilestone(0, 30)).toBe(0);
    expect(sslMilestone(-4, 30)).toBe(0);
    expect(sslMilestone(5, 5)).toBe(5);
    expect(sslMilestone(2, 2)).toBe(2);
  });

  it('one ALERT_SSL per (domain, certificate, channel, milestone); a renewed certificate starts over', async () => {
    const ssl = await channel({
      sslExpiry: true,
      sslExpiryThreshold: 14,
      sendFailure: false,
      sendRecovery: false,
    });
    const checkId = await createCheck(svc, 'url', urlBody());
    const cert = (days: number, fingerprint: string): Certificate => ({
      subject: { commonName: 'shop.example.test', organization: null },
      issuer: { commonName: 'Test CA', organization: null },
      subjectAltNames: ['DNS:shop.example.test'],
      validFrom: new Date(Date.now() - 80 * 86_400_000).toISOString(),
      validTo: new Date(Date.now() + days * 86_400_000 + 3_600_000).toISOString(),
      daysRemaining: days,
      fingerprint256: fingerprint,
      serialNumber: '01',
      authorized: true,
      authorizationError: null,
    });
    const withCert = (c: Certificate) => () => ({
      httpCheckResult: {
        request: { method: 'GET', url: 'https://Shop.example.test/' },
        response: null,
        timings: {
          socket: null,
          lookup: null,
          connect: null,
          secureConnect: null,
          response: null,
          end: null,
        },
        timingPhases: {
          wait: null,
          dns: null,
          tcp: null,
          tls: null,
          firstByte: null,
          download: null,
          total: 3,
        },
        redirects: [],
        certificate: c,
        resolvedIp: null,
        resolver: 'dns' as const,
        errorCode: null,
      },
    });
    await run(checkId, () => 'PASSED', withCert(cert(20, 'AA:01')));
    expect(await notifications()).toEqual([]);
    await run(checkId, () => 'PASSED', withCert(cert(2, 'AA:01')));
    await run(checkId, () => 'PASSED', withCert(cert(2, 'AA:01')));
    let sent = await notifications();
    expect(sent.map((n) => [n.channel_id, n.alert_type])).toEqual([[ssl, 'ALERT_SSL']]);
    expect(JSON.parse(sent[0]!.doc)).toMatchObject({
      SSL_CHECK_DOMAIN: 'shop.example.test',
      SSL_DAYS_REMAINING: 2,
    });
    await run(checkId, () => 'PASSED', withCert(cert(1, 'AA:01')));
    // Renewed, then close to expiry again: starts over.
    await run(checkId, () => 'PASSED', withCert(cert(10, 'BB:02')));
    sent = await notifications();
    expect(sent).toHaveLength(3);
    const stored = await svc.context.db.selectFrom('ssl_certificates').selectAll().execute();
    expect(stored).toMatchObject([{ domain: 'shop.example.test', fingerprint: 'BB:02' }]);
  });

  it("alerts on an SSL monitor's certificate under its serverName", async () => {
    const ssl = await channel({
      sslExpiry: true,
      sslExpiryThreshold: 14,
      sendFailure: false,
      sendRecovery: false,
    });
    const checkId = await createCheck(svc, 'ssl', {
      name: 'cert',
      activated: false,
      request: { sslConfig: { hostname: '203.0.113.9', serverName: 'Shop.example.test' } },
    });
    const certificate: Certificate = {
      subject: { commonName: 'shop.example.test', organization: null },
      issuer: { commonName: 'Test CA', organization: null },
      subjectAltNames: ['DNS:shop.example.test'],
      validFrom: new Date(Date.now() - 80 * 86_400_000).toISOString(),
      validTo: new Date(Date.now() + 2 * 86_400_000 + 3_600_000).toISOString(),
      daysRemaining: 2,
      fingerprint256: 'CC:03',
      serialNumber: '03',
      authorized: true,
      authorizationError: null,
    };
    await triggerCheck(svc, checkId);
    const [job] = (await claimJobs(svc, AGENT, { checkTypes: ['SSL'] })).filter(
      (j) => j.check.id === checkId,
    );
    await post(
      job!,
      resultFor(job!, 'PASSED', {
        sslCheckResult: {
          tlsVersion: 'TLSv1.3',
          cipherSuite: 'TLS_AES_128_GCM_SHA256',
          daysUntilExpiry: 2,
          handshakeTimeMs: 1,
          chainTrusted: true,
          hostnameVerified: true,
          baselineVerdict: null,
          failureCategory: 'expiring',
          requestError: null,
          request: { hostname: '203.0.113.9', port: 443, serverName: 'Shop.example.test', ipFamily: 'IPv4' },
          timingPhases: { dns: 0, connect: 1, handshake: 1, total: 2 },
          response: null,
          sslCertificate: certificate,
        },
      }),
    );
    const sent = await notifications();
    expect(sent.map((n) => [n.channel_id, n.alert_type])).toEqual([[ssl, 'ALERT_SSL']]);
    expect(JSON.parse(sent[0]!.doc)).toMatchObject({
      SSL_CHECK_DOMAIN: 'shop.example.test',
      SSL_DAYS_REMAINING: 2,
    });
  });
});
