import { type Static, type TObject, Type } from '@sinclair/typebox';
import {
  echoedResourceFields,
  Ignored,
  StringEnum,
  strict,
  NullableTimestamp,
  Timestamp,
  ResourceId,
} from '../../platform/http/schema-helpers.js';
import { type AlertChannelType, CHANNEL_MODULES, type ChannelModuleOf } from '../channels/modules.js';

export type { AlertChannelType } from '../channels/modules.js';

/** Alert channel types (docs/api.md, "Alert channel"), in the order of the API's `type` enum: CHANNEL_MODULES'. */
export const ALERT_CHANNEL_TYPES: readonly AlertChannelType[] = CHANNEL_MODULES.map((m) => m.type);

/**
 * `config` per channel type, each channel module's `configSchema` (channels/<type>.ts). The spec leaves the
 * structure "not shown"; these are the fields the market leader's API uses. Secrets (SECRET_CONFIG_FIELDS)
 * are answered masked (see alert-channels.ts).
 */
export const CHANNEL_CONFIG_SCHEMAS = Object.fromEntries(
  CHANNEL_MODULES.map((m) => [m.type, m.configSchema]),
) as { readonly [T in AlertChannelType]: ChannelModuleOf<T>['configSchema'] };

/** Config fields holding integration secrets, per type (each module's `secretFields`): never answered in clear. */
export const SECRET_CONFIG_FIELDS: Readonly<Record<AlertChannelType, readonly string[]>> = Object.fromEntries(
  CHANNEL_MODULES.map((m) => [m.type, m.secretFields]),
) as Record<AlertChannelType, readonly string[]>;

/**
 * A subscription of a check (`checkId`) or a check group (`groupId`) to the
 * channel; exactly one of the two. Item fields are "not shown" in the spec.
 */
const SubscriptionSchema = Type.Object(
  {
    checkId: Type.Optional(ResourceId),
    groupId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    activated: Type.Boolean(),
    id: Ignored(
      Type.Union([Type.Integer(), Type.String({ maxLength: 64 }), Type.Null()]),
      "the subscription's id",
    ),
  },
  strict,
);

const channelFields = {
  type: StringEnum(ALERT_CHANNEL_TYPES),
  config: Type.Object(
    {},
    { additionalProperties: true, description: 'Fields depend on `type`; see the AlertChannel schema.' },
  ),
  subscriptions: Type.Optional(Type.Array(SubscriptionSchema, { maxItems: 1000, default: [] })),
  sendRecovery: Type.Optional(Type.Boolean({ default: true })),
  sendFailure: Type.Optional(Type.Boolean({ default: true })),
  sendDegraded: Type.Optional(Type.Boolean({ default: false })),
  sslExpiry: Type.Optional(Type.Boolean({ default: false })),
  sslExpiryThreshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 30 })),
  autoSubscribe: Type.Optional(Type.Boolean({ default: false })),
  ...echoedResourceFields,
};

/**
 * Body of `POST /v1/alert-channels` (docs/api.md, "Alert channels"): `type` and
 * `config` required; `config` is validated against the type's schema once the
 * type is known, so errors name e.g. `config.address`.
 */
export const CreateAlertChannelBody = Type.Object(channelFields, strict);
/** A validated create body, defaults applied; `config` not yet validated against its type. */
export type CreateAlertChannel = Static<typeof CreateAlertChannelBody>;

/**
 * Body of `PUT /v1/alert-channels/{id}`: every field optional, given fields
 * replace stored ones; a changed `type` needs a `config` of the new type.
 */
export const UpdateAlertChannelBody = Type.Object(
  {
    type: Type.Optional(channelFields.type),
    config: Type.Optional(channelFields.config),
    subscriptions: Type.Optional(Type.Array(SubscriptionSchema, { maxItems: 1000 })),
    sendRecovery: Type.Optional(Type.Boolean()),
    sendFailure: Type.Optional(Type.Boolean()),
    sendDegraded: Type.Optional(Type.Boolean()),
    sslExpiry: Type.Optional(Type.Boolean()),
    sslExpiryThreshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })),
    autoSubscribe: Type.Optional(Type.Boolean()),
    ...echoedResourceFields,
  },
  strict,
);

/** Response form of a config schema: same fields, nothing required beyond what is always stored. */
const responseConfig = (schema: TObject) => Type.Object(schema.properties, strict);

/**
 * The response forms of the config schemas, in type order except that types with the same config (SMS and
 * CALL) stand side by side: the order the OpenAPI document has always listed them in.
 */
function responseConfigs(): TObject[] {
  const bySchema = new Map<string, TObject[]>();
  for (const m of CHANNEL_MODULES) {
    const schema = responseConfig(m.configSchema);
    const same = JSON.stringify(schema);
    bySchema.set(same, [...(bySchema.get(same) ?? []), schema]);
  }
  return [...bySchema.values()].flat();
}

/** An alert channel as the API answers it; secrets in `config` masked. */
export const AlertChannelSchema = Type.Object(
  {
    id: Type.Integer(),
    type: StringEnum(ALERT_CHANNEL_TYPES),
    config: Type.Union(responseConfigs()),
    subscriptions: Type.Array(SubscriptionSchema),
    sendRecovery: Type.Boolean(),
    sendFailure: Type.Boolean(),
    sendDegraded: Type.Boolean(),
    sslExpiry: Type.Boolean(),
    sslExpiryThreshold: Type.Integer(),
    autoSubscribe: Type.Boolean(),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  strict,
);
/** An alert channel as answered. */
export type AlertChannel = Static<typeof AlertChannelSchema>;
