import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { createUrlExecutor } from '../src/checks/url/index.js';
import type { CheckType, Job, RunOutcome } from '../src/protocol/index.js';

/** One side of a comparison. Memory in MiB per check in flight. */
export type BenchMeasurement = {
  tool: string;
  checks: number;
  concurrency: number;
  wallSeconds: number;
  /** User + system CPU of the checking side (our process, or the curl children). */
  cpuSeconds: number;
  checksPerSecond: number;
  /** Checks whose outcome was what the server should give (PASSED, or curl exit 0). */
  succeeded: number;
  /** Resident memory per concurrent check, MiB: our RSS growth / checks in flight; curl's average RSS. */
  rssPerCheckMiB: number;
  /** curl only: average proportional set size (shared pages split among the processes), MiB. */
  pssPerCheckMiB: number | null;
  /** Ours only: heap and external memory still referenced per check in flight (after a GC), MiB. */
  livePerCheckMiB: number | null;
  /** Ours only: RSS of the whole process with `concurrency` checks in flight, MiB. */
  processRssMiB: number | null;
};

/** Ours next to curl, and the ratios (> 1 means we do better). */
export type BenchReport = {
  ours: BenchMeasurement;
  curl: BenchMeasurement | null;
  throughputRatio: number | null;
  memoryRatio: number | null;
};

/** Options of {@link benchUrl} and benchTcp. */
export type BenchOptions = {
  /** Checks measured through our executor; default 10 000 (after 1 000 unmeasured). */
  checks?: number;
  /** Checks in flight at once, ours and curl's; default 100. */
  concurrency?: number;
  /** curl processes measured; default 300. */
  curlChecks?: number;
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
  const child = spawn(process.execPath, ['-e', SERVER], {
    env: { ...process.env, MODE: mode, DELAY_MS: String(delayMs) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
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

/** Children's CPU (user + system) from /proc/self/stat, seconds; counts reaped children only. */
function childrenCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  // After the command name: field 16 cutime and 17 cstime are at offsets 13 and 14, in ticks (100/s).
  return (Number(fields[13]) + Number(fields[14])) / 100;
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
    checksPerSecond: options.checks / wallSeconds,
    succeeded,
    rssPerCheckMiB: memory.rssPerCheckMiB,
    pssPerCheckMiB: null,
    livePerCheckMiB: memory.livePerCheckMiB,
    processRssMiB: memory.peakRssMiB,
  };
}

function spawnCurl(args: string[], input: string | null): ChildProcess {
  const child = spawn('curl', args, { stdio: [input === null ? 'ignore' : 'pipe', 'ignore', 'ignore'] });
  if (input !== null) child.stdin?.end(input);
  return child;
}

function memoryOf(pid: number): { rss: number; pss: number } | null {
  try {
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    const pss = Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1]);
    return Number.isFinite(rss) && Number.isFinite(pss) ? { rss: rss / 1024, pss: pss / 1024 } : null;
  } catch {
    return null;
  }
}

/**
 * Measures one curl process per check: `curlChecks` at `concurrency` against the fast server,
 * then `concurrency` at once against the slow one, reading each live curl's VmRSS and Pss.
 */
export async function measureCurl(
  options: Required<BenchOptions>,
  argsFor: (slow: boolean) => string[],
  input: string | null = null,
): Promise<BenchMeasurement | null> {
  if (spawnSync('curl', ['--version']).error !== undefined) return null;
  let succeeded = 0;
  const cpuBefore = childrenCpuSeconds();
  const started = performance.now();
  await runPool(options.curlChecks, options.concurrency, async () => {
    const [code] = (await once(spawnCurl(argsFor(false), input), 'exit')) as [number];
    if (code === 0) succeeded += 1;
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuSeconds = childrenCpuSeconds() - cpuBefore;

  const children = Array.from({ length: options.concurrency }, () => spawnCurl(argsFor(true), input));
  await new Promise((resolve) => setTimeout(resolve, 150));
  const samples = children.flatMap((child) => {
    const memory = child.pid === undefined ? null : memoryOf(child.pid);
    return memory === null ? [] : [memory];
  });
  await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : null)));
  const average = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  return {
    tool: 'curl',
    checks: options.curlChecks,
    concurrency: options.concurrency,
    wallSeconds,
    cpuSeconds,
    checksPerSecond: options.curlChecks / wallSeconds,
    succeeded,
    rssPerCheckMiB: average(samples.map((s) => s.rss)),
    pssPerCheckMiB: average(samples.map((s) => s.pss)),
    livePerCheckMiB: null,
    processRssMiB: null,
  };
}

