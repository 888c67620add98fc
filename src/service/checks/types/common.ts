import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { ASSERTION_COMPARISONS, LOCATIONS, RUNTIME_IDS } from '../../../protocol/index.js';
import {
  echoedResourceFields,
  Ignored,
  IntegerEnum,
  Nullable,
  StringEnum,
  strict,
} from '../../platform/http/schema-helpers.js';

/**
 * What the check types' schemas share (docs/api.md, "Check (fields shared by all check types)"): the
 * shared fields and their parts, assertions, response-time thresholds, frequency sets and the create
 * body of the uptime types. Each type's own schemas are in its file (api.ts, icmp.ts, dns.ts, tcp.ts,
 * url.ts, browser.ts, heartbeat.ts).
 */

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
    sslCertificates: Ignored(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          alertThreshold: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
        },
        strict,
      ),
      "the hosted API's SSL-expiry alerts of a check; Outpost alerts on certificates by its own rules (docs/alerting.md)",
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

/**
 * What the hosted API's web app keeps on an assertion for its editor, and its clients send back (the Go SDK
 * marshals them with every assertion): accepted and ignored.
 */
export const assertionPresentationFields = {
  edit: Ignored(Type.Boolean(), "the hosted web app's editor state"),
  order: Ignored(Type.Integer({ minimum: 0, maximum: 1000 }), "the hosted web app's editor state"),
  arrayIndex: Ignored(Type.Integer({ minimum: 0, maximum: 100_000 }), "the hosted web app's editor state"),
  arraySelector: Ignored(Type.Integer({ minimum: 0, maximum: 100_000 }), "the hosted web app's editor state"),
};

/** An assertion whose `source` is one of `sources` (docs/checks.md, "Assertions": `source`, `property`, `comparison`, `target`). */
function assertionSchema(sources: readonly string[]) {
  return Type.Object(
    {
      source: StringEnum(sources),
      property: Type.Optional(Type.String({ maxLength: 1024 })),
      comparison: StringEnum(ASSERTION_COMPARISONS),
      target: Type.Optional(Type.String({ maxLength: 4096 })),
      regex: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
      ...assertionPresentationFields,
    },
    strict,
  );
}

/** A type's optional `assertions`: at most 100 of {@link assertionSchema} over `sources`, default none. */
export const assertions = (sources: readonly string[]) =>
  Type.Optional(Type.Array(assertionSchema(sources), { maxItems: 100, default: [] }));

/**
 * An optional `degradedResponseTime` / `maxResponseTime`, ms: null or 0 to `maximum` (default 300 000,
 * the general limit), default `dflt`.
 */
export const responseTime = (dflt: number, maximum = 300_000) =>
  Type.Optional(Nullable(Type.Number({ minimum: 0, maximum, default: dflt })));
/** An optional packet-loss threshold, percent: null or above 0 up to 100, default `dflt`. */
export const packetLoss = (dflt: number) =>
  Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100, default: dflt })));

/**
 * What a check's answer holds beside its writable fields, and what the hosted API's clients send with every
 * check (docs/api.md, "What clients send back"): accepted with their shape and ignored, so a check read can be
 * sent back as it came and the Go SDK's whole structs are taken.
 */
const checkEchoFields = {
  ...echoedResourceFields,
  unservedLocations: Ignored(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 200 }), 'GET answers it'),
  alertChannels: Ignored(Type.Record(Type.String(), Type.Unknown()), 'GET answers it'),
  sslCheck: Ignored(Type.Boolean(), "the hosted API's deprecated SSL check flag"),
  aiAutoRepairEnabled: Ignored(Type.Boolean(), "the hosted API's automatic repair of browser scripts"),
};

/**
 * A zero-valued `heartbeat` ({period: 0, periodUnit: "", grace: 0, graceUnit: "", pingToken: ""}): what the Go
 * SDK marshals with a check of a type that has none. Anything else in it is refused.
 */
