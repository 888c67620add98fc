import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox';

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
  attributes: Type.Record(Type.String(), Type.Unknown()),
});

/** Path parameter `id` as a string. */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
