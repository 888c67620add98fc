/**
 * Heartbeat monitors against the real service (`build()` listening on 127.0.0.1:0 in a worker
 * thread, a SQLite file store in a temp directory):
 * - ping throughput: `GET /ping/{token}` with autocannon over 1,000 heartbeats (round robin, so
 *   the per-token rate limit of 60 a minute is never what stops it); goal ≥ 2,000 pings/s, p99 < 20 ms;
 * - lateness detection: 10,000 heartbeats going late; goal: 99.9 % marked LATE within 1 s of the
 *   deadline (the time their FAILED results are dated). Also printed, with no goal of its own: when
 *   each FAILED result, with its alerting, was stored, which in a burst follows the marking at the
 *   rate results are stored. Twice: deadlines spread over a minute (10,000 heartbeats with a
 *   one-minute period, the usual case) and over 3 s (a stress: about 3,300 late heartbeats a second).
 * Prints the figures and their ratio to the goals; returns them.
 * Run: `npm run build && node dist/bench/heartbeats.js`.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { build, type Service } from '../src/service/app.js';
import { newPingToken } from '../src/service/heartbeats/monitor.js';
import { createAccount } from '../src/service/platform/http/auth.js';
import { newCheckDoc } from '../src/service/checks/checks.js';
import { CheckQueries } from '../src/service/checks/store.js';
import { heartbeatExpectation } from '../src/service/checks/types/heartbeat.js';
import { openSqliteDatabase } from '../src/service/platform/store/database.js';

/** What benchHeartbeats measured. Latencies and delays in ms. */
export type HeartbeatBenchReport = {
  serviceInWorker: boolean;
  pings: {
    heartbeats: number;
    requests: number;
    perSecond: number;
    p50Ms: number;
    p99Ms: number;
    failed: number;
  };
  lateness: Array<{
    heartbeats: number;
    spreadMs: number;
    detected: number;
    withinOneSecondPercent: number;
    p50DelayMs: number;
    p99DelayMs: number;
    maxDelayMs: number;
    /** From the deadline to the FAILED result's commit (`created_at`). */
    storedP50DelayMs: number;
    storedP99DelayMs: number;
    storedMaxDelayMs: number;
  }>;
};

/** The service side: makes heartbeats, moves deadlines, measures when they were found late. */
type Side = {
  port: number;
  setup(count: number): Promise<string[]>;
  lateness(count: number, spreadMs: number): Promise<HeartbeatBenchReport['lateness'][number]>;
  close(): Promise<void>;
};

