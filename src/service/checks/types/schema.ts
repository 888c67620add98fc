import { type Static, type TObject, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import {
  API_ASSERTION_SOURCES,
  API_BODY_TYPES,
  API_METHODS,
  ASSERTION_COMPARISONS,
  CHECK_TYPES,
  DNS_ASSERTION_SOURCES,
  DNS_PROTOCOLS,
  DNS_RECORD_TYPES,
  TCP_ASSERTION_SOURCES,
  URL_ASSERTION_SOURCES,
  ICMP_ASSERTION_SOURCES,
  ICMP_FREQUENCIES,
  IP_FAMILIES,
  LOCATIONS,
  RUNTIME_IDS,
} from '../../../protocol/index.js';
import { IntegerEnum, Nullable, StringEnum } from '../../platform/http/schema-helpers.js';

const strict = { additionalProperties: false } as const;

/** Environment variable item (docs/api.md, "Environment variable"). */
export const EnvironmentVariableSchema = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
    value: Type.String({ maxLength: 131_072 }),
    locked: Type.Optional(Type.Boolean({ default: false })),
    secret: Type.Optional(Type.Boolean({ default: false })),
  },
  strict,
);

/**
 * Alert settings (docs/api.md, "Alert settings"; docs/alerting.md, "Alert settings"): the field's
 * ranges — `failedRunThreshold` 1–5, `minutesFailingThreshold` 5, 10, 15 or 30, reminders `amount`
 * 0–5 or 100000 (unlimited) every `interval` minutes, a parallel-run threshold of 10–100 % in steps of 10.
 */
export const AlertSettingsSchema = Type.Object(
  {
    escalationType: Type.Optional(StringEnum(['RUN_BASED', 'TIME_BASED'] as const)),
    runBasedEscalation: Type.Optional(
      Type.Object({ failedRunThreshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })) }, strict),
    ),
    timeBasedEscalation: Type.Optional(
      Type.Object({ minutesFailingThreshold: Type.Optional(IntegerEnum([5, 10, 15, 30] as const)) }, strict),
    ),
    reminders: Type.Optional(
      Type.Object(
        {
          amount: Type.Optional(IntegerEnum([0, 1, 2, 3, 4, 5, 100_000] as const)),
          interval: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440 })),
        },
        strict,
      ),
    ),
    parallelRunFailureThreshold: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          percentage: Type.Optional(Type.Integer({ minimum: 10, maximum: 100, multipleOf: 10 })),
        },
        strict,
      ),
    ),
  },
  strict,
);

/** Retry strategy (docs/api.md, "Retry strategy"; types from docs/checks.md). */
export const RetryStrategySchema = Type.Object(
  {
    type: StringEnum(['FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY', 'NO_RETRIES'] as const),
    baseBackoffSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
    sameRegion: Type.Optional(Type.Boolean()),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    maxDurationSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
    onlyOn: Type.Optional(Type.Array(StringEnum(['NETWORK_ERROR'] as const), { maxItems: 1 })),
  },
  strict,
);

/** Incident trigger (docs/api.md, "Incident trigger"). */
export const TriggerIncidentSchema = Type.Object(
  {
    serviceId: Type.String({ maxLength: 64 }),
    severity: StringEnum(['MINOR', 'MEDIUM', 'MAJOR', 'CRITICAL'] as const),
    name: Type.String({ maxLength: 255 }),
    description: Type.String({ maxLength: 10_000 }),
    notifySubscribers: Type.Boolean(),
  },
  strict,
);

/** Heartbeat object of an ICMP check: the fields of docs/checks.md, "ICMP". */
export const HeartbeatSchema = Type.Object(
  {
    period: Type.Optional(Type.Integer({ minimum: 1 })),
    periodUnit: Type.Optional(StringEnum(['seconds', 'minutes', 'hours', 'days'] as const)),
    grace: Type.Optional(Type.Integer({ minimum: 0 })),
    graceUnit: Type.Optional(StringEnum(['seconds', 'minutes', 'hours', 'days'] as const)),
  },
  strict,
);

