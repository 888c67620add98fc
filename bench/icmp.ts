import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { pino } from 'pino';
import { createIcmpExecutor } from '../src/checks/icmp/index.js';
import type { Job } from '../src/protocol/index.js';

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

/** One comparison: the same targets and packets, paced the same way. */
export type IcmpBenchScenario = {
  name: string;
  /** Time between two requests to one target, ms (fping -p, our intervalMs). */
  periodMs: number;
  /** fping's -i: least time between any two requests, ms (10 by default; we have no such limit). */
  fpingIntervalMs: number;
  /** Checks the executor runs at once. */
  concurrency: number;
};

/** Options of the ICMP benchmark. */
export type IcmpBenchOptions = {
  /** Loopback targets, 127.1.x.y; default 1000. */
  targets?: number;
  /** Echo requests per target; default 3. */
  count?: number;
  scenarios?: IcmpBenchScenario[];
};

/** The scenarios of `npm run bench`. */
export const DEFAULT_SCENARIOS: IcmpBenchScenario[] = [
  { name: 'fping defaults', periodMs: 1000, fpingIntervalMs: 10, concurrency: 1000 },
  { name: 'same pacing, no global limit', periodMs: 1000, fpingIntervalMs: 0, concurrency: 1000 },
  { name: 'as fast as possible', periodMs: 10, fpingIntervalMs: 0, concurrency: 1000 },
  { name: 'as fast as possible, 200 at a time', periodMs: 10, fpingIntervalMs: 0, concurrency: 200 },
];

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

/** Runs one check per target through the ICMP executor, `concurrency` at a time. */
export async function measureExecutor(
  targets: string[],
  count: number,
  scenario: IcmpBenchScenario,
): Promise<IcmpBenchMeasurement> {
  const executor = createIcmpExecutor({ intervalMs: scenario.periodMs, packetTimeoutMs: 2000 });
  const log = pino({ level: 'silent' });
  const jobs = targets.map((target) => job(target, count));
  // As the dispatcher does: every job gets its own signal.
  const runAll = () => {
    const queue = new PQueue({ concurrency: scenario.concurrency });
    return Promise.all(
      jobs.map((j) => queue.add(() => executor.run(j, { signal: new AbortController().signal, log }))),
    );
  };
  // One pass unmeasured: an agent runs warm (socket open, code compiled).
  await runAll();

  const cpu = process.cpuUsage();
  const started = performance.now();
  const outcomes = await runAll();
  const wallSeconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await executor.close();

  const fullyAnswered = outcomes.filter((o) => o?.icmpCheckResult?.packetsReceived === count).length;
  return {
    tool: 'outpost',
    settings: `intervalMs ${scenario.periodMs}, concurrency ${scenario.concurrency}`,
    wallSeconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    checksPerSecond: targets.length / wallSeconds,
    fullyAnswered,
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
 * Runs `fping -c COUNT -q -p PERIOD -i INTERVAL targets…` under bash, whose `times` builtin
 * gives the CPU time (user + system, from the kernel's rusage) of the finished child.
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
    String(scenario.fpingIntervalMs),
  ];
  try {
    const started = performance.now();
    const result = spawnSync('bash', ['-c', 'fping "$@" 2>"$SUMMARY"; times', 'bench', ...args, ...targets], {
      encoding: 'utf8',
      env: { ...process.env, SUMMARY: summary },
      timeout: 120_000,
    });
    const wallSeconds = (performance.now() - started) / 1000;
    if (result.error) throw result.error;
    const fullyAnswered = readFileSync(summary, 'utf8')
      .split('\n')
      .filter((line) => line.includes(`= ${count}/${count}/0%`)).length;
    return {
      tool: 'fping',
      settings: args.join(' '),
      wallSeconds,
      cpuSeconds: childCpuSeconds(result.stdout),
      checksPerSecond: targets.length / wallSeconds,
      fullyAnswered,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function fixed(value: number, digits: number): string {
  return value.toFixed(digits);
}

/**
 * The ICMP benchmark: for each scenario, `targets` loopback addresses × `count` echo requests
 * through our executor and through fping; prints a table with throughput and CPU ratios.
 * Needs fping (apt-get install fping) and an ICMP socket (root, or ping_group_range).
 */
export async function runIcmpBench(options: IcmpBenchOptions = {}): Promise<void> {
  const targets = loopbackTargets(options.targets ?? 1000);
  const count = options.count ?? 3;
  const scenarios = options.scenarios ?? DEFAULT_SCENARIOS;
  const fpingMissing = spawnSync('fping', ['--version']).error !== undefined;
  console.log(`ICMP: ${targets.length} loopback targets × ${count} echo requests`);
  const rows: string[][] = [
    ['scenario', 'tool', 'settings', 'wall s', 'CPU s', 'checks/s', 'all answered', 'throughput ×', 'CPU ×'],
  ];
  for (const scenario of scenarios) {
    const ours = await measureExecutor(targets, count, scenario);
    const theirs = fpingMissing ? null : measureFping(targets, count, scenario);
    for (const m of theirs ? [ours, theirs] : [ours]) {
      rows.push([
        scenario.name,
        m.tool,
        m.settings,
        fixed(m.wallSeconds, 3),
        fixed(m.cpuSeconds, 3),
        fixed(m.checksPerSecond, 0),
        `${m.fullyAnswered}/${targets.length}`,
        m === ours && theirs ? fixed(ours.checksPerSecond / theirs.checksPerSecond, 2) : '',
        m === ours && theirs ? fixed(ours.cpuSeconds / Math.max(theirs.cpuSeconds, 0.001), 1) : '',
      ]);
    }
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
  console.log(
    'throughput ×: our checks/s over fping’s (≥ 1 is the goal); CPU ×: our CPU seconds over fping’s.',
  );
  if (fpingMissing)
    console.log('fping is not installed (apt-get install fping): only our side was measured.');
}
