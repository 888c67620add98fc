import { type Static, Type } from '@sinclair/typebox';
import { literals } from '../common/literals.js';
import { AssertionSchema } from './assertion.js';
import { IP_FAMILIES } from './enums.js';
import { CertificateSchema } from './http-result.js';
import { Nullable } from './schema.js';

/** A rule of the security baseline whose value is a TLS version (`TLS1.2`, `TLS1.3`). */
const BaselineTlsRuleSchema = Type.Object({
  value: Type.Optional(Type.String({ maxLength: 16 })),
  severity: Type.Optional(literals(['fail', 'degrade', 'ignore'] as const)),
});
/** A rule of the security baseline whose value is a key size in bits. */
const BaselineKeySizeRuleSchema = Type.Object({
  value: Type.Optional(Type.Integer({ minimum: 0, maximum: 65_536 })),
  severity: Type.Optional(literals(['fail', 'degrade', 'ignore'] as const)),
});
/** A rule of the security baseline that carries only a severity. */
const BaselineSeverityRuleSchema = Type.Object({
  severity: Type.Optional(literals(['fail', 'degrade', 'ignore'] as const)),
});

/**
 * The security baseline of an SSL monitor (docs/checks.md, "SSL"): each rule's `severity` is `fail`,
 * `degrade` or `ignore`. The agent judges `minTLSVersion`, `recommendedTLSVersion`, `minKeySizeBits`,
 * `recommendedKeySizeBits` and `weakCipherSuite`; the other rules are stored and not judged.
 */
export const SslSecurityBaselineSchema = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  minTLSVersion: Type.Optional(BaselineTlsRuleSchema),
  minKeySizeBits: Type.Optional(BaselineKeySizeRuleSchema),
  weakSignatureAlgorithm: Type.Optional(BaselineSeverityRuleSchema),
  weakCipherSuite: Type.Optional(BaselineSeverityRuleSchema),
  knownBadCA: Type.Optional(BaselineSeverityRuleSchema),
  recommendedTLSVersion: Type.Optional(BaselineTlsRuleSchema),
  recommendedKeySizeBits: Type.Optional(BaselineKeySizeRuleSchema),
  ocspMustStapleRespected: Type.Optional(BaselineSeverityRuleSchema),
  sctPresent: Type.Optional(BaselineSeverityRuleSchema),
});
/** The security baseline of an SSL monitor (see {@link SslSecurityBaselineSchema}). */
export type SslSecurityBaseline = Static<typeof SslSecurityBaselineSchema>;

/**
 * `sslConfig` of an SSL monitor's request as a job carries it (docs/checks.md, "SSL"): the host and port to
 * connect to, the SNI name (`serverName`, null: `hostname` when it is a name), the handshake's time limit in
 * ms, and the days before expiry from which a run is DEGRADED.
 */
export const SslConfigSchema = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 253 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  serverName: Nullable(Type.String({ minLength: 1, maxLength: 253 })),
  ipFamily: literals(IP_FAMILIES),
  skipChainValidation: Type.Boolean(),
  handshakeTimeoutMs: Type.Integer({ minimum: 1, maximum: 30_000 }),
  alertDaysBeforeExpiry: Type.Integer({ minimum: 0, maximum: 365 }),
  securityBaseline: Nullable(SslSecurityBaselineSchema),
});
/** `sslConfig` of an SSL job (see {@link SslConfigSchema}); `handshakeTimeoutMs` in ms, `alertDaysBeforeExpiry` in days. */
export type SslConfig = Static<typeof SslConfigSchema>;

/** The request of an SSL monitor as a job carries it (docs/checks.md, "SSL"). */
export const SslRequestSchema = Type.Object({
  sslConfig: SslConfigSchema,
  assertions: Type.Array(AssertionSchema),
});
/** The request of an SSL job (see {@link SslRequestSchema}). */
export type SslRequest = Static<typeof SslRequestSchema>;

/** One certificate of the chain the server sent, leaf first. Dates ISO 8601; fingerprints colon-separated hex. */
export const SslChainCertificateSchema = Type.Object({
  subjectCN: Nullable(Type.String()),
  issuerCN: Nullable(Type.String()),
  /** The subject and issuer distinguished names, one `KEY=value` per line as OpenSSL prints them. */
  subject: Type.String(),
  issuer: Type.String(),
  /** Subject alternative names: `DNS:example.com`, `IP Address:127.0.0.1`. */
  sans: Type.Array(Type.String()),
  validFrom: Type.String(),
  validTo: Type.String(),
  /** Whole days from the run until `validTo`, rounded down; negative once expired. */
  daysUntilExpiry: Type.Integer(),
  serialNumber: Type.String(),
  fingerprintSha256: Type.String(),
  fingerprintSha1: Type.String(),
  /** `rsa`, `ec`, `ed25519`, …; null when Node does not say. */
  keyAlgorithm: Nullable(Type.String()),
  /** Public key size in bits (RSA modulus, EC curve); null when Node does not say. */
  keySizeBits: Nullable(Type.Integer()),
  isCA: Type.Boolean(),
  selfSigned: Type.Boolean(),
});
/** One certificate of an SSL run's chain (see {@link SslChainCertificateSchema}). */
export type SslChainCertificate = Static<typeof SslChainCertificateSchema>;

