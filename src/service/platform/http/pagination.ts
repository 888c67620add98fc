import { Type } from '@sinclair/typebox';
import { Defaulted, strict } from './schema-helpers.js';

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
