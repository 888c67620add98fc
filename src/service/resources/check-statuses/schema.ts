import { Type } from '@sinclair/typebox';
import {
  Nullable,
  NullableTimestamp,
  ResourceId,
  strict,
  Timestamp,
} from '../../platform/http/schema-helpers.js';

/** Marks a field the compatible API does not have (the OpenAPI document shows it). */
const outpost = { 'x-outpost-not-in-spec': true } as const;

/** Most check ids one `checkId` query may name. */
export const MAX_STATUS_CHECK_IDS = 500;

/** Most entries one page of `GET /v1/check-statuses` (`limit`) holds. */
export const MAX_STATUSES_PAGE = 1000;

/**
 * Query of `GET /v1/check-statuses`: `checkId`, a comma-separated list of check ids to narrow to; Outpost's
 * `limit` and `page` (from 1) ask for one page of the list (by name then id) instead of all of it.
 */
export const CheckStatusesQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_STATUSES_PAGE,
        description: `A page of at most this many entries (1–${MAX_STATUSES_PAGE}) instead of the whole list`,
        ...outpost,
      }),
    ),
    page: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100_000,
        description: 'Which page of `limit` entries, from 1 (needs `limit`)',
        ...outpost,
      }),
    ),
    checkId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_STATUS_CHECK_IDS * 65,
        description: `Only these checks: ids separated by commas, at most ${MAX_STATUS_CHECK_IDS}.`,
        ...outpost,
      }),
    ),
  },
  strict,
);

/** Path of `GET /v1/check-statuses/{checkId}`. */
export const CheckStatusParams = Type.Object({ checkId: ResourceId }, strict);

/**
 * One entry of `GET /v1/check-statuses`: the compatible API's fields, from the check's latest FINAL
 * result (false, null before the first), and Outpost's 24-hour figures from the hourly rollups.
 * Times in ms.
 */
export const CheckStatusSchema = Type.Object(
  {
    checkId: Type.String(),
    name: Type.String({ description: 'Name of the check' }),
    hasFailures: Type.Boolean({ description: 'The latest final result failed' }),
    hasErrors: Type.Boolean({ description: 'The latest final result could not run the check' }),
    isDegraded: Type.Boolean({ description: 'The latest final result was degraded' }),
    longestRun: Nullable(Type.Number({ description: 'Response time of the latest final result, ms' })),
    shortestRun: Nullable(Type.Number({ description: 'Response time of the latest final result, ms' })),
    lastRunLocation: Nullable(Type.String({ description: 'Run location of the latest final result' })),
    lastCheckRunId: Nullable(
      Type.String({
        description: 'The latest final result’s check session id, or its result id for a scheduled run',
      }),
    ),
    sslDaysRemaining: Nullable(
      Type.Integer({
        description:
          'Whole days until the certificate this check recorded last expires (negative: expired); null without one',
      }),
    ),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
    lastResultId: Nullable(
      Type.String({
        description: 'Id of the latest final result (GET /v1/check-results/{checkId}/{id})',
        ...outpost,
      }),
    ),
    lastRunAt: Nullable(
      Type.String({ format: 'date-time', description: 'When the latest final result started', ...outpost }),
    ),
    availability24h: Nullable(
      Type.Number({
        minimum: 0,
        maximum: 100,
        description:
          'Percent of the final runs of the last 24 hours (this hour and the 23 before) that passed; degraded runs count as passed; null without runs',
        ...outpost,
      }),
    ),
    responseTimeAvg24h: Nullable(
      Type.Number({ description: 'Mean response time of those runs, ms; null without runs', ...outpost }),
    ),
    responseTimes24h: Type.Array(Nullable(Type.Number()), {
      minItems: 24,
      maxItems: 24,
      description:
        'Mean response time per UTC hour, ms, oldest first, the last being the current hour; null for an hour without runs',
      ...outpost,
    }),
  },
  strict,
);
