/**
 * Enumerations shared by the agent and the service, in the spec's own words
 * (docs/api.md, "Resources and their fields").
 */

/** Check types of the spec's `checkType` enumeration. */
export const CHECK_TYPES = [
  'AGENTIC',
  'API',
  'BROWSER',
  'HEARTBEAT',
  'ICMP',
  'MULTI_STEP',
  'TCP',
  'PLAYWRIGHT',
  'URL',
  'DNS',
  'GRPC',
  'SSL',
  'TRACEROUTE',
] as const;
/** One of {@link CHECK_TYPES}: `API`, `BROWSER`, `ICMP`, … */
export type CheckType = (typeof CHECK_TYPES)[number];

/** Check types an agent runs in the `uptime` job class (docs/protocol.md). */
const UPTIME_CHECK_TYPES = [
  'ICMP',
  'DNS',
  'TCP',
  'URL',
  'SSL',
  'TRACEROUTE',
  'GRPC',
] as const satisfies readonly CheckType[];

/** Job classes: a location has one queue per class (docs/protocol.md). */
export const JOB_CLASSES = ['uptime', 'main'] as const;
/** One of {@link JOB_CLASSES}: `uptime` (ICMP, DNS, TCP, URL, SSL, TRACEROUTE, gRPC jobs) or `main` (every other type; see {@link jobClassOf}). */
export type JobClass = (typeof JOB_CLASSES)[number];

/** The job class a check type is queued in. */
export function jobClassOf(checkType: CheckType): JobClass {
  return (UPTIME_CHECK_TYPES as readonly string[]).includes(checkType) ? 'uptime' : 'main';
}

/** Data-center locations the spec allows in `locations`. */
export const LOCATIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'sa-east-1',
  'eu-west-1',
  'eu-central-1',
  'eu-west-2',
  'eu-west-3',
  'eu-north-1',
  'eu-south-1',
  'me-south-1',
  'ap-southeast-1',
  'ap-northeast-1',
  'ap-east-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-south-1',
  'af-south-1',
] as const;
/** One of {@link LOCATIONS}: a data-center location name such as `eu-west-1`. */
export type Location = (typeof LOCATIONS)[number];

/** Runtime ids a check may pin with `runtimeId`. */
export const RUNTIME_IDS = [
  '2026.04',
  '2025.04',
  '2024.09',
  '2024.02',
  '2023.09',
  '2023.02',
  '2022.10',
] as const;
/** One of {@link RUNTIME_IDS}: a runtime named by year and month, such as `2026.04`. */
export type RuntimeId = (typeof RUNTIME_IDS)[number];

/**
 * Runtime of a job or check that names none (`runtimeId` null): the newest of {@link RUNTIME_IDS}, the one
 * the agent image ships (docs/api.md, "Versioning" 3). The service sets a runtime on every main job it
 * builds; an agent falls back to this one for older jobs that carry none.
 */
export const DEFAULT_RUNTIME_ID = '2026.04' satisfies RuntimeId;

/** Trigger sources of a check session (docs/api.md, "Check session"). */
export const TRIGGER_SOURCES = [
  'CLI_DEPLOY',
  'DEPLOYMENT',
  'DEPLOYMENT_CACHE_WARMER',
  'EDITOR',
  'GROUP_RUN_ALL',
  'LEGACY_TRIGGER',
  'SCHEDULER',
  'SCHEDULE_NOW',
  'TEST_NO_RECORD',
  'TEST_RECORD',
  'TRIGGER_NO_RECORD',
  'TRIGGER_RECORD',
  'TRIGGER_API',
] as const;
/** One of {@link TRIGGER_SOURCES}: what started a check session (`SCHEDULER`, `TRIGGER_API`, …). */
export type TriggerSource = (typeof TRIGGER_SOURCES)[number];

/** Final statuses of a check session. */
export const CHECK_SESSION_STATUSES = ['FAILED', 'PASSED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED'] as const;

/** Status of one run (docs/checks.md, "Status of a run"). */
export const RUN_STATUSES = ['PASSED', 'FAILED', 'DEGRADED'] as const;
/** One of {@link RUN_STATUSES}: `PASSED`, `FAILED` or `DEGRADED`. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** IP families a check may ask for. */
export const IP_FAMILIES = ['IPv4', 'IPv6'] as const;
/** One of {@link IP_FAMILIES}: `IPv4` or `IPv6`. */
export type IpFamily = (typeof IP_FAMILIES)[number];

