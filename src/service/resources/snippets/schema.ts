import { type Static, Type } from '@sinclair/typebox';
import {
  echoedResourceFields,
  NullableTimestamp,
  strict,
  Timestamp,
} from '../../platform/http/schema-helpers.js';

/** Most bytes of UTF-8 a snippet's `script` may hold: 128 KiB. */
export const SNIPPET_SCRIPT_MAX_BYTES = 131_072;

/**
 * Body of `POST /v1/snippets`: `name` (1–255 characters) and `script`
 * (server-side JavaScript, at most 128 KiB of UTF-8; the byte count is checked
 * after the schema, which bounds characters).
 */
export const CreateSnippetBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    script: Type.String({ maxLength: SNIPPET_SCRIPT_MAX_BYTES }),
    ...echoedResourceFields,
  },
  strict,
);

/** Body of `PUT /v1/snippets/{id}`: `name` and/or `script`; fields left out keep their value. */
export const UpdateSnippetBody = Type.Partial(CreateSnippetBody, strict);

/** A snippet as the API answers it. */
export const SnippetSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    script: Type.String(),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  strict,
);
/** A snippet as answered. */
export type Snippet = Static<typeof SnippetSchema>;
