import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { Certificate } from '../../protocol/http-result.js';

const DAY_MS = 86_400_000;

/** One value of a distinguished-name field; OpenSSL gives an array when the field repeats. */
function field(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** OpenSSL's `Jan  1 00:00:00 2020 GMT` as ISO 8601; the text as it is when it does not parse. */
function isoDate(text: string): string {
  const time = Date.parse(text);
  return Number.isNaN(time) ? text : new Date(time).toISOString();
}

/**
 * The server certificate of a TLS socket, reduced to what an SSL-expiry alert needs.
 * `daysRemaining` is the number of whole days from `nowMs` (wall clock, default Date.now())
 * until `validTo`, rounded down; negative once expired. Null when the peer sent no certificate.
 */
export function summarizeCertificate(socket: TLSSocket, nowMs = Date.now()): Certificate | null {
  const cert: PeerCertificate = socket.getPeerCertificate(false);
  if (cert === null || typeof cert !== 'object' || Object.keys(cert).length === 0) return null;
  const validToMs = Date.parse(cert.valid_to);
  const error = socket.authorizationError as unknown;
  return {
    subject: { commonName: field(cert.subject?.CN), organization: field(cert.subject?.O) },
    issuer: { commonName: field(cert.issuer?.CN), organization: field(cert.issuer?.O) },
    subjectAltNames: cert.subjectaltname ? cert.subjectaltname.split(', ') : [],
    validFrom: isoDate(cert.valid_from),
    validTo: isoDate(cert.valid_to),
    daysRemaining: Number.isNaN(validToMs) ? 0 : Math.floor((validToMs - nowMs) / DAY_MS),
    fingerprint256: cert.fingerprint256,
    serialNumber: cert.serialNumber,
    authorized: socket.authorized,
    authorizationError:
      error === null || error === undefined ? null : String((error as { code?: string }).code ?? error),
  };
}
