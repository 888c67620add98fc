import { type Static, Type } from '@sinclair/typebox';
import { AssertionSchema } from './assertion.js';
import {
  AGENTIC_REPAIR_MODES,
  API_BODY_TYPES,
  API_METHODS,
  CHECK_TYPES,
  DNS_PROTOCOLS,
  DNS_RECORD_TYPES,
  GRPC_MODES,
  IP_FAMILIES,
  RETRY_STRATEGY_TYPES,
  TRIGGER_SOURCES,
} from './enums.js';
import { literals } from '../common/literals.js';

/** The ICMP request of a check (docs/checks.md, "ICMP"). */
export const IcmpRequestSchema = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 2048 }),
  ipFamily: literals(IP_FAMILIES),
  pingCount: Type.Integer({ minimum: 1, maximum: 50 }),
  assertions: Type.Array(AssertionSchema),
});
/** The ICMP request of a job (see {@link IcmpRequestSchema}): `pingCount` 1–50. */
export type IcmpRequest = Static<typeof IcmpRequestSchema>;

/** A variable as a job carries it: already merged (check over group over account). */
export const JobVariableSchema = Type.Object({
  key: Type.String(),
  value: Type.String(),
  secret: Type.Boolean(),
});
/** A variable as a job carries it, already merged (see {@link JobVariableSchema}); `secret` ones are scrubbed from every output. */
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
/** What the executor needs of the check (see {@link JobCheckSchema}); thresholds in milliseconds and percent, null for none. */
export type JobCheck = Static<typeof JobCheckSchema>;

/** A header or query parameter of an API request. `{{VAR}}` in `key`/`value` is interpolated at run time. */
export const KeyValueSchema = Type.Object({
  key: Type.String({ maxLength: 1024 }),
  value: Type.String({ maxLength: 131_072 }),
});
/** A header or query parameter of an API request (see {@link KeyValueSchema}); `{{VAR}}` interpolated at run time. */
export type KeyValue = Static<typeof KeyValueSchema>;

/**
 * The API request of a check as a job carries it: group `apiCheckDefaults` already applied by
 * the service (docs/checks.md, "API"). `url`, header and query values, `body` and
 * `basicAuth` may hold `{{VAR}}` placeholders, interpolated by the agent from the job's variables.
 */
export const ApiRequestSchema = Type.Object({
  method: literals(API_METHODS),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  headers: Type.Array(KeyValueSchema),
  queryParameters: Type.Array(KeyValueSchema),
  body: Type.String(),
  bodyType: literals(API_BODY_TYPES),
  basicAuth: Type.Union([Type.Object({ username: Type.String(), password: Type.String() }), Type.Null()]),
  followRedirects: Type.Boolean(),
  skipSSL: Type.Boolean(),
  ipFamily: literals(IP_FAMILIES),
  assertions: Type.Array(AssertionSchema),
});
/** The API request of a job, group defaults applied (see {@link ApiRequestSchema}). */
export type ApiRequest = Static<typeof ApiRequestSchema>;

/**
 * The retry strategy a job runs under, resolved by the service (check's own, else its group's
 * unless FALLBACK; the deprecated `doubleCheck: true` without one is SINGLE_RETRY). Seconds.
 */
export const JobRetryStrategySchema = Type.Object({
  type: literals(RETRY_STRATEGY_TYPES),
  baseBackoffSeconds: Type.Number({ minimum: 0 }),
  maxRetries: Type.Integer({ minimum: 0 }),
  maxDurationSeconds: Type.Number({ minimum: 0 }),
  sameRegion: Type.Boolean(),
  onlyOn: Type.Array(Type.Literal('NETWORK_ERROR')),
});
/** The retry strategy a job runs under (see {@link JobRetryStrategySchema}); durations in seconds. */
export type JobRetryStrategy = Static<typeof JobRetryStrategySchema>;

/** A setup or teardown script of an API check: inline (`LOCAL`) or a snippet's code. */
export const JobScriptSchema = Type.Object({
  source: literals(['LOCAL', 'SNIPPET'] as const),
  /** The snippet's id; null for a local script. */
  snippetId: Type.Union([Type.Integer(), Type.Null()]),
  /** For logs and errors: `setup script`, `snippet "login" (3)`. */
  name: Type.String(),
  code: Type.String({ maxLength: 131_072 }),
});
/** A setup or teardown script of an API job (see {@link JobScriptSchema}); `code` at most 131072 characters. */
export type JobScript = Static<typeof JobScriptSchema>;

