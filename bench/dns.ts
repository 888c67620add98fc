import { execFile, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { promisify } from 'node:util';
import { decode, encode } from 'dns-packet';
import { pino } from 'pino';
import { createDnsExecutor } from '../src/checks/dns/index.js';
import type { Job } from '../src/protocol/index.js';

const run = promisify(execFile);

/** Figures of one side of the comparison. */
export type DnsBenchSide = {
  /** Completed checks per second at the given concurrency. */
  checksPerSecond: number;
  /** Resident memory per check in flight, KiB: RSS growth of the agent / RSS of one dig process. */
  rssPerConcurrentCheckKiB: number;
  /** Proportional set size per check in flight, KiB (shared libraries split between dig processes). */
  pssPerConcurrentCheckKiB: number;
};

/** What benchDns measured. */
export type DnsBenchReport = {
  concurrency: number;
  /** Checks timed for Outpost, and dig runs timed. */
  checks: number;
  digRuns: number;
  /** `heapPerConcurrentCheckKiB`: live V8 heap per check in flight, KiB. Response-time percentiles in ms. */
  outpost: DnsBenchSide & { heapPerConcurrentCheckKiB: number; p50Ms: number; p99Ms: number };
  dig: DnsBenchSide;
  /** Outpost checks held in flight for the memory figure. */
  heldChecks: number;
  /**
   * Outpost over dig for throughput; dig over Outpost for memory, RSS and PSS, with Outpost's
   * figure taken as at least its live heap per check (higher is better for Outpost).
   */
  ratios: { throughput: number; memory: number; memoryPss: number };
};

/** One UDP DNS server on 127.0.0.1 answering every query with one A record after `delayMs`. */
async function startServer(delayMs: number): Promise<{ port: number; close(): void }> {
  const socket = createSocket('udp4');
  socket.on('message', (bytes, from) => {
    const query = decode(bytes);
    const name = query.questions?.[0]?.name ?? 'bench.test';
    const answer = encode({
      type: 'response',
      id: query.id ?? 0,
      flags: 0x0180,
      questions: query.questions ?? [],
      answers: [{ type: 'A', name, ttl: 60, data: '192.0.2.1' }],
    });
    const reply = () => socket.send(answer, from.port, from.address);
    if (delayMs > 0) setTimeout(reply, delayMs);
    else reply();
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, close: () => socket.close() };
}

/**
 * The fast server: dnsmasq in its own process when installed (so the server does not share our
 * CPU budget with the checks), else the in-process server.
 */
async function startFastServer(): Promise<{ port: number; close(): void; kind: string }> {
  const probe = await startServer(0);
  const port = probe.port;
  probe.close();
  const child = spawn(
    'dnsmasq',
    [
      '--no-daemon',
      `--port=${port}`,
      '--listen-address=127.0.0.1',
      '--bind-interfaces',
      '--no-resolv',
      '--no-hosts',
      '--conf-file=/dev/null',
      '--pid-file=',
      '--local=/test/',
      '--host-record=bench.test,192.0.2.1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const started = await new Promise<boolean>((resolve) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('started, version')) resolve(true);
    });
    child.once('error', () => resolve(false));
    child.once('exit', () => resolve(false));
  });
  if (started) return { port, close: () => child.kill('SIGTERM'), kind: 'dnsmasq' };
  const own = await startServer(0);
  return { ...own, kind: 'in-process dns-packet' };
}

function dnsJob(port: number): Job {
  return {
    jobId: 'bench',
    accountId: 'bench',
    check: {
      id: 'bench',
      name: 'bench',
      checkType: 'DNS',
      request: {
        recordType: 'A',
        query: 'bench.test',
        nameServer: '127.0.0.1',
        port,
        protocol: 'UDP',
        assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR', property: '' }],
      },
      shouldFail: false,
      degradedResponseTime: 500,
      maxResponseTime: 1000,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: null,
    },
    environmentVariables: [],
    runLocation: 'bench',
    runSource: 'SCHEDULER',
    checkSessionId: null,
    attempt: 1,
    timeoutMs: 30_000,
    leaseMs: 60_000,
  };
}

