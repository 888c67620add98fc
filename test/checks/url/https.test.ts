import { X509Certificate } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUrlExecutor } from '../../../src/checks/url/index.js';
import { RunOutcomeSchema } from '../../../src/protocol/index.js';
import { startHttpServer, type TestHttpServer } from '../../helpers/http-servers.js';
import { commandWorks, missingRequirement } from '../../helpers/requirements.js';
import { createTestCa, type KeyPair, type TestCa } from '../../helpers/test-ca.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';

const DAY_MS = 86_400_000;
const missing = missingRequirement([
  { ok: commandWorks('openssl', ['version']), what: 'the openssl CLI', install: 'apt-get install openssl' },
]);

const urlJob = (url: string, request: Record<string, unknown> = {}) =>
  jobOf('URL', { url, followRedirects: true, skipSSL: false, ipFamily: 'IPv4', assertions: [], ...request });

describe.skipIf(missing !== null)('URL executor over HTTPS', () => {
  let ca: TestCa;
  let valid: KeyPair;
  let good: TestHttpServer;
  let expired: TestHttpServer;
  let otherHost: TestHttpServer;
  let plain: TestHttpServer;
  const notAfter = new Date(Date.now() + 30 * DAY_MS + 3_600_000);

  beforeAll(async () => {
    ca = createTestCa();
    valid = ca.issue({ commonName: 'localhost', organization: 'Outpost Tests Inc', notAfter });
    const old = ca.issue({
      commonName: 'expired.localhost',
      notBefore: new Date('2020-01-01T00:00:00Z'),
      notAfter: new Date('2020-02-01T00:00:00Z'),
    });
    const other = ca.issue({ commonName: 'other.test', altNames: ['DNS:other.test'] });
    [good, expired, otherHost, plain] = await Promise.all([
      startHttpServer({ tls: valid }),
      startHttpServer({ tls: old }),
      startHttpServer({ tls: other }),
      startHttpServer(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([good, expired, otherHost, plain].map((server) => server?.close()));
    ca?.destroy();
  });

  const defaultTrust = createUrlExecutor();
  const executorTrustingCa = () => createUrlExecutor({ ca: ca.caCert });

  it('passes a verified certificate and reports it for SSL-expiry alerts', async () => {
    const outcome = await executorTrustingCa().run(urlJob(`${good.origin}/`), contextOf());

    expect(outcome.status).toBe('PASSED');
    const x509 = new X509Certificate(valid.cert);
    const certificate = outcome.httpCheckResult!.certificate!;
    expect(certificate).toEqual({
      subject: { commonName: 'localhost', organization: 'Outpost Tests Inc' },
      issuer: { commonName: 'Outpost Test CA', organization: 'Outpost Tests' },
      subjectAltNames: ['DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1'],
      validFrom: new Date(x509.validFrom).toISOString(),
      validTo: new Date(Math.floor(notAfter.getTime() / 1000) * 1000).toISOString(),
      daysRemaining: 30,
      fingerprint256: x509.fingerprint256,
      serialNumber: x509.serialNumber,
      authorized: true,
      authorizationError: null,
    });
    const { timings, timingPhases } = outcome.httpCheckResult!;
    expect(timings.secureConnect).toBeGreaterThan(timings.connect!);
    expect(timingPhases.tls).toBeGreaterThan(0);
    const sum = timingPhases.wait! + timingPhases.dns! + timingPhases.tcp! + timingPhases.tls!;
    expect(
      Math.abs(sum + timingPhases.firstByte! + timingPhases.download! - timingPhases.total),
    ).toBeLessThan(0.01);
  });

  it('verifies the hostname through SNI when the URL names localhost', async () => {
    const outcome = await executorTrustingCa().run(urlJob(`https://localhost:${good.port}/`), contextOf());

    expect(outcome.status).toBe('PASSED');
    expect(outcome.httpCheckResult).toMatchObject({
      resolvedIp: '127.0.0.1',
      certificate: { authorized: true },
    });
  });

  it('fails an expired certificate with CERT_HAS_EXPIRED before sending the request', async () => {
    const outcome = await executorTrustingCa().run(urlJob(`${expired.origin}/`), contextOf());

    expect(Value.Check(RunOutcomeSchema, outcome)).toBe(true);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.errorMessage).toContain('CERT_HAS_EXPIRED');
    expect(outcome.httpCheckResult).toMatchObject({
      errorCode: 'CERT_HAS_EXPIRED',
      response: null,
      certificate: {
        authorized: false,
        authorizationError: 'CERT_HAS_EXPIRED',
        validTo: '2020-02-01T00:00:00.000Z',
      },
    });
    expect(outcome.httpCheckResult!.certificate!.daysRemaining).toBe(
      Math.floor((Date.parse('2020-02-01T00:00:00Z') - Date.now()) / DAY_MS),
    );
    expect(expired.paths).toEqual([]);
  });

  it('passes an expired certificate with skipSSL and still reports it', async () => {
    const outcome = await executorTrustingCa().run(
      urlJob(`${expired.origin}/`, { skipSSL: true }),
      contextOf(),
    );

    expect(outcome.status).toBe('PASSED');
    expect(outcome.httpCheckResult!.certificate).toMatchObject({
      authorized: false,
      authorizationError: 'CERT_HAS_EXPIRED',
    });
    expect(outcome.httpCheckResult!.certificate!.daysRemaining).toBeLessThan(0);
  });

  it('fails a certificate from an unknown CA', async () => {
    const outcome = await defaultTrust.run(urlJob(`${good.origin}/`), contextOf());

    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult!.errorCode).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(outcome.httpCheckResult!.certificate).toMatchObject({ authorized: false });
  });

  it('fails a certificate for another host with ERR_TLS_CERT_ALTNAME_INVALID', async () => {
    const outcome = await executorTrustingCa().run(urlJob(`${otherHost.origin}/`), contextOf());

    expect(outcome.status).toBe('FAILED');
    expect(outcome.httpCheckResult!.errorCode).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('never resumes a TLS session: every run pays a full handshake', async () => {
    const executor = executorTrustingCa();
    const before = { ...good.tls };

    const first = await executor.run(urlJob(`${good.origin}/`), contextOf());
    const second = await executor.run(urlJob(`${good.origin}/`), contextOf());

    expect(good.tls.handshakes - before.handshakes).toBe(2);
    expect(good.tls.resumed - before.resumed).toBe(0);
    expect(first.httpCheckResult!.timingPhases.tls).toBeGreaterThan(0);
    expect(second.httpCheckResult!.timingPhases.tls).toBeGreaterThan(0);
    expect(second.logs.map((line) => line.msg).join('\n')).not.toContain('resumed');
  });

  it('follows a redirect from http to https and reports the final certificate', async () => {
    const target = `${good.origin}/redirect/0`;
    const start = `${plain.origin}/redirect-to?location=${encodeURIComponent(target)}`;

    const outcome = await executorTrustingCa().run(urlJob(start), contextOf());

    expect(outcome.status).toBe('PASSED');
    expect(outcome.httpCheckResult).toMatchObject({
      redirects: [{ url: start, statusCode: 302 }],
      response: { statusCode: 200, url: target },
      certificate: { subject: { commonName: 'localhost' } },
    });
  });
});
