import { type Static, Type } from '@sinclair/typebox';
import { AssertionSchema } from './assertion.js';
import { CHECK_TYPES, DNS_PROTOCOLS, DNS_RECORD_TYPES, IP_FAMILIES, TRIGGER_SOURCES } from './enums.js';

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

/** The ICMP request of a check (reference/check-types.md, "ICMP"). */
export const IcmpRequestSchema = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 2048 }),
  ipFamily: literals(IP_FAMILIES),
  pingCount: Type.Integer({ minimum: 1, maximum: 50 }),
  assertions: Type.Array(AssertionSchema),
});
export type IcmpRequest = Static<typeof IcmpRequestSchema>;

/** A variable as a job carries it: already merged (check over group over account). */
export const JobVariableSchema = Type.Object({
  key: Type.String(),
  value: Type.String(),
  secret: Type.Boolean(),
});
export type JobVariable = Static<typeof JobVariableSchema>;

/**
 * What the executor needs of the check, resolved by the service.
 * Thresholds are in milliseconds and percent; null means "no threshold".
 */
export const JobCheckSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  checkType: literals(CHECK_TYPES),
  /** The type-specific request; its shape depends on `checkType`. */
  request: Type.Record(Type.String(), Type.Unknown()),
  shouldFail: Type.Boolean(),
  degradedResponseTime: Type.Union([Type.Number(), Type.Null()]),
  maxResponseTime: Type.Union([Type.Number(), Type.Null()]),
  degradedPacketLossThreshold: Type.Union([Type.Number(), Type.Null()]),
  maxPacketLossThreshold: Type.Union([Type.Number(), Type.Null()]),
  runtimeId: Type.Union([Type.String(), Type.Null()]),
});
export type JobCheck = Static<typeof JobCheckSchema>;

/** A job handed to an agent by `POST /v1/agent/jobs/claim` (design.md §2). */
export const JobSchema = Type.Object({
  jobId: Type.String(),
  accountId: Type.String(),
  check: JobCheckSchema,
  environmentVariables: Type.Array(JobVariableSchema),
  runLocation: Type.String(),
  runSource: literals(TRIGGER_SOURCES),
  checkSessionId: Type.Union([Type.String(), Type.Null()]),
  /** 1 for the first attempt of a run. */
  attempt: Type.Integer({ minimum: 1 }),
  /** Hard limit of the run, milliseconds. */
  timeoutMs: Type.Integer({ minimum: 1 }),
  /** Lease length granted at claim or renewal, milliseconds. */
  leaseMs: Type.Integer({ minimum: 1 }),
});
export type Job = Static<typeof JobSchema>;

/** The DNS request of a check (reference/check-types.md, "DNS"). `nameServer` null: the system resolver's first. */
export const DnsRequestSchema = Type.Object({
  recordType: literals(DNS_RECORD_TYPES),
  query: Type.String({ minLength: 1, maxLength: 100 }),
  nameServer: Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()]),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: literals(DNS_PROTOCOLS),
  assertions: Type.Array(AssertionSchema),
});
export type DnsRequest = Static<typeof DnsRequestSchema>;

/** The TCP request of a check: `hostname` without scheme or port; optional `data` sent after connect. */
export const TcpRequestSchema = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 2048 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  data: Type.Union([Type.String({ maxLength: 65536 }), Type.Null()]),
  ipFamily: literals(IP_FAMILIES),
  assertions: Type.Array(AssertionSchema),
});
export type TcpRequest = Static<typeof TcpRequestSchema>;

/** The URL request of a monitor: GET only (reference/check-types.md, "URL"). */
export const UrlRequestSchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  followRedirects: Type.Boolean(),
  skipSSL: Type.Boolean(),
  ipFamily: literals(IP_FAMILIES),
  assertions: Type.Array(AssertionSchema),
});
export type UrlRequest = Static<typeof UrlRequestSchema>;
