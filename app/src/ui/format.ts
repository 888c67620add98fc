/** Formatting shared by the pages. Every time is shown in the browser's time zone. */

/** `1.23 s`, `845 ms`, `12 µs`; an em dash for null. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms * 1000)} µs`;
}

/** `99.31 %`; an em dash for null. */
export function formatPercent(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `${value.toFixed(digits)} %`;
}

/** A date-time in the browser's locale, to the second. */
export function formatDateTime(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  return date.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** Built once: constructing a formatter costs more than formatting (a list of 1,000 checks calls it 1,000 times). */
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** `3 min ago`, `in 2 h`: relative to now. */
export function formatRelative(iso: string | number | null | undefined, nowMs = Date.now()): string {
  if (iso === null || iso === undefined) return 'never';
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return '—';
  const seconds = Math.round((then - nowMs) / 1000);
  const abs = Math.abs(seconds);
  const [value, unit] =
    abs < 60
      ? [seconds, 'second']
      : abs < 3600
        ? [Math.round(seconds / 60), 'minute']
        : abs < 86_400
          ? [Math.round(seconds / 3600), 'hour']
          : [Math.round(seconds / 86_400), 'day'];
  return RELATIVE.format(value, unit as Intl.RelativeTimeFormatUnit);
}

/** `1.2 MB`. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A check frequency in minutes as text: `every 10 s`, `every 5 min`, `every 1 h`. */
export function formatFrequency(minutes: number, offsetSeconds?: number | null): string {
  if (minutes === 0) return `every ${offsetSeconds ?? 10} s`;
  if (minutes % 60 === 0) return `every ${minutes / 60} h`;
  return `every ${minutes} min`;
}
