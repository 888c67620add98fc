import { type Static, Type } from '@sinclair/typebox';
import {
  CHECK_SESSION_STATUSES,
  CHECK_TYPES,
  type RunOutcome,
  TRIGGER_SOURCES,
} from '../../../protocol/index.js';
import { Nullable, StringEnum } from './schema-helpers.js';

/**
 * Response schemas of the check-session routes. Fastify serialises responses through them, so they list
 * every field; a result's check-type part is an open object. (A check's own schema is in
 * src/service/checks/responses.ts.)
 */

/**
 * One result inside a check session: Outpost's fields, and the hosted API's (`checkResultId`, `checkResultLink`,
 * `checkId`, `checkType`, `name`, `aborted`, `isCancelled`; docs/api.md, "Check session").
 */
export const SessionResultSchema = Type.Object(
  {
    id: Type.String(),
    checkResultId: Type.String({ description: 'The hosted API’s name of `id`' }),
    checkResultLink: Type.String({ description: 'The result in the web app' }),
    checkId: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String({ description: 'The check’s name' }),
    aborted: Type.Boolean({ description: 'Always false: a run that ended without a result has none' }),
    isCancelled: Type.Boolean({ description: 'Always false: a cancelled run has no result' }),
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
  // Plus the check type's part: icmpCheckResult, dnsCheckResult, tcpCheckResult, grpcCheckResult,
  // httpCheckResult, browserCheckResult, sslCheckResult, tracerouteCheckResult or (with browserCheckResult)
  // agenticCheckResult.
  { additionalProperties: true },
);

/**
 * The statuses of a check session as the hosted API lists them. Outpost answers PROGRESS while runs are
 * pending (never STARTED, PROGRESS_FAILED or PROGRESS_DEGRADED), then a final status (docs/api.md, "Check session").
 */
const SESSION_STATUSES = [
  'STARTED',
  'PROGRESS',
  'PROGRESS_FAILED',
  'PROGRESS_DEGRADED',
  ...CHECK_SESSION_STATUSES,
] as const;

/** A check session (docs/api.md, "Check session"); `runSource` is the hosted API's name of `triggerSource`. */
export const CheckSessionSchema = Type.Object(
  {
    checkSessionId: Type.String(),
    checkSessionLink: Type.String(),
    checkId: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String(),
    status: StringEnum(SESSION_STATUSES),
    triggerSource: StringEnum(TRIGGER_SOURCES),
    runSource: StringEnum(TRIGGER_SOURCES),
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
      | 'icmpCheckResult'
      | 'dnsCheckResult'
      | 'tcpCheckResult'
      | 'grpcCheckResult'
      | 'httpCheckResult'
      | 'browserCheckResult'
      | 'sslCheckResult'
      | 'tracerouteCheckResult'
      | 'agenticCheckResult'
    >
  >;

/** A check session as the API answers it (`CheckSessionSchema`), each result with its part. */
export type CheckSession = Omit<Static<typeof CheckSessionSchema>, 'results'> & { results: SessionResult[] };
