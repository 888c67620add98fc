import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, PeerCertificate } from 'node:tls';
import type {
  SslBaselineVerdict,
  SslChainCertificate,
  SslResponse,
  SslSecurityBaseline,
} from '../../protocol/index.js';

const DAY_MS = 86_400_000;

/** Most certificates of a chain read: a server sending more is cut here (a real chain has 2 to 4). */
export const MAX_CHAIN_CERTIFICATES = 10;

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

/** Whole days from `nowMs` until `text` (an OpenSSL date), rounded down; 0 when it does not parse. */
export function daysUntil(text: string, nowMs: number): number {
  const time = Date.parse(text);
  return Number.isNaN(time) ? 0 : Math.floor((time - nowMs) / DAY_MS);
}

/** Key sizes of the named curves Node reports, bits. */
const CURVE_BITS: Record<string, number> = {
  prime256v1: 256,
  'P-256': 256,
  secp384r1: 384,
  'P-384': 384,
  secp521r1: 521,
  'P-521': 521,
};

/** One peer certificate as a chain entry (see SslChainCertificateSchema). */
export function describeCertificate(cert: PeerCertificate, nowMs: number): SslChainCertificate {
  let keyAlgorithm: string | null = null;
  let keySizeBits: number | null = typeof cert.bits === 'number' ? cert.bits : null;
  let isCA = false;
  let selfSigned = false;
  let subject = '';
  let issuer = '';
  try {
    const x509 = new X509Certificate(cert.raw);
    keyAlgorithm = x509.publicKey.asymmetricKeyType ?? null;
    const details = x509.publicKey.asymmetricKeyDetails;
    if (keySizeBits === null && details?.modulusLength) keySizeBits = details.modulusLength;
    if (keySizeBits === null && details?.namedCurve) keySizeBits = CURVE_BITS[details.namedCurve] ?? null;
    isCA = x509.ca;
    selfSigned = x509.checkIssued(x509) && x509.verify(x509.publicKey);
    subject = x509.subject;
    issuer = x509.issuer;
  } catch {
    // A certificate Node cannot parse again: what getPeerCertificate gave is reported.
  }
  return {
    subjectCN: field(cert.subject?.CN),
    issuerCN: field(cert.issuer?.CN),
    subject,
    issuer,
    sans: cert.subjectaltname ? cert.subjectaltname.split(', ') : [],
    validFrom: isoDate(cert.valid_from),
    validTo: isoDate(cert.valid_to),
    daysUntilExpiry: daysUntil(cert.valid_to, nowMs),
    serialNumber: cert.serialNumber,
    fingerprintSha256: cert.fingerprint256,
    fingerprintSha1: cert.fingerprint,
    keyAlgorithm,
    keySizeBits,
    isCA,
    selfSigned,
  };
}

/**
 * The chain the server sent, leaf first, as getPeerCertificate(true) links it: at most
 * {@link MAX_CHAIN_CERTIFICATES}, stopping at a certificate that issued itself.
 */
export function chainOf(leaf: DetailedPeerCertificate, nowMs: number): SslChainCertificate[] {
  const chain: SslChainCertificate[] = [];
  const seen = new Set<string>();
  let cert: DetailedPeerCertificate | undefined = leaf;
  while (cert && Object.keys(cert).length > 0 && chain.length < MAX_CHAIN_CERTIFICATES) {
    if (seen.has(cert.fingerprint256)) break;
    seen.add(cert.fingerprint256);
    chain.push(describeCertificate(cert, nowMs));
    cert = cert.issuerCertificate;
  }
  return chain;
}

/** `TLSv1.3`, `TLS 1.3`, `TLS1.3`, `1.3` → 1.3; null for anything else. */
export function tlsVersionNumber(text: string): number | null {
  const match = /^\s*(?:TLS\s*v?\s*)?(1\.[0-3])\s*$/i.exec(text);
  return match?.[1] ? Number(match[1]) : null;
}

/** Cipher suites the weakCipherSuite rule refuses: RC4, 3DES, DES, NULL, EXPORT, anonymous, MD5. */
const WEAK_CIPHER = /RC4|3DES|DES_CBC|_DES_|NULL|EXPORT|_anon_|anon|MD5/i;

