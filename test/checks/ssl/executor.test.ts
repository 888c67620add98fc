import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type TlsOptions } from 'node:tls';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSslExecutor } from '../../../src/checks/ssl/index.js';
import { RunOutcomeSchema, type SslCheckResult } from '../../../src/protocol/index.js';
import { type DnsStub, startDnsStub } from '../../helpers/dns-stub.js';
import { refusedPort } from '../../helpers/http-servers.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';
import { commandWorks, missingRequirement } from '../../helpers/requirements.js';
import { createTestCa, type KeyPair, type TestCa } from '../../helpers/test-ca.js';

/**
 * SSL monitors against real TLS servers on loopback whose certificates a test CA made (and one CA nobody
 * trusts): a valid chain, an expired, a not-yet-valid and a soon-expiring certificate, a name mismatch, an
 * untrusted chain, TLS 1.2 against TLS 1.3, a stapled OCSP response, the security baseline, the assertion
 * sources and a refused port. The monitor's name resolves through a DNS stub on loopback.
 */
const DAY_MS = 86_400_000;
const HOST = 'shop.outpost.test';
const missing = missingRequirement([
  { ok: commandWorks('openssl', ['version']), what: 'the openssl CLI', install: 'apt-get install openssl' },
]);

type Target = { server: Server; port: number };