/** An assertion whose `source` is one of `sources` (docs/checks.md, "Assertions": `source`, `property`, `comparison`, `target`). */
function assertionSchema(sources: readonly string[]) {
  return Type.Object(
    {
      source: StringEnum(sources),
      property: Type.Optional(Type.String({ maxLength: 1024 })),
      comparison: StringEnum(ASSERTION_COMPARISONS),
      target: Type.Optional(Type.String({ maxLength: 4096 })),
      regex: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
    },
    strict,
  );
}

const assertions = (sources: readonly string[]) =>
  Type.Optional(Type.Array(assertionSchema(sources), { maxItems: 100, default: [] }));

/** ICMP request (docs/api.md, "ICMP-specific fields"; limits from docs/checks.md). */
export const IcmpRequestBodySchema = Type.Object(
  {
    hostname: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\s/]+$' }),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    pingCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    assertions: assertions(ICMP_ASSERTION_SOURCES),
  },
  strict,
);

/** DNS request (docs/checks.md, "DNS"). */
export const DnsRequestBodySchema = Type.Object(
  {
    recordType: StringEnum(DNS_RECORD_TYPES),
    query: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\s]+$' }),
    nameServer: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/]+$', default: null })),
    ),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: 53 })),
    protocol: Type.Optional(StringEnum(DNS_PROTOCOLS, { default: 'UDP' })),
    assertions: assertions(DNS_ASSERTION_SOURCES),
  },
  strict,
);

/** TCP request (docs/checks.md, "TCP"): `hostname` without scheme or port. */
export const TcpRequestBodySchema = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^[^\\s/:]+$|^[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*$',
    }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    data: Type.Optional(Nullable(Type.String({ maxLength: 65_536, default: null }))),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    assertions: assertions(TCP_ASSERTION_SOURCES),
  },
  strict,
);

/** URL request (docs/checks.md, "URL"): GET only, http or https. */
export const UrlRequestBodySchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' }),
    method: Type.Optional(StringEnum(['GET'] as const, { default: 'GET' })),
    followRedirects: Type.Optional(Type.Boolean({ default: true })),
    skipSSL: Type.Optional(Type.Boolean({ default: false })),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    assertions: assertions(URL_ASSERTION_SOURCES),
  },
  strict,
);

/**
 * A header or query parameter of an API check: `key` (1–1024 characters), `value` (at most 8192),
 * `locked` (UI masking only). `{{VAR}}` in either is interpolated by the agent.
 */
export const ApiKeyValueSchema = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    value: Type.String({ maxLength: 8192 }),
    locked: Type.Optional(Type.Boolean()),
  },
  strict,
);

/** HTTP basic authentication of an API check (also a group's `apiCheckDefaults.basicAuth`). */
export const BasicAuthSchema = Type.Object(
  { username: Type.String({ maxLength: 1024 }), password: Type.String({ maxLength: 1024 }) },
  strict,
);

type BasicAuth = Static<typeof BasicAuthSchema>;

/**
 * An API check's `url`: http or https, or starting with a `{{VAR}}` placeholder
 * (`{{BASE_URL}}/health`, `{{GROUP_BASE_URL}}/users`) that the agent interpolates. No
 * whitespace, except inside `{{ … }}`.
 */
export const API_URL_PATTERN =
  '^(?:[Hh][Tt][Tt][Pp][Ss]?://|(?=\\{\\{))(?:[^\\s{]|\\{\\{[^{}\\r\\n]*\\}\\}|\\{)+$';

/** Most characters of an API check's request `body`: 128 Ki, as scripts. */
export const API_BODY_MAX_LENGTH = 131_072;

/**
 * API request (docs/checks.md, "API"): `method` (default GET), `url`, `headers`,
 * `queryParameters`, `body` (default ''), `bodyType` (default NONE), `basicAuth` (default null),
 * `followRedirects` (true), `skipSSL` (false), `ipFamily` (IPv4), `assertions` (API sources).
 */