/** ICMP check frequencies in minutes (docs/api.md, Check `frequency`). */
export const ICMP_FREQUENCIES = [0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;

/** Assertion comparisons (docs/checks.md, "Assertions"). */
export const ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'HAS_KEY',
  'NOT_HAS_KEY',
  'HAS_VALUE',
  'NOT_HAS_VALUE',
  'IS_EMPTY',
  'NOT_EMPTY',
  'GREATER_THAN',
  'LESS_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
  'IS_NULL',
  'NOT_NULL',
] as const;
/** One of {@link ASSERTION_COMPARISONS}: how an assertion compares what it found with its `target`. */
export type AssertionComparison = (typeof ASSERTION_COMPARISONS)[number];

/** Assertion sources known to any check type; each executor accepts its own subset. */
export const ASSERTION_SOURCES = [
  'LATENCY',
  'JSON_RESPONSE',
  'RESPONSE_TIME',
  'RESPONSE_CODE',
  'TEXT_ANSWER',
  'JSON_ANSWER',
  'RESPONSE_DATA',
  'STATUS_CODE',
  'JSON_BODY',
  'HEADERS',
  'TEXT_BODY',
  // gRPC monitors: the call's status code
  'GRPC_STATUS',
  'CERTIFICATE',
  'CONNECTION',
  'TEXT_RESPONSE',
  'HOP_COUNT',
  'PACKET_LOSS',
] as const;
/** One of {@link ASSERTION_SOURCES}: what an assertion reads (`STATUS_CODE`, `JSON_BODY`, …). */
export type AssertionSource = (typeof ASSERTION_SOURCES)[number];

/** Assertion sources an ICMP check accepts. */
export const ICMP_ASSERTION_SOURCES = [
  'LATENCY',
  'JSON_RESPONSE',
] as const satisfies readonly AssertionSource[];

/** DNS record types a DNS check may query (docs/checks.md, "DNS"). */
export const DNS_RECORD_TYPES = [
  'A',
  'AAAA',
  'CNAME',
  'MX',
  'TXT',
  'SOA',
  'NS',
  'PTR',
  'SRV',
  'CAA',
  'HTTPS',
] as const;

/** Transport of a DNS query. */
export const DNS_PROTOCOLS = ['UDP', 'TCP'] as const;

/** Assertion sources per uptime check type (docs/checks.md). */
export const DNS_ASSERTION_SOURCES = [
  'RESPONSE_TIME',
  'RESPONSE_CODE',
  'TEXT_ANSWER',
  'JSON_ANSWER',
] as const satisfies readonly AssertionSource[];
/** Assertion sources a TCP check accepts (docs/checks.md, "TCP"). */
export const TCP_ASSERTION_SOURCES = [
  'RESPONSE_DATA',
  'RESPONSE_TIME',
] as const satisfies readonly AssertionSource[];
/** Assertion sources a URL monitor accepts: the status code only (docs/checks.md, "URL"). */
export const URL_ASSERTION_SOURCES = ['STATUS_CODE'] as const satisfies readonly AssertionSource[];
/** Assertion sources an API check accepts (docs/checks.md, "API"). */
export const API_ASSERTION_SOURCES = [
  'STATUS_CODE',
  'JSON_BODY',
  'HEADERS',
  'TEXT_BODY',
  'RESPONSE_TIME',
] as const satisfies readonly AssertionSource[];

/**
 * Assertion sources a gRPC monitor accepts (docs/checks.md, "gRPC"): `GRPC_STATUS` the status code (0 OK, 5
 * NOT_FOUND, …), `JSON_RESPONSE` a JSONPath over the response message as JSON, `HEADERS` a response metadata
 * entry named by `property`, `RESPONSE_TIME` ms.
 */
export const GRPC_ASSERTION_SOURCES = [
  'GRPC_STATUS',
  'JSON_RESPONSE',
  'HEADERS',
  'RESPONSE_TIME',
] as const satisfies readonly AssertionSource[];

/** What a gRPC monitor calls: `BEHAVIOR` a unary method, `HEALTH` the standard `grpc.health.v1.Health/Check`. */
export const GRPC_MODES = ['BEHAVIOR', 'HEALTH'] as const;
/** One of {@link GRPC_MODES}. */
export type GrpcMode = (typeof GRPC_MODES)[number];