export const ZeroHeartbeatSchema = Type.Object(
  {
    period: Type.Optional(Type.Integer({ minimum: 0, maximum: 0 })),
    periodUnit: Type.Optional(Type.String({ maxLength: 0 })),
    grace: Type.Optional(Type.Integer({ minimum: 0, maximum: 0 })),
    graceUnit: Type.Optional(Type.String({ maxLength: 0 })),
    pingToken: Type.Optional(Type.String({ maxLength: 0 })),
  },
  strict,
);

/**
 * An API request's fields with their zero values (`""`, null, `[]`, false, 0), as the Go SDK marshals them on
 * the requests of other types (a URL monitor's `body`, `headers`, `queryParameters`; a TCP monitor's `url`,
 * `body`): accepted only zero-valued, and ignored. Spread the ones a type's request lacks.
 */
export const zeroRequestFields = {
  method: Ignored(Type.String({ maxLength: 0 }), "another type's request field, zero-valued"),
  url: Ignored(Type.String({ maxLength: 0 }), "another type's request field, zero-valued"),
  body: Ignored(Type.String({ maxLength: 0 }), "another type's request field, zero-valued"),
  bodyType: Ignored(Type.String({ maxLength: 0 }), "another type's request field, zero-valued"),
  headers: Ignored(
    Nullable(Type.Array(Type.Unknown(), { maxItems: 0 })),
    "another type's request field, zero-valued",
  ),
  queryParameters: Ignored(
    Nullable(Type.Array(Type.Unknown(), { maxItems: 0 })),
    "another type's request field, zero-valued",
  ),
  assertions: Ignored(
    Nullable(Type.Array(Type.Unknown(), { maxItems: 0 })),
    "another type's request field, zero-valued",
  ),
  followRedirects: Ignored(Type.Boolean(), "another type's request field"),
  skipSSL: Ignored(Type.Boolean(), "another type's request field"),
  basicAuth: Ignored(
    Nullable(
      Type.Object(
        { username: Type.String({ maxLength: 0 }), password: Type.String({ maxLength: 0 }) },
        strict,
      ),
    ),
    "another type's request field, zero-valued",
  ),
  ipFamily: Ignored(Type.String({ maxLength: 0 }), "another type's request field, zero-valued"),
};

/** `request` on a type that has none (browser, multi-step, Playwright): only a zero-valued API request. */
export const zeroRequest = Ignored(
  Type.Object(zeroRequestFields, strict),
  'a zero-valued request of a type that has none',
);

/** A response-time threshold on a type that has none (browser checks): only 0 or null, ignored. */
export const zeroResponseTime = Ignored(
  Nullable(Type.Integer({ minimum: 0, maximum: 0 })),
  'a zero-valued response-time threshold of a type that has none',
);

/** `heartbeat` on a type that has none: only {@link ZeroHeartbeatSchema}, accepted and ignored. */
export const zeroHeartbeat = Ignored(ZeroHeartbeatSchema, 'a zero-valued heartbeat of a type that has none');

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
  ...checkEchoFields,
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

/**
 * Frequencies (minutes) of TCP and API checks: 0 is the sub-minute schedule (with a 10/20/30 s offset),
 * which no other type but ICMP has (docs/checks.md, "Frequency and the sub-minute schedule").
 */
export const TCP_FREQUENCIES = [0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
/** Frequencies (minutes) of the types run at most once a minute: DNS and URL (HEARTBEAT stores one too). */
export const MINUTE_FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;

/**
 * Create body of an uptime check other than ICMP (DNS, TCP, URL): the shared fields, the
 * type's `request`, and its response-time defaults (docs/checks.md).
 * Unlike ICMP, the public API does not list `heartbeat`/`script` for these: `script` is refused, and
 * `heartbeat` is taken only zero-valued, as the Go SDK sends it, and ignored (docs/checks.md, "ICMP").
 */
export function uptimeCreateBody<T extends TSchema>(
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
      heartbeat: zeroHeartbeat,
      degradedResponseTime: responseTime(degradedMs),
      maxResponseTime: responseTime(maxMs),
    },
    strict,
  );
}

/** Query of create and update: `autoAssignAlerts` (default true). */
export const AutoAssignAlertsQuery = Type.Object(
  { autoAssignAlerts: Type.Optional(Type.Boolean({ default: true })) },
  strict,
);