export const ApiRequestBodySchema = Type.Object(
  {
    method: Type.Optional(StringEnum(API_METHODS, { default: 'GET' })),
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: API_URL_PATTERN }),
    headers: Type.Optional(Type.Array(ApiKeyValueSchema, { maxItems: 100, default: [] })),
    queryParameters: Type.Optional(Type.Array(ApiKeyValueSchema, { maxItems: 100, default: [] })),
    body: Type.Optional(Type.String({ maxLength: API_BODY_MAX_LENGTH, default: '' })),
    bodyType: Type.Optional(StringEnum(API_BODY_TYPES, { default: 'NONE' })),
    basicAuth: Type.Optional({ ...Nullable(BasicAuthSchema), default: null } as TUnsafe<BasicAuth | null>),
    followRedirects: Type.Optional(Type.Boolean({ default: true })),
    skipSSL: Type.Optional(Type.Boolean({ default: false })),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    assertions: assertions(API_ASSERTION_SOURCES),
  },
  strict,
);

const responseTime = (dflt: number, maximum = 300_000) =>
  Type.Optional(Nullable(Type.Number({ minimum: 0, maximum, default: dflt })));
const packetLoss = (dflt: number) =>
  Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100, default: dflt })));

/** Fields every check type shares (docs/api.md, "Check (fields shared by all check types)"). */
export const sharedCheckFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  activated: Type.Optional(Type.Boolean({ default: true })),
  muted: Type.Optional(Type.Boolean({ default: false })),
  doubleCheck: Type.Optional(Type.Boolean({ default: true })),
  shouldFail: Type.Optional(Type.Boolean({ default: false })),
  locations: Type.Optional(
    Nullable(Type.Array(StringEnum(LOCATIONS), { maxItems: LOCATIONS.length, uniqueItems: true })),
  ),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 100 })),
  alertSettings: Type.Optional(AlertSettingsSchema),
  useGlobalAlertSettings: Type.Optional(Type.Boolean({ default: true })),
  groupId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  groupOrder: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  runtimeId: Type.Optional(Nullable(StringEnum(RUNTIME_IDS))),
  alertChannelSubscriptions: Type.Optional(
    Type.Array(
      Type.Object({ alertChannelId: Type.Integer({ minimum: 1 }), activated: Type.Boolean() }, strict),
      {
        maxItems: 100,
      },
    ),
  ),
  retryStrategy: Type.Optional(Nullable(RetryStrategySchema)),
  triggerIncident: Type.Optional(Nullable(TriggerIncidentSchema)),
  runParallel: Type.Optional(Type.Boolean({ default: false })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  frequencyOffset: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  scriptPath: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
  sslCheckDomain: Type.Optional(Nullable(Type.String({ maxLength: 253 }))),
  environmentVariables: Type.Optional(Nullable(Type.Array(EnvironmentVariableSchema, { maxItems: 100 }))),
  setupSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  tearDownSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  localSetupScript: Type.Optional(Nullable(Type.String({ maxLength: 131_072 }))),
  localTearDownScript: Type.Optional(Nullable(Type.String({ maxLength: 131_072 }))),
  privateLocations: Type.Optional(
    Nullable(
      Type.Array(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }), { maxItems: 100, uniqueItems: true }),
    ),
  ),
};

/** What every create body holds (each type's create schema adds its own fields): what the create route reads. */
export type SharedCheckFields = Static<TObject<typeof sharedCheckFields>>;

/** Body of `POST /v1/checks/icmp`: required `name`, `request`, `heartbeat`, `script` (docs/api.md, "Checks"). */
export const CreateIcmpCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    frequency: Type.Optional(IntegerEnum(ICMP_FREQUENCIES, { default: 10 })),
    request: IcmpRequestBodySchema,
    heartbeat: HeartbeatSchema,
    script: Type.String({ maxLength: 131_072 }),
    degradedResponseTime: responseTime(10_000),
    maxResponseTime: responseTime(20_000),
    degradedPacketLossThreshold: packetLoss(10),
    maxPacketLossThreshold: packetLoss(20),
  },
  strict,
);

