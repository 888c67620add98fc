import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type TestApiServer } from '../helpers/api-server.js';
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
import { createTestHost, type TestHost } from '../helpers/netns.js';
import { commandWorks, missingRequirement, netnsWorks } from '../helpers/requirements.js';

// The whole path of an API check: the service builds the job (variables merged, group defaults,
// snippets, retry strategy), a real agent process runs it against loopback servers (or a
// black-holed test host), uploads artifacts, and posts results the service stores.

const apiKey = `op_e2e_${'b'.repeat(40)}`;
const SECRET = 'Sup3r-s3cret/Token!42';

const missing = missingRequirement([
  {
    ok: netnsWorks(),
    what: 'network namespaces with nftables',
    install: 'apt-get install iproute2 nftables; run as root',
  },
  { ok: commandWorks('tcpdump', ['--version']), what: 'tcpdump', install: 'apt-get install tcpdump' },
]);

/** A TCP server that resets the connections of the first `failures` requests once they arrived, then answers HTTP 200 JSON. `connections` holds each request's arrival time. */
async function flakyServer(
  failures: number,
): Promise<{ port: number; connections: number[]; server: Server }> {
  const connections: number[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => {});
    // Counted by requests: the agent's network diagnostics also connect (without a request).
    socket.once('data', () => {
      connections.push(Date.now());
      // Reset after the request arrived: the client cannot quietly resend it on a new connection.
      if (connections.length <= failures) return void socket.resetAndDestroy();
      const body = '{"ok":true}';
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, connections, server };
}

describe.skipIf(missing !== null)('API checks end to end (service + agent processes)', () => {
  let serviceProcess: ServiceProcess;
  let dataDir: string;
  let service: CliProcess;
  let agent: CliProcess;
  let api: ReturnType<typeof apiClient>;
  let target: TestApiServer;
  let serviceUrl: string;

  beforeAll(async () => {
    serviceProcess = await startServiceProcess(apiKey, { LOG_LEVEL: 'DEBUG' });
    service = serviceProcess.process;
    dataDir = serviceProcess.dataDir;
    serviceUrl = serviceProcess.url;
    api = serviceProcess.api;
    const healthPort = await freePort();
    agent = spawnCli(['agent'], {
      API_KEY: apiKey,
      SERVICE_URL: serviceUrl,
      AGENT_HEALTH_PORT: String(healthPort),
      LOG_LEVEL: 'DEBUG',
      AGENT_CLAIM_WAIT_SECONDS: '1',
    });
    // Ready after its first successful claim.
    const readyBy = Date.now() + 30_000;
    const readiness = () =>
      fetch(`http://127.0.0.1:${healthPort}/-/readiness`).then(
        (r) => r.status,
        () => 0,
      );
    while ((await readiness()) !== 200) {
      if (Date.now() > readyBy) throw new Error(`the agent never became ready:\n${agent.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    target = await startApiServer();
  }, 60_000);

  afterAll(async () => {
    await stopCli(agent);
    await serviceProcess.stop();
    await target?.close();
  });

  async function run(path: string, body: Record<string, unknown>): Promise<any> {
    const created = await api('POST', path, { activated: false, doubleCheck: false, ...body });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const started = await api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json.id] },
    });
    expect(started.status).toBe(201);
    const session = await awaitSession(api, started.json.sessions[0].checkSessionId, 90_000);
    return { checkId: created.json.id as string, session };
  }

  it('merges variables check > group > account, applies group defaults, and never shows a secret', async () => {
    for (const v of [
      { key: 'BASE', value: target.origin },
      { key: 'LEVEL', value: 'account' },
      { key: 'TOKEN', value: SECRET, secret: true },
    ]) {
      expect((await api('POST', '/v1/variables', v)).status).toBe(201);
    }
    const group = await api('POST', '/v1/check-groups', {
      name: 'api group',
      activated: true,
      concurrency: 1,
      apiCheckDefaults: {
        url: target.origin,
        headers: [{ key: 'x-from-group', value: 'yes' }],
        queryParameters: [],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        basicAuth: { username: '', password: '' },
      },
      environmentVariables: [
        { key: 'LEVEL', value: 'group' },
        { key: 'ONLY_GROUP', value: 'group-value' },
      ],
      locations: ['us-east-1'],
    });
    expect(group.status, JSON.stringify(group.json)).toBe(201);
    const { session } = await run('/v1/checks/api', {
      name: 'variables',
      groupId: group.json.id,
      environmentVariables: [{ key: 'LEVEL', value: 'check' }],
      request: {
        method: 'POST',
        url: '{{GROUP_BASE_URL}}/echo?token={{TOKEN}}',
        headers: [
          { key: 'x-level', value: '{{LEVEL}}' },
          { key: 'x-group', value: '{{ONLY_GROUP}}' },
          { key: 'authorization', value: 'Bearer {{TOKEN}}' },
        ],
        body: '{"token":"{{TOKEN}}"}',
        bodyType: 'JSON',
        assertions: [
          { source: 'JSON_BODY', property: "$.headers['x-level']", comparison: 'EQUALS', target: 'check' },
        ],
      },
    });
    expect(session.status).toBe('PASSED');
    const seen = target.requests.at(-1)!;
    expect(seen.headers).toMatchObject({
      'x-level': 'check',
      'x-group': 'group-value',
      'x-from-group': 'yes',
      authorization: `Bearer ${SECRET}`,
    });
    expect(seen.query.token).toBe(SECRET);
    // The result shows what was sent, credentials masked.
    expect(session.results[0].httpCheckResult.request.headers).toMatchObject({
      'x-level': 'check',
      authorization: '*****',
    });

    const everything = [JSON.stringify(session), agent.output(), service.output()].join('\n');
    for (const form of [SECRET, encodeURIComponent(SECRET), Buffer.from(SECRET).toString('base64')]) {
      expect(everything).not.toContain(form);
    }
    expect(JSON.stringify(session)).toContain('*****');
  });

  it('runs a setup snippet in the sandbox: runtime variables yes, the agent API_KEY never', async () => {
    const snippet = await api('POST', '/v1/snippets', {
      name: 'stamp',
      script:
        "request.headers['x-api-key-seen'] = String(process.env.API_KEY); request.headers['x-check'] = process.env.CHECK_ID; console.log('stamped');",
    });
    expect(snippet.status, JSON.stringify(snippet.json)).toBe(201);
    const { checkId, session } = await run('/v1/checks/api', {
      name: 'snippet',
      setupSnippetId: snippet.json.id,
      localTearDownScript:
        "response.body = JSON.stringify({ seen: JSON.parse(response.body).headers['x-api-key-seen'] });",
      request: {
        url: `${target.origin}/echo`,
        assertions: [{ source: 'JSON_BODY', property: '$.seen', comparison: 'EQUALS', target: 'undefined' }],
      },
    });
    expect(session.status).toBe('PASSED');
    expect(target.requests.at(-1)!.headers).toMatchObject({
      'x-api-key-seen': 'undefined',
      'x-check': checkId,
    });
    // The script's output is in the result's logs.
    expect(session.results[0].logs.map((l: { msg: string }) => l.msg)).toContain('[setup] stamped');
  });

  it('retries a failing connection per the strategy: ATTEMPT results, then FINAL', async () => {
    const flaky = await flakyServer(2);
    try {
      const { session } = await run('/v1/checks/api', {
        name: 'flaky',
        retryStrategy: {
          type: 'FIXED',
          baseBackoffSeconds: 1,
          maxRetries: 3,
          maxDurationSeconds: 60,
          onlyOn: ['NETWORK_ERROR'],
        },
        request: {
          url: `http://127.0.0.1:${flaky.port}/`,
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        },
      });
      expect(session.status).toBe('PASSED');
      const results = [...session.results].sort((a: any, b: any) => a.attempts - b.attempts);
      expect(results.map((r: any) => [r.attempts, r.resultType, r.status])).toEqual([
        [1, 'ATTEMPT', 'FAILED'],
        [2, 'ATTEMPT', 'FAILED'],
        [3, 'FINAL', 'PASSED'],
      ]);
      expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(results[0].httpCheckResult.errorCode);
      // FIXED 1 s between a failure and the next connection.
      for (let i = 1; i < flaky.connections.length; i++) {
        expect(flaky.connections[i]! - flaky.connections[i - 1]!).toBeGreaterThanOrEqual(950);
      }
    } finally {
      flaky.server.close();
    }
  });

  describe('network traces of a black-holed host', () => {
    let host: TestHost;
    beforeAll(() => {
      host = createTestHost();
      host.setInputRules(['tcp dport 80 drop', 'icmp type echo-request drop']);
    });
    afterAll(() => host?.destroy());

    it('attaches a route trace and a pcap that tcpdump reads, with no secret inside', async () => {
      const { checkId, session } = await run('/v1/checks/api', {
        name: 'black hole',
        environmentVariables: [{ key: 'HIDDEN', value: SECRET, secret: true }],
        maxResponseTime: 3000,
        request: {
          url: `http://${host.peerAddress}/?q={{HIDDEN}}`,
          headers: [{ key: 'x-secret', value: '{{HIDDEN}}' }],
        },
      });
      expect(session.status).toBe('FAILED');
      const result = session.results[0];
      expect(result.httpCheckResult.errorCode).toBe('UND_ERR_CONNECT_TIMEOUT');
      expect(result.artifacts.map((a: any) => a.name).sort()).toEqual([
        'connection.pcap',
        'route-trace.json',
      ]);

      const dir = mkdtempSync(join(tmpdir(), 'outpost-artifacts-'));
      try {
        const files: Record<string, Buffer> = {};
        for (const { name, sizeBytes } of result.artifacts) {
          const res = await fetch(
            new URL(`/v1/check-results/${checkId}/${result.id}/artifacts/${name}`, serviceUrl),
            {
              headers: { authorization: `Bearer ${apiKey}` },
            },
          );
          expect(res.status).toBe(200);
          files[name] = Buffer.from(await res.arrayBuffer());
          expect(files[name]!.length).toBe(sizeBytes);
          writeFileSync(join(dir, name), files[name]!);
        }
        const trace = JSON.parse(files['route-trace.json']!.toString());
        expect(trace.trace.resolvedIp).toBe(host.peerAddress);
        expect(trace.trace.reached).toBe(false);
        expect(trace.text).toContain('traceroute');
        const printed = execFileSync('tcpdump', ['-nn', '-r', join(dir, 'connection.pcap')], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        expect(printed).toMatch(
          new RegExp(`> ${host.peerAddress.replace(/\./g, '\\.')}\\.80: Flags \\[S\\]`),
        );
        for (const bytes of Object.values(files)) expect(bytes.includes(SECRET)).toBe(false);
        for (const name of readdirSync(join(dataDir, 'artifacts'), { recursive: true }) as string[]) {
          const path = join(dataDir, 'artifacts', name);
          if (statSync(path).isFile()) expect(readFileSync(path).includes(SECRET)).toBe(false);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  });
});
