import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import { validationError } from './errors.js';

const common: Options = {
  allErrors: false,
  useDefaults: true,
  removeAdditional: false,
  strict: false,
  // Ajv's optimisation pass (dropping unused names from the generated code) was half of the service's start-up
  // CPU, about 1.3 s of 3.4, for the 350 validators its routes compile; the validators it leaves are as fast
  // (about 1 µs for a check body either way).
  code: { optimize: false },
};

/** Validator for JSON bodies: no type coercion, so `"true"` is not a boolean. */
export const bodyAjv = addFormats.default(new Ajv({ ...common, coerceTypes: false }));

/** Validator for query strings, params and headers: strings coerced to the declared types. */
export const queryAjv = addFormats.default(new Ajv({ ...common, coerceTypes: 'array' }));

/**
 * Validates a part of a JSON body that the route's schema can only check once something else is
 * known (a check's `request` against its stored type, an alert channel's `config` against its
 * `type`), as the body validator would: no coercion, the schema's defaults applied to a copy.
 * Compiled validators are kept by ajv per schema object.
 * @param prefix where the part sits in the body (`request`, `config`): errors name `<prefix>.<field>`.
 * @returns the validated copy of `value`, defaults applied.
 * @throws HttpError 400 OUTPOST_ERR_VALIDATION naming the first bad field, as a route's schema would.
 */
export function validateBodyPart<T extends TSchema>(schema: T, value: unknown, prefix: string): Static<T> {
  const validate = bodyAjv.compile<Static<T>>(schema);
  const copy = structuredClone(value);
  if (!validate(copy)) throw validationError(validate.errors ?? [], 'body', prefix);
  dropIgnored(schema, copy);
  return copy;
}

/** A validator as fastify takes it: false with `errors` set, or true once the body is valid. */
export interface BodyValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * The validator of a route's JSON body: {@link bodyAjv}'s, then the body's ignored fields (schema-helpers.ts,
 * `Ignored`: marked `readOnly`) dropped from the validated body, at every depth, so no handler sees them.
 */
export function bodyValidator(schema: TSchema): BodyValidator {
  const validate = bodyAjv.compile(schema);
  const wrapped: BodyValidator = (data) => {
    if (!validate(data)) {
      wrapped.errors = validate.errors ?? null;
      return false;
    }
    dropIgnored(schema, data);
    return true;
  };
  return wrapped;
}

type SchemaNode = {
  readOnly?: boolean;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode | SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  allOf?: SchemaNode[];
};

/**
 * Deletes from `value` (validated against `schema`) the properties whose schema is marked `readOnly`, following
 * objects, array items and the branches of unions. Bounded by the schema's depth and the value's size, both
 * already bounded by validation.
 */
function dropIgnored(schema: TSchema, value: unknown): void {
  const node = schema as SchemaNode;
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    const items = node.items;
    if (items && !Array.isArray(items)) for (const item of value) dropIgnored(items as TSchema, item);
  } else if (node.properties) {
    const object = value as Record<string, unknown>;
    for (const [name, property] of Object.entries(node.properties)) {
      if (!(name in object)) continue;
      if (property.readOnly === true) delete object[name];
      else dropIgnored(property as TSchema, object[name]);
    }
  }
  for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) {
    dropIgnored(branch as TSchema, value);
  }
}
