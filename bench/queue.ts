import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQLite } from '../src/service/platform/store/sqlite.js';
import { Kysely, SqliteDialect } from 'kysely';
import { JobQueue } from '../src/service/runs/queue/queue.js';
import { migrateToLatest } from '../src/service/platform/store/migrations/index.js';
import type { Database } from '../src/service/platform/store/schema.js';

/** Latencies of one store size, ms. */
export type QueueBenchRow = {
  storedResults: number;
  emptyClaimP50Ms: number;
  emptyClaimP99Ms: number;
  claimOneP50Ms: number;
  claimOneP99Ms: number;
  expiryPassP50Ms: number;
  expiryPassP99Ms: number;
  /** From the wake-up of a job queued (its commit's notify) to a waiting long poll returning it, ms. */
  wakeUpP50Ms: number;
  wakeUpP99Ms: number;
  wakeUpMaxMs: number;
  setupSeconds: number;
};

/** Goal of the wake-up: an idle agent's long poll returns within 10 ms of a job being queued for it. */
const WAKE_UP_GOAL_MS = 10;

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return [quantile(sorted, 0.5), quantile(sorted, 0.99)] as const;
};

/**
 * Queue benchmark (issue 9, 2.3): claim latency (an empty claim, and a claim that takes one
 * job) and the time of one expiry pass, with 0, 100 000 and 1 000 000 stored results in a
 * SQLite file (WAL, as the service runs it). Results are inserted in bulk with one prepared
 * statement in a transaction. The goal is flat latency as results grow. And the wake-up of an idle long
 * poll: a `claimWait` waits on an empty queue, a job is inserted and the queue notified as an enqueue does
 * after its commit; the time from the notify to the long poll returning the job (goal p99 < 10 ms). No
 * peer: this is the latency an agent adds to a job's start while it waits, with nothing to compare.
 */
export async function benchQueue(
  sizes: readonly number[] = [0, 100_000, 1_000_000],
  options: { iterations?: number } = {},
): Promise<QueueBenchRow[]> {
  const iterations = options.iterations ?? 500;
  const rows: QueueBenchRow[] = [];
  for (const size of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-queue-'));
    const sqlite = new SQLite(join(dir, 'outpost.db'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    try {
      await migrateToLatest(db as Kysely<unknown>);
      const setupStarted = performance.now();
      const accountId = randomUUID();
      const checkId = randomUUID();
      const now = Date.now();
      sqlite
        .prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)')
        .run(accountId, 'bench', now);
      sqlite
        .prepare(
          `INSERT INTO checks (id, account_id, check_type, name, activated, tags, frequency, doc, created_at)
           VALUES (?, ?, 'ICMP', 'bench', 0, '[]', 1, '{}', ?)`,
        )
        .run(checkId, accountId, now);
      const insertResult = sqlite.prepare(
        `INSERT INTO check_results (id, account_id, check_id, job_id, check_session_id, run_location, status,
           has_failures, has_errors, is_degraded, response_time, result_type, started_at, stopped_at, doc, created_at,
           agent_id, result_hash)
         VALUES (?, ?, ?, ?, NULL, 'eu-west-1', 'PASSED', 0, 0, 0, 12.5, 'FINAL', ?, ?, '{"status":"PASSED"}', ?, ?, ?)`,
      );
      sqlite.transaction(() => {
        for (let i = 0; i < size; i++) {
          const at = now - (size - i) * 1000;
          insertResult.run(randomUUID(), accountId, checkId, randomUUID(), at, at, at, 'agent', 'hash');
        }
      })();
      const setupSeconds = (performance.now() - setupStarted) / 1000;

      const queue = new JobQueue(db, { leaseMs: 300_000, queueExpiryMs: 360_000 });
      const scope = { accountId, agentId: randomUUID(), locations: null };
      const spec = { checkTypes: ['ICMP'] as const, freeSlots: { uptime: 1, main: 0 }, runtimes: [] };
      const empty: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t = performance.now();
        await queue.claim(scope, spec, now);
        empty.push(performance.now() - t);
      }
      const insertJob = sqlite.prepare(
        `INSERT INTO jobs (id, account_id, check_id, check_session_id, location, job_class, check_type, state, attempt,
           claims, payload, enqueued_at, expires_at)
         VALUES (?, ?, ?, NULL, 'eu-west-1', 'uptime', 'ICMP', 'queued', 1, 0, ?, ?, ?)`,
      );
      sqlite.transaction(() => {
        for (let i = 0; i < iterations; i++) {
          const id = randomUUID();
          insertJob.run(id, accountId, checkId, JSON.stringify({ jobId: id }), now - 1000 + i, now + 360_000);
        }
      })();
      const one: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t = performance.now();
        const jobs = await queue.claim(scope, spec, now);
        one.push(performance.now() - t);
        if (jobs.length !== 1) throw new Error(`claim ${i} took ${jobs.length} jobs, expected 1`);
      }
      const expiry: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t = performance.now();
        await queue.expireStale(now + 1000);
        expiry.push(performance.now() - t);
      }
      const wakeUps: number[] = [];
      const waitSignal = new AbortController().signal;
      for (let i = 0; i < Math.min(iterations, 200); i++) {
        const waiting = queue.claimWait(scope, spec, 5000, waitSignal).then((jobs) => {
          if (jobs.length !== 1) throw new Error(`wake-up ${i} returned ${jobs.length} jobs, expected 1`);
          return performance.now();
        });
        await new Promise((r) => setTimeout(r, 2));
        const id = randomUUID();
        insertJob.run(
          id,
          accountId,
          checkId,
          JSON.stringify({ jobId: id }),
          Date.now() - 1000,
          Date.now() + 360_000,
        );
        const notifiedAt = performance.now();
        queue.notify(accountId);
        wakeUps.push((await waiting) - notifiedAt);
      }
      const [e50, e99] = ms(empty);
      const [w50, w99] = ms(wakeUps);
      const [o50, o99] = ms(one);
      const [x50, x99] = ms(expiry);
      rows.push({
        storedResults: size,
        emptyClaimP50Ms: e50,
        emptyClaimP99Ms: e99,
        claimOneP50Ms: o50,
        claimOneP99Ms: o99,
        expiryPassP50Ms: x50,
        expiryPassP99Ms: x99,
        wakeUpP50Ms: w50,
        wakeUpP99Ms: w99,
        wakeUpMaxMs: Math.max(...wakeUps),
        setupSeconds,
      });
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const f = (n: number) => n.toFixed(3).padStart(8);
  console.log(
    'stored results | empty claim p50 / p99 ms | claim one p50 / p99 ms | expiry pass p50 / p99 ms | wake-up p50 / p99 / max ms',
  );
  for (const r of rows) {
    console.log(
      `${String(r.storedResults).padStart(14)} | ${f(r.emptyClaimP50Ms)} / ${f(r.emptyClaimP99Ms)}    | ${f(r.claimOneP50Ms)} / ${f(r.claimOneP99Ms)}  | ${f(r.expiryPassP50Ms)} / ${f(r.expiryPassP99Ms)}   | ${f(r.wakeUpP50Ms)} / ${f(r.wakeUpP99Ms)} / ${f(r.wakeUpMaxMs)} (goal p99 < ${WAKE_UP_GOAL_MS}: ×${(WAKE_UP_GOAL_MS / r.wakeUpP99Ms).toFixed(2)})   (setup ${r.setupSeconds.toFixed(1)} s)`,
    );
  }
  return rows;
}
