import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpPeer, startHttpPeer } from '../helpers/alert-peers.js';
import {
  type apiClient,
  awaitSession,
  type CliProcess,
  freePort,
  spawnCli,
  stopCli,
  type ServiceProcess,
  startServiceProcess,
} from '../helpers/cli.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';
import { createTestCa, type TestCa } from '../helpers/test-ca.js';

// SSL expiry end to end: a real agent process runs a URL check against a TLS server on loopback
// whose certificate expires in 2 days; the service keeps the certificate and sends ALERT_SSL to
// each channel with sslExpiry once per milestone, however often the check runs.

const apiKey = `op_e2e_${'s'.repeat(40)}`;
const SIGNING = 'ssl-expiry-signing-secret';

const missing = missingRequirement([
  { ok: commandWorks('openssl', ['version']), what: 'openssl', install: 'apt-get install openssl' },
]);

describe.skipIf(missing !== null)('SSL certificate expiry (service + agent processes)', () => {
  let serviceProcess: ServiceProcess;
  let agent: CliProcess;
  let api: ReturnType<typeof apiClient>;
  let ca: TestCa;
  let tls: Server;
  let tlsPort: number;
  let receiver: HttpPeer;

  beforeAll(async () => {
    ca = createTestCa();
    const pair = ca.issue({ commonName: 'localhost', notAfter: new Date(Date.now() + 2 * 86_400_000) });
    tls = createServer({ key: pair.key, cert: pair.cert }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    tlsPort = (tls.address() as { port: number }).port;
    receiver = await startHttpPeer();
    // The receiver listens on loopback, which the outbound policy refuses unless allowed.
    serviceProcess = await startServiceProcess(apiKey, { OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32' });
    api = serviceProcess.api;
    const healthPort = await freePort();
    agent = spawnCli(['agent'], {
      API_KEY: apiKey,
      SERVICE_URL: serviceProcess.url,
      AGENT_HEALTH_PORT: String(healthPort),
      AGENT_CLAIM_WAIT_SECONDS: '1',
    });
    const readyBy = Date.now() + 30_000;
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${healthPort}/-/readiness`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      if (Date.now() > readyBy) throw new Error(`the agent never became ready:\n${agent.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 60_000);

  afterAll(async () => {
    await stopCli(agent);
    await serviceProcess?.stop();
    await receiver?.close();
    await new Promise((resolve) => tls?.close(resolve));
    ca?.destroy();
  });

  it('one ALERT_SSL per channel and milestone, signed, with the days remaining', async () => {
    const channels: number[] = [];
    for (const [name, threshold] of [
      ['thirty', 30],
      ['two', 2],
    ] as const) {
      const created = await api('POST', '/v1/alert-channels', {
        type: 'WEBHOOK',
        config: { name, url: `${receiver.origin}/${name}`, webhookSecret: SIGNING },
        sslExpiry: true,
        sslExpiryThreshold: threshold,
        sendFailure: false,
        sendRecovery: false,
      });
      expect(created.status, JSON.stringify(created.json)).toBe(201);
      channels.push(created.json.id);
    }
    // A channel without sslExpiry hears nothing of certificates.
    const quiet = await api('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'quiet', url: `${receiver.origin}/quiet` },
    });
    expect(quiet.status).toBe(201);
    const check = await api('POST', '/v1/checks/url', {
      name: 'expiring',
      activated: false,
      request: { url: `https://localhost:${tlsPort}/`, skipSSL: true, assertions: [] },
    });
    expect(check.status, JSON.stringify(check.json)).toBe(201);

    for (let run = 0; run < 3; run++) {
      const started = await api('POST', '/v1/check-sessions/trigger', {
        target: { checkId: [check.json.id] },
      });
      expect(started.status).toBe(201);
      const session = await awaitSession(api, started.json.sessions[0].checkSessionId, 60_000);
      expect(session.status).toBe('PASSED');
    }
    const deadline = Date.now() + 15_000;
    while (receiver.requests.length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    // Settle: nothing more may come.
    await new Promise((r) => setTimeout(r, 1500));

    expect(receiver.requests.map((r) => r.url).sort()).toEqual(['/thirty', '/two']);
    for (const request of receiver.requests) {
      const body = JSON.parse(request.body);
      expect(body).toMatchObject({
        ALERT_TYPE: 'ALERT_SSL',
        SSL_CHECK_DOMAIN: 'localhost',
        SSL_DAYS_REMAINING: 1,
        CHECK_NAME: 'expiring',
      });
      const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`;
      expect(request.headers['webhook-signature']).toBe(
        `v1,${createHmac('sha256', SIGNING).update(signed).digest('base64')}`,
      );
    }
    const alerts = await api('GET', `/v1/check-alerts/${check.json.id}`);
    expect(alerts.json.map((a: { alertType: string }) => a.alertType)).toEqual(['ALERT_SSL']);
    const notifications = await api('GET', '/v1/alert-notifications');
    expect(
      notifications.json
        .map((n: { alertChannelId: number; state: string }) => [n.alertChannelId, n.state])
        .sort(),
    ).toEqual(channels.map((id) => [id, 'DELIVERED']).sort());
  }, 120_000);
});
