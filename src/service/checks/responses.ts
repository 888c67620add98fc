import { type Static, Type } from '@sinclair/typebox';
import { CHECK_TYPES } from '../../protocol/index.js';
import { Nullable, StringEnum } from '../platform/http/schema-helpers.js';

/**
 * The response schema of the check routes. Fastify serialises responses through it, so it lists every
 * shared field; a check type's own fields (`request`, thresholds, `script`, `pingUrl`, …) are open.
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
    unservedLocations: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Outpost: the run locations of the check that no connected agent serves now. Their runs are not run: they expire with that reason (GET /v1/checks/{id}/expired-runs).',
      }),
    ),
  },
  // Type-specific fields (request, thresholds, script, …) follow the create schema of the type.
  { additionalProperties: true },
);

/** A check as the API answers it: the static type of CheckResponseSchema. */
export type CheckResponse = Static<typeof CheckResponseSchema>;