/**
 * Assertion sources an SSL monitor accepts (docs/checks.md, "SSL"): CERTIFICATE and CONNECTION read a
 * field named by `property`, JSON_RESPONSE a JSONPath over the result's `response`, TEXT_RESPONSE a regex
 * over it as text, RESPONSE_TIME the handshake time in ms.
 */
export const SSL_ASSERTION_SOURCES = [
  'CERTIFICATE',
  'CONNECTION',
  'JSON_RESPONSE',
  'TEXT_RESPONSE',
  'RESPONSE_TIME',
] as const satisfies readonly AssertionSource[];

/**
 * Assertion sources a TRACEROUTE monitor accepts (docs/checks.md, "TRACEROUTE"): RESPONSE_TIME (and
 * LATENCY, the name the hosted API's Go SDK sends) read the final hop's RTT statistic named by `property`
 * (`avg`, `min`, `max`, `stdDev`), HOP_COUNT the hops recorded, PACKET_LOSS the last hop's loss in percent,
 * JSON_RESPONSE a JSONPath over the result's `response`.
 */
export const TRACEROUTE_ASSERTION_SOURCES = [
  'RESPONSE_TIME',
  'LATENCY',
  'HOP_COUNT',
  'PACKET_LOSS',
  'JSON_RESPONSE',
] as const satisfies readonly AssertionSource[];

/** Probe protocols of a TRACEROUTE monitor that Outpost's agents send (docs/checks.md, "TRACEROUTE"). */
export const TRACEROUTE_PROTOCOLS = ['ICMP', 'UDP'] as const;
/** One of {@link TRACEROUTE_PROTOCOLS}. */
export type TracerouteProtocol = (typeof TRACEROUTE_PROTOCOLS)[number];

/** HTTP methods of an API check (docs/checks.md, "API"). */
export const API_METHODS = ['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/** How an API check's `body` is sent (docs/checks.md, "API"). */
export const API_BODY_TYPES = ['JSON', 'FORM', 'RAW', 'GRAPHQL', 'NONE'] as const;
/** One of {@link API_BODY_TYPES}: how an API check's `body` is sent. */
export type ApiBodyType = (typeof API_BODY_TYPES)[number];

/** Retry strategy types (docs/api.md, "Retry strategy": FIXED is used; the rest from the field). */
export const RETRY_STRATEGY_TYPES = ['FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY', 'NO_RETRIES'] as const;
/** One of {@link RETRY_STRATEGY_TYPES}: the kind of a retry strategy. */
export type RetryStrategyType = (typeof RETRY_STRATEGY_TYPES)[number];

/**
 * Error codes that count as a network error for `onlyOn: ["NETWORK_ERROR"]`
 * (docs/checks.md, "API": these five only).
 */
export const NETWORK_ERROR_CODES = [
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ECONNREFUSED',
] as const;

/**
 * Start of `truncated.reason` on a passing run's result whose bulky details (logs, bodies, most headers) the
 * service dropped once it was older than `OUTPOST_PASSING_DETAIL_HOURS` (docs/architecture.md, "Store size").
 * Any other reason is the agent's: it cut the result to fit the size limit.
 */
export const DETAILS_DROPPED_REASON = 'passing run past OUTPOST_PASSING_DETAIL_HOURS';

/**
 * What an AGENTIC check does with a repair its agent made and verified (docs/checks.md, "Agentic"): `AUTO`
 * replaces the stored script with it; `REVIEW` keeps it for a person to apply or reject. The first script of a
 * check is stored in either mode.
 */
export const AGENTIC_REPAIR_MODES = ['AUTO', 'REVIEW'] as const;
/** One of {@link AGENTIC_REPAIR_MODES}. */
export type AgenticRepairMode = (typeof AGENTIC_REPAIR_MODES)[number];

/**
 * What an AGENTIC run did: `GENERATE` (no stored script: the model explored the site and wrote one), `REPLAY`
 * (the stored script ran, no model call), `REPAIR` (the stored script failed in a way it cannot explain: the
 * model diagnosed it and proposed a patch, verified by running it).
 */
export const AGENTIC_RUN_MODES = ['GENERATE', 'REPLAY', 'REPAIR'] as const;
/** One of {@link AGENTIC_RUN_MODES}. */
export type AgenticRunMode = (typeof AGENTIC_RUN_MODES)[number];
