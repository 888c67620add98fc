import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { pino } from 'pino';
import { createIcmpExecutor } from '../src/checks/icmp/index.js';
import type { Job } from '../src/protocol/index.js';
import { BLACKBOX_MISSING, blackboxInstalled, startBlackbox } from './blackbox.js';
import { benchPhase, loadAverageLine } from './watchdog.js';

/** What one side of the comparison did. Times in seconds. */
export type IcmpBenchMeasurement = {
  tool: string;
  settings: string;
  wallSeconds: number;
  cpuSeconds: number;
  checksPerSecond: number;
  /** Targets whose every echo request got its reply. */
  fullyAnswered: number;
};

/**
 * One comparison: the same targets, echo requests per target, pacing, per-request wait and
 * targets in flight on every side.
 */
export type IcmpBenchScenario = {
  name: string;
  /** Time between two requests to one target, ms (fping -p, our intervalMs). */
  periodMs: number;
  /**
   * Targets in flight at once: our checks at once; fping gets the targets in batches of this
   * many, one fping process after the other; blackbox_exporter's probes at once.
   */
  concurrency: number;
  /** Echo requests per target; default the bench's `count`. */
  count?: number;
  /** Whether blackbox_exporter (one echo request per probe) runs this scenario too; it needs count 1. */
  blackbox?: boolean;
};

/**
 * Unmeasured passes of our side before the measured one: an agent runs warm (socket open, code
 * compiled). V8 compiles hot code in tiers as it runs, so one pass of 1000 checks left the
 * measured pass still partly in the interpreter and baseline code (measured: the fourth pass
 * took less than half the second's CPU, 96 ms against 235 ms); fping is compiled C from its first packet.
 */
export const WARM_PASSES = 3;

/**
 * Measured passes of each side per scenario, ours and fping's alternated so that both meet the same moments
 * of the machine; each row gives the median, and the range of CPU per echo beside it. One pass of ours lands
 * on a major GC now and then (V8's memory reducer collects when the process looks idle, which the 1-s pacing
 * makes it): in a run on 30 November the five same-pacing passes took 23 to 173 µs of CPU per echo, median
 * 27, so a single pass said more about where a GC fell than about either prober.
 */
export const MEASURED_PASSES = 5;

/** Options of the ICMP benchmark. */
export type IcmpBenchOptions = {
  /** Loopback targets, 127.1.x.y; default 1000. */
  targets?: number;
  /** Echo requests per target; default 3. */
  count?: number;
  scenarios?: IcmpBenchScenario[];
  /** Measured passes of each side per scenario; default {@link MEASURED_PASSES}. */
  passes?: number;
};

/**
 * The scenarios of `npm run bench`. Every side sends the same echo requests to the same targets
 * with the same period per target, waits up to {@link PACKET_TIMEOUT_MS} for each reply (fping
 * -t, our packetTimeoutMs, blackbox_exporter's module timeout) and has the same targets in flight.
 * fping runs with `-i 0` (as root; else its minimum, 1 ms) in every row: its default least gap
 * of 10 ms between any two requests is a throttle for real networks we do not have, and racing
 * it measured the throttle (the old "fping defaults" row, 12×), not the prober.
 * - same pacing, all at once: fping's default period (1 s per target) with all 1000 targets in
 *   flight: one fping process for all, 1000 checks at once for us;
 * - as fast as possible, all at once: fping's least period (10 ms) with all targets in flight;
 * - as fast as possible, 200 at a time: the same with 200 targets in flight. fping has no
 *   in-flight limit, so it gets the targets in batches of 200 (five processes one after the
 *   other, as `xargs -n 200 fping` would): each batch waits for its last target where our pool
 *   starts a new check as one ends (the old row held only us to 200);
 * - one echo per check, 100 at a time: the work of blackbox_exporter's icmp prober (one echo
 *   request per probe), its probes driven 100 at a time like our checks and fping's batches.
 */
export const DEFAULT_SCENARIOS: IcmpBenchScenario[] = [
  { name: 'same pacing, all at once', periodMs: 1000, concurrency: 1000 },
  { name: 'as fast as possible, all at once', periodMs: 10, concurrency: 1000 },
  { name: 'as fast as possible, 200 at a time', periodMs: 10, concurrency: 200 },
  { name: 'one echo per check, 100 at a time', periodMs: 10, concurrency: 100, count: 1, blackbox: true },
];

