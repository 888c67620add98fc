import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { SERVICE_ERROR_CODES, type ServiceErrorCode } from './error-codes.js';

/** Options of an object schema that refuses unknown fields (answered as 400 naming the field). */
export const strict = { additionalProperties: false } as const;

/**
 * A string enum as one JSON Schema `enum` (not an anyOf of constants), so a
 * bad value gets one clear error listing the allowed values.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * A property the client may leave out, whose schema `default` the validator fills in before the
 * handler runs (our ajv compilers apply defaults, http/validation.ts): optional in the JSON
 * Schema, so not in `required`, yet present in the static type, so a handler reads it without a
 * check or a cast.
 * @throws Error when `schema` has no `default` (a programming error, raised at module load).
 */
export function Defaulted<T extends TSchema>(schema: T): T {
  if (!('default' in schema)) throw new Error('Defaulted needs a schema with a default');
  return Type.Optional(schema) as unknown as T;
}

/** An integer enum as one JSON Schema `enum`. */
export function IntegerEnum<const T extends readonly number[]>(
  values: T,
  options: Record<string, unknown> = {},
) {
  return Type.Unsafe<T[number]>({ type: 'integer', enum: [...values], ...options });
}

/**
 * `T | null` as one schema with `type: [t, "null"]` when T is a simple typed
 * schema, so limits like `maximum` still produce a single clear error.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<T['static'] | null> {
  const s = schema as unknown as Record<string, unknown>;
  if (typeof s.type === 'string' && !('enum' in s)) {
    return Type.Unsafe<T['static'] | null>({ ...s, type: [s.type, 'null'] });
  }
  if (typeof s.type === 'string' && Array.isArray(s.enum)) {
    return Type.Unsafe<T['static'] | null>({ ...s, type: [s.type, 'null'], enum: [...s.enum, null] });
  }
  return Type.Unsafe<T['static'] | null>({ anyOf: [schema, { type: 'null' }] });
}

/** The spec's error body, for response schemas and the OpenAPI document. */
export const ErrorBodySchema = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
  attributes: Type.Object(
    {
      code: StringEnum(Object.keys(SERVICE_ERROR_CODES) as ServiceErrorCode[], {
        description: 'Stable code of the error (docs/errors.md)',
      }),
    },
    { additionalProperties: true },
  ),
});

/** A date-time as the API answers times: ISO 8601 in UTC. */
export const Timestamp = Type.String({ format: 'date-time' });

/** A date-time or null (`updated_at` before the first update, a run not stopped yet). */
export const NullableTimestamp = Nullable(Timestamp);

/** The id of a resource the service assigns (UUIDs and the like) in a path: 1 to 64 characters. */
export const ResourceId = Type.String({ minLength: 1, maxLength: 64 });

/** Path parameter `id` of string-id resources. */
export const IdParams = Type.Object({ id: ResourceId }, strict);

/**
 * Path parameter `id` of integer-id resources (check groups, alert channels, snippets):
 * 1 to 2^31−1, PostgreSQL's `integer`.
 */
export const IntegerIdParams = Type.Object(
  { id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) },
  strict,
);

/** Path parameter `checkId` (the results, error groups and artifacts of one check). */
export const CheckIdParams = Type.Object({ checkId: ResourceId }, strict);

/**
 * The response schema of a 204: no body, so a handler ends with `reply.code(204).send()`
 * (shown as `null` in the OpenAPI document).
 */
export const NoContent = Type.Unsafe<undefined>(Type.Null({ description: 'No Content' }));

/**
 * A body field the API accepts and ignores: one it answers and clients send back whole (`id`, `created_at`,
 * `createdAt`, `updated_at`), or one of another version or another check type that the hosted API's clients
 * marshal with their zero values (the Go SDK sends `heartbeat: {period: 0, …}` with an API check). It must
 * have the declared shape (a bad type is still a 400 naming it), and it is dropped before the handler
 * (validation.ts, `bodyValidator`): nothing stores it. A field no version of the API has stays unknown and
 * refused. Marked `readOnly` in the OpenAPI document.
 * @param why what the field is, for the document's description.
 */
export function Ignored<T extends TSchema>(schema: T, why: string) {
  return Type.Optional(
    Type.Unsafe<T['static']>({ ...schema, readOnly: true, description: `Accepted and ignored: ${why}` }),
  );
}

/** The timestamps every resource answers and its clients send back, in both spellings: accepted and ignored. */
export const echoedTimestampFields = {
  created_at: Ignored(Nullable(Type.String({ maxLength: 64 })), 'set by the service'),
  createdAt: Ignored(Nullable(Type.String({ maxLength: 64 })), 'set by the service'),
  updated_at: Ignored(Nullable(Type.String({ maxLength: 64 })), 'set by the service'),
  updatedAt: Ignored(Nullable(Type.String({ maxLength: 64 })), 'set by the service'),
};

/** The fields every resource answers and its clients send back: its id and timestamps, accepted and ignored. */
export const echoedResourceFields = {
  id: Ignored(
    Type.Union([Type.Integer(), Type.String({ maxLength: 64 }), Type.Null()]),
    "the id is the path's or the service's",
  ),
  ...echoedTimestampFields,
};

/** Names of {@link echoedResourceFields}: never in a validated body (the validator drops them). */
export type EchoedField = keyof typeof echoedResourceFields;
