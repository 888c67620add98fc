import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from '../../http/schema-helpers.js';

const strict = { additionalProperties: false } as const;

/** Most bytes of UTF-8 a snippet's `script` may hold: 128 KiB. */
export const SNIPPET_SCRIPT_MAX_BYTES = 131_072;

/** Path parameter `id` of a snippet: an integer, 1 to 2^31−1 (spec: `DELETE /v1/snippets/{id}`, path `id` integer). */
export const SnippetIdParams = Type.Object(
  { id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) },
  strict,
);

/**
 * Body of `POST /v1/snippets`: `name` (1–255 characters) and `script`
 * (server-side JavaScript, at most 128 KiB of UTF-8; the byte count is checked
 * after the schema, which bounds characters).
 */
export const CreateSnippetBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    script: Type.String({ maxLength: SNIPPET_SCRIPT_MAX_BYTES }),
  },
  strict,
);
/** A validated create body. */
export type CreateSnippet = Static<typeof CreateSnippetBody>;

/** Body of `PUT /v1/snippets/{id}`: `name` and/or `script`; fields left out keep their value. */
export const UpdateSnippetBody = Type.Partial(CreateSnippetBody, strict);
/** A validated update body: only the fields the caller sent. */
export type UpdateSnippet = Static<typeof UpdateSnippetBody>;

/** A snippet as the API answers it. */
export const SnippetSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    script: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  strict,
);
/** A snippet as answered. */
export type Snippet = Static<typeof SnippetSchema>;