async function serviceSide(): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-heartbeats-'));
  const db = await openSqliteDatabase(join(dir, 'store.sqlite'));
  const accountId = await createAccount(db, 'bench');
  const service: Service = await build({ db, log: pino({ level: 'silent' }), retention: false });
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (service.app.server.address() as AddressInfo).port;
  const monitor = service.heartbeats;

  /** Creates `count` HEARTBEAT checks as the create route does, 500 per transaction. */
  const make = async (count: number, heartbeat: Record<string, unknown>) => {
    const made: { id: string; token: string }[] = [];
    for (let at = 0; at < count; at += 500) {
      await db.transaction().execute(async (tx) => {
        for (let i = at; i < Math.min(count, at + 500); i++) {
          const now = Date.now();
          const doc = newCheckDoc(
            'HEARTBEAT',
            { name: `hb ${i}`, activated: true, heartbeat },
            new Date(now),
          );
          const expectation = heartbeatExpectation(heartbeat, now);
          const token = newPingToken();
          doc.heartbeat = { ...heartbeat, pingToken: token };
          await new CheckQueries(tx).insert(accountId, doc, now);
          await monitor.create(tx, { accountId, checkId: doc.id, token, expectation, activated: true }, now);
          made.push({ id: doc.id, token });
        }
      });
    }
    return made;
  };

  return {
    port,
    async setup(count) {
      return (await make(count, { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'seconds' })).map(
        (h) => h.token,
      );
    },
    async lateness(count, spreadMs) {
      const made = await make(count, { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'seconds' });
      // Deadlines spread evenly over [now + 1 s, now + 1 s + spread].
      const first = Date.now() + 1000;
      const due = new Map<string, number>();
      await db.transaction().execute(async (tx) => {
        for (const [i, h] of made.entries()) {
          const at = first + Math.floor((i * spreadMs) / count);
          due.set(h.id, at);
          await tx.updateTable('heartbeats').set({ due_at: at }).where('check_id', '=', h.id).execute();
        }
      });
      const lateNow = async () =>
        Number(
          (
            await db
              .selectFrom('heartbeats')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('status', '=', 'LATE')
              // Marked, and its result stored.
              .where('late_result_at', 'is', null)
              .executeTakeFirstOrThrow()
          ).n,
        );
      // Heartbeats of an earlier scenario stay late: count this one's on top of them.
      const lateBefore = await lateNow();
      monitor.deadlineMoved(first);
      const until = first + spreadMs + 30_000;
      for (;;) {
        await new Promise((r) => setTimeout(r, 250));
        if ((await lateNow()) >= lateBefore + count || Date.now() > until) break;
      }
      const results = await db
        .selectFrom('check_results')
        .select(['check_id', 'stopped_at', 'created_at'])
        .where('status', '=', 'FAILED')
        .execute();
      const ours = results.filter((r) => due.has(r.check_id));
      const delays = ours.map((r) => Number(r.stopped_at) - due.get(r.check_id)!).sort((a, b) => a - b);
      const stored = ours.map((r) => Number(r.created_at) - due.get(r.check_id)!).sort((a, b) => a - b);
      const pickOf = (sorted: number[]) => (q: number) =>
        sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
      const pick = pickOf(delays);
      const pickStored = pickOf(stored);
      return {
        heartbeats: count,
        spreadMs,
        detected: delays.length,
        withinOneSecondPercent: (100 * delays.filter((d) => d >= 0 && d <= 1000).length) / count,
        p50DelayMs: pick(0.5),
        p99DelayMs: pick(0.99),
        maxDelayMs: delays.at(-1) ?? Number.NaN,
        storedP50DelayMs: pickStored(0.5),
        storedP99DelayMs: pickStored(0.99),
        storedMaxDelayMs: stored.at(-1) ?? Number.NaN,
      };
    },
    async close() {
      await service.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Message protocol between the bench and the service's worker thread. */
type Call = { id: number; op: 'setup' | 'lateness' | 'close'; args: number[] };

/**
 * The service side in a worker thread, so autocannon on this thread does not share its event
 * loop. Run from source (tsx), workers cannot load TypeScript: it then runs in this process.
 */
async function startSide(): Promise<Side & { inWorker: boolean }> {
  if (import.meta.url.endsWith('.ts')) return { ...(await serviceSide()), inWorker: false };
  const worker = new Worker(new URL(import.meta.url), { workerData: { outpostHeartbeatBench: true } });
  const [{ port }] = (await once(worker, 'message')) as [{ port: number }];
  let next = 0;
  const call = <T>(op: Call['op'], args: number[]) =>
    new Promise<T>((resolve) => {
      const id = ++next;
      const onMessage = (m: { id: number; value: T }) => {
        if (m.id !== id) return;
        worker.off('message', onMessage);
        resolve(m.value);
      };
      worker.on('message', onMessage);
      worker.postMessage({ id, op, args } satisfies Call);
    });
  return {
    port,
    inWorker: true,
    setup: (count) => call('setup', [count]),
    lateness: (count, spreadMs) => call('lateness', [count, spreadMs]),
    close: async () => {
      await call('close', []);
      await once(worker, 'exit');
    },
  };
}

async function serveInWorker(): Promise<void> {
  const side = await serviceSide();
  parentPort!.on('message', async (m: Call) => {
    if (m.op === 'setup') parentPort!.postMessage({ id: m.id, value: await side.setup(m.args[0]!) });
    else if (m.op === 'lateness') {
      parentPort!.postMessage({ id: m.id, value: await side.lateness(m.args[0]!, m.args[1]!) });
    } else {
      await side.close();
      parentPort!.postMessage({ id: m.id, value: null });
      parentPort!.close();
    }
  });
  parentPort!.postMessage({ port: side.port });
}

/**
 * Runs both scenarios and prints the figures with their ratio to the goals.
 * @param options.heartbeats - heartbeats pinged (default 1,000); `connections` (default 20);
 *   `durationSeconds` of the ping scenario (default 5); `late` heartbeats (default 10,000) whose
 *   deadlines fall within `spreadMs` (default: once within 60 000, then within 3 000).
 */
export async function benchHeartbeats(
  options: {
    heartbeats?: number;
    connections?: number;
    durationSeconds?: number;
    late?: number;
    spreadMs?: number;
  } = {},
): Promise<HeartbeatBenchReport> {
  const side = await startSide();
  try {
    const tokens = await side.setup(options.heartbeats ?? 1000);
    let turn = 0;
    const pings = await autocannon({
      url: `http://127.0.0.1:${side.port}`,
      connections: options.connections ?? 20,
      duration: options.durationSeconds ?? 5,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => ({ ...request, path: `/ping/${tokens[turn++ % tokens.length]}` }),
        },
      ],
    });
    const lateness = [];
    for (const spreadMs of options.spreadMs === undefined ? [60_000, 3000] : [options.spreadMs]) {
      lateness.push(await side.lateness(options.late ?? 10_000, spreadMs));
    }
    const report: HeartbeatBenchReport = {
      serviceInWorker: side.inWorker,
      pings: {
        heartbeats: tokens.length,
        requests: pings.requests.total,
        perSecond: Math.round(pings.requests.total / (pings.duration || 1)),
        p50Ms: pings.latency.p50,
        p99Ms: pings.latency.p99,
        failed: pings.non2xx + pings.errors + pings.timeouts,
      },
      lateness,
    };
    print(report);
    return report;
  } finally {
    await side.close();
  }
}

