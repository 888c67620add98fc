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

/** One day in ms. */
const DAY_MS = 86_400_000;
/** First epoch ms past 9999-12-31T23:59:59.999Z: later times have a six-digit year, left to Date. */
const FOUR_DIGIT_YEARS_END_MS = 253_402_300_800_000;
/** Most day prefixes {@link iso} keeps (about 11 years of days); it starts over past it. */
const MAX_DAY_PREFIXES = 4096;
/** `YYYY-MM-DDT` by day number since the epoch. */
const dayPrefixes = new Map<number, string>();
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * Epoch ms → ISO date-time, as `Date.prototype.toISOString` writes it (`2026-11-29T18:04:05.006Z`); null stays
 * null (so a time that is never null gives a string).
 *
 * Lists write three times per entry (10,000 checks' statuses: 30,000), and `toISOString` of a new Date costs
 * 0.6 µs each; this writes the time of day by hand after the day's `YYYY-MM-DDT`, kept by day: 0.1 µs. Times
 * that are not whole ms from 1970 to 9999 go to Date, which gives the same text.
 * @throws RangeError for a value that is not a time (NaN), as toISOString does.
 */
export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  const t = Number(ms);
  if (!Number.isInteger(t) || t < 0 || t >= FOUR_DIGIT_YEARS_END_MS) return new Date(t).toISOString();
  const day = Math.floor(t / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= MAX_DAY_PREFIXES) dayPrefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  let rest = t - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${prefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest - seconds * 1000]}Z`;
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
