import { type TObject, Type } from '@sinclair/typebox';
import { Defaulted, Nullable, strict } from './schema-helpers.js';

/**
 * `limit` (1–100, default 10) and `page` (from 1, default 1), the paging of
 * variables, error groups and analytics (docs/api.md, "Limits").
 */
export const PageQuery = (defaultLimit = 10) =>
  Type.Object(
    {
      limit: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit })),
      page: Defaulted(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    },
    strict,
  );

/** Row offset of a page. */
export function offsetOf(query: { limit: number; page: number }): number {
  return (query.page - 1) * query.limit;
}

/** Epoch ms → ISO date-time; null stays null (so a time that is never null gives a string). */
export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
}

/**
 * Query of the cursor-paginated lists (docs/api.md, "Status pages and services"):
 * `limit` 1–100 (default 20) and `nextId`, the opaque cursor a previous page
 * answered. Status-page services add `paginated` to these properties.
 */
export const CursorQuery = Type.Object(
  {
    limit: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    nextId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  strict,
);

/** A page of a cursor-paginated list: `length` entries, `nextId` null at the end. */
export const cursorPage = <T extends TObject>(entry: T) =>
  Type.Object({ length: Type.Integer(), entries: Type.Array(entry), nextId: Nullable(Type.String()) });
