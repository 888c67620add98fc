/**
 * Alert delivery survives a crash of the service: `outpost service` (a real process, its SQLite
 * file store in a temp folder) queues one ALERT_FAILURE notification per failing check and
 * delivers them to a slow webhook receiver on loopback; it is SIGKILLed while sends are in flight
 * and started again on the same folder. Every notification must then arrive, none twice unless it
 * was in flight at the kill (and then with the same webhook-id), every signature must verify, and a
 * graceful restart must send nothing again. Needs the build (dist/src/cli.js) and nothing else.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SQLite } from '../../src/service/platform/store/sqlite.js';
import {
  allNotifications,
  createUrlChecks,
  createWebhookChannel,
  postResult,
  type ReceivedWebhook,
  type SlowReceiver,
  signatureProblems,
  startSlowReceiver,
  type Target,
  triggerAndClaim,
  call,
  type ClaimedJob,
  finalResult,
} from '../helpers/alerting.js';
import { type CliProcess, freePort, spawnCli, stopCli } from '../helpers/cli.js';
import { until } from '../helpers/processes.js';

const API_KEY = 'alerting_crash_e2e_key_0123456789';
const SECRET = 'crash-test-webhook-secret';
/** Checks failing at once: each queues one ALERT_FAILURE notification. */
const CHECKS = 30;
/** Webhooks seen before the kill: past the first wave of sends (8 at once), with the next ones in flight. */
const SEEN_BEFORE_KILL = 10;

/** 300–800 ms per answer, varied so sends finish out of step. */
const answerDelayMs = (n: number) => 300 + ((n * 137) % 500);

let service: CliProcess | undefined;
let receiver: SlowReceiver | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  await stopCli(service);
  service = undefined;
  await receiver?.close();
  receiver = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

const idOf = (w: ReceivedWebhook) => String(w.headers['webhook-id']);