async function tlsServer(pair: KeyPair, extra: TlsOptions = {}, staple?: Buffer): Promise<Target> {
  const server = createServer({ ...pair, ...extra }, (socket) => socket.on('error', () => {}));
  server.on('tlsClientError', () => {});
  if (staple) {
    server.on('OCSPRequest', (_cert: Buffer, _issuer: Buffer, callback: (e: null, r: Buffer) => void) =>
      callback(null, staple),
    );
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

let ca: TestCa;
let rogue: TestCa;
let stub: DnsStub;
const targets: Record<string, Target> = {};

beforeAll(async () => {
  if (missing) return;
  ca = createTestCa('Outpost Test CA');
  rogue = createTestCa('Nobody Trusts This CA');
  const now = Date.now();
  const names = [`DNS:${HOST}`];
  const pairs = {
    valid: ca.issue({ commonName: HOST, altNames: names }),
    expired: ca.issue({
      commonName: HOST,
      altNames: names,
      notBefore: new Date(now - 60 * DAY_MS),
      notAfter: new Date(now - 3 * DAY_MS),
    }),
    notYet: ca.issue({
      commonName: HOST,
      altNames: names,
      notBefore: new Date(now + 5 * DAY_MS),
      notAfter: new Date(now + 90 * DAY_MS),
    }),
    expiring: ca.issue({ commonName: HOST, altNames: names, notAfter: new Date(now + 10.5 * DAY_MS) }),
    mismatch: ca.issue({ commonName: 'other.outpost.test', altNames: ['DNS:other.outpost.test'] }),
    untrusted: rogue.issue({ commonName: HOST, altNames: names }),
  };
  const [valid, expired, notYet, expiring, mismatch, untrusted, tls12, stapled] = await Promise.all([
    tlsServer(pairs.valid),
    tlsServer(pairs.expired),
    tlsServer(pairs.notYet),
    tlsServer(pairs.expiring),
    tlsServer(pairs.mismatch),
    tlsServer(pairs.untrusted),
    tlsServer(pairs.valid, { maxVersion: 'TLSv1.2' }),
    tlsServer(pairs.valid, {}, Buffer.from('a stapled OCSP response')),
  ]);
  Object.assign(targets, { valid, expired, notYet, expiring, mismatch, untrusted, tls12, stapled });
  stub = await startDnsStub({ [HOST]: { A: ['127.0.0.1'] } });
});

afterAll(async () => {
  await Promise.all(
    Object.values(targets).map((t) => new Promise<void>((resolve) => t.server.close(() => resolve()))),
  );
  await stub?.close();
  ca?.destroy();
  rogue?.destroy();
});

const sslConfig = (config: Record<string, unknown>) => ({
  hostname: HOST,
  port: 443,
  serverName: null,
  ipFamily: 'IPv4',
  skipChainValidation: false,
  handshakeTimeoutMs: 3000,
  alertDaysBeforeExpiry: 0,
  securityBaseline: null,
  ...config,
});

async function run(
  config: Record<string, unknown>,
  assertions: Record<string, unknown>[] = [],
  overrides: Parameters<typeof jobOf>[2] = {},
) {
  const executor = createSslExecutor({ dnsServers: [stub.server], trustedCas: [ca.caCert] });
  const outcome = await executor.run(
    jobOf('SSL', { sslConfig: sslConfig(config), assertions }, overrides),
    contextOf(),
  );
  expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
  return { outcome, part: outcome.sslCheckResult as SslCheckResult };
}

describe.skipIf(missing)('SSL executor', () => {
  it('passes a valid certificate and reports the chain, protocol, cipher, days and fingerprints', async () => {
    const { outcome, part } = await run({ port: targets.valid!.port });
    expect(outcome.status).toBe('PASSED');
    expect(outcome.errorMessage).toBeNull();
    expect(part).toMatchObject({
      tlsVersion: 'TLSv1.3',
      chainTrusted: true,
      hostnameVerified: true,
      failureCategory: null,
      requestError: null,
      request: { hostname: HOST, serverName: HOST },
    });
    expect(part.daysUntilExpiry).toBeGreaterThanOrEqual(88);
    expect(part.cipherSuite).toMatch(/^TLS_/);
    const response = part.response!;
    expect(response.resolvedIp).toBe('127.0.0.1');
    expect(response.ocspStapled).toBe(false);
    expect(response.certificate).toMatchObject({
      subjectCN: HOST,
      issuerCN: 'Outpost Test CA',
      keyAlgorithm: 'ec',
      keySizeBits: 256,
      isCA: false,
      selfSigned: false,
      sans: [`DNS:${HOST}`],
    });
    expect(response.certificate!.fingerprintSha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(response.chain.map((c) => c.subjectCN)).toEqual([HOST, 'Outpost Test CA']);
    expect(response.chain[1]).toMatchObject({ isCA: true, selfSigned: true });
    // The alert-shaped certificate SSL-expiry alerts read.
    expect(part.sslCertificate).toMatchObject({ authorized: true, subject: { commonName: HOST } });
    expect(outcome.responseTime).toBe(part.handshakeTimeMs);
  });

  it('fails an expired certificate, saying when it expired', async () => {
    const { outcome, part } = await run({ port: targets.expired!.port });
    expect(outcome.status).toBe('FAILED');
    expect(part.failureCategory).toBe('expired');
    expect(part.daysUntilExpiry).toBeLessThanOrEqual(-3);
    expect(part.response?.chainError).toBe('CERT_HAS_EXPIRED');
    expect(outcome.errorMessage).toMatch(/the certificate expired on/);
  });

  it('fails a certificate that is not valid yet', async () => {
    const { outcome, part } = await run({ port: targets.notYet!.port });
    expect(outcome.status).toBe('FAILED');
    expect(part.failureCategory).toBe('not-yet-valid');
    expect(part.response?.chainError).toBe('CERT_NOT_YET_VALID');
    expect(outcome.errorMessage).toMatch(/is not valid before/);
  });

  it('fails a certificate for another name; serverName decides the name sent and checked', async () => {
    const wrong = await run({ port: targets.mismatch!.port });
    expect(wrong.outcome.status).toBe('FAILED');
    expect(wrong.part.failureCategory).toBe('hostname-mismatch');
    expect(wrong.part).toMatchObject({ hostnameVerified: false, chainTrusted: true });
    expect(wrong.outcome.errorMessage).toMatch(/does not match shop\.outpost\.test/);

    const right = await run({ port: targets.mismatch!.port, serverName: 'other.outpost.test' });
    expect(right.outcome.status).toBe('PASSED');
    expect(right.part.request.serverName).toBe('other.outpost.test');
  });

  it('fails a chain no trusted CA signed, unless skipChainValidation', async () => {
    const { outcome, part } = await run({ port: targets.untrusted!.port });
    expect(outcome.status).toBe('FAILED');
    expect(part.failureCategory).toBe('untrusted');
    expect(part.chainTrusted).toBe(false);
    expect(part.response?.chainError).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(outcome.errorMessage).toMatch(/chain is not trusted: UNABLE_TO_VERIFY_LEAF_SIGNATURE/);

    const skipped = await run({ port: targets.untrusted!.port, skipChainValidation: true });
    expect(skipped.outcome.status).toBe('PASSED');
    expect(skipped.part.chainTrusted).toBe(false);
  });

  it('tells TLS 1.2 from TLS 1.3, in the result and in CONNECTION tlsVersion assertions', async () => {
    const assertions = [
      { source: 'CONNECTION', property: 'tlsVersion', comparison: 'EQUALS', target: 'TLSv1.3' },
    ];
    const old = await run({ port: targets.tls12!.port }, assertions);
    expect(old.part.tlsVersion).toBe('TLSv1.2');
    expect(old.outcome.status).toBe('FAILED');
    expect(old.outcome.assertions[0]).toMatchObject({ target: 'TLSv1.3', actual: 1.2 });

    const modern = await run({ port: targets.valid!.port }, [
      { source: 'CONNECTION', property: 'tlsVersion', comparison: 'EQUALS', target: 'TLS 1.3' },
      { source: 'CONNECTION', property: 'tlsVersion', comparison: 'GREATER_THAN', target: 'TLS1.2' },
    ]);
    expect(modern.outcome.status).toBe('PASSED');
  });

  it('is DEGRADED within alertDaysBeforeExpiry, PASSED before', async () => {
    const soon = await run({ port: targets.expiring!.port, alertDaysBeforeExpiry: 20 });
    expect(soon.outcome.status).toBe('DEGRADED');
    expect(soon.part.failureCategory).toBe('expiring');
    expect(soon.outcome.errorMessage).toMatch(/expires in 10 days, within alertDaysBeforeExpiry 20/);

    const later = await run({ port: targets.expiring!.port, alertDaysBeforeExpiry: 7 });
    expect(later.outcome.status).toBe('PASSED');
  });

  it('reports a stapled OCSP response', async () => {
    const { part } = await run({ port: targets.stapled!.port });
    expect(part.response).toMatchObject({ ocspStapled: true, ocspResponseBytes: 23 });
  });

  it('judges the security baseline: a TLS 1.2 server under minTLSVersion TLS1.3 fails, under recommended degrades', async () => {
    const failing = await run({
      port: targets.tls12!.port,
      securityBaseline: { minTLSVersion: { value: 'TLS1.3' }, sctPresent: { severity: 'degrade' } },
    });
    expect(failing.outcome.status).toBe('FAILED');
    expect(failing.part.baselineVerdict).toBe('FAIL');
    expect(failing.part.response?.securityBaseline).toMatchObject({
      findings: [{ rule: 'minTLSVersion', severity: 'fail' }],
      notJudged: ['sctPresent'],
    });

    const advisory = await run({
      port: targets.tls12!.port,
      securityBaseline: { recommendedTLSVersion: { value: 'TLS1.3', severity: 'degrade' } },
    });
    expect(advisory.outcome.status).toBe('DEGRADED');
    expect(advisory.part.baselineVerdict).toBe('DEGRADE');

    const passing = await run({
      port: targets.valid!.port,
      securityBaseline: { minTLSVersion: { value: 'TLS1.3' }, minKeySizeBits: { value: 256 } },
    });
    expect(passing.outcome.status).toBe('PASSED');
    expect(passing.part.baselineVerdict).toBe('PASS');
  });

  it('evaluates CERTIFICATE, CONNECTION, JSON_RESPONSE, TEXT_RESPONSE and RESPONSE_TIME assertions', async () => {
    const { outcome } = await run({ port: targets.valid!.port }, [
      { source: 'CERTIFICATE', property: 'daysUntilExpiry', comparison: 'GREATER_THAN', target: '30' },
      { source: 'CERTIFICATE', property: 'issuerCN', comparison: 'CONTAINS', target: 'Outpost Test' },
      { source: 'CONNECTION', property: 'chainTrusted', comparison: 'EQUALS', target: 'true' },
      { source: 'JSON_RESPONSE', property: '$.chain[0].keySizeBits', comparison: 'EQUALS', target: '256' },
      { source: 'TEXT_RESPONSE', property: 'Issuer:.*Outpost Test CA', comparison: 'EQUALS', target: 'true' },
      { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '3000' },
      { source: 'CERTIFICATE', property: 'daysUntilExpiry', comparison: 'GREATER_THAN', target: '365' },
    ]);
    expect(outcome.assertions.map((a) => a.error === null)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.errorMessage).toMatch(/assertion CERTIFICATE daysUntilExpiry GREATER_THAN 365 failed/);
  });

  it('scrubs the values of secret variables from the result', async () => {
    const executor = createSslExecutor({ dnsServers: [stub.server], trustedCas: [ca.caCert] });
    const job = jobOf('SSL', { sslConfig: sslConfig({ port: targets.valid!.port }), assertions: [] });
    job.environmentVariables = [{ key: 'ISSUER', value: 'Outpost Test CA', secret: true }];
    const outcome = await executor.run(job, contextOf());
    expect(outcome.status).toBe('PASSED');
    expect(JSON.stringify(outcome)).not.toContain('Outpost Test CA');
    expect(outcome.sslCheckResult?.response?.certificate?.issuerCN).toBe('*****');
  });

  it('fails a refused port as a connection failure, within the handshake timeout', async () => {
    const port = await refusedPort();
    const { outcome, part } = await run({ port });
    expect(outcome.status).toBe('FAILED');
    expect(outcome.hasErrors).toBe(false);
    expect(part.failureCategory).toBe('connection');
    expect(part.requestError).toMatch(/ECONNREFUSED/);
    expect(part.response).toBeNull();
  });

  it('fails a name that does not resolve, and refuses a malformed request as an error of the job', async () => {
    const { outcome, part } = await run({ hostname: 'nowhere.outpost.test', port: targets.valid!.port });
    expect(outcome.status).toBe('FAILED');
    expect(part.requestError).toMatch(/nowhere\.outpost\.test/);

    const executor = createSslExecutor();
    const bad = await executor.run(
      jobOf('SSL', { sslConfig: { hostname: HOST }, assertions: [] }),
      contextOf(),
    );
    expect(bad.hasErrors).toBe(true);
    expect(bad.errorMessage).toMatch(/invalid SSL request/);
  });
});