/** Frequencies (minutes) of checks other than ICMP and browser: 0 (with a 10/20/30 s offset) only for TCP and API. */
export const TCP_FREQUENCIES = [0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
export const MINUTE_FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;

/**
 * Create body of an uptime check other than ICMP: the shared fields, the
 * type's `request`, and its response-time defaults (docs/checks.md).
 * Unlike ICMP, the public API does not list `heartbeat`/`script` for these, so they are not
 * accepted (docs/checks.md, "ICMP").
 */
function uptimeCreateBody<T extends TSchema>(
  request: T,
  frequencies: readonly number[],
  degradedMs: number,
  maxMs: number,
) {
  return Type.Object(
    {
      ...sharedCheckFields,
      frequency: Type.Optional(IntegerEnum(frequencies, { default: 10 })),
      request,
      degradedResponseTime: responseTime(degradedMs),
      maxResponseTime: responseTime(maxMs),
    },
    strict,
  );
}

/** `POST /v1/checks/dns`: degraded 500 ms, max 1000 ms by default. */
export const CreateDnsCheckBody = uptimeCreateBody(DnsRequestBodySchema, MINUTE_FREQUENCIES, 500, 1000);
/** `POST /v1/checks/tcp`: degraded 4000 ms, max 5000 ms by default; sub-minute frequency allowed. */
export const CreateTcpCheckBody = uptimeCreateBody(TcpRequestBodySchema, TCP_FREQUENCIES, 4000, 5000);
/** `POST /v1/checks/url`: degraded 3000 ms, max 5000 ms by default. */
export const CreateUrlCheckBody = uptimeCreateBody(UrlRequestBodySchema, MINUTE_FREQUENCIES, 3000, 5000);

/** Longest `degradedResponseTime` / `maxResponseTime` of an API check, ms: its run limit (docs/checks.md, "API"). */
export const API_RESPONSE_TIME_LIMIT_MS = 30_000;

/**
 * `POST /v1/checks/api`: the shared fields and the API `request`; degraded 10 000 ms, max
 * 20 000 ms by default, both at most 30 000 (the run limit); sub-minute frequency allowed
 * (docs/api.md, "frequencyOffset" rule 1). No `heartbeat`/`script`, as for the other uptime-style types.
 */
export const CreateApiCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    frequency: Type.Optional(IntegerEnum(TCP_FREQUENCIES, { default: 10 })),
    request: ApiRequestBodySchema,
    degradedResponseTime: responseTime(10_000, API_RESPONSE_TIME_LIMIT_MS),
    maxResponseTime: responseTime(20_000, API_RESPONSE_TIME_LIMIT_MS),
  },
  strict,
);

/**
 * Longest run of a browser or multi-step check, seconds, and its default: 240 s, the field's
 * figure, configurable per check up to it (docs/checks.md, "Browser, multi-step and Playwright check suites").
 */
export const BROWSER_TIMEOUT_SECONDS = 240;

/**
 * Longest run of a Playwright check suite, seconds, and its default: 30 minutes (docs/checks.md,
 * "Browser, multi-step and Playwright check suites"); the longest `timeoutSeconds` of any type.
 */
export const SUITE_TIMEOUT_SECONDS = 1800;

/**
 * Body of `PUT /v1/checks/{id}`: the generic update body. Required
 * `heartbeat` and `script` as the public API's schema says (docs/api.md, "Checks"); every other field
 * optional, `frequency` any integer and `timeoutSeconds` 1–1800 (the check type's own set and cap
 * are enforced after merging), `request` an object validated against the check's type.
 */
export const UpdateCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    name: Type.Optional(sharedCheckFields.name),
    checkType: Type.Optional(StringEnum(CHECK_TYPES)),
    frequency: Type.Optional(Type.Integer({ minimum: 0, maximum: 1440 })),
    request: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    heartbeat: HeartbeatSchema,
    script: Nullable(Type.String({ maxLength: 131_072 })),
    dependencies: Type.Optional(
      Nullable(
        Type.Array(Type.Object({ path: Type.String({ maxLength: 1024 }), content: Type.String() }, strict), {
          maxItems: 100,
        }),
      ),
    ),
    degradedResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
    maxResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: SUITE_TIMEOUT_SECONDS })),
    degradedPacketLossThreshold: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100 }))),
    maxPacketLossThreshold: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100 }))),
  },
  strict,
);

/** Query of create and update: `autoAssignAlerts` (default true). */
export const AutoAssignAlertsQuery = Type.Object(
  { autoAssignAlerts: Type.Optional(Type.Boolean({ default: true })) },
  strict,
);
