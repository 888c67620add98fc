import { type Static, Type } from '@sinclair/typebox';
import { CHECK_TYPE_REGISTRY } from './types/registry.js';
import { type CheckSharedResponseSchema, checkTypeResponseSchema } from './types/response-schemas.js';
import { UpdateAnyCheckBody } from './types/update.js';

/**
 * A check as the API answers it (docs/api.md, "Check"): the answer of its type (types/response-schemas.ts,
 * one per entry of the registry), told apart by `checkType`; the OpenAPI document adds the `oneOf`'s
 * discriminator. The response schema of the check routes: Fastify serialises answers through it. Its static
 * type is CheckResponse (the shared fields typed, the type's own open): the service builds answers from
 * stored documents of any type.
 */
export const CheckResponseSchema = Type.Unsafe<CheckResponse>({
  title: 'Check',
  description: 'A check as the API answers it: the schema of its checkType.',
  oneOf: CHECK_TYPE_REGISTRY.map((entry) => checkTypeResponseSchema(entry, UpdateAnyCheckBody.properties)),
});

/** A check as the API answers it: the fields every check answers typed, the type's own open. */
export type CheckResponse = Static<typeof CheckSharedResponseSchema>;