describe('alert delivery across a crash of the service', () => {
  it('SIGKILL with sends in flight: after a restart every notification arrives, repeats only for sends cut by the kill and with their webhook-id; a graceful restart sends nothing again; recoveries arrive once', async () => {
    const t0 = performance.now();
    const stamp = (what: string) => console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s: ${what}`);
    dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-alerting-'));
    const port = await freePort();
    const target: Target = { url: `http://127.0.0.1:${port}`, apiKey: API_KEY };
    const start = async () => {
      const p = spawnCli(['service'], {
        PORT: String(port),
        OUTPOST_DATA_DIR: dataDir!,
        OUTPOST_API_KEY: API_KEY,
        LOG_LEVEL: 'WARN',
        // The receiver listens on loopback, which the outbound policy refuses unless allowed.
        OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32',
      });
      service = p;
      await p.waitFor(/service is listening/, 20_000);
      return p;
    };
    const rx = await startSlowReceiver(answerDelayMs);
    receiver = rx;

    const first = await start();
    stamp('service started');
    await createWebhookChannel(target, rx.url, SECRET);
    const checkIds = await createUrlChecks(target, CHECKS, 'crash');
    const jobs = await triggerAndClaim(target, checkIds);
    // Posted together, as agents would: each result's transaction queues its notification.
    await Promise.all([...jobs.values()].map((job) => postResult(target, job, 'FAILED')));
    stamp(`${CHECKS} failures posted`);

    await until('webhooks before the kill', () => rx.received.length >= SEEN_BEFORE_KILL, 20_000);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    // Requests the dead process had fully written are read from the socket buffers meanwhile.
    await new Promise((r) => setTimeout(r, 100));
    const beforeRestart = rx.received.length;
    // Received but never answered: the dead process cannot have recorded them as delivered.
    const cutIds = new Set(rx.received.filter((w) => w.answeredAtMs === null).map(idOf));
    const cutByKill = cutIds.size;
    stamp(`SIGKILL after ${beforeRestart} webhooks (${cutByKill} received and not answered)`);
    // The kill must have caught sends mid-way, else the crash path was not exercised.
    expect(cutByKill).toBeGreaterThan(0);
    expect(beforeRestart).toBeLessThan(CHECKS);

    // The store as the crash left it: one notification per check, queued with its result.
    const store = new SQLite(join(dataDir, 'outpost.db'));
    let sendingAtKill: number;
    let expected: { idempotency_key: string; check_id: string; alert_type: string }[];
    try {
      expected = store
        .prepare('SELECT idempotency_key, check_id, alert_type FROM alert_notifications ORDER BY id')
        .all() as typeof expected;
      const sending = store.prepare("SELECT count(*) AS n FROM alert_notifications WHERE state = 'SENDING'");
      sendingAtKill = Number((sending.get() as { n: number }).n);
    } finally {
      store.close();
    }
    expect(expected.map((n) => n.alert_type)).toEqual(Array(CHECKS).fill('ALERT_FAILURE'));
    expect(new Set(expected.map((n) => n.check_id))).toEqual(new Set(checkIds));
    const expectedIds = new Set(expected.map((n) => n.idempotency_key));
    expect(expectedIds.size).toBe(CHECKS);
    expect(sendingAtKill).toBeGreaterThan(0);

    await start();
    stamp(`restarted (${sendingAtKill} notifications were SENDING at the kill)`);
    // Seen after the restart: each notification not seen before, and each cut send again.
    await until(
      'every notification received',
      () => {
        const seen = new Set(rx.received.map(idOf));
        const again = new Set(rx.received.slice(beforeRestart).map(idOf));
        return [...expectedIds].every((id) => seen.has(id)) && [...cutIds].every((id) => again.has(id));
      },
      20_000,
    );
    stamp(`all ${CHECKS} received (${rx.received.length} webhooks)`);

    const failures = [...rx.received];
    const times = new Map<string, number[]>();
    for (const [i, w] of failures.entries()) times.set(idOf(w), [...(times.get(idOf(w)) ?? []), i]);
    expect(new Set(times.keys())).toEqual(expectedIds);
    const repeats = [...times.entries()].filter(([, at]) => at.length > 1);
    console.log(
      `repeats: ${repeats.length} of ${cutByKill} sends cut by the kill (arrival numbers ${
        repeats.map(([, at]) => at.join('→')).join(', ') || 'none'
      })`,
    );
    for (const [id, at] of repeats) {
      // Sent again only if the dead process had sent it: one more time, same body.
      expect(at, id).toHaveLength(2);
      expect(at[0]!, id).toBeLessThan(beforeRestart);
      expect(failures[at[1]!]!.body, id).toBe(failures[at[0]!]!.body);
    }
    // A send whose answer the dead process never read is not known to have arrived: it is sent again.
    for (const id of cutIds) expect(times.get(id), id).toHaveLength(2);
    for (const w of failures) {
      expect(signatureProblems(w, SECRET), idOf(w)).toEqual([]);
      const doc = JSON.parse(w.body) as { ALERT_TYPE: string; CHECK_ID: string };
      expect(doc.ALERT_TYPE).toBe('ALERT_FAILURE');
      expect(expected.find((n) => n.idempotency_key === idOf(w))?.check_id).toBe(doc.CHECK_ID);
    }
    // The worker records each delivery after the answer: wait for the last ones to be written.
    await until(
      'every notification DELIVERED',
      async () => {
        const all = await allNotifications(target);
        return all.length === CHECKS && all.every((n) => n.state === 'DELIVERED');
      },
      10_000,
    );

    // A graceful restart with nothing queued sends nothing.
    await stopCli(service);
    expect(await service!.exited).toBe(0);
    const beforeGraceful = rx.received.length;
    await start();
    await new Promise((r) => setTimeout(r, 3000));
    expect(rx.received.length).toBe(beforeGraceful);
    stamp('graceful restart: nothing sent in 3 s');

    // The checks pass again: exactly one ALERT_RECOVERY per check.
    const passes = await triggerAndClaim(target, checkIds);
    await Promise.all([...passes.values()].map((job) => postResult(target, job, 'PASSED')));
    await until('recoveries', () => rx.received.length >= beforeGraceful + CHECKS, 20_000);
    // Anything extra would come within the slowest answer and a poll.
    await new Promise((r) => setTimeout(r, 1500));
    const recoveries = rx.received.slice(beforeGraceful);
    expect(recoveries).toHaveLength(CHECKS);
    const recoveryDocs = recoveries.map(
      (w) => JSON.parse(w.body) as { ALERT_TYPE: string; CHECK_ID: string },
    );
    expect(recoveryDocs.every((d) => d.ALERT_TYPE === 'ALERT_RECOVERY')).toBe(true);
    expect(new Set(recoveryDocs.map((d) => d.CHECK_ID))).toEqual(new Set(checkIds));
    const recoveryIds = new Set(recoveries.map(idOf));
    expect(recoveryIds.size).toBe(CHECKS);
    expect([...recoveryIds].some((id) => expectedIds.has(id))).toBe(false);
    for (const w of recoveries) expect(signatureProblems(w, SECRET), idOf(w)).toEqual([]);
    stamp(`${CHECKS} recoveries received once each`);
  }, 55_000);

  it('a result posted again after a SIGKILL, older than the runs recorded since, is stored and not alerted on; a newer failure still alerts', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-alert-order-'));
    const port = await freePort();
    const target: Target = { url: `http://127.0.0.1:${port}`, apiKey: API_KEY };
    const start = async () => {
      const p = spawnCli(['service'], {
        PORT: String(port),
        OUTPOST_DATA_DIR: dataDir!,
        OUTPOST_API_KEY: API_KEY,
        LOG_LEVEL: 'WARN',
        OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32',
      });
      service = p;
      await p.waitFor(/service is listening/, 20_000);
      return p;
    };
    const rx = await startSlowReceiver(() => 0);
    receiver = rx;
    const first = await start();
    await createWebhookChannel(target, rx.url, SECRET);
    const [checkId] = await createUrlChecks(target, 1, 'order');
    // Three runs of the check, claimed one after the other: they started at 09:01, 09:02 and 09:03.
    const runs: ClaimedJob[] = [];
    for (let i = 0; i < 3; i++) runs.push((await triggerAndClaim(target, [checkId!])).get(checkId!)!);
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 28, 9, minute)).toISOString();
    const post = async (i: number, status: 'PASSED' | 'FAILED') => {
      const body = { ...finalResult(runs[i]!, status), startedAt: at(i + 1), stoppedAt: at(i + 1) };
      const res = await call(target, 'POST', `/v1/agent/jobs/${runs[i]!.jobId}/result`, body, true);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    };
    // The two newer runs pass and are recorded; the service is killed before the oldest run's result arrives.
    await post(1, 'PASSED');
    await post(2, 'PASSED');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await start();
    // The agent posts the oldest run's failure again once the service is back.
    await post(0, 'FAILED');
    await new Promise((r) => setTimeout(r, 2000));
    expect(rx.received).toHaveLength(0);
    const alerts = await call(target, 'GET', `/v1/check-alerts?checkId=${checkId}`);
    expect(alerts.json).toEqual([]);
    const results = await call(target, 'GET', `/v1/check-results/${checkId}?limit=10`);
    expect(results.json.map((r: { hasFailures: boolean }) => r.hasFailures).sort()).toEqual([
      false,
      false,
      true,
    ]);
    // A failure newer than every recorded run alerts, once.
    const newer = (await triggerAndClaim(target, [checkId!])).get(checkId!)!;
    await postResult(target, newer, 'FAILED');
    await until('the newer failure’s alert', () => rx.received.length >= 1, 10_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.received.map((w) => (JSON.parse(w.body) as { ALERT_TYPE: string }).ALERT_TYPE)).toEqual([
      'ALERT_FAILURE',
    ]);
  }, 60_000);
});
