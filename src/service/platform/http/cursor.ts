import { type SelectQueryBuilder, sql } from 'kysely';
import { badField } from './errors.js';
export { CursorQuery, cursorPage } from './pagination.js';

/**
 * Position of a row in a keyset-paginated list ordered by `(created_at, id)`
 * ascending: the first row of the next page. `createdAtMs` is epoch ms.
 */
export type CursorKey = { createdAtMs: number; id: string };

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
 * `query` (a select from one table with `created_at`, epoch ms, and a text `id`) ordered by
 * `(created_at, id)` ascending, from the row the cursor `nextId` names on (every row when it
 * is undefined). The `(account_id, created_at, id)` indexes of the listed tables serve it.
 * @throws HttpError 400 naming `nextId` in the querystring when it is not a cursor this service answered.
 */
export function inKeysetOrder<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  nextId: string | undefined,
): SelectQueryBuilder<DB, TB, O> {
  const from = nextId === undefined ? undefined : decodeCursor(nextId);
  const createdAt = sql.ref('created_at');
  const id = sql.ref('id');
  const ordered = query.orderBy(createdAt).orderBy(id);
  if (!from) return ordered;
  return ordered.where((eb) =>
    eb.or([
      eb(createdAt, '>', from.createdAtMs),
      eb.and([eb(createdAt, '=', from.createdAtMs), eb(id, '>=', from.id)]),
    ]),
  );
}

/**
 * One page of `query` in `(created_at, id)` order from the cursor on (see {@link inKeysetOrder}):
 * at most `limit` rows, and the cursor of the next page (null at the end).
 * @throws HttpError 400 naming `nextId` in the querystring when it is not a cursor this service answered.
 */
export async function keysetPage<DB, TB extends keyof DB, O extends { id: string; created_at: number }>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: { limit: number; nextId?: string | undefined },
): Promise<{ rows: O[]; nextId: string | null }> {
  return pageOf(
    await inKeysetOrder(query, page.nextId)
      .limit(page.limit + 1)
      .execute(),
    page.limit,
  );
}

/**
 * Splits `limit + 1` rows fetched from the cursor on into the page and the
 * cursor of the next page (null at the end).
 */
function pageOf<R extends { id: string; created_at: number }>(
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
