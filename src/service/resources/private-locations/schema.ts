import { type Static, Type } from '@sinclair/typebox';
import {
  echoedResourceFields,
  Ignored,
  NullableTimestamp,
  ResourceId,
  strict,
  Timestamp,
} from '../../platform/http/schema-helpers.js';

/** Path parameters of one key of a private location. */
export const LocationKeyParams = Type.Object({ id: ResourceId, keyId: ResourceId }, strict);

/**
 * `slugName`: lowercase letters, digits and hyphens, starting with a letter or
 * digit, at most 63 characters; the same pattern checks accept in `privateLocations`.
 */
const SlugNameSchema = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' });

const name = Type.String({ minLength: 1, maxLength: 255 });
const icon = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$' });

/**
 * Body of `POST /v1/private-locations`: `name`, `slugName` (unique in the
 * account, never a public location name), `icon` (an icon name, default `location`).
 */
export const CreatePrivateLocationBody = Type.Object(
  {
    name,
    slugName: SlugNameSchema,
    icon: Type.Optional({ ...icon, default: 'location' }),
    ...echoedResourceFields,
    keys: Ignored(
      Type.Array(Type.Unknown(), { maxItems: 100 }),
      'GET answers them; keys are made by their own route',
    ),
  },
  strict,
);
/** A validated create body, `icon` defaulted. */
export type CreatePrivateLocation = Static<typeof CreatePrivateLocationBody>;

/** Body of `PUT /v1/private-locations/{id}`: `name` and/or `icon`; `slugName` is accepted only unchanged. */
export const UpdatePrivateLocationBody = Type.Object(
  {
    name: Type.Optional(name),
    icon: Type.Optional(icon),
    slugName: Type.Optional(SlugNameSchema),
    ...echoedResourceFields,
    keys: Ignored(
      Type.Array(Type.Unknown(), { maxItems: 100 }),
      'GET answers them; keys are made by their own route',
    ),
  },
  strict,
);
/** A validated update body: only the fields the caller sent. */
export type UpdatePrivateLocation = Static<typeof UpdatePrivateLocationBody>;

/**
 * A key of a private location. `maskedKey` is `pl_…` and the key's last four
 * characters; `rawKey` (the key in clear) appears only in the answer that created it.
 */
export const PrivateLocationKeySchema = Type.Object(
  {
    id: Type.String(),
    rawKey: Type.Optional(
      Type.String({ description: 'The key in clear; only in the answer that created it.' }),
    ),
    maskedKey: Type.String(),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  strict,
);
/** A key as answered. */
export type PrivateLocationKey = Static<typeof PrivateLocationKeySchema>;

/**
 * A private location as the API answers it: its keys (masked), `agentCount`
 * (agents seen within the last 2 minutes) and `lastSeen` (the latest time any
 * agent of the location called the service, or null).
 */
export const PrivateLocationSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slugName: Type.String(),
    icon: Type.String(),
    keys: Type.Array(PrivateLocationKeySchema),
    agentCount: Type.Integer({
      description: 'Agents connected now: claimed in the last 35 s and not stopped',
    }),
    lastSeen: NullableTimestamp,
    embedded: Type.Boolean({
      description:
        'Outpost: the location of the agent `outpost up` starts with the service (slug `local`, named after the host); its key is replaced at every start',
    }),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  strict,
);
/** A private location as answered. */
export type PrivateLocation = Static<typeof PrivateLocationSchema>;
