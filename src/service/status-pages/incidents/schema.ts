import { type Static, Type } from '@sinclair/typebox';
import {
  Nullable,
  StringEnum,
  strict,
  NullableTimestamp,
  Timestamp,
  ResourceId,
  Defaulted,
  Ignored,
  echoedResourceFields,
} from '../../platform/http/schema-helpers.js';

/** Incident impacts (docs/api.md, "Incident"); default MINOR. Shown as `severity` on status pages. */
const IMPACTS = ['MAINTENANCE', 'MAJOR', 'MINOR'] as const;
/** An incident's impact: MAINTENANCE, MAJOR or MINOR. */
export type Impact = (typeof IMPACTS)[number];

/**
 * Severities of a status-page incident (docs/api.md, "Status-page incidents"): the hosted API's four, and
 * MAINTENANCE, the impact an incident made with `POST /v1/incidents` may have, so that it stays readable.
 */
export const SEVERITIES = ['CRITICAL', 'MAJOR', 'MEDIUM', 'MINOR', 'MAINTENANCE'] as const;
/** A status-page incident's severity. */
export type Severity = (typeof SEVERITIES)[number];

/**
 * The impact a severity counts as on the public pages, which know three: CRITICAL is MAJOR, MEDIUM is MINOR.
 */
export function impactOfSeverity(severity: Severity): Impact {
  if (severity === 'CRITICAL') return 'MAJOR';
  if (severity === 'MEDIUM') return 'MINOR';
  return severity;
}

/** Incident update statuses (docs/api.md, "Incident update"). RESOLVED stops the incident. */
const UPDATE_STATUSES = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'MAINTENANCE'] as const;
/** An incident update's status. */
export type UpdateStatus = (typeof UPDATE_STATUSES)[number];

const ServiceRefs = Type.Array(Type.Object({ id: ResourceId }, strict), {
  maxItems: 100,
});

/**
 * A status-page service as the API shows it (docs/api.md, "Status page"). Defined
 * here because incidents and status pages both show services.
 */
export const ServiceSchema = Type.Object({
  name: Type.String(),
  id: Type.String(),
  accountId: Type.String(),
  created_at: Timestamp,
  updated_at: NullableTimestamp,
});
/** A status-page service as the API answers it. */
export type ServiceView = Static<typeof ServiceSchema>;

/**
 * Body of `POST /v1/incidents/{incidentId}/updates` and of each item of a
 * create body's `incidentUpdates`: `status` and `description` required;
 * `notifySubscribers` default false; `publicIncidentUpdateDate` (the time the
 * page shows) defaults to the time the update is stored.
 */
export const IncidentUpdateBodySchema = Type.Object(
  {
    status: StringEnum(UPDATE_STATUSES),
    description: Type.String({ minLength: 1, maxLength: 10_000 }),
    notifySubscribers: Type.Optional(Type.Boolean({ default: false })),
    publicIncidentUpdateDate: Type.Optional(Timestamp),
  },
  strict,
);
/** The body of a new incident update. */
export type IncidentUpdateBody = Static<typeof IncidentUpdateBodySchema>;

/**
 * Body of `POST /v1/incidents`: `name` required; `impact` default MINOR;
 * `startedAt` default now (null: not started yet); `stoppedAt` default null;
 * `services`: ids of status-page services the incident affects (its pages show
 * it); `incidentUpdates`: the first updates, oldest first (the market leader's
 * form: an array, usually of one).
 */
export const CreateIncidentBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    impact: Type.Optional(StringEnum(IMPACTS, { default: 'MINOR' })),
    startedAt: Type.Optional(NullableTimestamp),
    stoppedAt: Type.Optional(NullableTimestamp),
    services: Type.Optional(ServiceRefs),
    incidentUpdates: Type.Optional(Type.Array(IncidentUpdateBodySchema, { maxItems: 20 })),
  },
  strict,
);
/** The body of `POST /v1/incidents`. */
export type CreateIncidentBody = Static<typeof CreateIncidentBody>;

