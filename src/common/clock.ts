let lastMs = 0;

/**
 * Now as a Date, strictly later than the one this function returned before
 * (by at least 1 ms). Records created in one burst then keep their creation
 * order when sorted by `created_at`, which newest-first lists and cursors rely on.
 */
export function monotonicDate(): Date {
  lastMs = Math.max(Date.now(), lastMs + 1);
  return new Date(lastMs);
}

/**
 * Milliseconds rounded to microseconds (3 decimals), as curl -w and ping print them: the
 * precision of every duration in a result.
 */
export function roundMs(value: number): number {
  return Math.round(value * 1000) / 1000;
}

let isoMs = Number.NaN;
let isoText = '';

/**
 * Now as an ISO 8601 string (`new Date().toISOString()`), built once per millisecond: checks
 * that end in a burst stamp many log lines and results within one, and formatting the date cost
 * more than a microsecond each time.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}
