import { type Static, Type } from '@sinclair/typebox';
import { ROLES } from '../../platform/http/roles.js';
import { Nullable, strict, NullableTimestamp, Timestamp } from '../../platform/http/schema-helpers.js';

/** A role, as `ROLES` lists them (platform/http/roles.ts, which imports nothing: the web app reads this). */
export const RoleSchema = Type.Union(ROLES.map((role) => Type.Literal(role)));

/**
 * Body of `POST /v1/api-keys` (docs/api.md, "API keys"): `name`, 1–100 characters, to tell keys apart
 * ("CI deploy", "Grafana"); the name `embedded-agent` is the embedded agent's and is refused. `role`: what the
 * key may do, at most the role of the caller (default: the caller's). `expiresAt`: when it stops working, in
 * the future; none: never.
 */
export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    role: Type.Optional(RoleSchema),
    expiresAt: Type.Optional(Timestamp),
  },
  strict,
);
export type CreateApiKey = Static<typeof CreateApiKeyBody>;

/** Path parameter `id` of an API key: the UUID its listing shows. */
export const ApiKeyIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, strict);

const apiKeyFields = {
  id: Type.String(),
  /** The name given at creation; null for the first key of the account (made by `outpost up`). */
  name: Nullable(Type.String()),
  /** The first characters of the key (`op_` and four more), to recognise it; never the key. */
  keyPrefix: Type.String(),
  /** What the key may do (docs/teams.md, "Roles"). */
  role: RoleSchema,
  createdAt: Timestamp,
  /** When the key stops working; null: never. */
  expiresAt: NullableTimestamp,
  /** The last request made with the key or with a web session opened with it, to the minute. */
  lastUsedAt: NullableTimestamp,
};

/** An API key as listed: never the key itself nor its hash. */
export const ApiKeySchema = Type.Object(apiKeyFields, strict);
export type ApiKeyView = Static<typeof ApiKeySchema>;

/** The answer of `POST /v1/api-keys`: the key as listed, and `rawKey`, the key itself, in this answer only. */
export const CreatedApiKeySchema = Type.Object({ ...apiKeyFields, rawKey: Type.String() }, strict);
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;
