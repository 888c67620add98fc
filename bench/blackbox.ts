import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackChild, within } from './watchdog.js';

/** Where Debian's package `prometheus-blackbox-exporter` installs the exporter. */
export const BLACKBOX_EXPORTER =
  process.env.OUTPOST_BENCH_BLACKBOX ?? '/usr/bin/prometheus-blackbox-exporter';

/** The message printed instead of the blackbox_exporter row when it is not installed. */
export const BLACKBOX_MISSING =
  'blackbox_exporter is not installed (apt-get install prometheus-blackbox-exporter): only our side was measured.';

/** A running blackbox_exporter on 127.0.0.1 with the modules it was given. */
export type BlackboxExporter = {
  /** Its HTTP port on 127.0.0.1. */
  port: number;
  pid: number;
  /** Its CPU so far (utime + stime of /proc/<pid>/stat), seconds. */
  cpuSeconds(): number;
  /** Its resident memory now (VmRSS), MiB. */
  rssMiB(): number;
  /** Its peak resident memory (VmHWM), MiB. */
  peakRssMiB(): number;
  /**
   * One probe: GET /probe?module=`module`&target=`target` over a kept-alive connection; true
   * when the answer says `probe_success 1`. Rejects after `timeoutMs` (default 60 000).
   */
  probe(module: string, target: string, timeoutMs?: number): Promise<boolean>;
  /** Stops the exporter (SIGTERM, then SIGKILL after 2 s) and removes its config directory. */
  close(): Promise<void>;
};

/** Whether the exporter can be run here. */
export function blackboxInstalled(): boolean {
  return spawnSync(BLACKBOX_EXPORTER, ['--version']).error === undefined;
}

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const TICKS_PER_SECOND = 100;

/**
 * Starts blackbox_exporter on 127.0.0.1 with `modulesYaml` (the `modules:` map of its config,
 * indented under it by two spaces) written to a temp dir, and a pool of kept-alive connections
 * (at most `maxSockets`, the concurrency its probes are driven at). Resolves once /metrics
 * answers (at most 10 s); null when the exporter is not installed.
 */
export async function startBlackbox(
  modulesYaml: string,
  maxSockets: number,
): Promise<BlackboxExporter | null> {
  if (!blackboxInstalled()) return null;
  const directory = mkdtempSync(join(tmpdir(), 'outpost-bench-blackbox-'));
  const config = join(directory, 'blackbox.yml');
  writeFileSync(config, `modules:\n${modulesYaml}`);
  const port = await freePort();
  const child = trackChild(
    spawn(
      BLACKBOX_EXPORTER,
      [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=error'],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    ),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error(`blackbox_exporter did not start`);
  const agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const get = (path: string, timeoutMs: number) =>
    within(
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      }),
      timeoutMs,
      `blackbox_exporter GET ${path}`,
    );
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`blackbox_exporter exited (${child.exitCode}); config ${config}`);
    try {
      if ((await get('/metrics', 1000)).status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (performance.now() - started > 10_000) {
      child.kill('SIGKILL');
      throw new Error('blackbox_exporter did not answer within 10 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const status = (field: 'VmRSS' | 'VmHWM') =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) /
    1024;
  return {
    port,
    pid,
    cpuSeconds() {
      // After the command name: utime and stime are fields 14 and 15, offsets 11 and 12, in ticks.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
    },
    rssMiB: () => status('VmRSS'),
    peakRssMiB: () => status('VmHWM'),
    async probe(module, target, timeoutMs = 60_000) {
      const query = `/probe?module=${encodeURIComponent(module)}&target=${encodeURIComponent(target)}`;
      const answer = await get(query, timeoutMs);
      return answer.status === 200 && /^probe_success 1$/m.test(answer.body);
    },
    async close() {
      agent.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), 2000);
        await exited;
        clearTimeout(force);
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** What {@link measureBlackbox} measured: blackbox_exporter's own process only. */
export type BlackboxMeasurement = {
  /** Probes timed, and those it reported successful (`probe_success 1`). */
  checks: number;
  succeeded: number;
  /** Probes in flight at once. */
  concurrency: number;
  wallSeconds: number;
  /** Successful probes per second. */
  checksPerSecond: number;
  /** The exporter's user + system CPU over the timed probes, seconds. */
  cpuSeconds: number;
  /** Its RSS after the timed probes and its peak RSS, MiB. */
  rssMiB: number;
  peakRssMiB: number;
  /**
   * Its RSS growth per probe in flight, MiB: RSS while `held` probes wait on the slow target,
   * less its RSS before (after the same warm-up as ours), over `held`; null without a slow target.
   */
  rssPerCheckMiB: number | null;
};

/**
 * Drives blackbox_exporter's `/probe?module=…&target=…` at `concurrency` probes in flight (kept-
 * alive connections from this process): 200 unmeasured, then `checks` timed, counting only the
 * probes it reports successful and its own CPU from /proc. With `slowTarget`, first holds
 * `held` probes of it in flight (default `concurrency`; the exporter must have been started
 * with as many sockets) and reads the exporter's RSS halfway through `holdMs` (default 300).
 */
export async function measureBlackbox(
  exporter: BlackboxExporter,
  options: {
    module: string;
    target: string;
    checks: number;
    concurrency: number;
    slowTarget?: string;
    holdMs?: number;
    held?: number;
  },
): Promise<BlackboxMeasurement> {
  const pool = async (count: number, target: string, concurrency = options.concurrency) => {
    let next = 0;
    let succeeded = 0;
    const worker = async () => {
      while (next++ < count) if (await exporter.probe(options.module, target)) succeeded += 1;
    };
    await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
    return succeeded;
  };
  await pool(200, options.target);
  let rssPerCheckMiB: number | null = null;
  if (options.slowTarget !== undefined) {
    const count = options.held ?? options.concurrency;
    const before = exporter.rssMiB();
    const held = pool(count, options.slowTarget, count);
    await new Promise((resolve) => setTimeout(resolve, (options.holdMs ?? 300) / 2));
    rssPerCheckMiB = Math.max(0, exporter.rssMiB() - before) / count;
    await held;
  }
  const cpuBefore = exporter.cpuSeconds();
  const started = performance.now();
  const succeeded = await pool(options.checks, options.target);
  const wallSeconds = (performance.now() - started) / 1000;
  return {
    checks: options.checks,
    succeeded,
    concurrency: options.concurrency,
    wallSeconds,
    checksPerSecond: succeeded / wallSeconds,
    cpuSeconds: exporter.cpuSeconds() - cpuBefore,
    rssMiB: exporter.rssMiB(),
    peakRssMiB: exporter.peakRssMiB(),
    rssPerCheckMiB,
  };
}
