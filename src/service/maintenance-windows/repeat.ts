/**
 * When a maintenance window is on (docs/api.md, "Maintenance windows"): its occurrences, computed in the
 * window's IANA time zone with the runtime's `Intl` time-zone data, so a 02:00–04:00 window stays
 * 02:00–04:00 local time across daylight-saving changes. Pure: no store, no clock.
 *
 * Times are epoch ms. A "wall time" is a local date and time in the zone written as if it were UTC
 * (`Date.UTC(year, month, day, hour, …)`): calendar arithmetic on it (a day on, a month on) knows no
 * daylight saving; the zone is applied only when it becomes an instant again.
 */

/** How a window repeats: every `interval` days, weeks or months. */
export type RepeatUnit = 'DAY' | 'WEEK' | 'MONTH';

/** What the occurrences of a window depend on. */
export type WindowTimes = {
  /** Start of the first occurrence, epoch ms. */
  startsAtMs: number;
  /** End of the first occurrence, epoch ms (at or after `startsAtMs`; equal: a window that is never on). */
  endsAtMs: number;
  /** IANA time zone the repeats are computed in (`UTC`, `Europe/Berlin`). */
  timezone: string;
  /** Null: the window happens once. */
  repeatUnit: RepeatUnit | null;
  /** Units between two starts, 1–365 (taken as 1 when null and `repeatUnit` is set). */
  repeatInterval: number | null;
  /** Last local calendar date (`YYYY-MM-DD`, in `timezone`) an occurrence may start on; null: forever. */
  repeatEndsOn: string | null;
};

/** One occurrence of a window: `[startMs, endMs)`, epoch ms. */
export type Occurrence = { startMs: number; endMs: number };

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** A cached formatter of `timezone` giving every field as numbers (24-hour clock). @throws RangeError unknown zone. */
function formatterOf(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** Whether `timezone` is a named IANA zone the runtime knows (`UTC` too; not an offset like `+05:00`). */
export function isIanaZone(timezone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(timezone)) return false;
  try {
    formatterOf(timezone);
    return true;
  } catch {
    return false;
  }
}

/** The zone's offset from UTC at the instant `ms`, in ms (Berlin in summer: 7 200 000). */
export function offsetAt(timezone: string, ms: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timezone).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const asUtc = Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

/** The wall time in `timezone` at the instant `ms`. */
export function wallTimeOf(timezone: string, ms: number): number {
  return ms + offsetAt(timezone, ms);
}

/**
 * The instant a wall time in `timezone` names. A wall time that happens twice (clocks turned back) is the
 * first of the two; one that never happens (clocks turned forward) is moved on by the gap, as clocks are
 * (02:30 on the day Berlin skips 02:00–03:00 is 03:30 summer time).
 */
export function instantOf(timezone: string, wall: number): number {
  const before = offsetAt(timezone, wall - DAY_MS);
  const after = offsetAt(timezone, wall + DAY_MS);
  const candidates = [wall - before, wall - after].filter((ms) => wallTimeOf(timezone, ms) === wall);
  if (candidates.length > 0) return Math.min(...candidates);
  return wall - before;
}

/** `wall` moved on by `months` calendar months, the day of month kept or cut to the month's last day. */
function addMonths(wall: number, months: number): number {
  const date = new Date(wall);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const timeOfDay = (((wall % DAY_MS) + DAY_MS) % DAY_MS) as number;
  return Date.UTC(year, month, Math.min(date.getUTCDate(), lastDay)) + timeOfDay;
}

/** The wall time of the start of occurrence `k` (0: the first), from the first start's wall time. */
function startOf(first: number, unit: RepeatUnit, step: number, k: number): number {
  if (unit === 'MONTH') return addMonths(first, k * step);
  return first + k * step * (unit === 'WEEK' ? 7 : 1) * DAY_MS;
}

/** The local calendar date (`YYYY-MM-DD`) of a wall time. */
function dateOf(wall: number): string {
  return new Date(wall).toISOString().slice(0, 10);
}

/**
 * Occurrences of `window` from the one in progress or next at `atMs` on, in order, at most `limit`.
 * A window that happens once has one occurrence (if it has not ended by `atMs`); a zero-length
 * occurrence is never listed.
 */
export function occurrencesFrom(window: WindowTimes, atMs: number, limit: number): Occurrence[] {
  if (window.endsAtMs <= window.startsAtMs || limit <= 0) return [];
  if (window.repeatUnit === null) {
    return window.endsAtMs > atMs ? [{ startMs: window.startsAtMs, endMs: window.endsAtMs }] : [];
  }
  const { timezone, repeatUnit: unit } = window;
  const step = window.repeatInterval ?? 1;
  const firstStart = wallTimeOf(timezone, window.startsAtMs);
  const length = wallTimeOf(timezone, window.endsAtMs) - firstStart;
  // Occurrences are at least 23 hours × `step` apart in wall time (28 days for months): start a few
  // earlier than the one `atMs` falls in, far enough back for one still in progress.
  const now = wallTimeOf(timezone, atMs);
  const minGap = (unit === 'MONTH' ? 28 * DAY_MS : unit === 'WEEK' ? 7 * DAY_MS : DAY_MS) * step;
  const back = Math.ceil(Math.max(length, 0) / minGap) + 2;
  let k =
    unit === 'MONTH'
      ? Math.floor(monthsBetween(firstStart, now) / step) - back
      : Math.floor((now - firstStart) / minGap) - back;
  k = Math.max(0, k);
  const found: Occurrence[] = [];
  // Bounded: an occurrence is found or the repeats end within `back` + `limit` steps, plus the ones
  // skipped (zero-length after a daylight-saving change).
  for (let guard = 0; found.length < limit && guard < back + limit + 4; guard += 1, k += 1) {
    const startWall = startOf(firstStart, unit, step, k);
    if (window.repeatEndsOn !== null && dateOf(startWall) > window.repeatEndsOn) break;
    const startMs = instantOf(timezone, startWall);
    const endMs = instantOf(timezone, startWall + length);
    if (endMs > atMs && endMs > startMs) found.push({ startMs, endMs });
  }
  return found;
}

/** Whole calendar months from the wall time `a` to `b` (negative when `b` is earlier). */
function monthsBetween(a: number, b: number): number {
  const from = new Date(a);
  const to = new Date(b);
  return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth();
}

/** The occurrence of `window` in progress at `atMs` (start ≤ atMs < end), or null. */
export function occurrenceAt(window: WindowTimes, atMs: number): Occurrence | null {
  const [next] = occurrencesFrom(window, atMs, 1);
  return next && next.startMs <= atMs ? next : null;
}
