import { type Static, Type } from '@sinclair/typebox';
import { literals } from '../common/literals.js';
import { AssertionSchema } from './assertion.js';
import { IP_FAMILIES, TRACEROUTE_PROTOCOLS } from './enums.js';
import { Nullable } from './schema.js';

/**
 * The request of a TRACEROUTE monitor as a job carries it (docs/checks.md, "TRACEROUTE"): `url` is a host
 * name or address; `port` the first UDP destination port (null for ICMP); `timeout` the whole trace's limit
 * in seconds.
 */
export const TracerouteRequestSchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 253 }),
  protocol: literals(TRACEROUTE_PROTOCOLS),
  port: Nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
  ipFamily: literals(IP_FAMILIES),
  maxHops: Type.Integer({ minimum: 1, maximum: 64 }),
  maxUnknownHops: Type.Integer({ minimum: 1, maximum: 30 }),
  ptrLookup: Type.Boolean(),
  timeout: Type.Integer({ minimum: 1, maximum: 30 }),
  assertions: Type.Array(AssertionSchema),
});
/** The request of a TRACEROUTE job (see {@link TracerouteRequestSchema}); `timeout` in seconds. */
export type TracerouteRequest = Static<typeof TracerouteRequestSchema>;

/** RTT statistics over a hop's answered probes, ms (the hosted API's `rtt`); null without an answer. */
export const TracerouteRttSchema = Type.Object({
  last_ms: Type.Number(),
  avg_ms: Type.Number(),
  best_ms: Type.Number(),
  worst_ms: Type.Number(),
  stddev_ms: Type.Number(),
});

/** One hop of a trace, in the hosted API's words (`hop_number`, `main_ip`, `loss_percentage`, …). */
export const TracerouteHopSchema = Type.Object({
  hop_number: Type.Integer(),
  /** The address that answered most of the hop's probes; null when none answered (`*`). */
  main_ip: Nullable(Type.String()),
  /** Its reverse-DNS name; empty when `ptrLookup` is off, nothing answered or the lookup failed. */
  main_host: Type.String(),
  /** Every address that answered at this hop (load-balanced paths give several). */
  addresses: Type.Array(Type.String()),
  sent: Type.Integer(),
  received: Type.Integer(),
  /** Percent of the hop's probes not answered, 0–100. */
  loss_percentage: Type.Number(),
  rtt: Nullable(TracerouteRttSchema),
  /** traceroute's marks of Destination Unreachable answers (`!H`, `!N`, `!X`, …). */
  annotations: Type.Array(Type.String()),
});
/** One hop of a traced route (see {@link TracerouteHopSchema}); times in ms. */
export type TracerouteHop = Static<typeof TracerouteHopSchema>;

/** RTT statistics of the final responding hop, ms; all null when the destination was not reached. */
export const FinalHopLatencySchema = Type.Object({
  avg: Nullable(Type.Number()),
  min: Nullable(Type.Number()),
  max: Nullable(Type.Number()),
  stdDev: Nullable(Type.Number()),
});

/** Why a trace stopped (the hosted API's `truncationReason`). */
export const TRUNCATION_REASONS = [
  'destinationReached',
  'maxHops',
  'maxUnknownHops',
  'timeout',
  'unreachable',
  'sendError',
] as const;

/** The traced route (the hosted API's `tracerouteCheckResult.response`). */
export const TracerouteResponseSchema = Type.Object({
  hostname: Type.String(),
  resolvedIp: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  ipFamily: Type.String(),
  maxHops: Type.Integer(),
  totalHops: Type.Integer(),
  destinationReached: Type.Boolean(),
  truncationReason: Nullable(literals(TRUNCATION_REASONS)),
  probeProtocol: literals(TRACEROUTE_PROTOCOLS),
  /** The socket the probes used: `datagram` (unprivileged) or `raw` (CAP_NET_RAW). */
  socketType: Nullable(Type.String()),
  finalHopLatency: FinalHopLatencySchema,
  hops: Type.Array(TracerouteHopSchema),
});
/** The traced route of a TRACEROUTE run (see {@link TracerouteResponseSchema}). */
export type TracerouteResponse = Static<typeof TracerouteResponseSchema>;

/**
 * TRACEROUTE part of a result (docs/checks.md, "TRACEROUTE"), shaped as the hosted API's
 * `tracerouteCheckResult`: the summary, what was asked and the route (`response`, null when the host did not
 * resolve or no probe could be sent).
 */
export const TracerouteCheckResultSchema = Type.Object({
  totalHops: Type.Integer(),
  destinationReached: Type.Boolean(),
  finalHopLatency: FinalHopLatencySchema,
  /** Milliseconds: resolving the host, and the whole trace. */
  timingPhases: Type.Object({ dns: Type.Number(), total: Type.Number() }),
  /** Why no trace ran (name resolution, socket), in one line; null when one did. */
  requestError: Nullable(Type.String()),
  request: Type.Object({
    url: Type.String(),
    protocol: Type.String(),
    port: Nullable(Type.Integer()),
    ipFamily: Type.String(),
    maxHops: Type.Integer(),
    maxUnknownHops: Type.Integer(),
    ptrLookup: Type.Boolean(),
    timeout: Type.Integer(),
  }),
  response: Nullable(TracerouteResponseSchema),
});
/** The TRACEROUTE part of a result (see {@link TracerouteCheckResultSchema}); times in ms. */
export type TracerouteCheckResult = Static<typeof TracerouteCheckResultSchema>;
