import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { decode, encode } from 'dns-packet';
import { pino } from 'pino';
import { createDnsExecutor } from '../src/checks/dns/index.js';
import type { Job } from '../src/protocol/index.js';
import { measureBlackbox, BLACKBOX_MISSING, startBlackbox } from './blackbox.js';
import { type Dnsmasq, startDnsmasq } from '../test/helpers/dns-servers.js';
import { benchPhase, loadAverageLine, trackChild, within } from './watchdog.js';

/** Figures of one side of the comparison. */
export type DnsBenchSide = {
  /** Checks (or probes) timed, and those that passed (or that it reported successful). */
  checks: number;
  succeeded: number;
  /** Successful checks per second at the given concurrency. */
  checksPerSecond: number;
  /** CPU (user + system) of the checking process per successful check, ms. */
  cpuPerCheckMs: number;
  /** Resident memory per check in flight, KiB: RSS growth of the process while checks wait on the slow server. */
  rssPerConcurrentCheckKiB: number;
  /** Peak resident memory of the process, MiB. */
  peakRssMiB: number;
};

/** What benchDns measured. */
export type DnsBenchReport = {
  concurrency: number;
  /**
   * `heapPerConcurrentCheckKiB`: live V8 heap per check in flight, KiB. Response-time
   * percentiles in ms. `heldChecks`: checks held in flight for the memory figure.
   */
  outpost: DnsBenchSide & {
    heapPerConcurrentCheckKiB: number;
    p50Ms: number;
    p99Ms: number;
    heldChecks: number;
  };
  /** blackbox_exporter's dns prober (as many probes held for the memory); null when it is not installed. */
  blackbox: DnsBenchSide | null;
  /**
   * Each > 1 when Outpost does better: throughput Outpost / blackbox_exporter; CPU per check
   * and RSS per check in flight blackbox_exporter / Outpost (Outpost's memory taken as at least
   * its live heap per check). Null without blackbox_exporter.
   */
  ratios: { throughput: number; cpu: number; memory: number } | null;
};

/** Limit of one DNS query, ours and blackbox_exporter's module's, ms (the DNS executor's default). */
const QUERY_TIMEOUT_MS = 5000;

/**
 * blackbox_exporter's module for the DNS bench: an A query for bench.test over UDP/IPv4 with
 * recursion desired, NOERROR expected, 5 s.
 */
const DNS_MODULE = `  dns_a:
    prober: dns
    timeout: ${QUERY_TIMEOUT_MS / 1000}s
    dns:
      query_name: bench.test
      query_type: A
      transport_protocol: udp
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      recursion_desired: true
      valid_rcodes: [NOERROR]
`;

