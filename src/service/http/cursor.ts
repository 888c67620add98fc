import { Type } from '@sinclair/typebox';
import { badField } from './errors.js';

const strict = { additionalProperties: false } as const;

/**
 * Position of a row in a keyset-paginated list ordered by `(created_at, id)`
 * ascending: the first row of the next page. `createdAtMs` is epoch ms.
 */
export type CursorKey = { createdAtMs: number; id: string };

/**
 * Query of the cursor-paginated lists (docs/api.md, "Status pages and services"):
 * `limit` 1–100 (default 20) and `nextId`, the opaque cursor a previous page
 * answered. Services add `paginated` (see {@link ServiceListQuery}).
 */
export const CursorQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    nextId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  strict,
);

/**
 * Encodes a cursor as base64url of `[createdAtMs, id]`. The cursor names the
 * next row by its sort key, not by its offset, so rows inserted or deleted
 * between two calls neither repeat nor skip the rows that were already there.
 */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.createdAtMs, key.id]), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeCursor}.
 * @throws HttpError 400 naming `nextId` in the querystring when it is not one.
 */
export function decodeCursor(cursor: string): CursorKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 2 &&
    Number.isSafeInteger(parsed[0]) &&
    typeof parsed[1] === 'string' &&
    parsed[1].length > 0
  ) {
    return { createdAtMs: parsed[0] as number, id: parsed[1] };
  }
  throw badField('nextId', 'is not a cursor this service answered', 'cursor', 'querystring');
}

/**
 * Splits `limit + 1` rows fetched from the cursor on into the page and the
 * cursor of the next page (null at the end).
 */
export function pageOf<R extends { id: string; created_at: number }>(
  rows: R[],
  limit: number,
): { rows: R[]; nextId: string | null } {
  if (rows.length <= limit) return { rows, nextId: null };
  const next = rows[limit]!;
  return {
    rows: rows.slice(0, limit),
    nextId: encodeCursor({ createdAtMs: Number(next.created_at), id: next.id }),
  };
}
