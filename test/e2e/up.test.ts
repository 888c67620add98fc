import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, awaitSession, type CliProcess, freePort, spawnCli, stopCli } from '../helpers/cli.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';

const skip = missingRequirement([
  { ok: commandWorks('ping', ['-V']), what: 'iputils ping', install: 'apt-get install iputils-ping' },
]);

/** Average RTT in ms that iputils ping measures: "rtt min/avg/max/mdev = a/b/c/d ms". */
function pingAverageMs(host: string, count: number): number {
  const out = execFileSync('ping', ['-n', '-q', '-c', String(count), '-i', '0.2', host], {
    encoding: 'utf8',
  });
  const match = /= [\d.]+\/([\d.]+)\//.exec(out);
  if (!match) throw new Error(`unexpected ping output:\n${out}`);
  return Number(match[1]);
}

describe.skipIf(skip)('outpost up (end to end)', () => {
  let up: CliProcess;
  let dataDir: string;
  let api: ReturnType<typeof apiClient>;
  let baseUrl: string;
  /** What `up` wrote on stdout alone (the helper's output() mixes in stderr). */
  let stdout = '';
  let stderr = '';
  let loopbackCheckId: string;
  const apiKey = `op_e2e_${'k'.repeat(40)}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-'));
    const port = await freePort();
    up = spawnCli(['up'], {
      PORT: String(port),
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: apiKey,
      AGENT_HEALTH_PORT: String(await freePort()),
    });
    up.child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    up.child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    await up.waitFor(/is up: http/);
    baseUrl = `http://127.0.0.1:${port}`;
    api = apiClient(baseUrl, apiKey);
  });

  afterAll(async () => {
    await stopCli(up);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints demo ICMP results on its own within a minute', async () => {
    const line = await up.waitFor(/PASSED\s+Demo: ping 127\.0\.0\.1/, 60_000);
    expect(line).toMatch(/loss 0%/);
  });

  it('runs an ICMP check created over HTTP; its average RTT agrees with iputils ping', async () => {
    const created = await api('POST', '/v1/checks/icmp', {
      name: 'e2e loopback',
      activated: false,
      request: { hostname: '127.0.0.1', pingCount: 10 },
      heartbeat: {},
      script: '',
    });
    expect(created.status).toBe(201);
    loopbackCheckId = created.json.id;
    const started = await api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json.id] },
    });
    expect(started.status).toBe(201);
    const [session] = started.json.sessions;
    const done = await awaitSession(api, session.checkSessionId);
    const reference = pingAverageMs('127.0.0.1', 10);
    expect(done.status).toBe('PASSED');
    expect(done.results).toHaveLength(1);
    const icmp = done.results[0].icmpCheckResult;
    expect(icmp).toMatchObject({
      packetsSent: 10,
      packetsReceived: 10,
      packetLoss: 0,
      resolvedIp: '127.0.0.1',
    });
    expect(Math.abs(icmp.latency.avg - reference)).toBeLessThanOrEqual(0.5);
  });

  it('stdout holds the banner and result lines only: logs go to stderr one short line each, whole to a log file', async () => {
    // More than 20 failed authentications in a minute from one address: the service logs a warning.
    for (let i = 0; i < 22; i++) {
      const res = await fetch(`${baseUrl}/v1/checks`, {
        headers: { authorization: `Bearer op_wrong_${'x'.repeat(40)}` },
      });
      await res.arrayBuffer();
    }
    await up.waitFor(/failed authentication rate-limited/, 10_000);
    // A run after the warning: its result line is printed after the log record was written.
    const started = await api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [loopbackCheckId] },
    });
    expect(started.status).toBe(201);
    await awaitSession(api, started.json.sessions[0].checkSessionId);
    await expect.poll(() => stdout.match(/PASSED\s+e2e loopback/g)?.length ?? 0, { timeout: 10_000 }).toBe(2);

    const [banner, results] = stdout.split('  results:\n');
    expect(banner, stdout).toMatch(/is up: http/);
    const lines = results!.trimEnd().split('\n');
    for (const line of lines) {
      expect(line.trimStart().startsWith('{'), `a JSON log record on stdout: ${line}`).toBe(false);
      expect(line).toMatch(/^\S+Z {2}(PASSED|DEGRADED|FAILED) {2}/);
    }
    // The warning on stderr, one short line.
    expect(stderr).toMatch(/^\S+ WARN outpost-service\/http: failed authentication rate-limited$/m);
    expect(stderr).not.toMatch(/^\{/m);
    expect(stderr).not.toMatch(/\n\s+at /);
    // The whole record (stack included, had it one) is kept in the data directory's log file.
    const logFile = join(dataDir, 'outpost-up.log');
    expect(stdout).toContain(`logs:       ${logFile}`);
    await expect
      .poll(() => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''), { timeout: 5000 })
      .toMatch(/^\{.*"msg":"failed authentication rate-limited".*\}$/m);
  });

  it('stops cleanly on SIGTERM with exit code 0', async () => {
    up.child.kill('SIGTERM');
    expect(await up.exited).toBe(0);
  });
});