/** One UDP DNS server on 127.0.0.1 answering every query with one A record after `delayMs`. */
async function startServer(delayMs: number): Promise<{ port: number; close(): void }> {
  const socket = createSocket('udp4');
  socket.on('message', (bytes, from) => {
    let query: ReturnType<typeof decode>;
    try {
      query = decode(bytes);
    } catch {
      return; // Not a DNS query: no answer.
    }
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
 * CPU budget with the checks), else the in-process server (also when dnsmasq does not say it
 * started within 10 s).
 */
async function startFastServer(): Promise<{
  port: number;
  close(): void;
  kind: string;
  /** Why the server stopped, when it did; null while it runs. */
  exited(): string | null;
}> {
  let dnsmasq: Dnsmasq | null = null;
  try {
    // Bounded: a dnsmasq that neither says it started nor exits within 10 s is killed.
    dnsmasq = await startDnsmasq(['--local=/test/', '--host-record=bench.test,192.0.2.1'], 10_000);
  } catch {
    dnsmasq = null;
  }
  if (dnsmasq) {
    const child = trackChild(dnsmasq.process);
    return {
      port: dnsmasq.port,
      close: () => child.kill('SIGTERM'),
      kind: 'dnsmasq',
      exited: () =>
        child.exitCode === null && child.signalCode === null
          ? null
          : `dnsmasq exited (${child.exitCode ?? child.signalCode})`,
    };
  }
  const own = await startServer(0);
  return { ...own, kind: 'in-process dns-packet', exited: () => null };
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

/**
 * Runs `total` tasks, `concurrency` at a time; milliseconds it took. A task resolves to whether
 * its check passed: past `maxFailures` failed checks no more are started and it throws, naming
 * `what` and `why()` (e.g. the server exited), so that a server that stops answering costs
 * seconds, not one query timeout per remaining check (5000 checks at 100 × 5 s: 4 minutes).
 */
async function pool(
  what: string,
  total: number,
  concurrency: number,
  task: (index: number) => Promise<boolean>,
  maxFailures = Math.max(10, Math.ceil(total / 100)),
  why: () => string | null = () => null,
): Promise<number> {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total && failures <= maxFailures) if (!(await task(next++))) failures++;
  };
  benchPhase(what);
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  if (failures > maxFailures) {
    throw new Error(
      `DNS bench, ${what}: ${failures} of ${next} checks failed; stopped (${why() ?? 'the server is running'})`,
    );
  }
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
 * (the full executor: query, rendering, assertions, status), CPU per check, and the resident
 * memory each check in flight costs (RSS growth while `heldChecks` checks wait on a server that
 * answers after 1 s, per check), side by side with blackbox_exporter's dns prober doing the same
 * query at the same concurrency (driven over kept-alive connections to its /probe; its own
 * process's CPU, and its RSS growth with `heldChecks` probes held on the slow server). Every
 * wait is bounded: the server's start (10 s), each query (5 s, ours and its), the held checks,
 * and a run stops after 1 % of its checks failed (the server stopped answering). Prints a table
 * with the load average and returns the figures.
 * @param options.checks - Checks timed, ours and blackbox_exporter's probes. Default 5000.
 * @param options.concurrency - Checks in flight. Default 100.
 * @param options.heldChecks - Outpost checks held in flight for the memory figure. Default 1000.
 */
export async function benchDns(
  options: { checks?: number; concurrency?: number; heldChecks?: number } = {},
): Promise<DnsBenchReport> {
  const checks = options.checks ?? 5000;
  const concurrency = options.concurrency ?? 100;
  const heldChecks = options.heldChecks ?? 1000;
  const executor = createDnsExecutor({ queryTimeoutMs: QUERY_TIMEOUT_MS });
  const log = pino({ level: 'silent' });
  // Each run gets its own signal, as the dispatcher gives each job one.
  const context = () => ({ signal: new AbortController().signal, log });
  benchPhase('starting the servers');
  const fast = await startFastServer();
  const slow = await startServer(1000);
  try {
    // Memory first, while the heap is small: `heldChecks` checks held in flight by the slow
    // server. RSS is read while they wait, against a baseline after a short warm-up and full
    // GCs; the live heap after a full GC in both states.
    const slowJob = dnsJob(slow.port);
    const passes = async (port: number) => (await executor.run(dnsJob(port), context())).status === 'PASSED';
    await pool('outpost warm-up', 200, concurrency, () => passes(fast.port), undefined, fast.exited);
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 300));
    collectGarbage();
    const before = { ...memoryOf('self'), heapKiB: process.memoryUsage().heapUsed / 1024 };
    benchPhase(`outpost memory, ${heldChecks} checks held on the slow server`);
    const held = Promise.all(Array.from({ length: heldChecks }, () => executor.run(slowJob, context())));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const duringRss = memoryOf('self');
    collectGarbage();
    const during = { ...duringRss, heapKiB: process.memoryUsage().heapUsed / 1024 };
    await within(held, QUERY_TIMEOUT_MS + 10_000, 'DNS bench, checks held on the slow server');

    const job = dnsJob(fast.port);
    const durations: number[] = [];
    const check = async () => {
      const outcome = await executor.run(job, context());
      durations.push(outcome.responseTime);
      return outcome.status === 'PASSED';
    };
    await pool('outpost warm-up', 500, concurrency, check, undefined, fast.exited); // JIT, socket paths
    durations.length = 0;
    const cpu = process.cpuUsage();
    // Every check must pass: the first failure stops the run.
    const outpostMs = await pool(
      `outpost, ${checks} checks at ${concurrency}`,
      checks,
      concurrency,
      check,
      0,
      fast.exited,
    );
    const used = process.cpuUsage(cpu);
    durations.sort((a, b) => a - b);
    const perCheck = (field: 'rssKiB' | 'heapKiB') =>
      ((during[field] ?? Number.NaN) - (before[field] ?? Number.NaN)) / heldChecks;
    const outpost = {
      checks,
      succeeded: checks,
      checksPerSecond: round(checks / (outpostMs / 1000), 0),
      cpuPerCheckMs: round((used.user + used.system) / 1000 / checks, 3),
      rssPerConcurrentCheckKiB: round(perCheck('rssKiB')),
      peakRssMiB: round(
        Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024,
      ),
      heapPerConcurrentCheckKiB: round(perCheck('heapKiB'), 2),
      p50Ms: round(percentile(durations, 0.5), 3),
      p99Ms: round(percentile(durations, 0.99), 3),
      heldChecks,
    };

    benchPhase('starting blackbox_exporter');
    const exporter = await startBlackbox(DNS_MODULE, Math.max(concurrency, heldChecks));
    let blackbox: DnsBenchSide | null = null;
    if (exporter !== null) {
      try {
        benchPhase(`blackbox_exporter, ${checks} dns probes at ${concurrency}`);
        const m = await measureBlackbox(exporter, {
          module: 'dns_a',
          target: `127.0.0.1:${fast.port}`,
          slowTarget: `127.0.0.1:${slow.port}`,
          holdMs: 1000,
          held: heldChecks,
          checks,
          concurrency,
        });
        blackbox = {
          checks: m.checks,
          succeeded: m.succeeded,
          checksPerSecond: round(m.checksPerSecond, 0),
          cpuPerCheckMs: round((m.cpuSeconds * 1000) / Math.max(1, m.succeeded), 3),
          rssPerConcurrentCheckKiB: round((m.rssPerCheckMiB ?? 0) * 1024),
          peakRssMiB: round(m.peakRssMiB),
        };
      } finally {
        await exporter.close();
      }
    }
    // Our memory per check is at least its live heap: RSS growth can hide in pages V8 already holds.
    const oursKiB = Math.max(0.01, outpost.rssPerConcurrentCheckKiB, outpost.heapPerConcurrentCheckKiB);
    const report: DnsBenchReport = {
      concurrency,
      outpost,
      blackbox,
      ratios: blackbox && {
        throughput: round(outpost.checksPerSecond / blackbox.checksPerSecond, 2),
        cpu: round(blackbox.cpuPerCheckMs / Math.max(0.001, outpost.cpuPerCheckMs), 2),
        memory: round(blackbox.rssPerConcurrentCheckKiB / oursKiB, 1),
      },
    };
    printTable(report, fast.kind);
    return report;
  } finally {
    fast.close();
    slow.close();
    await executor.close();
  }
}

function printTable(r: DnsBenchReport, server: string): void {
  const theirs = (value: number | undefined) => (value === undefined ? '-' : value);
  const ratio = (value: number | undefined) => (value === undefined ? '' : `×${value}`);
  const rows: [string, number, number | string, string][] = [
    [
      'checks per second',
      r.outpost.checksPerSecond,
      theirs(r.blackbox?.checksPerSecond),
      ratio(r.ratios?.throughput),
    ],
    ['CPU per check (ms)', r.outpost.cpuPerCheckMs, theirs(r.blackbox?.cpuPerCheckMs), ratio(r.ratios?.cpu)],
    [
      'RSS per check in flight (KiB)',
      r.outpost.rssPerConcurrentCheckKiB,
      theirs(r.blackbox?.rssPerConcurrentCheckKiB),
      ratio(r.ratios?.memory),
    ],
    ['live heap per check (KiB)', r.outpost.heapPerConcurrentCheckKiB, '-', ''],
    ['peak process RSS (MiB)', r.outpost.peakRssMiB, theirs(r.blackbox?.peakRssMiB), ''],
    ['checks passed', r.outpost.succeeded, theirs(r.blackbox?.succeeded), ''],
  ];
  console.log(`DNS checks at concurrency ${r.concurrency} against ${server} on 127.0.0.1`);
  console.log(`${'metric'.padEnd(32)}${'outpost'.padStart(12)}${'blackbox'.padStart(12)}  ratio`);
  for (const [name, ours, peer, value] of rows) {
    console.log(`${name.padEnd(32)}${String(ours).padStart(12)}${String(peer).padStart(12)}  ${value}`);
  }
  console.log(
    `ratios > 1: we do better (throughput ours / theirs; CPU and memory theirs / ours). Outpost response time p50 ` +
      `${r.outpost.p50Ms} ms, p99 ${r.outpost.p99Ms} ms; ${r.outpost.checks} checks each; memory: ` +
      `RSS growth with ${r.outpost.heldChecks} checks (probes) in flight on a server answering after 1 s`,
  );
  if (r.blackbox === null) console.log(BLACKBOX_MISSING);
  console.log(loadAverageLine());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchDns();
}