/**
 * Body of `PUT /v1/incidents/{id}`: `name` and `impact` required (docs/api.md);
 * `startedAt`, `stoppedAt` and `services` keep their stored values when omitted.
 */
export const UpdateIncidentBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    impact: StringEnum(IMPACTS),
    startedAt: Type.Optional(NullableTimestamp),
    stoppedAt: Type.Optional(NullableTimestamp),
    services: Type.Optional(ServiceRefs),
  },
  strict,
);
/** The body of `PUT /v1/incidents/{id}`. */
export type UpdateIncidentBody = Static<typeof UpdateIncidentBody>;

/** Path of the update operations: `incidentId`. */
export const IncidentIdParams = Type.Object({ incidentId: ResourceId }, strict);

/** Query of the incident detail: `includeAllIncidentUpdates` (default false: only the latest update). */
export const IncidentDetailQuery = Type.Object(
  { includeAllIncidentUpdates: Defaulted(Type.Boolean({ default: false })) },
  strict,
);

/** Query of `PUT /v1/incidents/{id}`: `probe` true validates and answers without storing (a dry run). */
export const IncidentPutQuery = Type.Object({ probe: Defaulted(Type.Boolean({ default: false })) }, strict);

/** An incident update as the API shows it (docs/api.md, "Incident update" and detail items). */
export const IncidentUpdateSchema = Type.Object({
  id: Type.String(),
  status: StringEnum(UPDATE_STATUSES),
  description: Type.String(),
  incidentId: Type.String(),
  notifySubscribers: Type.Boolean(),
  publicIncidentUpdateDate: Timestamp,
  created_at: Timestamp,
  updated_at: NullableTimestamp,
});
/** An incident update as the API answers it. */
export type IncidentUpdateView = Static<typeof IncidentUpdateSchema>;

const incidentFields = {
  id: Type.String(),
  name: Type.String(),
  impact: StringEnum(IMPACTS),
  startedAt: NullableTimestamp,
  stoppedAt: NullableTimestamp,
  dashboardId: Type.Integer(),
  services: Type.Array(ServiceSchema),
  created_at: Timestamp,
  updated_at: NullableTimestamp,
};

/** An incident with its updates, newest first (create, detail, list). */
export const IncidentSchema = Type.Object({
  ...incidentFields,
  incidentUpdates: Type.Array(IncidentUpdateSchema),
});
/** An incident as the API answers it. */
export type IncidentView = Static<typeof IncidentSchema>;

/** The incident in the PUT response: `incidentUpdates` is the latest update's description, or null (docs/api.md). */
export const IncidentPutResponseSchema = Type.Object({
  ...incidentFields,
  incidentUpdates: Nullable(Type.String()),
});

/**
 * An incident inside a status page and in `/v1/status-pages/incidents` (docs/api.md, "Status-page incidents"):
 * `severity` is the one it was given there, else its impact; `duration` in ms.
 */
export const StatusPageIncidentSchema = Type.Object({
  name: Type.String(),
  severity: StringEnum(SEVERITIES),
  id: Type.String(),
  services: Type.Array(ServiceSchema),
  lastUpdateStatus: Nullable(StringEnum(UPDATE_STATUSES)),
  created_at: Timestamp,
  updated_at: NullableTimestamp,
  duration: Type.Number(),
  incidentUpdates: Type.Array(
    Type.Object({
      description: Type.String(),
      id: Type.String(),
      created_at: Timestamp,
      status: StringEnum(UPDATE_STATUSES),
      publicIncidentUpdateDate: Timestamp,
      notifySubscribers: Type.Boolean(),
    }),
  ),
});
/** An incident inside a status page as the API answers it (`severity`, `duration` in ms). */
export type StatusPageIncidentView = Static<typeof StatusPageIncidentSchema>;

