import { Type } from '@sinclair/typebox';
import { Defaulted, Nullable, StringEnum, strict, Timestamp } from '../platform/http/schema-helpers.js';

/** Who made a change: the request's principal (docs/teams.md, "Audit log"); never a secret. */
export const AuditActorSchema = Type.Object({
  kind: StringEnum(['api-key', 'user', 'private-location'] as const),
  id: Type.String(),
  name: Nullable(Type.String()),
  role: Nullable(
    Type.String({ description: 'READ_ONLY, READ_WRITE, ADMIN or OWNER; null for a private location' }),
  ),
});

/** A document before or after a change: the resource as the API answered it, every secret masked. */
const AuditDocument = Nullable(
  Type.Unknown({
    description:
      'The resource as the API answered it, every secret masked or dropped; `{"truncated":true,"bytes":…}` for one over 64 KiB; null when there is none',
  }),
);

/** One entry of the audit log (`GET /v1/audit-log`). */
export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  occurredAt: Timestamp,
  actor: AuditActorSchema,
  action: Type.String({
    description: '`<resourceType>.<verb>`: `check.update`, `api-key.create`, `session.sign-in`',
  }),
  resourceType: Type.String(),
  resourceId: Nullable(Type.String()),
  before: AuditDocument,
  after: AuditDocument,
  ip: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
});

/** Query of `GET /v1/audit-log`: the cursor paging of the API (`limit`, `nextId`) and the filters. */
export const AuditLogQuery = Type.Object(
  {
    limit: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    nextId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'The cursor a previous page answered in `x-next-id`; the list goes on from there',
      }),
    ),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The actor’s id' })),
    resourceType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Entries before this time' })),
  },
  strict,
);
