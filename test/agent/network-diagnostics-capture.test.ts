import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createNetworkDiagnostics } from '../../src/agent/network-diagnostics.js';
import { createApiExecutor } from '../../src/checks/api/index.js';
import { createUrlExecutor } from '../../src/checks/url/index.js';
import type { Job, RunOutcome } from '../../src/protocol/index.js';
import { apiRequest } from '../helpers/api-request.js';
import { contextOf, jobOf } from '../helpers/jobs.js';
import { refusedPort } from '../helpers/http-servers.js';
import { commandWorks, ipv6Missing, missingRequirement } from '../helpers/requirements.js';

/**
 * Secrets of OTHER flows (another account's client, the service's own answers): neither job
 * secrets nor all in credential headers, so only the capture filter can keep them out.
 */
const OTHER_ACCOUNT_KEY = 'pl_otheraccount_7Hq2Zk9Lw4';
const AGENT_KEY = 'ak_agent_key_Xx81Pq0Mn3Rt';
const PLAIN_SECRET = 'plain-body-secret-Vb64Nw2Ys7';
const SERVICE_COOKIE = 'svc-session-Ju73Kd09Qa5e';
const SECRETS = [OTHER_ACCOUNT_KEY, AGENT_KEY, PLAIN_SECRET, SERVICE_COOKIE];

/** Every form the tests look for: as is, lower case, base64 (any alignment), percent-encoded, hex, a 12-character prefix. */
function expectNoSecretIn(bytes: Buffer, secret: string): void {
  const text = bytes.toString('latin1');
  const forms = new Set([secret, secret.toLowerCase(), encodeURIComponent(secret), secret.slice(0, 12)]);
  for (const shift of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(shift), Buffer.from(secret)]).toString('base64');
    forms.add(encoded.slice(4, encoded.length - 4));
  }
  for (const form of forms) expect(text.includes(form), `pcap holds ${JSON.stringify(form)}`).toBe(false);
  expect(bytes.toString('hex').includes(Buffer.from(secret).toString('hex'))).toBe(false);
}

/** tcpdump's reading of a pcap, one line per packet, numeric addresses and ports. */
function tcpdumpLines(file: string): string[] {
  return execFileSync('tcpdump', ['-nn', '-r', file], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
    .split('\n')
    .filter((line) => line !== '');
}

/** A host:port as tcpdump prints it (`127.0.0.5.8080`, `::1.8080`). */
const shown = (host: string, port: number) => `${host}.${port}`;

/** The test's service: `/start` redirects to `location`, `/reset` resets the connection, the rest answer 200 with a cookie. */
async function startService(host: string): Promise<{
  server: Server;
  port: number;
  setLocation: (url: string) => void;
  otherRequests: () => number;
}> {
  let location = '';
  let other = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/start') {
      res.writeHead(302, { location }).end();
    } else if (req.url === '/reset') {
      req.socket.resetAndDestroy();
    } else {
      req.resume();
      req.on('end', () => {
        if (req.headers['x-api-key'] === OTHER_ACCOUNT_KEY) other += 1;
        res.writeHead(200, { 'set-cookie': `s=${SERVICE_COOKIE}`, 'x-echo': PLAIN_SECRET }).end(PLAIN_SECRET);
      });
    }
  });
  server.listen(0, host);
  await once(server, 'listening');
  return {
    server,
    port: (server.address() as AddressInfo).port,
    setLocation: (url) => {
      location = url;
    },
    otherRequests: () => other,
  };
}

/**
 * Another process talking to host:port all along: requests with another account's key, the
 * agent's key and a plain secret, over new and kept-alive connections, two at a time.
 */
