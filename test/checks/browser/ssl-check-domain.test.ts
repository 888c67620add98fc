import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer as createTcpServer, type LookupFunction, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../../src/browser/pool.js';
import { BrowserRunner } from '../../../src/browser/runner-process.js';
import { BrowserExecutor } from '../../../src/checks/browser/index.js';
import type { Job, RunOutcome } from '../../../src/protocol/index.js';
import { type Loopback, serve } from '../../browser/runner-harness.js';
import { processesUnder } from '../../helpers/processes.js';
import {
  chromiumRequirement,
  commandWorks,
  missingRequirement,
  runtimeRequirement,
} from '../../helpers/requirements.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';

/**
 * A browser check's `sslCheckDomain` on a real pool and browser: its certificate is read alongside
 * the run and reported in the result; a probe that cannot finish is a log line, not a failure, and
 * never holds the result past the run limit. The domain reaches loopback TLS servers through the
 * executor's probe target (a resolver answering 127.0.0.1): nothing leaves the machine.
 */
const skip = missingRequirement([
  chromiumRequirement(),
  runtimeRequirement('2026.04'),
  { ok: commandWorks('openssl', ['version']), what: 'the openssl CLI', install: 'apt-get install openssl' },
]);

const DAY_MS = 86_400_000;
const DOMAIN = 'shop.outpost.test';
const SCRIPT = [
  "import { test, expect } from '@playwright/test';",
  "test('home', async ({ page }) => {",
  '  await page.goto(process.env.SITE + "/");',
  "  await expect(page.locator('h1')).toHaveText('Hello');",
  '});',
].join('\n');

const toLoopback: LookupFunction = (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

let site: Loopback;
let root: string;
let ca: TestCa;
let tlsServer: Server;
let silent: Server;
const held: Socket[] = [];
let pool: BrowserPool<BrowserRunner>;
let jobs = 0;

function job(timeoutMs: number): Job {
  return {
    jobId: `00000000-0000-4000-8000-${String(++jobs).padStart(12, '0')}`,
    accountId: '00000000-0000-4000-8000-00000000000a',
    check: {
      id: '00000000-0000-4000-8000-00000000000c',
      name: 'shop',
      checkType: 'BROWSER',
      request: { script: SCRIPT, dependencies: [], sslCheckDomain: DOMAIN },
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: '2026.04',
    },
    environmentVariables: [{ key: 'SITE', value: site.origin, secret: false }],
    runLocation: 'lab',
    runSource: 'TRIGGER_API',
    checkSessionId: null,
    attempt: 1,
    timeoutMs,
    leaseMs: 60_000,
  };
}

/** Runs one job on an executor whose probe reaches `port`, as the dispatcher does (its signal fires at timeoutMs). */
async function run(port: number, timeoutMs: number): Promise<{ outcome: RunOutcome; elapsedMs: number }> {
  const executor = new BrowserExecutor({
    checkType: 'BROWSER',
    pool,
    tmpRoot: root,
    tlsProbe: { port, lookup: toLoopback },
  });
  const t0 = performance.now();
  const outcome = await executor.run(job(timeoutMs), {
    signal: AbortSignal.timeout(timeoutMs),
    log: pino({ level: 'silent' }),
  });
  return { outcome, elapsedMs: performance.now() - t0 };
}

describe.skipIf(skip !== null)('browser executor: sslCheckDomain', () => {
  beforeAll(async () => {
    site = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Shop</title><h1>Hello</h1>');
    });
    ca = createTestCa();
    tlsServer = createTlsServer(
      ca.issue({
        commonName: DOMAIN,
        altNames: [`DNS:${DOMAIN}`],
        notAfter: new Date(Date.now() + 2 * DAY_MS),
      }),
      (socket) => socket.on('error', () => {}),
    );
    tlsServer.on('tlsClientError', () => {});
    // Accepts TCP and never answers the TLS handshake.
    silent = createTcpServer((socket) => {
      held.push(socket);
      socket.on('error', () => {});
    });
    // The pool's processes run as other uids when this is root: their temp dirs' parent must be open to them.
    root = mkdtempSync(join(tmpdir(), 'outpost-ssl-domain-'));
    chmodSync(root, 0o755);
    pool = new BrowserPool<BrowserRunner>({
      createRunner: (options) => BrowserRunner.spawn(options),
      tmpRoot: root,
      browserConcurrency: 2,
      readHeadroom: async () => null,
    });
    expect((await pool.checkRuntime('2026.04')).ok).toBe(true);
  }, 60_000);

  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await pool?.close();
    await site?.close();
    for (const server of [tlsServer, silent]) {
      if (server?.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    ca?.destroy();
    // Every host, Chromium and runner of the pool ran with its temp dir under root: none is left.
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  it('reports the domain’s certificate; a probe that fails is a log line, not a failure of the check', async () => {
    const [tlsPort, silentPort] = await Promise.all([listen(tlsServer), listen(silent)]);
    // A port nobody listens on: the probe fails at once (the bound of a probe that never
    // finishes is tested on the probe itself, test/net/tls-probe.test.ts).
    await new Promise((resolve) => silent.close(resolve));
    const [read, refused] = await Promise.all([run(tlsPort, 30_000), run(silentPort, 30_000)]);

    expect(read.outcome.status, read.outcome.errorMessage ?? '').toBe('PASSED');
    const certificate = read.outcome.browserCheckResult?.sslCertificate;
    expect(certificate).toMatchObject({ subject: { commonName: DOMAIN }, authorized: false });
    expect([1, 2]).toContain(certificate?.daysRemaining);
    expect(read.outcome.logs.filter((l) => l.msg.includes('SSL certificate'))).toEqual([]);

    expect(refused.outcome.status, refused.outcome.errorMessage ?? '').toBe('PASSED');
    expect(refused.outcome.browserCheckResult?.sslCertificate).toBeNull();
    expect(refused.outcome.logs).toContainEqual({
      time: expect.any(String),
      level: 'WARN',
      msg: expect.stringMatching(
        new RegExp(`^the SSL certificate of ${DOMAIN} could not be read: .*ECONNREFUSED`),
      ),
    });
  }, 60_000);
});