/**
 * A status-page service named in a status-page incident body: `id` counts; `name`, `accountId` and the
 * timestamps are what the service answered, sent back (the hosted API requires `name` and `accountId`).
 */
const PageServiceRef = Type.Object(
  {
    id: ResourceId,
    name: Ignored(Type.String({ maxLength: 255 }), "the service's name is its own"),
    accountId: Ignored(Type.String({ maxLength: 64 }), 'the account is the key’s'),
    created_at: echoedResourceFields.created_at,
    updated_at: echoedResourceFields.updated_at,
  },
  strict,
);

/** Fields of a status-page incident the service answers and clients send back: accepted and ignored. */
const echoedIncidentFields = {
  id: echoedResourceFields.id,
  created_at: echoedResourceFields.created_at,
  updated_at: echoedResourceFields.updated_at,
  lastUpdateStatus: Ignored(Nullable(StringEnum(UPDATE_STATUSES)), 'it is the latest update’s status'),
  duration: Ignored(Nullable(Type.Integer()), 'computed from startedAt and stoppedAt'),
};

/**
 * Body of `POST /v1/status-pages/incidents/{incidentId}/incident-updates` and of each item of a create body's
 * `incidentUpdates`: `description` required, `status` default INVESTIGATING (the hosted API's four and
 * MAINTENANCE), `notifySubscribers` default false, `publicIncidentUpdateDate` default now.
 */
export const PageIncidentUpdateBody = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 10_000 }),
    status: Type.Optional(StringEnum(UPDATE_STATUSES)),
    notifySubscribers: Type.Optional(Type.Boolean()),
    publicIncidentUpdateDate: Type.Optional(Timestamp),
    id: echoedResourceFields.id,
    created_at: echoedResourceFields.created_at,
    updated_at: echoedResourceFields.updated_at,
    incidentId: Ignored(Type.String({ maxLength: 64 }), 'the incident is the path’s'),
  },
  strict,
);
/** The body of a status-page incident update. */
export type PageIncidentUpdateBody = Static<typeof PageIncidentUpdateBody>;

/**
 * Body of `POST /v1/status-pages/incidents` (the hosted API's): `name`, `severity` and `services` required;
 * `incidentUpdates` the first updates, oldest first. The incident starts now.
 */
export const CreatePageIncidentBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    severity: StringEnum(SEVERITIES),
    services: Type.Array(PageServiceRef, { maxItems: 100 }),
    incidentUpdates: Type.Optional(Type.Array(PageIncidentUpdateBody, { maxItems: 20 })),
    ...echoedIncidentFields,
  },
  strict,
);
/** The body of `POST /v1/status-pages/incidents`. */
export type CreatePageIncidentBody = Static<typeof CreatePageIncidentBody>;

/** Body of `PUT /v1/status-pages/incidents/{incidentId}`: `name`, `severity` and `services` required. */
export const PutPageIncidentBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    severity: StringEnum(SEVERITIES),
    services: Type.Array(PageServiceRef, { maxItems: 100 }),
    incidentUpdates: Ignored(Type.Array(Type.Unknown()), 'updates have routes of their own'),
    ...echoedIncidentFields,
  },
  strict,
);

/** Body of `PATCH /v1/status-pages/incidents/{incidentId}` (what the CLI sends): any of PUT's fields. */
export const PatchPageIncidentBody = Type.Partial(PutPageIncidentBody, strict);
/** The body of a PUT or PATCH of a status-page incident: fields left out keep their stored values. */
export type EditPageIncidentBody = Static<typeof PatchPageIncidentBody>;

/** Path of a status-page incident: `incidentId`. */
export const PageIncidentParams = Type.Object({ incidentId: ResourceId }, strict);
/** Path of one of its updates: `incidentId`, `incidentUpdateId`. */
export const PageIncidentUpdateParams = Type.Object(
  { incidentId: ResourceId, incidentUpdateId: ResourceId },
  strict,
);
