import { type Static, Type } from '@sinclair/typebox';
import { EnvironmentVariableSchema } from '../../checks/schemas.js';
import { strict, NullableTimestamp, Timestamp } from '../../platform/http/schema-helpers.js';

const { key, value } = EnvironmentVariableSchema.properties;

/**
 * Body of `POST /v1/variables` (docs/api.md, "Environment variable"): `key` (a shell
 * identifier, at most 128 characters) and `value` (at most 131 072 characters)
 * required; `locked` and `secret` default false. The same item rules as a check's
 * `environmentVariables`, so a variable moves between the two unchanged.
 */
export const CreateVariableBody = Type.Object(
  {
    key,
    value,
    locked: Type.Optional(Type.Boolean({ default: false })),
    secret: Type.Optional(Type.Boolean({ default: false })),
  },
  strict,
);
export type CreateVariable = Static<typeof CreateVariableBody>;

/**
 * Body of `PUT /v1/variables/{key}`: `value` required (a secret value cannot be
 * read back, so a replacement always names it); `locked` and `secret` keep their
 * stored values when omitted. `key` may be sent but must equal the path's.
 */
export const UpdateVariableBody = Type.Object(
  {
    key: Type.Optional(key),
    value,
    locked: Type.Optional(Type.Boolean()),
    secret: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type UpdateVariable = Static<typeof UpdateVariableBody>;

/** Path parameter `key`, with the key's own rules so a malformed key is a 400, not a 404. */
export const VariableKeyParams = Type.Object({ key }, strict);

/**
 * A variable as the API shows it: the value of a `secret` variable is always
 * `*****`. `created_at` is a date-time, `updated_at` null until the first update.
 */
export const VariableSchema = Type.Object(
  {
    key: Type.String(),
    value: Type.String(),
    locked: Type.Boolean(),
    secret: Type.Boolean(),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  strict,
);
export type Variable = Static<typeof VariableSchema>;
