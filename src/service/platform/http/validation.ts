import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import { validationError } from './errors.js';

const common: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false };

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
  return copy;
}