const OTHER_CLIENT = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = process.env.PLAIN;
function go(keep) {
  const req = http.request({
    host: process.env.HOST, port: Number(process.env.PORT), path: '/other', method: 'POST',
    agent: keep ? agent : false,
    headers: { 'x-api-key': process.env.OTHER, authorization: 'Bearer ' + process.env.AGENT, 'x-account': process.env.PLAIN, 'content-length': Buffer.byteLength(body) },
  }, (res) => { res.resume(); res.on('end', () => setTimeout(go, 2, keep)); });
  req.on('error', () => setTimeout(go, 20, keep));
  req.end(body);
}
go(true); go(false);
process.stdin.on('end', () => process.exit(0)).resume();
`;

function startOtherClient(host: string, port: number): ChildProcess {
  return spawn(process.execPath, ['-e', OTHER_CLIENT], {
    env: {
      ...process.env,
      HOST: host,
      PORT: String(port),
      OTHER: OTHER_ACCOUNT_KEY,
      AGENT: AGENT_KEY,
      PLAIN: PLAIN_SECRET,
    },
    stdio: ['pipe', 'ignore', 'inherit'],
  });
}

async function stopOtherClient(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.stdin?.end();
  await exited;
}

const missing = missingRequirement([
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW for tcpdump)', install: 'run the tests as root' },
  { ok: commandWorks('tcpdump', ['--version']), what: 'tcpdump', install: 'apt-get install tcpdump' },
]);

describe.skipIf(missing !== null)('packet captures record only the agent’s own failing connection', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-diag-capture-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the URL check for real, then the diagnostics on its outcome; returns the pcap file. */
  async function runAndDiagnose(
    url: string,
    during?: { otherRequests: () => number },
    checkType: 'URL' | 'API' = 'URL',
  ): Promise<{ pcap: string; outcome: RunOutcome }> {
    const ipFamily = url.includes('[') ? 'IPv6' : 'IPv4';
    const job: Job =
      checkType === 'URL'
        ? jobOf('URL', { url, followRedirects: true, skipSSL: false, ipFamily, assertions: [] })
        : jobOf('API', apiRequest(url, { followRedirects: true, ipFamily }));
    // The other flow is under way before the check runs.
    if (during)
      await vi.waitFor(() => expect(during.otherRequests()).toBeGreaterThan(3), { timeout: 10_000 });
    const outcome = await (checkType === 'URL' ? createUrlExecutor() : createApiExecutor()).run(
      job,
      contextOf(),
    );
    const pcap = join(dir, `connection-${Math.random().toString(36).slice(2)}.pcap`);
    const diagnose = createNetworkDiagnostics({
      traceTimeoutMs: 2000,
      client: {
        async uploadArtifact(_jobId, name, path) {
          const bytes = readFileSync(path);
          if (name === 'connection.pcap') writeFileSync(pcap, bytes);
          return bytes.length;
        },
      },
    });
    const before = during?.otherRequests() ?? 0;
    // The agent's own other connections to the same address and port, in this very process.
    let inProcess = during !== undefined;
    const ownTraffic = (async () => {
      let sent = 0;
      while (inProcess) {
        await fetch(url.replace(/\/(start|reset)$/, '/own'), {
          method: 'POST',
          headers: { 'x-api-key': OTHER_ACCOUNT_KEY, 'x-account': PLAIN_SECRET },
          body: PLAIN_SECRET,
        }).then(
          (res) => res.arrayBuffer(),
          () => undefined,
        );
        sent += 1;
      }
      return sent;
    })();
    let artifacts: Awaited<ReturnType<typeof diagnose>>;
    try {
      artifacts = await diagnose(job, outcome, {
        signal: new AbortController().signal,
        log: pino({ level: 'silent' }),
      });
    } finally {
      inProcess = false;
    }
    if (during) expect(await ownTraffic).toBeGreaterThan(3);
    expect(artifacts.map((a) => a.name)).toContain('connection.pcap');
    // The other flow really ran while the capture did: its packets were there to be caught.
    if (during) expect(during.otherRequests() - before).toBeGreaterThan(5);
    return { pcap, outcome };
  }

  it.each(['URL', 'API'] as const)(
    '%s check redirected from a live service to a refused port: only SYNs to the refused port (and their resets)',
    async (checkType) => {
      const host = '127.0.0.5';
      const service = await startService(host);
      const refused = await refusedPort(host);
      service.setLocation(`http://${host}:${refused}/next`);
      const other = startOtherClient(host, service.port);
      try {
        const { pcap, outcome } = await runAndDiagnose(
          `http://${host}:${service.port}/start`,
          service,
          checkType,
        );
        expect(outcome.status).toBe('FAILED');
        expect(outcome.httpCheckResult).toMatchObject({
          errorCode: 'ECONNREFUSED',
          redirects: [{ statusCode: 302 }],
          connection: { protocol: 'tcp', family: 4, remoteAddress: host, remotePort: refused },
        });

        const lines = tcpdumpLines(pcap);
        const bytes = readFileSync(pcap);
        expect(lines.some((line) => line.includes(`> ${shown(host, refused)}: Flags [S]`))).toBe(true);
        for (const line of lines) {
          expect(line).toContain(shown(host, refused));
          expect(line).not.toContain(`.${service.port}`);
        }
        // The probe's own connection only: one local port.
        const localPorts = new Set(
          lines.map((line) => /IP 127\.0\.0\.\d+\.(\d+) > 127\.0\.0\.5\./.exec(line)?.[1]).filter(Boolean),
        );
        expect(localPorts.size).toBe(1);
        for (const secret of SECRETS) expectNoSecretIn(bytes, secret);
      } finally {
        await stopOtherClient(other);
        service.server.close();
      }
    },
  );

  it.each([
    { family: 4, host: '127.0.0.5' },
    { family: 6, host: '::1' },
  ])(
    'a connection reset by a live IPv$family service other clients use at the same time: none of their packets',
    async ({ family, host }) => {
      if (family === 6 && ipv6Missing()) return;
      const service = await startService(host);
      const other = startOtherClient(host, service.port);
      try {
        const shownHost = family === 6 ? `[${host}]` : host;
        const { pcap, outcome } = await runAndDiagnose(`http://${shownHost}:${service.port}/reset`, service);
        expect(outcome.status).toBe('FAILED');
        expect(outcome.httpCheckResult?.connection).toEqual({
          protocol: 'tcp',
          family,
          remoteAddress: host,
          remotePort: service.port,
        });

        const lines = tcpdumpLines(pcap);
        const bytes = readFileSync(pcap);
        // The repeated attempt reached the service: a handshake and the close, nothing more.
        expect(lines.some((line) => line.includes(`> ${shown(host, service.port)}: Flags [S]`))).toBe(true);
        expect(
          lines.some(
            (line) => line.includes(`${shown(host, service.port)} > `) && line.includes('Flags [S.]'),
          ),
        ).toBe(true);
        const clientPorts = new Set<string>();
        for (const line of lines) {
          const match = /IP6? (\S+) > (\S+):/.exec(line);
          expect(match, line).not.toBeNull();
          const [from, to] = [match![1]!, match![2]!];
          const client = from === shown(host, service.port) ? to : from;
          expect([from, to]).toContain(shown(host, service.port));
          clientPorts.add(client);
          // No payload: the probe sends nothing, and no one else's request or answer is there.
          expect(line).toMatch(/length 0$/);
        }
        expect(clientPorts.size).toBe(1);
        for (const secret of SECRETS) expectNoSecretIn(bytes, secret);
      } finally {
        await stopOtherClient(other);
        service.server.close();
      }
    },
  );
});