function print(r: HeartbeatBenchReport): void {
  const where = r.serviceInWorker ? 'service in a worker thread' : "service in the load generator's process";
  const p = r.pings;
  console.log(`heartbeats, ${where}`);
  console.log(
    `pings: ${p.perSecond}/s over ${p.heartbeats} heartbeats (goal ≥ 2000/s: ×${(p.perSecond / 2000).toFixed(2)}), ` +
      `p50 ${p.p50Ms} ms, p99 ${p.p99Ms} ms (goal < 20 ms: ×${(20 / Math.max(p.p99Ms, 0.001)).toFixed(2)}), ` +
      `${p.requests} requests, ${p.failed} failed`,
  );
  for (const l of r.lateness) {
    console.log(
      `lateness: ${l.detected}/${l.heartbeats} late, deadlines over ${l.spreadMs} ms; ${l.withinOneSecondPercent.toFixed(2)} % ` +
        `marked LATE within 1 s (goal ≥ 99.9 %: ×${(l.withinOneSecondPercent / 99.9).toFixed(3)}); delay p50 ${l.p50DelayMs} ms, ` +
        `p99 ${l.p99DelayMs} ms, max ${l.maxDelayMs} ms; FAILED result stored: p50 ${l.storedP50DelayMs} ms, ` +
        `p99 ${l.storedP99DelayMs} ms, max ${l.storedMaxDelayMs} ms`,
    );
  }
}

if (!isMainThread && (workerData as { outpostHeartbeatBench?: boolean } | null)?.outpostHeartbeatBench) {
  await serveInWorker();
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchHeartbeats();
}