/** Rules the agent judges; the others are reported in `notJudged`. */
const JUDGED_RULES = new Set([
  'minTLSVersion',
  'recommendedTLSVersion',
  'minKeySizeBits',
  'recommendedKeySizeBits',
  'weakCipherSuite',
]);

/**
 * Judges the security baseline over what the handshake showed (docs/checks.md, "SSL"): a TLS version
 * below `minTLSVersion`/`recommendedTLSVersion`, a leaf key smaller than `minKeySizeBits`/
 * `recommendedKeySizeBits`, a weak cipher suite. Each rule counts with its `severity` (`fail`, `degrade`;
 * `ignore` or none: the enforceable rules default to `fail`, the recommended ones to `ignore`). Null when
 * the monitor has no baseline or it is disabled.
 */
export function judgeBaseline(
  baseline: SslSecurityBaseline | null,
  seen: { protocol: string | null; cipherSuite: string | null; leafKeyBits: number | null },
): SslBaselineVerdict | null {
  if (baseline === null || baseline.enabled === false) return null;
  const findings: SslBaselineVerdict['findings'] = [];
  const add = (rule: string, severity: string | undefined, fallback: 'fail' | 'ignore', message: string) => {
    const level = severity ?? fallback;
    if (level === 'fail' || level === 'degrade') findings.push({ rule, severity: level, message });
  };
  const version = seen.protocol ? tlsVersionNumber(seen.protocol) : null;
  for (const [rule, fallback] of [
    ['minTLSVersion', 'fail'],
    ['recommendedTLSVersion', 'ignore'],
  ] as const) {
    const wanted = baseline[rule]?.value ? tlsVersionNumber(baseline[rule].value) : null;
    if (wanted !== null && version !== null && version < wanted) {
      add(rule, baseline[rule]?.severity, fallback, `${seen.protocol} is below TLS ${wanted.toFixed(1)}`);
    }
  }
  for (const [rule, fallback] of [
    ['minKeySizeBits', 'fail'],
    ['recommendedKeySizeBits', 'ignore'],
  ] as const) {
    const wanted = baseline[rule]?.value;
    if (wanted !== undefined && seen.leafKeyBits !== null && seen.leafKeyBits < wanted) {
      add(rule, baseline[rule]?.severity, fallback, `the key has ${seen.leafKeyBits} bits, below ${wanted}`);
    }
  }
  if (baseline.weakCipherSuite && seen.cipherSuite && WEAK_CIPHER.test(seen.cipherSuite)) {
    add('weakCipherSuite', baseline.weakCipherSuite.severity, 'fail', `${seen.cipherSuite} is a weak suite`);
  }
  const notJudged = Object.keys(baseline).filter((rule) => rule !== 'enabled' && !JUDGED_RULES.has(rule));
  const verdict = findings.some((f) => f.severity === 'fail')
    ? 'FAIL'
    : findings.length > 0
      ? 'DEGRADE'
      : 'PASS';
  return { verdict, findings, notJudged };
}

/**
 * The response as TEXT_RESPONSE assertions read it: one `Key: value` line per fact, then one block per
 * chain certificate (`Subject:`, `Issuer:`, `Valid from:`, …). Bounded by the chain's bound.
 */
export function responseText(response: SslResponse): string {
  const lines = [
    `Resolved IP: ${response.resolvedIp ?? ''}`,
    `Protocol: ${response.protocol ?? ''}`,
    `Cipher suite: ${response.cipherSuite ?? ''}`,
    `Hostname verified: ${response.hostnameVerified}`,
    `Chain trusted: ${response.chainTrusted}`,
    `Days until expiry: ${response.daysUntilExpiry ?? ''}`,
    `OCSP stapled: ${response.ocspStapled}`,
  ];
  for (const [index, cert] of response.chain.entries()) {
    lines.push(
      `Certificate ${index}:`,
      `Subject: ${cert.subject.replaceAll('\n', ', ')}`,
      `Issuer: ${cert.issuer.replaceAll('\n', ', ')}`,
      `SANs: ${cert.sans.join(', ')}`,
      `Valid from: ${cert.validFrom}`,
      `Valid to: ${cert.validTo}`,
      `Serial number: ${cert.serialNumber}`,
      `Fingerprint SHA-256: ${cert.fingerprintSha256}`,
    );
  }
  return lines.join('\n');
}
