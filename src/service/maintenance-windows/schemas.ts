import { type Static, Type } from '@sinclair/typebox';
import {
  echoedResourceFields,
  Ignored,
  Nullable,
  StringEnum,
  strict,
  NullableTimestamp,
  Timestamp,
} from '../platform/http/schema-helpers.js';

/** How a maintenance window repeats (the hosted API's `repeatUnit`). */
export const REPEAT_UNITS = ['DAY', 'WEEK', 'MONTH'] as const;

/** A date (`2026-03-29`) or a date-time (`2026-03-29T02:00:00.000Z`), as the hosted API accepts them. */
const DateOrDateTime = (description: string) => Type.String({ minLength: 10, maxLength: 40, description });

/** Tags, as checks and groups have them. */
const TagList = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100, description });

/** The fields of a maintenance window a client writes, every one optional (the update body). */
const windowFields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'The window name, 1–200 characters.' }),
  tags: TagList('Checks with one of these tags, or in a group with one of them, are covered by the window.'),
  startsAt: DateOrDateTime('Start of the first occurrence: a date-time, or a date (midnight in `timezone`).'),
  endsAt: DateOrDateTime('End of the first occurrence: not before `startsAt`.'),
  repeatUnit: Nullable(
    StringEnum(REPEAT_UNITS, { description: 'DAY, WEEK or MONTH; null: the window happens once.' }),
  ),
  repeatInterval: Nullable(
    Type.Integer({ minimum: 1, maximum: 365, description: 'Units between two starts (default 1).' }),
  ),
  repeatEndsAt: Nullable(
    DateOrDateTime(
      'Last calendar date (in `timezone`) an occurrence may start on; a date-time counts as its UTC date. Null: forever.',
    ),
  ),
  timezone: Nullable(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'IANA time zone the repeats are computed in (default UTC).',
    }),
  ),
  description: Nullable(Type.String({ maxLength: 2000 })),
  pauseAllChecks: Type.Boolean({ description: 'Cover every check of the account (default false).' }),
  silenceAllAlerts: Type.Boolean({
    description: 'Silence the alerts of every check of the account while on (default false).',
  }),
  silenceAlertsTags: TagList('Checks with one of these tags have their alerts silenced while on.'),
  checkIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    maxItems: 1000,
    description: 'Outpost: checks the window covers, by id.',
  }),
  groupIds: Type.Array(Type.Integer({ minimum: 1 }), {
    maxItems: 1000,
    description: 'Outpost: check groups whose checks the window covers.',
  }),
  pauseRuns: Type.Boolean({
    description: 'Outpost: skip scheduled runs of the covered checks while on (default true).',
  }),
  silenceAlerts: Type.Boolean({
    description: 'Outpost: send no alert for the covered checks while on (default true).',
  }),
  statusPageVisibility: Ignored(
    Type.Object({}, { additionalProperties: true }),
    "the hosted API's status-page settings of a window",
  ),
  ...echoedResourceFields,
};

/**
 * Body of `POST /v1/maintenance-windows` (docs/api.md, "Maintenance windows"): `name`, `startsAt` and
 * `endsAt` required; the rest optional. Unknown fields are refused.
 */
export const CreateMaintenanceWindowBody = Type.Object(
  {
    ...windowFields,
    name: windowFields.name,
    startsAt: windowFields.startsAt,
    endsAt: windowFields.endsAt,
    tags: Type.Optional(windowFields.tags),
    repeatUnit: Type.Optional(windowFields.repeatUnit),
    repeatInterval: Type.Optional(windowFields.repeatInterval),
    repeatEndsAt: Type.Optional(windowFields.repeatEndsAt),
    timezone: Type.Optional(windowFields.timezone),
    description: Type.Optional(windowFields.description),
    pauseAllChecks: Type.Optional(windowFields.pauseAllChecks),
    silenceAllAlerts: Type.Optional(windowFields.silenceAllAlerts),
    silenceAlertsTags: Type.Optional(windowFields.silenceAlertsTags),
    checkIds: Type.Optional(windowFields.checkIds),
    groupIds: Type.Optional(windowFields.groupIds),
    pauseRuns: Type.Optional(windowFields.pauseRuns),
    silenceAlerts: Type.Optional(windowFields.silenceAlerts),
  },
  strict,
);
/** A create body as validated. */
export type CreateMaintenanceWindow = Static<typeof CreateMaintenanceWindowBody>;

/** Body of `PUT /v1/maintenance-windows/{id}`: a partial update; fields left out keep their value. */
export const UpdateMaintenanceWindowBody = Type.Partial(CreateMaintenanceWindowBody, strict);
/** An update body as validated. */
export type UpdateMaintenanceWindow = Static<typeof UpdateMaintenanceWindowBody>;

/** An occurrence of a window: `startsAt`, `endsAt` (ISO 8601, UTC). */
export const OccurrenceSchema = Type.Object({ startsAt: Timestamp, endsAt: Timestamp }, strict);

/** A maintenance window as the API answers it (the hosted API's fields, then Outpost's). */
export const MaintenanceWindowSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    tags: Type.Array(Type.String()),
    startsAt: Timestamp,
    endsAt: Timestamp,
    repeatInterval: Nullable(Type.Integer()),
    repeatUnit: Nullable(StringEnum(REPEAT_UNITS)),
    repeatEndsAt: NullableTimestamp,
    timezone: Type.String(),
    description: Nullable(Type.String()),
    pauseAllChecks: Type.Boolean(),
    silenceAllAlerts: Type.Boolean(),
    silenceAlertsTags: Type.Array(Type.String()),
    checkIds: Type.Array(Type.String()),
    groupIds: Type.Array(Type.Integer()),
    pauseRuns: Type.Boolean(),
    silenceAlerts: Type.Boolean(),
    active: Type.Boolean({ description: 'Outpost: whether an occurrence is in progress now.' }),
    nextOccurrence: Nullable(OccurrenceSchema),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  strict,
);
/** A maintenance window as answered. */
export type MaintenanceWindow = Static<typeof MaintenanceWindowSchema>;
