import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './schema.js';
import { AgenticCheckResultSchema } from './agentic-result.js';
import { AssertionResultSchema } from './assertion.js';
import { BrowserCheckResultSchema } from './browser-result.js';
import { DnsCheckResultSchema } from './dns-result.js';
import { RUN_STATUSES } from './enums.js';
import { HttpCheckResultSchema } from './http-result.js';
import { TcpCheckResultSchema } from './tcp-result.js';
import { GrpcCheckResultSchema } from './grpc-result.js';
import { SslCheckResultSchema } from './ssl.js';
import { TracerouteCheckResultSchema } from './traceroute.js';
import { literals } from '../common/literals.js';

/** One echo request of an ICMP run. `rtt` in milliseconds; `ttl` as received. */
export const PingResultSchema = Type.Object({
  sequence: Type.Integer(),
  success: Type.Boolean(),
  rtt: Nullable(Type.Number()),
  ttl: Nullable(Type.Integer()),
});

/** Latency summary in milliseconds over the received replies. */
export const LatencySchema = Type.Object({
  min: Nullable(Type.Number()),
  avg: Nullable(Type.Number()),
  max: Nullable(Type.Number()),
  stdDev: Nullable(Type.Number()),
});
/** Latency summary over an ICMP run's replies, milliseconds, null without a reply (see {@link LatencySchema}). */
export type Latency = Static<typeof LatencySchema>;

/** ICMP part of a result (docs/checks.md, "ICMP": result part). */
export const IcmpCheckResultSchema = Type.Object({
  hostname: Type.String(),
  resolvedIp: Nullable(Type.String()),
  ipFamily: Type.String(),
  pingCount: Type.Integer(),
  /** ICMP payload size, bytes. */
  packetSize: Type.Integer(),
  packetsSent: Type.Integer(),
  packetsReceived: Type.Integer(),
  /** Percent, 0–100. */
  packetLoss: Type.Number(),
  latency: LatencySchema,
  /** Milliseconds spent resolving `hostname`; 0 for an IP literal. */
  dnsResolutionTime: Type.Number(),
  /** Which socket kind sent the packets: `datagram` (unprivileged) or `raw` (CAP_NET_RAW). */
  socketType: Nullable(literals(['datagram', 'raw'] as const)),
  pingResults: Type.Array(PingResultSchema),
});
/** The ICMP part of a result (see {@link IcmpCheckResultSchema}); `packetLoss` in percent, times in milliseconds. */
export type IcmpCheckResult = Static<typeof IcmpCheckResultSchema>;

/** One log line of a run. */
export const RunLogSchema = Type.Object({
  time: Type.String(),
  level: literals(['DEBUG', 'INFO', 'WARN', 'ERROR'] as const),
  msg: Type.String(),
});
/** One log line of a run (see {@link RunLogSchema}): ISO 8601 `time`, `level`, `msg`. */
export type RunLog = Static<typeof RunLogSchema>;

/**
 * The outcome an executor produces for one attempt. Agent-filled fields
 * (`runLocation`, `attempts`, `resultType`) are added by the dispatcher.
 * Times are ISO 8601; `responseTime` in milliseconds.
 */
export const RunOutcomeSchema = Type.Object({
  status: literals(RUN_STATUSES),
  /** The check failed (after `shouldFail` was applied). */
  hasFailures: Type.Boolean(),
  /** The agent could not run the check (bad job, missing capability, internal error). */
  hasErrors: Type.Boolean(),
  isDegraded: Type.Boolean(),
  overMaxResponseTime: Type.Boolean(),
  responseTime: Type.Number(),
  startedAt: Type.String(),
  stoppedAt: Type.String(),
  /** Why the run failed or errored, in one line; null when it passed. */
  errorMessage: Nullable(Type.String()),
  assertions: Type.Array(AssertionResultSchema),
  logs: Type.Array(RunLogSchema),
  icmpCheckResult: Type.Optional(IcmpCheckResultSchema),
  dnsCheckResult: Type.Optional(DnsCheckResultSchema),
  tcpCheckResult: Type.Optional(TcpCheckResultSchema),
  httpCheckResult: Type.Optional(HttpCheckResultSchema),
  browserCheckResult: Type.Optional(BrowserCheckResultSchema),
  grpcCheckResult: Type.Optional(GrpcCheckResultSchema),
  sslCheckResult: Type.Optional(SslCheckResultSchema),
  tracerouteCheckResult: Type.Optional(TracerouteCheckResultSchema),
  agenticCheckResult: Type.Optional(AgenticCheckResultSchema),
});
/** The outcome an executor produces for one attempt (see {@link RunOutcomeSchema}); `responseTime` in milliseconds. */
export type RunOutcome = Static<typeof RunOutcomeSchema>;

/** The body of `POST /v1/agent/jobs/{jobId}/result` (docs/protocol.md). */
export const CheckResultSchema = Type.Composite([
  RunOutcomeSchema,
  Type.Object({
    runLocation: Type.String(),
    attempts: Type.Integer({ minimum: 1 }),
    resultType: literals(['FINAL', 'ATTEMPT'] as const),
    artifacts: Type.Array(Type.Object({ name: Type.String(), sizeBytes: Type.Integer() })),
    /**
     * Present when the agent cut the result to fit the service's limit (MAX_RESULT_SIZE_BYTES):
     * why, the size before, and the JSON paths of what was cut (logs and bodies first; each cut
     * text ends `…[truncated N bytes]`).
     */
    truncated: Type.Optional(
      Type.Object({
        reason: Type.String(),
        originalSizeBytes: Type.Integer(),
        fields: Type.Array(Type.String()),
      }),
    ),
  }),
]);
/** The body of `POST /v1/agent/jobs/{jobId}/result` (see {@link CheckResultSchema}): at most MAX_RESULT_SIZE_BYTES of JSON. */
export type CheckResult = Static<typeof CheckResultSchema>;
