import { type Static, Type } from '@sinclair/typebox';
import { GRPC_MODES, IP_FAMILIES } from './enums.js';
import { CertificateSchema } from './http-result.js';
import { Nullable } from './schema.js';
import { ResolverKindSchema } from './tcp-result.js';
import { literals } from '../common/literals.js';

/**
 * Phase durations of a gRPC run, milliseconds (microsecond precision). `dns`: resolving the host (0 for
 * an IP literal). `connect`: the TCP handshake. `tls`: the TLS handshake (null without TLS). `ready`: from
 * the start of connecting to the channel's HTTP/2 connection being ready (TCP, TLS and the HTTP/2
 * settings). `reflection`: fetching the descriptors by server reflection (null when not used).
 * `firstResponse`: from sending the call to its response headers (or a trailers-only answer). `total`:
 * from the start of the run to the end of the call, or to the failure.
 */
export const GrpcTimingPhasesSchema = Type.Object({
  dns: Type.Number(),
  connect: Nullable(Type.Number()),
  tls: Nullable(Type.Number()),
  ready: Nullable(Type.Number()),
  reflection: Nullable(Type.Number()),
  firstResponse: Nullable(Type.Number()),
  total: Type.Number(),
});

/** A metadata entry as received (binary values base64, values over 4096 characters cut with `…`). */
export const GrpcMetadataEntrySchema = Type.Object({ key: Type.String(), value: Type.String() });

/** The response side of a gRPC run (docs/checks.md, "gRPC"), named as the hosted API's `response`. */
export const GrpcCheckResponseSchema = Type.Object({
  grpcMode: literals(GRPC_MODES),
  host: Type.String(),
  /** The address connected to; null when the host did not resolve. */
  resolvedIp: Nullable(Type.String()),
  ipFamily: literals(IP_FAMILIES),
  resolver: ResolverKindSchema,
  port: Nullable(Type.Integer()),
  /** The method called, `pkg.Service/Method`. */
  grpcMethod: Type.String(),
  /** The response message as JSON, cut to 64 KiB; '' when none came. */
  responseMessage: Type.String(),
  /** `responseMessage` was cut. */
  responseTruncated: Type.Boolean(),
  /** Null when no call was made (no connection, bad request message). */
  grpcStatusCode: Nullable(Type.Integer()),
  /** The status name and details: `NOT_FOUND: no such user`. */
  grpcStatusMessage: Type.String(),
  /** HEALTH mode: the serving status (0 UNKNOWN, 1 SERVING, 2 NOT_SERVING, 3 SERVICE_UNKNOWN); null otherwise. */
  healthStatus: Nullable(Type.Integer()),
  healthStatusLabel: Nullable(Type.String()),
  /** Response headers then trailers, at most 64 entries. */
  metadata: Type.Array(GrpcMetadataEntrySchema),
  /** The methods of the called service (BEHAVIOR), or the services the server's reflection lists. */
  discoveredMethods: Type.Array(Type.String()),
  /** Where the message types came from: the check's `protoContent`, the server's reflection, or built in (HEALTH). */
  descriptorSource: Nullable(literals(['protoContent', 'reflection', 'builtIn'] as const)),
  /** TLS: the negotiated version and the server's certificate; null without TLS or before the handshake. */
  tls: Nullable(Type.Object({ protocol: Nullable(Type.String()), certificate: Nullable(CertificateSchema) })),
  requestError: Nullable(Type.String()),
});

/** gRPC part of a result, `grpcCheckResult` (docs/checks.md, "gRPC"). */
export const GrpcCheckResultSchema = Type.Object({
  grpcStatusCode: Nullable(Type.Integer()),
  healthStatus: Nullable(Type.Integer()),
  timingPhases: GrpcTimingPhasesSchema,
  /** Why the call could not be made or failed before a status (resolve, connect, TLS, reflection, encoding). */
  requestError: Nullable(Type.String()),
  /** What was called: host, port, mode and method. */
  request: Type.Object({
    url: Type.String(),
    port: Nullable(Type.Integer()),
    grpcMode: literals(GRPC_MODES),
    grpcMethod: Type.String(),
  }),
  response: GrpcCheckResponseSchema,
});
/** The gRPC part of a result (see {@link GrpcCheckResultSchema}); times in milliseconds. */
export type GrpcCheckResult = Static<typeof GrpcCheckResultSchema>;
