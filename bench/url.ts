import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { createUrlExecutor } from '../src/checks/url/index.js';
import type { CheckType, Job, RunOutcome } from '../src/protocol/index.js';
import { BLACKBOX_MISSING, type BlackboxMeasurement, measureBlackbox, startBlackbox } from './blackbox.js';
import { benchPhase, loadAverageLine, trackChild } from './watchdog.js';

/** One side of a comparison. Memory in MiB per check in flight. */
export type BenchMeasurement = {
  tool: string;
  checks: number;
  concurrency: number;
  wallSeconds: number;
  /** User + system CPU of the checking side (our process, or blackbox_exporter's), seconds. */
  cpuSeconds: number;
  /** Successful checks per second. */
  checksPerSecond: number;
  /** Checks whose outcome was what the server should give (PASSED, or probe_success 1). */
  succeeded: number;
  /** Resident memory per concurrent check, MiB: our (or blackbox_exporter's) RSS growth / checks in flight. */
  rssPerCheckMiB: number;
  /** Ours only: heap and external memory still referenced per check in flight (after a GC), MiB. */
  livePerCheckMiB: number | null;
  /** Ours: peak RSS of the process with `concurrency` checks in flight; blackbox_exporter's peak RSS. MiB. */
  processRssMiB: number | null;
};

/**
 * Ours next to the peer (blackbox_exporter), and the
 * ratios, each > 1 when we do better: throughput ours / theirs, CPU per check theirs / ours,
 * memory per check in flight theirs / ours.
 */
export type BenchReport = {
  ours: BenchMeasurement;
  peer: BenchMeasurement | null;
  throughputRatio: number | null;
  cpuRatio: number | null;
  memoryRatio: number | null;
};

/** Options of {@link benchUrl} and benchTcp. */
export type BenchOptions = {
  /** Checks measured through our executor; default 10 000 (after 1 000 unmeasured). */
  checks?: number;
  /** Checks in flight at once, ours and the peer's; default 100. */
  concurrency?: number;
};

const SERVER = `
const net = require('node:net');
const mode = process.env.MODE;
const delayMs = Number(process.env.DELAY_MS || 0);
const RESPONSE = Buffer.from('HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok');
const JSON_BODY = JSON.stringify({ status: 'ok', items: [{ id: 1, price: 10 }, { id: 2, price: 20 }], total: 2 });
const JSON_RESPONSE = Buffer.from('HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + JSON_BODY.length + '\\r\\nConnection: close\\r\\n\\r\\n' + JSON_BODY);
const server = net.createServer({ noDelay: true }, (socket) => {
  socket.on('error', () => {});
  socket.once('data', (chunk) => {
    const answer = () => socket.end(mode === 'http' ? RESPONSE : mode === 'json' ? JSON_RESPONSE : chunk);
    if (delayMs > 0) setTimeout(answer, delayMs); else answer();
  });
});
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0)).resume();
`;

/**
 * A loopback server in a child process (the other core): `http` answers any request with
 * 200 `ok` and closes (no keep-alive), `json` with 200 and a small JSON document
 * (`{status:"ok", items:[…], total:2}`), `echo` sends the first chunk back and closes. Each
 * answer waits `delayMs` first.
 */