/** The client certificate (mTLS) stored for the request's host; PEM strings. Never in results. */
export const JobClientCertificateSchema = Type.Object({
  /** The stored host pattern that matched: `api.example.com` or `*.example.com`. */
  host: Type.String(),
  cert: Type.String(),
  key: Type.String(),
  ca: Type.Union([Type.String(), Type.Null()]),
  passphrase: Type.Union([Type.String(), Type.Null()]),
});
/** The client certificate (mTLS) of a job's host (see {@link JobClientCertificateSchema}); PEM strings, never in results. */
export type JobClientCertificate = Static<typeof JobClientCertificateSchema>;

/**
 * What API jobs carry beyond the base job. Optional on the wire so older
 * uptime jobs stay valid; the service always sets them for API checks.
 */
export const JobRunExtrasSchema = Type.Object({
  setupScript: Type.Optional(Type.Union([JobScriptSchema, Type.Null()])),
  tearDownScript: Type.Optional(Type.Union([JobScriptSchema, Type.Null()])),
  clientCertificate: Type.Optional(Type.Union([JobClientCertificateSchema, Type.Null()])),
  retryStrategy: Type.Optional(Type.Union([JobRetryStrategySchema, Type.Null()])),
  /** Id shared by every attempt of one run (CHECK_RUN_ID of scripts); defaults to jobId. */
  checkRunId: Type.Optional(Type.String()),
  /** When the first attempt of this run was enqueued, ISO 8601: `maxDurationSeconds` counts from it. */
  runStartedAt: Type.Optional(Type.String()),
});

/** A job handed to an agent by `POST /v1/agent/jobs/claim` (docs/protocol.md). */
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
  ...JobRunExtrasSchema.properties,
});
/** A job as `POST /v1/agent/jobs/claim` hands it out (see {@link JobSchema}); `timeoutMs` and `leaseMs` in milliseconds. */
export type Job = Static<typeof JobSchema>;

/** The DNS request of a check (docs/checks.md, "DNS"). `nameServer` null: the system resolver's first. */
export const DnsRequestSchema = Type.Object({
  recordType: literals(DNS_RECORD_TYPES),
  query: Type.String({ minLength: 1, maxLength: 100 }),
  nameServer: Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()]),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: literals(DNS_PROTOCOLS),
  assertions: Type.Array(AssertionSchema),
});
/** The DNS request of a job (see {@link DnsRequestSchema}); `nameServer` null for the system resolver's first. */
export type DnsRequest = Static<typeof DnsRequestSchema>;

/** The TCP request of a check: `hostname` without scheme or port; optional `data` sent after connect. */
export const TcpRequestSchema = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 2048 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  data: Type.Union([Type.String({ maxLength: 65536 }), Type.Null()]),
  ipFamily: literals(IP_FAMILIES),
  assertions: Type.Array(AssertionSchema),
});
/** The TCP request of a job (see {@link TcpRequestSchema}): host, port 1–65535, optional `data` sent after connecting. */
export type TcpRequest = Static<typeof TcpRequestSchema>;

/** Most characters of a gRPC monitor's `protoContent`: 256 KiB. */
export const GRPC_MAX_PROTO_CHARS = 262_144;
/** Most characters of a gRPC monitor's request `message` (JSON): 64 KiB. */
export const GRPC_MAX_MESSAGE_CHARS = 65_536;

/** A metadata entry a gRPC monitor sends; `{{VAR}}` filled in by the agent. */
export const GrpcMetadataSchema = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 256 }),
  value: Type.String({ maxLength: 8192 }),
});

/**
 * The gRPC settings of a monitor's request (docs/checks.md, "gRPC"). BEHAVIOR calls `method`
 * (`/pkg.Service/Method`, or `Method` of `serviceDefinition` `pkg.Service`) with `message` (JSON) using the
 * types of `protoContent`, or of the server's reflection when it is empty; HEALTH calls
 * `grpc.health.v1.Health/Check` for `service` ('' the whole server).
 */
export const GrpcConfigSchema = Type.Object({
  mode: literals(GRPC_MODES),
  tls: Type.Boolean(),
  metadata: Type.Array(GrpcMetadataSchema, { maxItems: 64 }),
  serviceDefinition: Type.String({ maxLength: 1024 }),
  method: Type.String({ maxLength: 1024 }),
  protoContent: Type.String({ maxLength: GRPC_MAX_PROTO_CHARS }),
  message: Type.String({ maxLength: GRPC_MAX_MESSAGE_CHARS }),
  service: Type.String({ maxLength: 1024 }),
});
/** The gRPC settings of a job (see {@link GrpcConfigSchema}). */
export type GrpcConfig = Static<typeof GrpcConfigSchema>;

/**
 * The gRPC request of a monitor: `url` a host (name or IP literal, no scheme), `port` a number or a
 * `{{VAR}}` template the agent fills in, `timeout` seconds for the whole call, `skipSSL` accepts any
 * certificate when `grpcConfig.tls` is on.
 */
