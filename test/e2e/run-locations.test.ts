import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, awaitSession, type CliProcess, freePort, spawnCli, stopCli } from '../helpers/cli.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';

const skip = missingRequirement([
  { ok: commandWorks('ping', ['-V']), what: 'iputils ping', install: 'apt-get install iputils-ping' },
]);

// Real processes on one host: `outpost up` (the service and its own agent, location `local`) and a second
// `outpost agent` holding the key of private location `office-lan`. A check assigned only to `office-lan` runs
// only on the office agent, every time; once that agent stops it shows as disconnected at once, and the
// check's runs expire with the reason instead of running on the service's machine.

describe.skipIf(skip)('run locations with outpost up and a private agent on one host', () => {
  let up: CliProcess;
  let office: CliProcess | undefined;
  let dataDir: string;
  let api: ReturnType<typeof apiClient>;
  let baseUrl: string;
  let officeKey: string;
  let checkId: string;
  const apiKey = `op_e2e_${'l'.repeat(40)}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-locations-'));
    const port = await freePort();
    up = spawnCli(['up'], {
      PORT: String(port),
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: apiKey,
      OUTPOST_QUEUE_EXPIRY_SECONDS: '4',
      AGENT_HEALTH_PORT: String(await freePort()),
    });
    await up.waitFor(/is up: http/);
    baseUrl = `http://127.0.0.1:${port}`;
    api = apiClient(baseUrl, apiKey);
    const location = await api('POST', '/v1/private-locations', {
      name: 'Office LAN',
      slugName: 'office-lan',
    });
    expect(location.status).toBe(201);
    officeKey = location.json.keys[0].rawKey;
    office = spawnCli(['agent'], {
      API_KEY: officeKey,
      SERVICE_URL: baseUrl,
      AGENT_HEALTH_PORT: String(await freePort()),
      LOG_LEVEL: 'INFO',
    });
    const check = await api('POST', '/v1/checks/icmp', {
      name: 'office printer',
      activated: false,
      locations: [],
      privateLocations: ['office-lan'],
      request: { hostname: '127.0.0.1', pingCount: 1 },
      heartbeat: {},
      script: '',
    });
    expect(check.status, JSON.stringify(check.json)).toBe(201);
    checkId = check.json.id;
  }, 60_000);

  afterAll(async () => {
    await stopCli(office);
    await stopCli(up);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the demo checks run on this machine, in location local, by up’s own agent', async () => {
    const locations = await api('GET', '/v1/private-locations');
    const local = locations.json.find((l: { slugName: string }) => l.slugName === 'local');
    expect(local).toMatchObject({ embedded: true, name: hostname() });
    const demos = (await api('GET', '/v1/checks')).json.filter((c: { tags: string[] }) =>
      c.tags.includes('demo'),
    );
    expect(demos.length).toBeGreaterThan(0);
    for (const demo of demos) expect(demo).toMatchObject({ locations: [], privateLocations: ['local'] });
  });

  it('a check assigned to office-lan runs only on the office agent, and every result says which agent ran it', async () => {
    const runs = 6;
    for (let i = 0; i < runs; i++) {
      const started = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
      expect(started.status).toBe(201);
      const done = await awaitSession(api, started.json.sessions[0].checkSessionId);
      expect(done.status).toBe('PASSED');
    }
    const agents = (await api('GET', '/v1/agents')).json as {
      id: string;
      privateLocation: { slugName: string } | null;
      hostName: string;
    }[];
    const officeAgent = agents.find((a) => a.privateLocation?.slugName === 'office-lan');
    const upAgent = agents.find((a) => a.privateLocation?.slugName === 'local');
    expect(officeAgent).toBeDefined();
    expect(upAgent).toBeDefined();
    const results = (await api('GET', `/v1/check-results/${checkId}?limit=100`)).json as {
      runLocation: string;
      agent: { id: string; hostName: string } | null;
    }[];
    expect(results).toHaveLength(runs);
    for (const result of results) {
      expect(result.runLocation).toBe('office-lan');
      expect(result.agent?.id).toBe(officeAgent!.id);
      expect(result.agent?.hostName).toBe(hostname());
    }
  }, 120_000);

  it('a stopped office agent shows as disconnected at once; the check’s runs then expire with the reason, never run elsewhere', async () => {
    await stopCli(office);
    const agents = (await api('GET', '/v1/agents')).json as {
      connected: boolean;
      stoppedAt: string | null;
      privateLocation: { slugName: string } | null;
    }[];
    const stopped = agents.find((a) => a.privateLocation?.slugName === 'office-lan');
    expect(stopped).toMatchObject({ connected: false });
    expect(stopped?.stoppedAt).not.toBeNull();
    expect((await api('GET', `/v1/checks/${checkId}`)).json.unservedLocations).toEqual(['office-lan']);

    const started = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    const sid = started.json.sessions[0].checkSessionId;
    const done = await awaitSession(api, sid, 30_000);
    expect(done.status).toBe('TIMED_OUT');
    const results = (await api('GET', `/v1/check-results/${checkId}?limit=100`)).json as unknown[];
    expect(results).toHaveLength(6);
    const expired = (await api('GET', `/v1/checks/${checkId}/expired-runs`)).json;
    expect(expired).toEqual([
      expect.objectContaining({
        runLocation: 'office-lan',
        reason: 'no connected agent serves location office-lan',
      }),
    ]);
  }, 60_000);
});