export async function startLoopbackServer(
  mode: 'http' | 'json' | 'echo',
  delayMs = 0,
): Promise<{ port: number; close(): Promise<void> }> {
  const child = trackChild(
    spawn(process.execPath, ['-e', SERVER], {
      env: { ...process.env, MODE: mode, DELAY_MS: String(delayMs) },
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const lines = createInterface({ input: child.stdout });
  const [line] = (await Promise.race([once(lines, 'line'), once(child, 'exit')])) as [string];
  const port = Number(line);
  if (!Number.isInteger(port)) throw new Error(`the loopback server did not start: ${String(line)}`);
  return {
    port,
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin?.end();
      await exited;
    },
  };
}

/** A job as the dispatcher would hand it over. */
export function benchJob(checkType: CheckType, request: Record<string, unknown>): Job {
  return {
    jobId: 'bench',
    accountId: 'bench',
    check: {
      id: 'bench',
      name: 'bench',
      checkType,
      request,
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: null,
    },
    environmentVariables: [],
    runLocation: 'bench',
    runSource: 'TRIGGER_API',
    checkSessionId: null,
    attempt: 1,
    timeoutMs: 30_000,
    leaseMs: 300_000,
  };
}

/** Runs `count` tasks, `concurrency` at a time. */
export async function runPool(count: number, concurrency: number, task: () => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next++ < count) await task();
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
}

const MiB = 1024 * 1024;
let exposedGc: (() => void) | undefined;

/** A full garbage collection: exposes V8's gc on first use (bench only). */
function gc(): void {
  if (exposedGc === undefined) {
    setFlagsFromString('--expose-gc');
    exposedGc = runInNewContext('gc') as () => void;
  }
  exposedGc();
}

/** Memory of `concurrency` checks in flight at once, against the server that answers after 300 ms. */
async function memoryInFlight(
  concurrency: number,
  run: (slow: boolean) => Promise<RunOutcome>,
): Promise<{ rssPerCheckMiB: number; livePerCheckMiB: number; peakRssMiB: number }> {
  gc();
  const before = process.memoryUsage();
  let peak = before.rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  const inFlight = runPool(concurrency, concurrency, async () => void (await run(true)));
  await new Promise((resolve) => setTimeout(resolve, 150));
  // Halfway through the server's delay every check is waiting for its response: what is live now is theirs.
  gc();
  const during = process.memoryUsage();
  await inFlight;
  clearInterval(sampler);
  const live = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external;
  return {
    rssPerCheckMiB: (Math.max(peak, during.rss) - before.rss) / MiB / concurrency,
    livePerCheckMiB: (live(during) - live(before)) / MiB / concurrency,
    peakRssMiB: Math.max(peak, during.rss) / MiB,
  };
}

/**
 * Measures an executor. Memory first, while the heap is still small: `concurrency` checks at
 * once against a server that answers after 300 ms (RSS growth and live heap per check). Then
 * throughput: `checks` runs at `concurrency` against a fast server, after 1 000 unmeasured.
 */
export async function measureOurs(
  tool: string,
  options: Required<BenchOptions>,
  run: (slow: boolean) => Promise<RunOutcome>,
): Promise<BenchMeasurement> {
  await runPool(200, options.concurrency, async () => void (await run(false)));
  const memory = await memoryInFlight(options.concurrency, run);
  await runPool(1000, options.concurrency, async () => void (await run(false)));
  let succeeded = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await runPool(options.checks, options.concurrency, async () => {
    if ((await run(false)).status === 'PASSED') succeeded += 1;
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return {
    tool,
    checks: options.checks,
    concurrency: options.concurrency,
    wallSeconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    checksPerSecond: succeeded / wallSeconds,
    succeeded,
    rssPerCheckMiB: memory.rssPerCheckMiB,
    livePerCheckMiB: memory.livePerCheckMiB,
    processRssMiB: memory.peakRssMiB,
  };
}

/**
 * blackbox_exporter's figures as one side of the comparison: its own process's CPU, its RSS
 * growth per probe in flight (`rssPerCheckMiB`, 0 when not measured) and its peak RSS.
 */
export function blackboxSide(m: BlackboxMeasurement): BenchMeasurement {
  return {
    tool: 'blackbox_exporter',
    checks: m.checks,
    concurrency: m.concurrency,
    wallSeconds: m.wallSeconds,
    cpuSeconds: m.cpuSeconds,
    checksPerSecond: m.checksPerSecond,
    succeeded: m.succeeded,
    rssPerCheckMiB: m.rssPerCheckMiB ?? 0,
    livePerCheckMiB: null,
    processRssMiB: m.peakRssMiB,
  };
}

/**
 * Measures blackbox_exporter as the peer: started on 127.0.0.1 with `modulesYaml` (a module
 * named `module`), driven at `options.concurrency` with the work of `options.checks`, the
 * slow target held in flight for its memory; null (after printing how to install it) when it
 * is missing.
 */
export async function measureBlackboxPeer(
  options: Required<BenchOptions>,
  modulesYaml: string,
  module: string,
  target: string,
  slowTarget: string,
): Promise<BenchMeasurement | null> {
  const exporter = await startBlackbox(modulesYaml, options.concurrency);
  if (exporter === null) {
    console.log(BLACKBOX_MISSING);
    return null;
  }
  try {
    return blackboxSide(
      await measureBlackbox(exporter, {
        module,
        target,
        slowTarget,
        checks: options.checks,
        concurrency: options.concurrency,
      }),
    );
  } finally {
    await exporter.close();
  }
}

/**
 * Prints ours and the peer's figures side by side with the ratios, each > 1 when we do better:
 * throughput ours / theirs, CPU per check theirs / ours, memory per check in flight theirs /
 * ours.
 */
export function report(title: string, ours: BenchMeasurement, peer: BenchMeasurement | null): BenchReport {
  const cell = (value: number | null, digits: number) => (value === null ? '' : value.toFixed(digits));
  const cpuPerCheckMs = (m: BenchMeasurement) => (m.cpuSeconds * 1000) / Math.max(1, m.succeeded);
  console.log(title);
  console.table(
    (peer ? [ours, peer] : [ours]).map((m) => ({
      tool: m.tool,
      checks: m.checks,
      concurrency: m.concurrency,
      'wall s': cell(m.wallSeconds, 2),
      'checks/s': cell(m.checksPerSecond, 0),
      'CPU s': cell(m.cpuSeconds, 2),
      'CPU ms/check': cell(cpuPerCheckMs(m), 3),
      ok: `${m.succeeded}/${m.checks}`,
      'RSS MiB/check': cell(m.rssPerCheckMiB, 3),
      'live MiB/check': cell(m.livePerCheckMiB, 3),
      'process RSS MiB': cell(m.processRssMiB, 1),
    })),
  );
  const throughputRatio = peer ? ours.checksPerSecond / peer.checksPerSecond : null;
  const cpuRatio = peer ? cpuPerCheckMs(peer) / Math.max(cpuPerCheckMs(ours), 1e-6) : null;
  // Our memory per check: the larger of RSS growth and live heap, so neither can flatter us.
  const oursPerCheck = Math.max(ours.rssPerCheckMiB, ours.livePerCheckMiB ?? 0, 1e-6);
  const memoryRatio = peer ? peer.rssPerCheckMiB / oursPerCheck : null;
  console.log(`our process: ${ours.processRssMiB?.toFixed(1)} MiB RSS, ${ours.concurrency} checks in flight`);
  if (peer && throughputRatio !== null && cpuRatio !== null && memoryRatio !== null) {
    // A peer whose RSS did not grow holding the checks (its heap already sized by the warm-up)
    // has no per-check figure to divide: its whole process is compared instead.
    const memory =
      peer.rssPerCheckMiB < 0.0005
        ? `memory per check in flight: its RSS did not grow (process RSS ours ${ours.processRssMiB?.toFixed(1)} MiB, its ${peer.processRssMiB?.toFixed(1)} MiB)`
        : `memory per check in flight ×${memoryRatio.toFixed(2)} (its RSS growth / our max(RSS growth, live heap))`;
    console.log(
      `vs ${peer.tool} (> 1: we do better): throughput ×${throughputRatio.toFixed(2)} (ours / its), ` +
        `CPU per check ×${cpuRatio.toFixed(2)} (its / ours), ${memory}`,
    );
  }
  console.log(loadAverageLine());
  return { ours, peer, throughputRatio, cpuRatio, memoryRatio };
}

/** blackbox_exporter's module for the URL bench: a GET as ours does it (IPv4 only, redirects followed, 30 s). */
const HTTP_MODULE = `  http_get:
    prober: http
    timeout: 30s
    http:
      method: GET
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      follow_redirects: true
`;

/**
 * URL benchmark: GET checks per second at `concurrency` (default 100) against a loopback HTTP
 * server in another process that closes every connection (keep-alive off: a new connection per
 * check), CPU per check, and memory per concurrent check; then blackbox_exporter (the prober
 * self-hosters run) doing the same GETs at the same concurrency, driven over kept-alive
 * connections to its /probe, its own process's CPU and RSS measured.
 * Goals: ≥ 2 000 checks/s on 2 cores, < 1 MiB per concurrent check.
 */
export async function benchUrl(options: BenchOptions = {}): Promise<BenchReport> {
  const settings = { checks: 10_000, concurrency: 100, ...options };
  const fast = await startLoopbackServer('http');
  const slow = await startLoopbackServer('http', 300);
  try {
    const executor = createUrlExecutor();
    const log = pino({ level: 'silent' });
    const url = (server: { port: number }) => `http://127.0.0.1:${server.port}/`;
    const jobs = [fast, slow].map((server) =>
      benchJob('URL', {
        url: url(server),
        followRedirects: true,
        skipSSL: false,
        ipFamily: 'IPv4',
        assertions: [],
      }),
    );
    benchPhase('outpost URL checks');
    const ours = await measureOurs('outpost', settings, (isSlow) =>
      executor.run(jobs[isSlow ? 1 : 0]!, { signal: new AbortController().signal, log }),
    );
    benchPhase('blackbox_exporter http probes');
    const peer = await measureBlackboxPeer(settings, HTTP_MODULE, 'http_get', url(fast), url(slow));
    return report(`URL checks (GET http://127.0.0.1, a new connection each)`, ours, peer);
  } finally {
    await Promise.all([fast.close(), slow.close()]);
  }
}
