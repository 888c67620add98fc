import { Type } from '@sinclair/typebox';
import { CHECK_TYPES } from '../../../protocol/index.js';
import { PageQuery } from '../../platform/http/pagination.js';
import {
  Nullable,
  StringEnum,
  strict,
  Timestamp,
  ResourceId,
  Defaulted,
} from '../../platform/http/schema-helpers.js';

/** Which results `GET /v1/check-results/{checkId}` lists: final results of runs, retried attempts, or both. */
export const RESULT_TYPE_FILTERS = ['FINAL', 'ATTEMPT', 'ALL'] as const;

/** Path of `GET /v1/check-results/{checkId}/{checkResultId}` (the names the artifact download route uses). */
export const CheckResultParams = Type.Object(
  {
    checkId: ResourceId,
    checkResultId: ResourceId,
  },
  strict,
);

/**
 * Query of `GET /v1/check-results/{checkId}`: `from`/`to` as the analytics routes take them (unix
 * seconds or ISO 8601; `to` exclusive; on `startedAt`), `limit` 1–100 (default 10), `page` (default
 * 1), `resultType` (default FINAL), `hasFailures`, `location` (a run location).
 */
export const CheckResultsQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description:
          'Results started at or after: unix timestamp in seconds or ISO 8601 date or date-time (UTC when no zone).',
      }),
    ),
    to: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'Results started before (exclusive); same forms as from.',
      }),
    ),
    ...PageQuery(10).properties,
    resultType: Defaulted(
      StringEnum(RESULT_TYPE_FILTERS, {
        default: 'FINAL',
        description: 'FINAL: the result of each run; ATTEMPT: failed attempts a retry followed; ALL: both.',
      }),
    ),
    hasFailures: Type.Optional(
      Type.Boolean({ description: 'Only failed (true) or only passing (false) results.' }),
    ),
    location: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Run location (a data-center location or private location slug).',
      }),
    ),
  },
  strict,
);

const ArtifactSchema = Type.Object({
  name: Type.String(),
  sizeBytes: Type.Integer({ minimum: 0 }),
  /** Path of `GET /v1/check-results/{checkId}/{checkResultId}/artifacts/{name}`. */
  downloadPath: Type.String(),
});

const LogSchema = Type.Object({
  time: Type.String(),
  level: StringEnum(['DEBUG', 'INFO', 'WARN', 'ERROR'] as const),
  msg: Type.String(),
});

const part = (description: string) => Nullable(Type.Record(Type.String(), Type.Unknown(), { description }));

/**
 * A check result as `GET /v1/check-results/…` answers it: the field's check-result shape (ids,
 * flags, times, `responseTime` in ms, `runLocation`, `attempts`, `resultType`, `checkRunId`,
 * `sequenceId`) and the check type's part; the parts a type does not have are null.
 */
export const CheckResultResponseSchema = Type.Object(
  {
    id: Type.String(),
    checkId: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String({ description: 'Name of the check' }),
    status: StringEnum(['PASSED', 'FAILED', 'DEGRADED'] as const),
    hasFailures: Type.Boolean(),
    hasErrors: Type.Boolean(),
    isDegraded: Type.Boolean(),
    overMaxResponseTime: Type.Boolean(),
    runLocation: Type.String(),
    startedAt: Timestamp,
    stoppedAt: Timestamp,
    created_at: Timestamp,
    responseTime: Type.Number({ description: 'milliseconds' }),
    attempts: Type.Integer({ minimum: 1 }),
    resultType: StringEnum(['FINAL', 'ATTEMPT'] as const),
    checkRunId: Type.Integer({
      description:
        'The run as a number (the hosted API’s type), shared by its locations and attempts: the first 52 bits of the SHA-256 of `sequenceId`',
    }),
    sequenceId: Type.String({
      description: 'Id of the run (its first attempt’s job id), shared by its attempts',
    }),
    checkSessionId: Nullable(Type.String({ description: 'null for a scheduled run' })),
    agent: Nullable(
      Type.Object(
        {
          id: Type.String(),
          version: Type.String(),
          hostName: Nullable(Type.String()),
        },
        {
          'x-outpost-not-in-spec': true,
          description:
            'The agent that ran it, as the service knew it then; null for a result the service wrote (a heartbeat, a run that ended without its agent) or one stored before agents were recorded',
        },
      ),
    ),
    errorMessage: Nullable(Type.String()),
    assertions: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    artifacts: Type.Array(ArtifactSchema),
    /** Left out of list items (read one result for them), as are HTTP bodies. */
    logs: Type.Optional(Type.Array(LogSchema)),
    icmpCheckResult: part('ICMP checks'),
    dnsCheckResult: part('DNS checks'),
    tcpCheckResult: part('TCP checks'),
    grpcCheckResult: part('gRPC monitors (docs/checks.md, "gRPC")'),
    httpCheckResult: part('URL and API checks: the HTTP exchange'),
    apiCheckResult: part('API checks: the HTTP exchange (the field’s name for it)'),
    browserCheckResult: part('Browser checks, Playwright check suites and AGENTIC checks, as stored'),
    multiStepCheckResult: part('Multi-step checks, as stored'),
    sslCheckResult: part('SSL monitors: the handshake, chain and certificate'),
    tracerouteCheckResult: part('TRACEROUTE monitors: the traced route'),
    agenticCheckResult: part(
      'AGENTIC checks (docs/checks.md, "Agentic"): summary, assertions, steps, suggestions, errors, the run’s mode, model usage and script change; the browser result of the script it ran last is browserCheckResult',
    ),
    /** Present when the agent cut the result to fit the service's limit (docs/protocol.md). */
    truncated: Type.Optional(
      Type.Object(
        {
          reason: Type.String(),
          originalSizeBytes: Type.Integer({ description: 'bytes' }),
          fields: Type.Array(Type.String(), { description: 'JSON paths of what was cut' }),
        },
        { 'x-outpost-not-in-spec': true },
      ),
    ),
  },
  strict,
);
