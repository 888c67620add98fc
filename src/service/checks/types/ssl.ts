import { Type } from '@sinclair/typebox';
import { IP_FAMILIES, SSL_ASSERTION_SOURCES } from '../../../protocol/index.js';
import { Ignored, Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, MINUTE_FREQUENCIES, uptimeCreateBody } from './common.js';

/** Severity of a security-baseline rule. */
const severity = Type.Optional(StringEnum(['fail', 'degrade', 'ignore'] as const));
const tlsRule = Type.Optional(
  Type.Object(
    { value: Type.Optional(StringEnum(['TLS1.0', 'TLS1.1', 'TLS1.2', 'TLS1.3'] as const)), severity },
    strict,
  ),
);
const keySizeRule = Type.Optional(
  Type.Object({ value: Type.Optional(Type.Integer({ minimum: 1, maximum: 16_384 })), severity }, strict),
);
const severityRule = Type.Optional(Type.Object({ severity }, strict));

/**
 * The security baseline of an SSL monitor (docs/checks.md, "SSL"): the agent judges `minTLSVersion`,
 * `recommendedTLSVersion`, `minKeySizeBits`, `recommendedKeySizeBits` and `weakCipherSuite`; the other rules
 * are stored and reported as not judged.
 */
export const SslSecurityBaselineBodySchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    minTLSVersion: tlsRule,
    minKeySizeBits: keySizeRule,
    weakSignatureAlgorithm: severityRule,
    weakCipherSuite: severityRule,
    knownBadCA: severityRule,
    recommendedTLSVersion: tlsRule,
    recommendedKeySizeBits: keySizeRule,
    ocspMustStapleRespected: severityRule,
    sctPresent: severityRule,
  },
  strict,
);

/** `sslConfig` of an SSL monitor (docs/checks.md, "SSL"): `hostname` without scheme or port. */
export const SslConfigBodySchema = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[^\\s/:]+$|^[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*$',
    }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: 443 })),
    serverName: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/:]+$', default: null })),
    ),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    skipChainValidation: Type.Optional(Type.Boolean({ default: false })),
    handshakeTimeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 30_000, default: 10_000 })),
    alertDaysBeforeExpiry: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, default: 20 })),
    securityBaseline: Type.Optional(Nullable({ ...SslSecurityBaselineBodySchema, default: null })),
    clientCertificateMode: Ignored(
      StringEnum(['auto', 'explicit'] as const),
      "the hosted API's client certificates of SSL monitors; Outpost's SSL monitors send none",
    ),
  },
  strict,
);

/** SSL request (docs/checks.md, "SSL"): its `sslConfig` and assertions. */
export const SslRequestBodySchema = Type.Object(
  {
    sslConfig: SslConfigBodySchema,
    sslClientCertificateId: Ignored(
      Nullable(Type.String({ maxLength: 64 })),
      "the hosted API's client certificates of SSL monitors; Outpost's SSL monitors send none",
    ),
    assertions: assertions(SSL_ASSERTION_SOURCES),
  },
  strict,
);

/** `POST /v1/checks/ssl`: degraded 3000 ms, max 10 000 ms of handshake by default (at most 30 000). */
export const CreateSslCheckBody = uptimeCreateBody(SslRequestBodySchema, MINUTE_FREQUENCIES, 3000, 10_000);
