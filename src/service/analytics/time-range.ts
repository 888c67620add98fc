/**
 * The time window and buckets of an analytics query (docs/api.md, "Analytics": `from`,
 * `to`, `quickRange`, `aggregationInterval`). Times are epoch milliseconds; every window is
 * half-open, `[from, to)`.
 */
import { badField } from '../platform/http/errors.js';

export { QUICK_RANGES } from './enums.js';
import type { QUICK_RANGES } from './enums.js';
export type QuickRange = (typeof QUICK_RANGES)[number];

/** A half-open window `[fromMs, toMs)`, epoch milliseconds. */
export type TimeWindow = { fromMs: number; toMs: number };

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Midnight UTC of the Monday starting the week of `ms` (ISO 8601 weeks start on Monday). */
function mondayOf(ms: number): number {
  const day = Math.floor(ms / DAY_MS) * DAY_MS;
  // 1970-01-01 was a Thursday: getUTCDay() is 0 for Sunday, so Monday is (day + 6) % 7 days back.
  return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS;
}

/**
 * The window of a quick range, computed in UTC at `nowMs`:
 * - `last24Hours`, `last7Days`, `last30Days`: `[now − 24 h | 7 d | 30 d, now)`;
 * - `thisWeek`: from Monday 00:00 UTC of the current week to now;
 * - `thisMonth`: from the 1st 00:00 UTC of the current month to now;
 * - `lastWeek`: the whole previous Monday-to-Monday week;
 * - `lastMonth`: the whole previous calendar month.
 */
export function quickRangeWindow(range: QuickRange, nowMs: number): TimeWindow {
  const now = new Date(nowMs);
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  switch (range) {
    case 'last24Hours':
      return { fromMs: nowMs - DAY_MS, toMs: nowMs };
    case 'last7Days':
      return { fromMs: nowMs - 7 * DAY_MS, toMs: nowMs };
    case 'last30Days':
      return { fromMs: nowMs - 30 * DAY_MS, toMs: nowMs };
    case 'thisWeek':
      return { fromMs: mondayOf(nowMs), toMs: nowMs };
    case 'thisMonth':
      return { fromMs: monthStart, toMs: nowMs };
    case 'lastWeek': {
      const monday = mondayOf(nowMs);
      return { fromMs: monday - 7 * DAY_MS, toMs: monday };
    }
    case 'lastMonth':
      // Date.UTC normalises month −1 to December of the previous year.
      return { fromMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1), toMs: monthStart };
  }
}

const UNIX_SECONDS = /^\d{1,12}(\.\d{1,3})?$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Parses `from` or `to`: a unix timestamp in seconds (`1735689600`, up to 3 decimals) or an
 * ISO 8601 date or date-time (`2025-01-01`, `2025-01-01T12:00:00Z`; no zone means UTC).
 * @throws HttpError 400 naming the parameter when the value is neither, or before 1970.
 */
export function parseInstant(value: string, field: 'from' | 'to'): number {
  let ms = Number.NaN;
  if (UNIX_SECONDS.test(value)) ms = Math.round(Number(value) * 1000);
  else if (ISO_DATE.test(value)) {
    // A date-time without a zone is read as UTC, like a bare date (Date.parse would use local time).
    const zoned =
      value.length > 10 && !/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? `${value.replace(' ', 'T')}Z` : value;
    ms = Date.parse(zoned);
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw badField(
      field,
      'must be a unix timestamp in seconds or an ISO 8601 date-time at or after 1970-01-01',
      'format',
      'querystring',
    );
  }
  return ms;
}

/**
 * The query's window. A custom `from`/`to` overrides `quickRange`: with only `from`, the window
 * ends now; with only `to`, it starts 24 hours before `to`.
 * @throws HttpError 400 naming `from` when the window is empty (`from` not before `to`).
 */
export function resolveWindow(
  query: { from?: string; to?: string; quickRange: QuickRange },
  nowMs: number,
): TimeWindow {
  if (query.from === undefined && query.to === undefined) return quickRangeWindow(query.quickRange, nowMs);
  const toMs = query.to === undefined ? nowMs : parseInstant(query.to, 'to');
  const fromMs = query.from === undefined ? Math.max(0, toMs - DAY_MS) : parseInstant(query.from, 'from');
  if (fromMs >= toMs) throw badField('from', 'must be before to', 'range', 'querystring');
  return { fromMs, toMs };
}

/**
 * Bucket start of a time: buckets of `intervalMs` aligned to the epoch, so the same interval
 * always yields the same boundaries whatever the window (the first and last bucket of a window
 * may be partial).
 */
export function bucketStartOf(ms: number, intervalMs: number): number {
  return Math.floor(ms / intervalMs) * intervalMs;
}

/** How many buckets of `intervalMs` a window touches. */
export function bucketCount(window: TimeWindow, intervalMs: number): number {
  return (
    (bucketStartOf(window.toMs - 1, intervalMs) - bucketStartOf(window.fromMs, intervalMs)) / intervalMs + 1
  );
}
