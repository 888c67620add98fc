import { type Static, type TObject, Type } from '@sinclair/typebox';
import {
  Nullable,
  StringEnum,
  strict,
  NullableTimestamp,
  Timestamp,
  ResourceId,
} from '../../platform/http/schema-helpers.js';

/** Alert channel types (docs/api.md, "Alert channel"). */
export const ALERT_CHANNEL_TYPES = [
  'EMAIL',
  'SLACK',
  'WEBHOOK',
  'SMS',
  'PAGERDUTY',
  'OPSGENIE',
  'CALL',
] as const;
/** One of `ALERT_CHANNEL_TYPES`. */
export type AlertChannelType = (typeof ALERT_CHANNEL_TYPES)[number];

/** HTTP methods a webhook channel may use. */
const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const;

const name = Type.String({ minLength: 1, maxLength: 255 });
/** E.164: a plus sign and up to 15 digits, the first not 0. */
const phoneNumber = Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$' });
const keyValue = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    value: Type.String({ maxLength: 8192 }),
    locked: Type.Optional(Type.Boolean({ default: false })),
  },
  strict,
);
const secret = Type.String({ minLength: 1, maxLength: 1024 });

/**
 * `config` per channel type. The spec leaves the structure "not shown"; these
 * are the fields the market leader's API uses. Secrets (`webhookSecret`,
 * `serviceKey`, `apiKey`) are answered masked (see alert-channels.ts).
 */
export const CHANNEL_CONFIG_SCHEMAS = {
  EMAIL: Type.Object({ address: Type.String({ format: 'email', maxLength: 254 }) }, strict),
  SLACK: Type.Object(
    {
      url: Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]://[^\\s/]+[^\\s]*$' }),
      channel: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    },
    strict,
  ),
  WEBHOOK: Type.Object(
    {
      name,
      url: Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/]+[^\\s]*$' }),
      method: Type.Optional(StringEnum(WEBHOOK_METHODS, { default: 'POST' })),
      headers: Type.Optional(Type.Array(keyValue, { maxItems: 50, default: [] })),
      queryParameters: Type.Optional(Type.Array(keyValue, { maxItems: 50, default: [] })),
      template: Type.Optional(Nullable(Type.String({ maxLength: 65_536 }))),
      webhookSecret: Type.Optional(Nullable(secret)),
      webhookType: Type.Optional(
        Nullable(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Z0-9_]+$' })),
      ),
    },
    strict,
  ),
  SMS: Type.Object({ name, number: phoneNumber }, strict),
  CALL: Type.Object({ name, number: phoneNumber }, strict),
  PAGERDUTY: Type.Object(
    {
      serviceKey: secret,
      account: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      serviceName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    },
    strict,
  ),
  OPSGENIE: Type.Object(
    {
      name,
      apiKey: secret,
      region: StringEnum(['US', 'EU'] as const),
      priority: StringEnum(['P1', 'P2', 'P3', 'P4', 'P5'] as const),
    },
    strict,
  ),
} as const satisfies Record<AlertChannelType, TObject>;

/** Config fields holding integration secrets, per type: never answered in clear. */
export const SECRET_CONFIG_FIELDS: Record<AlertChannelType, readonly string[]> = {
  EMAIL: [],
  SLACK: [],
  WEBHOOK: ['webhookSecret'],
  SMS: [],
  CALL: [],
  PAGERDUTY: ['serviceKey'],
  OPSGENIE: ['apiKey'],
};

/**
 * A subscription of a check (`checkId`) or a check group (`groupId`) to the
 * channel; exactly one of the two. Item fields are "not shown" in the spec.
 */
const SubscriptionSchema = Type.Object(
  {
    checkId: Type.Optional(ResourceId),
    groupId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    activated: Type.Boolean(),
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
  },
  strict,
);

/** Response form of a config schema: same fields, nothing required beyond what is always stored. */
const responseConfig = (schema: TObject) => Type.Object(schema.properties, strict);

/** An alert channel as the API answers it; secrets in `config` masked. */
export const AlertChannelSchema = Type.Object(
  {
    id: Type.Integer(),
    type: StringEnum(ALERT_CHANNEL_TYPES),
    config: Type.Union(Object.values(CHANNEL_CONFIG_SCHEMAS).map(responseConfig)),
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
