import { once } from 'node:events';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarizeCertificate } from '../../../src/net/http/index.js';
import { startHttpServer, type TestHttpServer } from '../../helpers/http-servers.js';
import { commandWorks, missingRequirement } from '../../helpers/requirements.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';

const DAY_MS = 86_400_000;
const missing = missingRequirement([
  { ok: commandWorks('openssl', ['version']), what: 'the openssl CLI', install: 'apt-get install openssl' },
]);

describe.skipIf(missing !== null)('summarizeCertificate', () => {
  const notAfter = new Date('2031-06-15T12:00:00Z');
  let ca: TestCa;
  let server: TestHttpServer;
  let socket: TLSSocket;

  beforeAll(async () => {
    ca = createTestCa();
    const pair = ca.issue({ commonName: 'localhost', organization: 'Outpost', notAfter });
    server = await startHttpServer({ tls: pair });
    socket = connect({ host: '127.0.0.1', port: server.port, servername: 'localhost', ca: [ca.caCert] });
    await once(socket, 'secureConnect');
  });
  afterAll(async () => {
    socket?.destroy();
    await server?.close();
    ca?.destroy();
  });

  it('reports names, dates, fingerprint and the verification', () => {
    const summary = summarizeCertificate(socket, Date.parse('2031-06-01T00:00:00Z'));

    expect(summary).toMatchObject({
      subject: { commonName: 'localhost', organization: 'Outpost' },
      issuer: { commonName: 'Outpost Test CA', organization: 'Outpost Tests' },
      validTo: '2031-06-15T12:00:00.000Z',
      daysRemaining: 14,
      authorized: true,
      authorizationError: null,
    });
    expect(summary!.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });

  it('counts whole days remaining, rounding down, negative once expired', () => {
    const at = (msBeforeExpiry: number) =>
      summarizeCertificate(socket, notAfter.getTime() - msBeforeExpiry)!.daysRemaining;

    expect(at(DAY_MS * 1.5)).toBe(1);
    expect(at(DAY_MS - 1)).toBe(0);
    expect(at(-1)).toBe(-1);
    expect(at(-DAY_MS * 2.5)).toBe(-3);
  });
});