export const GrpcRequestSchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  port: Type.Union([
    Type.Integer({ minimum: 1, maximum: 65535 }),
    Type.String({ minLength: 1, maxLength: 256 }),
  ]),
  ipFamily: literals(IP_FAMILIES),
  skipSSL: Type.Boolean(),
  timeout: Type.Integer({ minimum: 1, maximum: 30 }),
  grpcConfig: GrpcConfigSchema,
  assertions: Type.Array(AssertionSchema),
});
/** The gRPC request of a job (see {@link GrpcRequestSchema}); `timeout` in seconds. */
export type GrpcRequest = Static<typeof GrpcRequestSchema>;

/** The URL request of a monitor: GET only (docs/checks.md, "URL"). */
export const UrlRequestSchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  followRedirects: Type.Boolean(),
  skipSSL: Type.Boolean(),
  ipFamily: literals(IP_FAMILIES),
  assertions: Type.Array(AssertionSchema),
});

/** A dependency file of a script check: a relative path and its UTF-8 content. */
export const JobDependencySchema = Type.Object({
  path: Type.String({ minLength: 1, maxLength: 1024 }),
  content: Type.String(),
});

/**
 * The request of a BROWSER or MULTI_STEP job (docs/checks.md, "Browser, multi-step and Playwright check suites"): the script and its
 * dependency files as stored; `sslCheckDomain` whose certificate is checked, or null.
 */
export const BrowserRequestSchema = Type.Object({
  script: Type.String({ maxLength: 131_072 }),
  dependencies: Type.Array(JobDependencySchema, { maxItems: 100 }),
  sslCheckDomain: Type.Union([Type.String(), Type.Null()]),
});
/** The request of a BROWSER or MULTI_STEP job (see {@link BrowserRequestSchema}): script, dependency files, `sslCheckDomain`. */
export type BrowserRequest = Static<typeof BrowserRequestSchema>;

/**
 * The request of a PLAYWRIGHT job, a Playwright check suite (docs/checks.md, "Browser, multi-step and
 * Playwright check suites"): the project's files, and its spec inline (`script`) or by path (`scriptPath`).
 */
export const SuiteRequestSchema = Type.Object({
  script: Type.Union([Type.String({ maxLength: 131_072 }), Type.Null()]),
  scriptPath: Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Null()]),
  dependencies: Type.Array(JobDependencySchema, { maxItems: 100 }),
  sslCheckDomain: Type.Union([Type.String(), Type.Null()]),
});
/** The request of a PLAYWRIGHT job (see {@link SuiteRequestSchema}): its spec inline (`script`) or by path (`scriptPath`). */
export type SuiteRequest = Static<typeof SuiteRequestSchema>;

/** Most characters of an AGENTIC check's prompt (the hosted API's limit). */
export const AGENTIC_MAX_PROMPT_CHARS = 10_000;
/** Most characters of an AGENTIC check's stored script, as of a browser check's. */
export const AGENTIC_MAX_SCRIPT_CHARS = 131_072;

/**
 * The request of an AGENTIC job (docs/checks.md, "Agentic"): a goal in words that becomes a Playwright script.
 * - `prompt`: the goal, what the check is given, what counts as success and failure (≤ 10,000 characters).
 *   `{{NAME}}` names a variable; the job's `environmentVariables` hold only the variables the prompt names.
 * - `script`: the stored script (a browser-check script: `page` and `expect` from `@playwright/test`), or null
 *   before a run made one; `scriptVersion` its version (0 when null), so that the service applies a script
 *   change only over the version it was made from.
 * - `repairMode`: what the service does with a verified repair (the agent reports it either way).
 * - `skills`: extra tool groups the model may use beyond the browser's (the hosted API's
 *   `agentRuntime.skills`); unknown ones are ignored with a run-log warning.
 * - `maxModelCalls`: the most chat-completion calls one run may make (exploration or repair); the run's
 *   `timeoutMs` bounds it in time.
 */
export const AgenticRequestSchema = Type.Object({
  prompt: Type.String({ minLength: 1, maxLength: AGENTIC_MAX_PROMPT_CHARS }),
  script: Type.Union([Type.String({ maxLength: AGENTIC_MAX_SCRIPT_CHARS }), Type.Null()]),
  scriptVersion: Type.Integer({ minimum: 0 }),
  repairMode: literals(AGENTIC_REPAIR_MODES),
  skills: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 }),
  maxModelCalls: Type.Integer({ minimum: 1, maximum: 200 }),
});
/** The request of an AGENTIC job (see {@link AgenticRequestSchema}). */
export type AgenticRequest = Static<typeof AgenticRequestSchema>;