/** Runs `total` tasks, `concurrency` at a time; milliseconds it took. */
async function pool(
  total: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return performance.now() - started;
}

/** VmRSS and Pss of a process, KiB; null when it already exited. */
function memoryOf(pid: number | 'self'): { rssKiB: number; pssKiB: number } | null {
  try {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    const pss = /Pss:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return rss === undefined || pss === undefined ? null : { rssKiB: Number(rss), pssKiB: Number(pss) };
  } catch {
    return null;
  }
}

/** A full garbage collection, without starting node with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Measures DNS checks per second at `concurrency` checks in flight against a loopback dnsmasq
 * (the full executor: query, rendering, assertions, status), and the resident memory each
 * check in flight costs (RSS growth while `heldChecks` checks wait on a server that answers
 * after 1 s, per check), side by side with one `dig` process per check (`digRuns` digs at
 * `concurrency` for the rate; `concurrency` digs held in flight for the memory, RSS and PSS
 * per process). Prints a table and returns the figures.
 * @param options.checks - Outpost checks timed. Default 5000.
 * @param options.digRuns - dig processes timed. Default 200.
 * @param options.concurrency - Checks in flight. Default 100.
 * @param options.heldChecks - Outpost checks held in flight for the memory figure. Default 1000.
 */
export async function benchDns(
  options: { checks?: number; digRuns?: number; concurrency?: number; heldChecks?: number } = {},
): Promise<DnsBenchReport> {
  const checks = options.checks ?? 5000;
  const digRuns = options.digRuns ?? 200;
  const concurrency = options.concurrency ?? 100;
  const heldChecks = options.heldChecks ?? 1000;
  const executor = createDnsExecutor();
  const log = pino({ level: 'silent' });
  // Each run gets its own signal, as the dispatcher gives each job one.
  const context = () => ({ signal: new AbortController().signal, log });
  const fast = await startFastServer();
  const slow = await startServer(1000);
  try {
    // Memory first, while the heap is small: `heldChecks` checks held in flight by the slow
    // server. RSS is read while they wait, against a baseline after a short warm-up and full
    // GCs; the live heap after a full GC in both states.
    const slowJob = dnsJob(slow.port);
    await pool(200, concurrency, async () => {
      await executor.run(dnsJob(fast.port), context());
    });
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 300));
    collectGarbage();
    const before = { ...memoryOf('self'), heapKiB: process.memoryUsage().heapUsed / 1024 };
    const held = Promise.all(Array.from({ length: heldChecks }, () => executor.run(slowJob, context())));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const duringRss = memoryOf('self');
    collectGarbage();
    const during = { ...duringRss, heapKiB: process.memoryUsage().heapUsed / 1024 };
    await held;

    const job = dnsJob(fast.port);
    const durations: number[] = [];
    let failures = 0;
    const check = async () => {
      const outcome = await executor.run(job, context());
      if (outcome.status !== 'PASSED') failures++;
      durations.push(outcome.responseTime);
    };
    await pool(500, concurrency, check); // warm-up: JIT, socket paths
    durations.length = 0;
    failures = 0;
    const outpostMs = await pool(checks, concurrency, check);
    if (failures > 0) throw new Error(`${failures} of ${checks} benchmark checks did not pass`);
    durations.sort((a, b) => a - b);

    const digArgs = (port: number) => [
      '@127.0.0.1',
      '-p',
      String(port),
      'bench.test',
      'A',
      '+tries=1',
      '+time=5',
    ];
    const digMs = await pool(digRuns, concurrency, async () => {
      await run('dig', digArgs(fast.port));
    });
    const digs = Array.from({ length: concurrency }, () =>
      spawn('dig', digArgs(slow.port), { stdio: 'ignore' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const digMemory = digs.flatMap((child) => {
      const memory = child.pid === undefined ? null : memoryOf(child.pid);
      return memory ? [memory] : [];
    });
    await Promise.all(digs.map((child) => new Promise((resolve) => child.once('exit', resolve))));

    const perCheck = (field: 'rssKiB' | 'pssKiB' | 'heapKiB') =>
      ((during[field] ?? Number.NaN) - (before[field] ?? Number.NaN)) / heldChecks;
    const perDig = (field: 'rssKiB' | 'pssKiB') =>
      digMemory.reduce((sum, m) => sum + m[field], 0) / Math.max(1, digMemory.length);
    const report: DnsBenchReport = {
      concurrency,
      checks,
      digRuns,
      outpost: {
        checksPerSecond: round(checks / (outpostMs / 1000), 0),
        rssPerConcurrentCheckKiB: round(perCheck('rssKiB')),
        pssPerConcurrentCheckKiB: round(perCheck('pssKiB')),
        heapPerConcurrentCheckKiB: round(perCheck('heapKiB'), 2),
        p50Ms: round(percentile(durations, 0.5), 3),
        p99Ms: round(percentile(durations, 0.99), 3),
      },
      dig: {
        checksPerSecond: round(digRuns / (digMs / 1000), 0),
        rssPerConcurrentCheckKiB: round(perDig('rssKiB')),
        pssPerConcurrentCheckKiB: round(perDig('pssKiB')),
      },
      heldChecks,
      ratios: { throughput: 0, memory: 0, memoryPss: 0 },
    };
    // Our memory per check is at least its live heap: RSS growth can hide in pages V8 already holds.
    const ours = (field: 'rssPerConcurrentCheckKiB' | 'pssPerConcurrentCheckKiB') =>
      Math.max(0.01, report.outpost[field], report.outpost.heapPerConcurrentCheckKiB);
    report.ratios.throughput = round(report.outpost.checksPerSecond / report.dig.checksPerSecond);
    report.ratios.memory = round(report.dig.rssPerConcurrentCheckKiB / ours('rssPerConcurrentCheckKiB'), 0);
    report.ratios.memoryPss = round(
      report.dig.pssPerConcurrentCheckKiB / ours('pssPerConcurrentCheckKiB'),
      0,
    );
    printTable(report, fast.kind);
    return report;
  } finally {
    fast.close();
    slow.close();
    await executor.close();
  }
}

function printTable(r: DnsBenchReport, server: string): void {
  const rows: [string, number, number | string, string][] = [
    ['checks per second', r.outpost.checksPerSecond, r.dig.checksPerSecond, `${r.ratios.throughput}x`],
    [
      'RSS per check in flight (KiB)',
      r.outpost.rssPerConcurrentCheckKiB,
      r.dig.rssPerConcurrentCheckKiB,
      `${r.ratios.memory}x less`,
    ],
    ['live heap per check (KiB)', r.outpost.heapPerConcurrentCheckKiB, '-', ''],
    [
      'PSS per check in flight (KiB)',
      r.outpost.pssPerConcurrentCheckKiB,
      r.dig.pssPerConcurrentCheckKiB,
      `${r.ratios.memoryPss}x less`,
    ],
  ];
  console.log(`DNS checks at concurrency ${r.concurrency} against ${server} on 127.0.0.1`);
  console.log(`${'metric'.padEnd(32)}${'outpost'.padStart(12)}${'dig'.padStart(12)}  ratio`);
  for (const [name, ours, dig, ratio] of rows) {
    console.log(`${name.padEnd(32)}${String(ours).padStart(12)}${String(dig).padStart(12)}  ${ratio}`);
  }
  console.log(
    `outpost response time p50 ${r.outpost.p50Ms} ms, p99 ${r.outpost.p99Ms} ms; ${r.checks} checks timed, ` +
      `${r.digRuns} digs timed; memory: ${r.heldChecks} checks vs ${r.concurrency} digs in flight`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchDns();
}
