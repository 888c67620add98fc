import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
    await up.waitFor(/is up: http/);
    api = apiClient(`http://127.0.0.1:${port}`, apiKey);
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

  it('stops cleanly on SIGTERM with exit code 0', async () => {
    up.child.kill('SIGTERM');
    expect(await up.exited).toBe(0);
  });
});
