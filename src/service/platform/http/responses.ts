import { type Static, Type } from '@sinclair/typebox';
import {
  CHECK_SESSION_STATUSES,
  CHECK_TYPES,
  type RunOutcome,
  TRIGGER_SOURCES,
} from '../../../protocol/index.js';
import { Nullable, StringEnum } from './schema-helpers.js';

/**
 * Response schemas of the check, check-session and agent routes. Fastify
 * serialises responses through them, so they list every field; type-specific
 * parts (a check's `request`, a result's check-type part) are open objects.
 */

/** A check as the API answers it (docs/api.md, "Check"): the shared fields, always present. */
export const CheckResponseSchema = Type.Object(
  {
    id: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String(),
    activated: Type.Boolean(),
    muted: Type.Boolean(),
    doubleCheck: Type.Boolean(),
    shouldFail: Type.Boolean(),
    locations: Nullable(Type.Array(Type.String())),
    privateLocations: Nullable(Type.Array(Type.String())),
    tags: Type.Array(Type.String()),
    frequency: Type.Integer(),
    frequencyOffset: Nullable(Type.Integer()),
    runParallel: Type.Boolean(),
    groupId: Nullable(Type.Integer()),
    groupOrder: Nullable(Type.Integer()),
    runtimeId: Nullable(Type.String()),
    description: Nullable(Type.String()),
    alertChannelSubscriptions: Type.Array(
      Type.Object({ alertChannelId: Type.Integer(), activated: Type.Boolean() }),
    ),
    alertChannels: Type.Object({
      email: Type.Array(Type.Object({ address: Type.String() })),
      webhook: Type.Array(Type.Record(Type.String(), Type.Unknown())),
      slack: Type.Array(Type.Object({ url: Type.String() })),
      sms: Type.Array(Type.Object({ number: Type.String(), name: Type.String() })),
    }),
    environmentVariables: Nullable(
      Type.Array(
        Type.Object({
          key: Type.String(),
          value: Type.String(),
          locked: Type.Optional(Type.Boolean()),
          secret: Type.Optional(Type.Boolean()),
        }),
      ),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  // Type-specific fields (request, thresholds, script, …) follow the create schema of the type.
  { additionalProperties: true },
);

/** A check as the API answers it: the static type of CheckResponseSchema. */
export type CheckResponse = Static<typeof CheckResponseSchema>;

/** One result inside a check session. */
export const SessionResultSchema = Type.Object(
  {
    id: Type.String(),
    runLocation: Type.String(),
    resultType: StringEnum(['FINAL', 'ATTEMPT'] as const),
    status: StringEnum(['PASSED', 'FAILED', 'DEGRADED'] as const),
    hasFailures: Type.Boolean(),
    hasErrors: Type.Boolean(),
    isDegraded: Type.Boolean(),
    responseTime: Type.Number(),
    startedAt: Type.String({ format: 'date-time' }),
    stoppedAt: Type.String({ format: 'date-time' }),
    attempts: Type.Integer(),
    errorMessage: Nullable(Type.String()),
    /** Artifacts the agent reported; `GET /v1/check-results/{checkId}/{id}/artifacts/{name}` reads one. */
    artifacts: Type.Array(Type.Object({ name: Type.String(), sizeBytes: Type.Integer() })),
    /** The run's log lines (scripts' output included), secrets already scrubbed by the agent. */
    logs: Type.Array(
      Type.Object({
        time: Type.String(),
        level: StringEnum(['DEBUG', 'INFO', 'WARN', 'ERROR'] as const),
        msg: Type.String(),
      }),
    ),
  },
  // Plus the check type's part: icmpCheckResult, dnsCheckResult, tcpCheckResult, httpCheckResult or
  // browserCheckResult.
  { additionalProperties: true },
);

/**
 * A check session (docs/api.md, "Check session"). `status` is PROGRESS while runs are
 * pending (the public API lists only final statuses; the market leader's API answers PROGRESS).
 */
export const CheckSessionSchema = Type.Object(
  {
    checkSessionId: Type.String(),
    checkSessionLink: Type.String(),
    checkId: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String(),
    status: StringEnum(['PROGRESS', ...CHECK_SESSION_STATUSES] as const),
    triggerSource: StringEnum(TRIGGER_SOURCES),
    startedAt: Type.String({ format: 'date-time' }),
    stoppedAt: Nullable(Type.String({ format: 'date-time' })),
    timeElapsed: Type.Integer({ description: 'milliseconds' }),
    runLocations: Type.Array(Type.String()),
    results: Type.Array(SessionResultSchema),
  },
  { additionalProperties: false },
);

/**
 * One result inside a check session as the API answers it: the fields of `SessionResultSchema`
 * and the check-type part the run holds (the schema's additional properties).
 */
export type SessionResult = Static<typeof SessionResultSchema> &
  Partial<
    Pick<
      RunOutcome,
      'icmpCheckResult' | 'dnsCheckResult' | 'tcpCheckResult' | 'httpCheckResult' | 'browserCheckResult'
    >
  >;

/** A check session as the API answers it (`CheckSessionSchema`), each result with its part. */
export type CheckSession = Omit<Static<typeof CheckSessionSchema>, 'results'> & { results: SessionResult[] };