/** How long each echo request waits for its reply, ms: ours, fping's -t, blackbox_exporter's timeout. */
export const PACKET_TIMEOUT_MS = 2000;

/** fping's -i, ms: 0 as root; its least for others (it refuses lower as "too risky for mere mortals"). */
const FPING_INTERVAL_MS = process.getuid?.() === 0 ? 0 : 1;

/** blackbox_exporter's module for the ICMP bench: one echo request over IPv4, 2 s. */
const ICMP_MODULE = `  icmp_v4:
    prober: icmp
    timeout: ${PACKET_TIMEOUT_MS / 1000}s
    icmp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
`;

/** `count` loopback addresses 127.1.x.y (y 1–250): distinct targets that all answer. */
export function loopbackTargets(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `127.1.${Math.floor(i / 250)}.${1 + (i % 250)}`);
}

function job(hostname: string, pingCount: number): Job {
  return {
    jobId: `bench-${hostname}`,
    accountId: 'bench',
    check: {
      id: hostname,
      name: hostname,
      checkType: 'ICMP',
      request: { hostname, ipFamily: 'IPv4', pingCount, assertions: [] },
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: 10,
      maxPacketLossThreshold: 20,
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

/** Our side of one scenario, warm: each `pass()` runs one check per target, `concurrency` at a time. */
export type ExecutorPasses = {
  pass(): Promise<IcmpBenchMeasurement>;
  close(): Promise<void>;
};

/**
 * Opens our side of `scenario`: one ICMP executor (one socket, as an agent has), run {@link WARM_PASSES} times
 * unmeasured before it is returned.
 */
export async function executorPasses(
  targets: string[],
  count: number,
  scenario: IcmpBenchScenario,
): Promise<ExecutorPasses> {
  const executor = createIcmpExecutor({ intervalMs: scenario.periodMs, packetTimeoutMs: PACKET_TIMEOUT_MS });
  const log = pino({ level: 'silent' });
  const jobs = targets.map((target) => job(target, count));
  // As the dispatcher does: every job gets its own signal.
  const runAll = () => {
    const queue = new PQueue({ concurrency: scenario.concurrency });
    return Promise.all(
      jobs.map((j) => queue.add(() => executor.run(j, { signal: new AbortController().signal, log }))),
    );
  };
  for (let pass = 0; pass < WARM_PASSES; pass++) await runAll();
  return {
    async pass() {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const outcomes = await runAll();
      const wallSeconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const fullyAnswered = outcomes.filter((o) => o?.icmpCheckResult?.packetsReceived === count).length;
      return {
        tool: 'outpost',
        settings: `intervalMs ${scenario.periodMs}, concurrency ${scenario.concurrency}`,
        wallSeconds,
        cpuSeconds: (used.user + used.system) / 1e6,
        checksPerSecond: targets.length / wallSeconds,
        fullyAnswered,
      };
    },
    close: () => executor.close(),
  };
}

/** Runs one check per target through the ICMP executor, `concurrency` at a time: one measured pass, warm. */
export async function measureExecutor(
  targets: string[],
  count: number,
  scenario: IcmpBenchScenario,
): Promise<IcmpBenchMeasurement> {
  const ours = await executorPasses(targets, count, scenario);
  try {
    return await ours.pass();
  } finally {
    await ours.close();
  }
}

/** The middle value of `values` (the mean of the two middle ones for an even count). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * One row of several passes of one side: the median wall time and the median CPU time (each its own median),
 * the fewest targets fully answered, and the range of CPU per echo over the passes (`echoes` per pass).
 */
function medianOf(
  passes: IcmpBenchMeasurement[],
  targetCount: number,
  echoes: number,
): IcmpBenchMeasurement & { cpuRangeMicros: string } {
  const wallSeconds = median(passes.map((m) => m.wallSeconds));
  const cpu = passes.map((m) => m.cpuSeconds);
  const micros = (seconds: number) => ((seconds * 1e6) / echoes).toFixed(0);
  return {
    tool: passes[0]!.tool,
    settings: passes[0]!.settings,
    wallSeconds,
    cpuSeconds: median(cpu),
    checksPerSecond: targetCount / wallSeconds,
    fullyAnswered: Math.min(...passes.map((m) => m.fullyAnswered)),
    cpuRangeMicros: passes.length === 1 ? '' : `${micros(Math.min(...cpu))}–${micros(Math.max(...cpu))}`,
  };
}

/** Parses bash's `times` output: its second line holds the children's user and system time. */
function childCpuSeconds(times: string): number {
  const line = times.trim().split('\n')[1] ?? '';
  const seconds = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (seconds.length !== 2) throw new Error(`unexpected output of bash times: ${times}`);
  return seconds[0]! + seconds[1]!;
}

/**
 * Runs `fping -c COUNT -q -p PERIOD -i 0 -t 2000` on the targets in batches of
 * `scenario.concurrency`, one process after the other, under bash, whose `times` builtin gives
 * the CPU time (user + system, from the kernel's rusage) of the finished children.
 */
export function measureFping(
  targets: string[],
  count: number,
  scenario: IcmpBenchScenario,
): IcmpBenchMeasurement {
  const directory = mkdtempSync(join(tmpdir(), 'outpost-bench-'));
  const summary = join(directory, 'fping.txt');
  const args = [
    '-c',
    String(count),
    '-q',
    '-p',
    String(scenario.periodMs),
    '-i',
    String(FPING_INTERVAL_MS),
    '-t',
    String(PACKET_TIMEOUT_MS),
  ];
  const batch = Math.min(scenario.concurrency, targets.length);
  try {
    const started = performance.now();
    // $1 the batch size, then fping's options up to --, then the targets.
    const script = [
      'n=$1; shift; options=(); while [ "$1" != -- ]; do options+=("$1"); shift; done; shift',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's arrays, not a template.
      'targets=("$@"); for ((i = 0; i < ${#targets[@]}; i += n)); do fping "${options[@]}" "${targets[@]:i:n}" 2>>"$SUMMARY"; done',
      'times',
    ].join('\n');
    const result = spawnSync('bash', ['-c', script, 'bench', String(batch), ...args, '--', ...targets], {
      encoding: 'utf8',
      env: { ...process.env, SUMMARY: summary },
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    const wallSeconds = (performance.now() - started) / 1000;
    if (result.error) throw result.error;
    const fullyAnswered = readFileSync(summary, 'utf8')
      .split('\n')
      .filter((line) => line.includes(`= ${count}/${count}/0%`)).length;
    return {
      tool: 'fping',
      settings: `${args.join(' ')}${batch < targets.length ? `, ${batch} targets per fping` : ''}`,
      wallSeconds,
      cpuSeconds: childCpuSeconds(result.stdout),
      checksPerSecond: targets.length / wallSeconds,
      fullyAnswered,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * blackbox_exporter's icmp prober on the same targets: one probe (one echo request) per target,
 * `scenario.concurrency` probes at once over kept-alive connections, after one unmeasured pass;
 * its own process's CPU from /proc. Null when it is not installed.
 */
export async function measureBlackboxIcmp(
  targets: string[],
  scenario: IcmpBenchScenario,
): Promise<IcmpBenchMeasurement | null> {
  const exporter = await startBlackbox(ICMP_MODULE, scenario.concurrency);
  if (exporter === null) return null;
  try {
    const pass = async () => {
      let next = 0;
      let answered = 0;
      const worker = async () => {
        while (next < targets.length) if (await exporter.probe('icmp_v4', targets[next++]!)) answered += 1;
      };
      await Promise.all(Array.from({ length: Math.min(scenario.concurrency, targets.length) }, worker));
      return answered;
    };
    await pass();
    const cpuBefore = exporter.cpuSeconds();
    const started = performance.now();
    const fullyAnswered = await pass();
    const wallSeconds = (performance.now() - started) / 1000;
    return {
      tool: 'blackbox_exporter',
      settings: `icmp prober, timeout ${PACKET_TIMEOUT_MS / 1000}s, ${scenario.concurrency} probes at once`,
      wallSeconds,
      cpuSeconds: exporter.cpuSeconds() - cpuBefore,
      checksPerSecond: targets.length / wallSeconds,
      fullyAnswered,
    };
  } finally {
    await exporter.close();
  }
}

function fixed(value: number, digits: number): string {
  return value.toFixed(digits);
}

/**
 * The ICMP benchmark: for each scenario, `targets` loopback addresses × `count` echo requests
 * (or the scenario's count) through our executor and fping, {@link MEASURED_PASSES} passes each
 * alternated (medians), and once through blackbox_exporter where the scenario says so; prints a table
 * with throughput and CPU ratios (> 1: we do better) and the load average. Needs fping (apt-get install
 * fping), blackbox_exporter (apt-get install prometheus-blackbox-exporter) and an ICMP socket (root, or
 * ping_group_range).
 */
export async function runIcmpBench(options: IcmpBenchOptions = {}): Promise<void> {
  const targets = loopbackTargets(options.targets ?? 1000);
  const scenarios = options.scenarios ?? DEFAULT_SCENARIOS;
  const fpingMissing = spawnSync('fping', ['--version']).error !== undefined;
  const blackboxMissing = !blackboxInstalled();
  console.log(`ICMP: ${targets.length} loopback targets`);
  const rows: string[][] = [
    [
      'scenario',
      'tool',
      'settings',
      'wall s',
      'CPU s',
      'CPU µs/echo',
      'range',
      'checks/s',
      'all answered',
      'throughput ×',
      'CPU ×',
    ],
  ];
  const passCount = options.passes ?? MEASURED_PASSES;
  for (const scenario of scenarios) {
    const count = scenario.count ?? options.count ?? 3;
    const echoes = targets.length * count;
    const name = `${scenario.name} (×${count})`;
    benchPhase(`${name}: outpost, warming`);
    const executor = await executorPasses(targets, count, scenario);
    const ourPasses: IcmpBenchMeasurement[] = [];
    const fpingPasses: IcmpBenchMeasurement[] = [];
    try {
      for (let pass = 1; pass <= passCount; pass++) {
        benchPhase(`${name}: outpost, pass ${pass} of ${passCount}`);
        ourPasses.push(await executor.pass());
        if (fpingMissing) continue;
        benchPhase(`${name}: fping, pass ${pass} of ${passCount}`);
        fpingPasses.push(measureFping(targets, count, scenario));
      }
    } finally {
      await executor.close();
    }
    const ours = medianOf(ourPasses, targets.length, echoes);
    const peers: Array<IcmpBenchMeasurement & { cpuRangeMicros?: string }> =
      fpingPasses.length === 0 ? [] : [medianOf(fpingPasses, targets.length, echoes)];
    if (scenario.blackbox && count === 1 && !blackboxMissing) {
      benchPhase(`${name}: blackbox_exporter`);
      const theirs = await measureBlackboxIcmp(targets, scenario);
      if (theirs) peers.push(theirs);
    }
    for (const m of [ours, ...peers]) {
      rows.push([
        name,
        m.tool,
        m.settings,
        fixed(m.wallSeconds, 3),
        fixed(m.cpuSeconds, 3),
        fixed((m.cpuSeconds * 1e6) / echoes, 1),
        m.cpuRangeMicros ?? '',
        fixed(m.checksPerSecond, 0),
        `${m.fullyAnswered}/${targets.length}`,
        m === ours ? '' : fixed(ours.checksPerSecond / m.checksPerSecond, 2),
        m === ours ? '' : fixed(m.cpuSeconds / Math.max(ours.cpuSeconds, 0.001), 2),
      ]);
    }
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
  console.log(
    'on each peer row, > 1 means we do better: throughput ×: our checks/s over its; CPU ×: its CPU seconds over ours (the same checks, so also its CPU per echo over ours).',
  );
  console.log(
    `outpost and fping: the median of ${passCount} measured passes each, alternated (range: the fewest and most µs of CPU per echo of one pass); outpost runs ${WARM_PASSES} unmeasured passes first (warm: socket open, code compiled); blackbox_exporter: one measured pass after one unmeasured. CPU is the whole process's (all threads), fping's its processes' user + system time.`,
  );
  if (fpingMissing) console.log('fping is not installed (apt-get install fping): its rows were skipped.');
  if (blackboxMissing) console.log(BLACKBOX_MISSING);
  console.log(loadAverageLine());
}