/** One judged rule of the security baseline. */
export const SslBaselineFindingSchema = Type.Object({
  rule: Type.String(),
  severity: literals(['fail', 'degrade'] as const),
  /** What broke the rule, in one line. */
  message: Type.String(),
});

/** The verdict of the security baseline: `PASS`, `DEGRADE` or `FAIL`, and the rules broken. */
export const SslBaselineVerdictSchema = Type.Object({
  verdict: literals(['PASS', 'DEGRADE', 'FAIL'] as const),
  findings: Type.Array(SslBaselineFindingSchema),
  /** Rules set on the monitor that the agent does not judge. */
  notJudged: Type.Array(Type.String()),
});
/** The verdict of an SSL run's security baseline (see {@link SslBaselineVerdictSchema}). */
export type SslBaselineVerdict = Static<typeof SslBaselineVerdictSchema>;

/** What the handshake showed (the hosted API's `sslCheckResult.response`); null fields were not reached. */
export const SslResponseSchema = Type.Object({
  resolvedIp: Nullable(Type.String()),
  /** Negotiated protocol as Node names it: `TLSv1.2`, `TLSv1.3`. */
  protocol: Nullable(Type.String()),
  /** Negotiated cipher suite, its IANA name (`TLS_AES_256_GCM_SHA384`). */
  cipherSuite: Nullable(Type.String()),
  handshakeTimeMs: Nullable(Type.Number()),
  /** The leaf certificate holds the name checked (`serverName`, else `hostname`). */
  hostnameVerified: Type.Boolean(),
  /** Why the name does not match; null when it does. */
  hostnameError: Nullable(Type.String()),
  /** The chain verifies against the trusted CAs (the system's, as Node bundles them). */
  chainTrusted: Type.Boolean(),
  /** OpenSSL's code of the chain's failure (CERT_HAS_EXPIRED, SELF_SIGNED_CERT_IN_CHAIN, …); null when trusted. */
  chainError: Nullable(Type.String()),
  daysUntilExpiry: Nullable(Type.Integer()),
  /** The server stapled an OCSP response to the handshake. */
  ocspStapled: Type.Boolean(),
  /** Size of the stapled OCSP response, bytes (not parsed); null when none was stapled. */
  ocspResponseBytes: Nullable(Type.Integer()),
  securityBaseline: Nullable(SslBaselineVerdictSchema),
  /** The leaf certificate; null when none was read. */
  certificate: Nullable(SslChainCertificateSchema),
  /** The chain as the server sent it, leaf first, at most 10 certificates. */
  chain: Type.Array(SslChainCertificateSchema),
});
/** What an SSL run's handshake showed (see {@link SslResponseSchema}). */
export type SslResponse = Static<typeof SslResponseSchema>;

/** Phase durations of an SSL run, ms: resolving, the TCP connect, the TLS handshake, and the whole run. */
export const SslTimingPhasesSchema = Type.Object({
  dns: Type.Number(),
  connect: Nullable(Type.Number()),
  handshake: Nullable(Type.Number()),
  total: Type.Number(),
});

/**
 * SSL part of a result (docs/checks.md, "SSL"), shaped as the hosted API's `sslCheckResult`: the summary
 * fields, what was asked (`request`) and what the handshake showed (`response`, null when none happened).
 */
export const SslCheckResultSchema = Type.Object({
  tlsVersion: Nullable(Type.String()),
  cipherSuite: Nullable(Type.String()),
  daysUntilExpiry: Nullable(Type.Integer()),
  handshakeTimeMs: Nullable(Type.Number()),
  chainTrusted: Nullable(Type.Boolean()),
  hostnameVerified: Nullable(Type.Boolean()),
  baselineVerdict: Nullable(literals(['PASS', 'DEGRADE', 'FAIL'] as const)),
  /**
   * Why the certificate is not good, the first of: `connection`, `expired`, `not-yet-valid`, `untrusted`,
   * `hostname-mismatch`, `baseline`, `expiring`; null when none applies.
   */
  failureCategory: Nullable(Type.String()),
  /** Why no handshake completed (DNS, TCP, TLS, timeout), in one line; null when one did. */
  requestError: Nullable(Type.String()),
  request: Type.Object({
    hostname: Type.String(),
    port: Type.Integer(),
    /** The SNI name sent; null when none was (an IP address without `serverName`). */
    serverName: Nullable(Type.String()),
    ipFamily: Type.String(),
  }),
  timingPhases: SslTimingPhasesSchema,
  response: Nullable(SslResponseSchema),
  /** The leaf certificate in the shape SSL-expiry alerts read (docs/alerting.md); null when none was read. */
  sslCertificate: Nullable(CertificateSchema),
});
/** The SSL part of a result (see {@link SslCheckResultSchema}); times in ms, days whole. */
export type SslCheckResult = Static<typeof SslCheckResultSchema>;
