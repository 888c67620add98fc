import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './schema.js';

/** Which resolver found the address: `dns` (c-ares, querying the name server) or `os` (getaddrinfo). */
export const ResolverKindSchema = Type.Union([Type.Literal('dns'), Type.Literal('os')]);

/**
 * Phase durations of a TCP run, milliseconds (microsecond precision).
 * `dns`: resolving the hostname (0 for an IP literal). `connect`: the TCP handshake, or the
 * time until the attempt failed. `firstByte`: from connected to the first byte of the reply
 * (includes sending `data`); null when nothing came back or no reply was awaited. `total`:
 * from the start of the run to the end of the exchange (last byte or the peer's close; the
 * idle wait that ends a reply is not counted), or to the failure.
 */
export const TcpTimingsSchema = Type.Object({
  dns: Type.Number(),
  connect: Type.Number(),
  firstByte: Nullable(Type.Number()),
  total: Type.Number(),
});

/** TCP part of a result (docs/checks.md, "TCP"). */
export const TcpCheckResultSchema = Type.Object({
  hostname: Type.String(),
  port: Type.Integer(),
  /** The address connected to; null when the hostname did not resolve. */
  resolvedIp: Nullable(Type.String()),
  /** The family actually used: IPv6 requests fall back to IPv4 for names without IPv6. */
  ipFamily: Type.Union([Type.Literal('IPv4'), Type.Literal('IPv6')]),
  resolver: ResolverKindSchema,
  /** The TCP handshake completed. */
  connected: Type.Boolean(),
  /** System error code of the failure (ECONNREFUSED, ETIMEDOUT, ENOTFOUND, EHOSTUNREACH, …); null without one. */
  errorCode: Nullable(Type.String()),
  timings: TcpTimingsSchema,
  /** Bytes of `data` written after connecting. */
  bytesSent: Type.Integer(),
  /** Bytes received, all of them, including those beyond what `responseData` keeps. */
  bytesReceived: Type.Integer(),
  /** The reply as UTF-8 text, capped (64 KiB by default); empty when nothing came back. */
  responseData: Type.String(),
  /** The reply was longer than what `responseData` keeps. */
  responseTruncated: Type.Boolean(),
});
/** The TCP part of a result (see {@link TcpCheckResultSchema}); timings in milliseconds, byte counts in bytes. */
export type TcpCheckResult = Static<typeof TcpCheckResultSchema>;
