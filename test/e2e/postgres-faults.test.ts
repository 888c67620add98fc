import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messageIdOf } from '../../src/service/alerting/channels/email.js';
import { nextRunAfter } from '../../src/service/runs/scheduler/schedule.js';
import {
  type ClaimedJob,
  call,
  createUrlChecks,
  createWebhookChannel,
  postResult,
  type ReceivedWebhook,
  signatureProblems,
  startSlowReceiver,
  type SlowReceiver,
  type Target,
  triggerAndClaim,
} from '../helpers/alerting.js';
import { type SmtpPeer, startSmtpPeer } from '../helpers/alert-peers.js';
import {
  awaitSession,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';
import { until } from '../helpers/processes.js';
import {
  createDatabase,
  POSTGRES_REQUIREMENT,
  type PostgresCluster,
  startPostgresCluster,
} from '../helpers/postgres.js';
import { missingRequirement } from '../helpers/requirements.js';
import { startTcpBalancer, type TcpBalancer } from '../helpers/tcp-balancer.js';

/**
 * Replicas of `outpost service` on one PostgreSQL store, each killed with SIGKILL in the middle of its
 * background work: while it sends alerts (every notification still arrives, a repeat only for what the dead
 * replica was sending, with the same idempotency key), while its scheduler enqueues a batch (no slot enqueued
 * twice or skipped), and while it holds an agent's long polls behind a load balancer (the agent's next run is
 * done through another replica within 5 s). Each test ends with an audit of the store in SQL.
 */
const missing = missingRequirement([POSTGRES_REQUIREMENT]);

const API_KEY = `op_${randomBytes(20).toString('hex')}`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const WEBHOOK_SECRET = 'replica-crash-webhook-secret';

let cluster: PostgresCluster;
let databaseUrl: string;
let sql: pg.Client | undefined;
let replicas: ServiceProcess[] = [];
const others: { close(): Promise<void> }[] = [];

/** A fresh database on the cluster, `n` replicas on it and a client of it for the audit. */
async function startReplicas(n: number, env: Record<string, string> = {}): Promise<ServiceProcess[]> {
  databaseUrl = await createDatabase(cluster.url());
  sql = new pg.Client({ connectionString: databaseUrl });
  sql.on('error', () => {});
  await sql.connect();
  const common = {
    OUTPOST_DATABASE_URL: databaseUrl,
    OUTPOST_ENCRYPTION_KEY: ENCRYPTION_KEY,
    LOG_LEVEL: 'WARN',
    ...env,
  };
  // The first creates the schema and the account; the others start on it together.
  replicas = [await startServiceProcess(API_KEY, common)];
  replicas.push(
    ...(await Promise.all(Array.from({ length: n - 1 }, () => startServiceProcess(API_KEY, common)))),
  );
  return replicas;
}

/** SIGKILLs `replica` and waits for its end. */
async function kill(replica: ServiceProcess): Promise<void> {
  replica.process.child.kill('SIGKILL');
  expect(await replica.process.exited).toBe('SIGKILL');
}

const targetOf = (replica: ServiceProcess): Target => ({ url: replica.url, apiKey: API_KEY });

describe.skipIf(missing !== null)('replicas on PostgreSQL killed mid-work', () => {
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });

  afterEach(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    replicas = [];
    for (const other of others.splice(0)) await other.close();
    await sql?.end().catch(() => {});
    sql = undefined;
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('a replica SIGKILLed while it sends alerts: every webhook and mail arrives, a repeat only for what it was sending, with the same id', async () => {
    const receiver: SlowReceiver = await startSlowReceiver((n) => 300 + ((n * 137) % 500));
    const smtp: SmtpPeer = await startSmtpPeer();
    others.push(receiver, smtp);
    const [a, b, c] = (await startReplicas(3, {
      OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32',
      OUTPOST_SMTP_URL: smtp.url,
      OUTPOST_SMTP_FROM: 'Outpost <alerts@outpost.test>',
    })) as [ServiceProcess, ServiceProcess, ServiceProcess];

    await createWebhookChannel(targetOf(a), receiver.url, WEBHOOK_SECRET);
    const email = await call(targetOf(b), 'POST', '/v1/alert-channels', {
      type: 'EMAIL',
      sendFailure: true,
      sendRecovery: true,
      config: { address: 'oncall@example.test' },
    });
    expect(email.status, JSON.stringify(email.json)).toBe(201);
    const checkIds = await createUrlChecks(targetOf(c), 30, 'replica crash');
    const jobs = [...(await triggerAndClaim(targetOf(a), checkIds)).values()];
    // Results posted through every replica, as agents behind a balancer would: each result's transaction
    // queues one notification per channel, and the three delivery workers share them.
    await Promise.all(
      jobs.map((job: ClaimedJob, i) => postResult(targetOf(replicas[i % 3]!), job, 'FAILED')),
    );

    // Kill the replica with the most sends in flight, once the first wave has been answered.
    await until('webhooks before the kill', () => receiver.received.length >= 8, 20_000);
    const sending = await sql!.query<{ owner: string; n: number }>(
      `select lease_owner as owner, count(*)::int as n from alert_notifications
        where state = 'SENDING' group by lease_owner order by n desc`,
    );
    const pids = new Map(replicas.map((r) => [r.process.child.pid, r]));
    const busiest = sending.rows
      .map((row) => ({ ...row, replica: pids.get(Number(row.owner.split(':').at(-2))) }))
      .find((row) => row.replica !== undefined);
    expect(busiest, JSON.stringify(sending.rows)).toBeDefined();
    const victim = busiest!.replica!;
    await kill(victim);
    const killedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // What the dead replica held at its death: only these may arrive twice.
    const held = await sql!.query<{ idempotency_key: string; channel: string }>(
      `select n.idempotency_key, c.type as channel from alert_notifications n
         join alert_channels c on c.id = n.channel_id
        where n.state = 'SENDING' and n.lease_owner = $1`,
      [busiest!.owner],
    );
    const heldKeys = new Set(held.rows.map((row) => row.idempotency_key));
    expect(heldKeys.size).toBeGreaterThan(0);

    const all = await sql!.query<{ idempotency_key: string; channel: string; check_id: string }>(
      `select n.idempotency_key, c.type as channel, n.check_id from alert_notifications n
         join alert_channels c on c.id = n.channel_id`,
    );
    expect(all.rows).toHaveLength(60);
    const webhookKeys = all.rows.filter((row) => row.channel === 'WEBHOOK').map((row) => row.idempotency_key);
    const mailKeys = all.rows.filter((row) => row.channel === 'EMAIL').map((row) => row.idempotency_key);
    expect(webhookKeys).toHaveLength(30);
    expect(mailKeys).toHaveLength(30);

    // The survivors send the rest, and what the dead one held once its 20 s lease has run out.
    const idOf = (w: ReceivedWebhook) => String(w.headers['webhook-id']);
    const mailIdOf = (key: string) => messageIdOf(key);
    await until(
      'every webhook and mail',
      () => {
        const hooks = new Set(receiver.received.map(idOf));
        const mails = new Set(smtp.mails.map((m) => m.messageId));
        return webhookKeys.every((k) => hooks.has(k)) && mailKeys.every((k) => mails.has(mailIdOf(k)));
      },
      40_000,
    );
    const resentAfterMs = Date.now() - killedAt;
    await until(
      'every notification DELIVERED',
      async () => {
        const { rows } = await sql!.query<{ n: number }>(
          "select count(*)::int as n from alert_notifications where state <> 'DELIVERED'",
        );
        return rows[0]!.n === 0;
      },
      10_000,
    );
    // Anything sent twice would come within a poll and the slowest answer.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const countOf = (ids: string[]) => {
      const counts = new Map<string, number>();
      for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
      return counts;
    };
    const hookCounts = countOf(receiver.received.map(idOf));
    const mailCounts = countOf(smtp.mails.map((m) => m.messageId));
    const repeated: string[] = [];
    for (const key of webhookKeys) {
      const n = hookCounts.get(key) ?? 0;
      if (n > 1) repeated.push(key);
      expect(n, key).toBeLessThanOrEqual(heldKeys.has(key) ? 2 : 1);
    }
    for (const key of mailKeys) {
      const n = mailCounts.get(mailIdOf(key)) ?? 0;
      if (n > 1) repeated.push(key);
      expect(n, key).toBeLessThanOrEqual(heldKeys.has(key) ? 2 : 1);
    }
    // A webhook never answered was cut by the kill (the receiver answers every live request within 0.8 s):
    // it was the dead replica's, and it is sent again.
    const cut = new Set(receiver.received.filter((w) => w.answeredAtMs === null).map(idOf));
    for (const key of cut) expect(heldKeys.has(key), key).toBe(true);
    for (const key of cut) expect(hookCounts.get(key), key).toBe(2);
    expect(receiver.received.length).toBe(30 + [...hookCounts.values()].filter((n) => n === 2).length);
    for (const w of receiver.received) expect(signatureProblems(w, WEBHOOK_SECRET), idOf(w)).toEqual([]);
    console.log(
      `killed the replica sending ${held.rows.length} notifications (${cut.size} webhooks cut mid-answer); ` +
        `all 60 arrived ${resentAfterMs} ms after the kill, ${repeated.length} twice`,
    );

    // Audit: one notification per check and channel, each DELIVERED, each with a delivered attempt.
    const audit = await sql!.query<{ check_id: string; channel_id: number; n: number; delivered: number }>(
      `select n.check_id, n.channel_id, count(*)::int as n,
              count(*) filter (where exists (select 1 from alert_attempts t
                                              where t.notification_id = n.id and t.outcome = 'DELIVERED'))::int as delivered
         from alert_notifications n group by n.check_id, n.channel_id`,
    );
    expect(audit.rows).toHaveLength(60);
    expect(audit.rows.filter((row) => row.n !== 1 || row.delivered !== 1)).toEqual([]);
  }, 90_000);

  it('a replica SIGKILLed while its scheduler enqueues a batch: every due slot is enqueued once, none twice or skipped', async () => {
    await startReplicas(3);
    // More than the three replicas' first batches (3 × 250), so the kill comes before the last commit.
    const checks = 1200;
    // Daily checks at a fixed minute of the day chosen so that no next slot comes during the test: each is
    // due exactly once here, at its latest slot, so one job per check is the whole truth.
    const nowMs = Date.now();
    const offset = Array.from({ length: 24 }, (_, m) => m + 1).find(
      (m) => nextRunAfter(nowMs, 'any', 1440, m) - nowMs > 15 * 60_000,
    )!;
    const ids: string[] = [];
    for (let i = 0; i < checks; i += 20) {
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          call(targetOf(replicas[j % 3]!), 'POST', '/v1/checks/url', {
            name: `scheduled ${i + j}`,
            activated: false,
            frequency: 1440,
            frequencyOffset: offset,
            request: { url: `https://shop-${i + j}.example.test/`, assertions: [] },
          }),
        ),
      );
      for (const res of created) {
        expect(res.status, JSON.stringify(res.json)).toBe(201);
        ids.push(res.json.id as string);
      }
    }
    const slotOf = new Map(ids.map((id) => [id, nextRunAfter(nowMs - 86_400_000, id, 1440, offset)]));
    // All due at once: the replicas' next ticks take them in batches, each its own (SKIP LOCKED).
    await sql!.query(
      'update checks set activated = 1, next_run_at = s.slot from unnest($1::text[], $2::bigint[]) as s(id, slot) where checks.id = s.id',
      [ids, ids.map((id) => slotOf.get(id)!)],
    );
    const jobsNow = async () =>
      (await sql!.query<{ n: number }>('select count(*)::int as n from jobs where check_id = any($1)', [ids]))
        .rows[0]!.n;
    // Kill one replica while the batch is part-way enqueued (its transaction of the moment rolls back).
    await until('the first batch committed', async () => (await jobsNow()) > 0, 20_000);
    const before = await jobsNow();
    const victim = replicas[Math.floor(Math.random() * replicas.length)]!;
    await kill(victim);
    expect(before).toBeLessThan(checks);
    await until('every check enqueued', async () => (await jobsNow()) >= checks, 30_000);
    // A second tick of the survivors finds nothing more.
    await new Promise((resolve) => setTimeout(resolve, 2500));

    // Audit: one job per check, none missing, and every check's next slot is its next one on its grid.
    const perCheck = await sql!.query<{ check_id: string; n: number }>(
      'select check_id, count(*)::int as n from jobs where check_id = any($1) group by check_id',
      [ids],
    );
    expect(perCheck.rows).toHaveLength(checks);
    expect(perCheck.rows.filter((row) => row.n !== 1)).toEqual([]);
    const next = await sql!.query<{ id: string; next_run_at: number }>(
      'select id, next_run_at::float8 as next_run_at from checks where id = any($1)',
      [ids],
    );
    const wrong = next.rows.filter(
      (row) => row.next_run_at !== nextRunAfter(Date.now(), row.id, 1440, offset),
    );
    expect(wrong).toEqual([]);
    console.log(
      `killed a scheduler with ${before} of ${checks} slots enqueued; ${checks} jobs after, one each`,
    );
  }, 90_000);

  it.each(['SIGKILL', 'SIGSTOP'] as const)(
    "the replica holding an agent's long polls %s'ed behind a balancer: the agent's next job starts through another within 5 s",
    async (signal) => {
      const [a, b] = (await startReplicas(2)) as [ServiceProcess, ServiceProcess];
      const portOf = (replica: ServiceProcess) => Number(new URL(replica.url).port);
      // At first only A is behind the balancer, so every connection of the agent goes to A; then B joins. The
      // balancer checks readiness every 500 ms, as a proxy in front of replicas does.
      const balancer: TcpBalancer = await startTcpBalancer([portOf(a)], {
        path: '/-/readiness',
        intervalMs: 500,
      });
      others.push(balancer);
      const healthPort = await freePort();
      const agent: CliProcess = spawnCli(['agent'], {
        API_KEY,
        SERVICE_URL: balancer.url,
        AGENT_HEALTH_PORT: String(healthPort),
        AGENT_CLAIM_WAIT_SECONDS: '20',
        LOG_LEVEL: 'WARN',
      });
      others.push({ close: () => stopCli(agent) });
      const created = await b.api('POST', '/v1/checks/icmp', {
        name: 'Failover',
        request: { hostname: '127.0.0.1' },
        activated: false,
      });
      expect(created.status, JSON.stringify(created.json)).toBe(201);
      const runThrough = async (replica: ServiceProcess) => {
        const triggered = await replica.api('POST', '/v1/check-sessions/trigger', {
          target: { checkId: [created.json.id] },
        });
        expect(triggered.status, JSON.stringify(triggered.json)).toBe(201);
        return awaitSession(replica.api, triggered.json.sessions[0].checkSessionId as string, 30_000);
      };
      expect((await runThrough(b)).status, agent.output().slice(-2000)).toBe('PASSED');
      balancer.upstreams = [portOf(a), portOf(b)];
      // The agent's long polls are held by A now.
      await until('long polls on A', () => (balancer.openByUpstream().get(portOf(a)) ?? 0) > 0, 10_000);
      expect(balancer.openByUpstream().get(portOf(b)) ?? 0).toBe(0);

      // SIGKILL closes A's connections; SIGSTOP leaves them open and silent, which only the claim's missed
      // heartbeats reveal (the wait alone would hold the agent 20 s and its grace 15 s more).
      if (signal === 'SIGKILL') await kill(a);
      else a.process.child.kill('SIGSTOP');
      const failedAt = Date.now();
      try {
        const session = await runThrough(b);
        expect(session.status, agent.output().slice(-2000)).toBe('PASSED');
        expect(session.results).toHaveLength(1);
        const failoverMs = Date.parse(session.results[0].startedAt) - failedAt;
        console.log(
          `${signal} of the replica holding the long polls → the agent's next job started after ${failoverMs} ms`,
        );
        expect(failoverMs).toBeLessThanOrEqual(5000);
        expect(agent.child.exitCode).toBe(null);
      } finally {
        if (signal === 'SIGSTOP') a.process.child.kill('SIGCONT');
      }
      if (signal === 'SIGSTOP') {
        // A wakes with the agent's old long polls, whose answers go nowhere: nothing it claims for them is lost.
        expect((await runThrough(a)).status).toBe('PASSED');
      }

      // Audit: each run has one result and no job is left queued or leased.
      const runs = signal === 'SIGSTOP' ? 3 : 2;
      await until(
        'no job left',
        async () => {
          const left = await sql!.query<{ n: number }>(
            'select count(*)::int as n from jobs where check_id = $1',
            [created.json.id],
          );
          return left.rows[0]!.n === 0;
        },
        15_000,
      );
      const results = await sql!.query<{ n: number; sessions: number }>(
        'select count(*)::int as n, count(distinct check_session_id)::int as sessions from check_results where check_id = $1',
        [created.json.id],
      );
      expect(results.rows[0]).toEqual({ n: runs, sessions: runs });
    },
    90_000,
  );
});
