import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './schema.js';
import { ResolverKindSchema } from './tcp-result.js';

/**
 * Cumulative times of the final request, milliseconds from its start (docs/checks.md,
 * "HTTP timing"): socket assigned, DNS done, TCP connected, TLS done (null over plain HTTP),
 * first response byte, body end. A phase the request never reached is null. Agrees with
 * curl's `time_namelookup`, `time_connect`, `time_appconnect`, `time_starttransfer`, `time_total`.
 */
export const HttpTimingsSchema = Type.Object({
  socket: Nullable(Type.Number()),
  lookup: Nullable(Type.Number()),
  connect: Nullable(Type.Number()),
  secureConnect: Nullable(Type.Number()),
  response: Nullable(Type.Number()),
  end: Nullable(Type.Number()),
});
/** Cumulative times of the final request, milliseconds from its start, null for a phase not reached (see {@link HttpTimingsSchema}). */
export type HttpTimings = Static<typeof HttpTimingsSchema>;

/**
 * Phase durations of the final request, milliseconds: `wait` (until a socket), `dns`, `tcp`,
 * `tls` (null over plain HTTP), `firstByte` (connected to first response byte), `download`
 * (first byte to body end), `total` (start to body end, or to the failure). Phases not reached are null.
 */
export const HttpTimingPhasesSchema = Type.Object({
  wait: Nullable(Type.Number()),
  dns: Nullable(Type.Number()),
  tcp: Nullable(Type.Number()),
  tls: Nullable(Type.Number()),
  firstByte: Nullable(Type.Number()),
  download: Nullable(Type.Number()),
  total: Type.Number(),
});
/** Phase durations of the final request, milliseconds, null for a phase not reached (see {@link HttpTimingPhasesSchema}). */
export type HttpTimingPhases = Static<typeof HttpTimingPhasesSchema>;

/** A distinguished name, reduced to what alerts show. */
export const CertificateNameSchema = Type.Object({
  commonName: Nullable(Type.String()),
  organization: Nullable(Type.String()),
});

/**
 * The server certificate of an https target, ready for SSL-expiry alerts. Dates are ISO 8601;
 * `daysRemaining` counts whole days until `validTo` (negative once expired).
 */
export const CertificateSchema = Type.Object({
  subject: CertificateNameSchema,
  issuer: CertificateNameSchema,
  /** Subject alternative names as OpenSSL prints them: `DNS:example.com`, `IP Address:127.0.0.1`. */
  subjectAltNames: Type.Array(Type.String()),
  validFrom: Type.String(),
  validTo: Type.String(),
  daysRemaining: Type.Integer(),
  /** SHA-256 fingerprint, colon-separated hex. */
  fingerprint256: Type.String(),
  serialNumber: Type.String(),
  /** The chain verified against the trusted CAs and the hostname matched. */
  authorized: Type.Boolean(),
  /** OpenSSL's or Node's code of the verification failure (CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, …). */
  authorizationError: Nullable(Type.String()),
});
/** A server certificate as results carry it (see {@link CertificateSchema}): dates ISO 8601, `daysRemaining` whole days. */
export type Certificate = Static<typeof CertificateSchema>;

/** The response of the final request. Header values of credentials are replaced by `*****`. */
export const HttpResponseSchema = Type.Object({
  statusCode: Type.Integer(),
  statusText: Type.String(),
  /** The URL that answered (differs from `request.url` after redirects). */
  url: Type.String(),
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Type.Record(Type.String(), Type.String()),
  /** Body bytes read (never stored), up to the executor's cap. */
  bodySizeBytes: Type.Integer(),
  /** Reading stopped at the cap before the body ended. */
  bodyTruncated: Type.Boolean(),
  /**
   * API checks: the body as text (after the teardown script), at most the executor's stored cap
   * (`bodyStoredTruncated` says when cut); null for a binary body, which is never stored.
   * URL monitors never store bodies and leave it out.
   */
  body: Type.Optional(Nullable(Type.String())),
  bodyStoredTruncated: Type.Optional(Type.Boolean()),
});
/** The response of the final request (see {@link HttpResponseSchema}); `bodySizeBytes` in bytes. */
export type HttpResponse = Static<typeof HttpResponseSchema>;

/** One redirect followed: the URL that answered and its 3xx status. */
export const HttpRedirectSchema = Type.Object({ url: Type.String(), statusCode: Type.Integer() });
/** One redirect followed: the URL that answered and its 3xx status (see {@link HttpRedirectSchema}). */
export type HttpRedirect = Static<typeof HttpRedirectSchema>;

/**
 * The TCP connection the final request opened (or tried to open), as the connector saw it:
 * the address it connected to after DNS and the port of that request's own URL, after every
 * redirect. The agent's network diagnostics repeat exactly this connection.
 */
export const HttpConnectionSchema = Type.Object({
  protocol: Type.Literal('tcp'),
  family: Type.Union([Type.Literal(4), Type.Literal(6)]),
  remoteAddress: Type.String(),
  remotePort: Type.Integer({ minimum: 1, maximum: 65535 }),
});
/** The TCP connection of the final request (see {@link HttpConnectionSchema}): family 4 or 6, remote address and port. */
export type HttpConnection = Static<typeof HttpConnectionSchema>;

/**
 * HTTP part of a result of a URL monitor or an API check. Timings describe the final
 * request; redirects before it are listed in order.
 */
export const HttpCheckResultSchema = Type.Object({
  request: Type.Object({
    method: Type.String(),
    url: Type.String(),
    /** API checks: the headers sent (credentials as `*****`). */
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** API checks: the body sent, as text (secrets scrubbed). */
    body: Type.Optional(Type.String()),
  }),
  /** null when no response arrived (connection, TLS or timeout failure). */
  response: Nullable(HttpResponseSchema),
  timings: HttpTimingsSchema,
  timingPhases: HttpTimingPhasesSchema,
  redirects: Type.Array(HttpRedirectSchema),
  certificate: Nullable(CertificateSchema),
  /** The address the final request connected to; null when it never resolved. */
  resolvedIp: Nullable(Type.String()),
  /** The connection of the final request; null (or absent, in older results) when none was attempted. */
  connection: Type.Optional(Nullable(HttpConnectionSchema)),
  resolver: ResolverKindSchema,
  /** Code of the failure (ECONNREFUSED, CERT_HAS_EXPIRED, UND_ERR_HEADERS_TIMEOUT, …); null without one. */
  errorCode: Nullable(Type.String()),
});
/** The HTTP part of a result of a URL monitor or an API check (see {@link HttpCheckResultSchema}). */
export type HttpCheckResult = Static<typeof HttpCheckResultSchema>;