/** Prints ours and curl's side by side with the ratios, and returns the report. */
export function report(title: string, ours: BenchMeasurement, curl: BenchMeasurement | null): BenchReport {
  const cell = (value: number | null, digits: number) => (value === null ? '' : value.toFixed(digits));
  console.log(title);
  console.table(
    (curl ? [ours, curl] : [ours]).map((m) => ({
      tool: m.tool,
      checks: m.checks,
      concurrency: m.concurrency,
      'wall s': cell(m.wallSeconds, 2),
      'checks/s': cell(m.checksPerSecond, 0),
      'CPU s': cell(m.cpuSeconds, 2),
      ok: `${m.succeeded}/${m.checks}`,
      'RSS MiB/check': cell(m.rssPerCheckMiB, 3),
      'PSS MiB/check': cell(m.pssPerCheckMiB, 3),
      'live MiB/check': cell(m.livePerCheckMiB, 3),
    })),
  );
  const throughputRatio = curl ? ours.checksPerSecond / curl.checksPerSecond : null;
  // Our memory per check: the larger of RSS growth and live heap, so neither can flatter us.
  const oursPerCheck = Math.max(ours.rssPerCheckMiB, ours.livePerCheckMiB ?? 0, 1e-6);
  const memoryRatio = curl ? (curl.pssPerCheckMiB ?? curl.rssPerCheckMiB) / oursPerCheck : null;
  console.log(`our process: ${ours.processRssMiB?.toFixed(1)} MiB RSS, ${ours.concurrency} checks in flight`);
  if (throughputRatio !== null && memoryRatio !== null) {
    console.log(
      `throughput ×${throughputRatio.toFixed(1)} curl's; memory per check ÷${memoryRatio.toFixed(1)} (curl PSS / our max(RSS growth, live heap))`,
    );
  }
  return { ours, curl, throughputRatio, memoryRatio };
}

/**
 * URL benchmark: GET checks per second at `concurrency` (default 100) against a loopback HTTP
 * server in another process that closes every connection (keep-alive off: a new connection per
 * check), and memory per concurrent check; then one `curl` process per check the same way.
 * Goals: ≥ 2 000 checks/s on 2 cores, < 1 MiB per concurrent check.
 */
export async function benchUrl(options: BenchOptions = {}): Promise<BenchReport> {
  const settings = { checks: 10_000, concurrency: 100, curlChecks: 300, ...options };
  const fast = await startLoopbackServer('http');
  const slow = await startLoopbackServer('http', 300);
  try {
    const executor = createUrlExecutor();
    const log = pino({ level: 'silent' });
    const jobs = [fast, slow].map((server) =>
      benchJob('URL', {
        url: `http://127.0.0.1:${server.port}/`,
        followRedirects: true,
        skipSSL: false,
        ipFamily: 'IPv4',
        assertions: [],
      }),
    );
    const ours = await measureOurs('outpost', settings, (isSlow) =>
      executor.run(jobs[isSlow ? 1 : 0]!, { signal: new AbortController().signal, log }),
    );
    const curlArgs = (isSlow: boolean) => [
      '-s',
      '-o',
      '/dev/null',
      '--fail',
      `http://127.0.0.1:${(isSlow ? slow : fast).port}/`,
    ];
    const curl = await measureCurl(settings, curlArgs);
    return report(`URL checks (GET http://127.0.0.1, a new connection each)`, ours, curl);
  } finally {
    await Promise.all([fast.close(), slow.close()]);
  }
}
