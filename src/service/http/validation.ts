import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';

const common: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false };

/** Validator for JSON bodies: no type coercion, so `"true"` is not a boolean. */
export const bodyAjv = addFormats.default(new Ajv({ ...common, coerceTypes: false }));

/** Validator for query strings, params and headers: strings coerced to the declared types. */
export const queryAjv = addFormats.default(new Ajv({ ...common, coerceTypes: 'array' }));
