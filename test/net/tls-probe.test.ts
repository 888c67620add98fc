import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createTcpServer, type LookupFunction, type Server, type Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCertificate, probeDomain } from '../../src/net/tls-probe.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';
import { createTestCa, type TestCa } from '../helpers/test-ca.js';

/**
 * The TLS probe of `sslCheckDomain` against real TLS servers on loopback, their certificates made
 * by a test CA: a certificate is read whatever its validity, a refused port and a silent server
 * are errors within the bound, and IP literals are refused before any connection.
 */
const DAY_MS = 86_400_000;
const DOMAIN = 'shop.outpost.test';
const missing = missingRequirement([
  { ok: commandWorks('openssl', ['version']), what: 'the openssl CLI', install: 'apt-get install openssl' },
]);

/** Names the probe asked to resolve; every one answers 127.0.0.1, so no query leaves the machine. */
const lookups: string[] = [];
const toLoopback: LookupFunction = (hostname, options, callback) => {
  lookups.push(hostname);
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

type TlsTarget = { server: Server; port: number; servernames: string[] };

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function tlsTarget(pair: { key: string; cert: string }): Promise<TlsTarget> {
  const servernames: string[] = [];
  const context = createSecureContext(pair);
  // The SNI callback sees the ClientHello: the probe closes before the server's side of the handshake ends.
  const server = createTlsServer(
    {
      ...pair,
      SNICallback: (servername, callback) => {
        servernames.push(servername);
        callback(null, context);
      },
    },
    (socket) => socket.on('error', () => {}),
  );
  server.on('tlsClientError', () => {});
  return { server, port: await listen(server), servernames };
}

async function close(server: Server | undefined): Promise<void> {
  if (!server?.listening) return;
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function openConnections(server: Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((err, count) => (err ? reject(err) : resolve(count))),
  );
}

describe.skipIf(missing !== null)('probeCertificate', () => {
  let ca: TestCa;
  let expiring: { key: string; cert: string };
  let expiringTarget: TlsTarget;
  let expiredTarget: TlsTarget;
  let silent: Server;
  let silentPort: number;
  const held: Socket[] = [];

  beforeAll(async () => {
    ca = createTestCa();
    expiring = ca.issue({
      commonName: DOMAIN,
      organization: 'Outpost Shop',
      altNames: [`DNS:${DOMAIN}`],
      notAfter: new Date(Date.now() + 2 * DAY_MS),
    });
    expiringTarget = await tlsTarget(expiring);
    expiredTarget = await tlsTarget(
      ca.issue({
        commonName: DOMAIN,
        altNames: [`DNS:${DOMAIN}`],
        notBefore: new Date(Date.now() - 30 * DAY_MS),
        notAfter: new Date(Date.now() - 3 * DAY_MS),
      }),
    );
    // Accepts TCP and never says a word: the handshake never ends.
    silent = createTcpServer((socket) => {
      held.push(socket);
      socket.on('error', () => {});
      // Read (and drop) so the probe's close is seen.
      socket.resume();
    });
    silentPort = await listen(silent);
  });

  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await Promise.all([close(expiringTarget?.server), close(expiredTarget?.server), close(silent)]);
    ca?.destroy();
  });

  it('reads the certificate of a domain, sending the domain as SNI, and closes right after the handshake', async () => {
    const t0 = performance.now();
    const { certificate, error } = await probeCertificate(DOMAIN, {
      port: expiringTarget.port,
      timeoutMs: 5_000,
      lookup: toLoopback,
    });
    const elapsedMs = performance.now() - t0;

    expect(error).toBeNull();
    const x509 = new X509Certificate(expiring.cert);
    expect(certificate).toMatchObject({
      subject: { commonName: DOMAIN, organization: 'Outpost Shop' },
      issuer: { commonName: 'Outpost Test CA', organization: 'Outpost Tests' },
      subjectAltNames: [`DNS:${DOMAIN}`],
      validTo: new Date(x509.validTo).toISOString(),
      fingerprint256: x509.fingerprint256,
      // The test CA is not among Node's roots: verified, not trusted, and reported rather than refused.
      authorized: false,
      authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
    // notAfter was 2 days from the start of the test: 1 whole day remains once a moment has passed.
    expect([1, 2]).toContain(certificate?.daysRemaining);
    expect(lookups).toContain(DOMAIN);
    expect(expiringTarget.servernames.at(-1)).toBe(DOMAIN);
    expect(elapsedMs).toBeLessThan(2_000);
    // The probe's socket is gone: the server sees its connection end without a byte of application data.
    await expect.poll(() => openConnections(expiringTarget.server), { timeout: 2_000 }).toBe(0);
  });

  it('still reads an expired certificate: its validity is what is reported', async () => {
    const { certificate, error } = await probeCertificate(DOMAIN, {
      port: expiredTarget.port,
      timeoutMs: 5_000,
      lookup: toLoopback,
    });

    expect(error).toBeNull();
    expect(certificate?.subject.commonName).toBe(DOMAIN);
    expect(certificate?.daysRemaining).toBeLessThanOrEqual(-3);
    expect(Date.parse(certificate?.validTo ?? '')).toBeLessThan(Date.now());
    expect(certificate?.authorized).toBe(false);
  });

  it('reports a refused port as an error with no certificate', async () => {
    const closed = createTcpServer();
    const port = await listen(closed);
    await close(closed);

    const t0 = performance.now();
    const result = await probeCertificate(DOMAIN, { port, timeoutMs: 5_000, lookup: toLoopback });

    expect(result.certificate).toBeNull();
    expect(result.error).toMatch(new RegExp(`^connecting to ${DOMAIN}:${port} failed: .*ECONNREFUSED`));
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  it('gives up on a server that never answers the handshake at the timeout', async () => {
    const t0 = performance.now();
    const result = await probeCertificate(DOMAIN, { port: silentPort, timeoutMs: 400, lookup: toLoopback });
    const elapsedMs = performance.now() - t0;

    expect(result).toEqual({
      certificate: null,
      error: `no TLS handshake with ${DOMAIN}:${silentPort} within 400 ms`,
    });
    expect(elapsedMs).toBeGreaterThanOrEqual(390);
    expect(elapsedMs).toBeLessThan(1_400);
    // The silent server sees the probe's connection close: nothing lingers past the bound.
    await expect.poll(() => openConnections(silent), { timeout: 2_000 }).toBe(0);
  });

  it('stops at once when its signal aborts', async () => {
    const controller = new AbortController();
    const t0 = performance.now();
    const probing = probeCertificate(DOMAIN, {
      port: silentPort,
      timeoutMs: 10_000,
      lookup: toLoopback,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    const result = await probing;

    expect(result.certificate).toBeNull();
    expect(result.error).toMatch(/^aborted /);
    expect(performance.now() - t0).toBeLessThan(1_000);
  });

  it('reports a name that does not resolve', async () => {
    const notFound: LookupFunction = (hostname, _options, callback) =>
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
    const result = await probeCertificate('gone.outpost.test', { timeoutMs: 2_000, lookup: notFound });

    expect(result.certificate).toBeNull();
    expect(result.error).toContain('ENOTFOUND gone.outpost.test');
  });

  it.each([['127.0.0.1'], ['::1'], ['[::1]'], ['0x7f.1'], ['2130706433'], ['127.1.']])(
    'refuses the IP literal %s without resolving or connecting',
    async (literal) => {
      const before = lookups.length;
      const result = await probeCertificate(literal, { port: expiringTarget.port, lookup: toLoopback });

      expect(result).toEqual({
        certificate: null,
        error: `${JSON.stringify(literal)} is an IP address, not a domain name`,
      });
      expect(lookups.length).toBe(before);
    },
  );

  it.each([
    ['https://shop.outpost.test'],
    ['shop.outpost.test:443'],
    ['shop outpost.test'],
    [''],
    ['a'.repeat(254)],
  ])('refuses %j, which is not a domain name', async (text) => {
    const result = await probeCertificate(text, { port: expiringTarget.port, lookup: toLoopback });
    expect(result).toEqual({ certificate: null, error: `${JSON.stringify(text)} is not a domain name` });
  });

  it('connects to the domain in lower case and punycode, without its trailing dot', () => {
    expect(probeDomain('Shop.Outpost.TEST.')).toEqual({ host: 'shop.outpost.test' });
    expect(probeDomain('bücher.example')).toEqual({ host: 'xn--bcher-kva.example' });
  });
});
