/**
 * The 90-day uptime strip of a status-page service (docs/status-pages.md; the rule is UPTIME_RULE,
 * types.ts, printed in every page's footer): per UTC day the share of the day without an open MAJOR
 * incident, a MINOR one counting {@link MINOR_DOWN_SHARE} of its time as down and maintenance left out of
 * the day. Pure: times in, numbers out (epoch ms).
 */
import type { Impact } from '../incidents/schema.js';
import type { UptimeDay } from './types.js';

/** One UTC day in milliseconds. */
export const DAY_MS = 86_400_000;
/** Days in a service's uptime strip (today last). */
export const STRIP_DAYS = 90;
/** The share of a MINOR incident's time that counts as down (UPTIME_RULE). */
export const MINOR_DOWN_SHARE = 0.3;

/** The worst impact of a day by rank (MAINTENANCE 1 < MINOR 2 < MAJOR 3); rank 0: no incident. */
const IMPACTS_BY_RANK: (Impact | null)[] = [null, 'MAINTENANCE', 'MINOR', 'MAJOR'];

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Start (epoch ms) of the UTC day holding `ms`. */
export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** A time span `[start, end)`, epoch ms. */
export type Span = [number, number];

/** The union of spans, sorted, merged (touching spans merge). */
function union(spans: Span[]): Span[] {
  const sorted = spans.filter((s) => s[1] > s[0]).sort((a, b) => a[0] - b[0]);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else out.push([s[0], s[1]]);
  }
  return out;
}

/** `a` minus `b`, both sorted disjoint unions; linear. */
function subtract(a: Span[], b: Span[]): Span[] {
  const out: Span[] = [];
  let j = 0;
  for (const [start, end] of a) {
    let from = start;
    while (j < b.length && b[j]![1] <= from) j++;
    let k = j;
    while (k < b.length && b[k]![0] < end) {
      if (b[k]![0] > from) out.push([from, b[k]![0]]);
      from = Math.max(from, b[k]![1]);
      k++;
    }
    if (from < end) out.push([from, end]);
  }
  return out;
}

/** Adds each span's time to the days it covers (`perDay[i]` is the day starting `first + i × DAY_MS`). */
function spread(spans: Span[], first: number, perDay: Float64Array): void {
  const days = perDay.length;
  for (const [start, end] of spans) {
    const from = Math.max(start, first);
    const to = Math.min(end, first + days * DAY_MS);
    let day = Math.floor((from - first) / DAY_MS);
    let t = from;
    while (t < to && day < days) {
      const dayEnd = first + (day + 1) * DAY_MS;
      perDay[day]! += Math.min(to, dayEnd) - t;
      t = dayEnd;
      day++;
    }
  }
}

/** Rounds a percent to 2 decimals (what the page shows). */
function round2(percent: number): number {
  return Math.round(percent * 100) / 100;
}

/**
 * A service's 90-day strip and its 90-day uptime per UPTIME_RULE. `incidents` are the service's, each with
 * its span (null: not started). Linear in incidents (after sorting their spans) plus days.
 */
export function uptimeStrip(
  incidents: { impact: Impact; span: Span | null }[],
  serviceCreatedAtMs: number,
  nowMs: number,
): { days: UptimeDay[]; percent90d: number | null } {
  const first = utcDayStart(nowMs) - (STRIP_DAYS - 1) * DAY_MS;
  const byImpact: Record<Impact, Span[]> = { MAJOR: [], MINOR: [], MAINTENANCE: [] };
  // Difference arrays of incidents open per day and per impact.
  const counts = new Int32Array(STRIP_DAYS + 1);
  const perImpact: Record<Impact, Int32Array> = {
    MAJOR: new Int32Array(STRIP_DAYS + 1),
    MINOR: new Int32Array(STRIP_DAYS + 1),
    MAINTENANCE: new Int32Array(STRIP_DAYS + 1),
  };
  const last = first + STRIP_DAYS * DAY_MS;
  for (const { impact, span } of incidents) {
    if (!span) continue;
    byImpact[impact].push(span);
    const [start, end] = span;
    // The last instant the span covers: one ending exactly at midnight does not touch the next day; a
    // zero-length one counts on its day.
    const lastInstant = end > start ? end - 1 : end;
    if (lastInstant < first || start >= last) continue;
    const fromDay = Math.max(0, Math.floor((start - first) / DAY_MS));
    const endDay = Math.min(STRIP_DAYS - 1, Math.floor((lastInstant - first) / DAY_MS));
    if (endDay < fromDay) continue;
    counts[fromDay]! += 1;
    counts[endDay + 1]! -= 1;
    perImpact[impact][fromDay]! += 1;
    perImpact[impact][endDay + 1]! -= 1;
  }
  const maintenance = union(byImpact.MAINTENANCE);
  const major = subtract(union(byImpact.MAJOR), maintenance);
  const minorOnly = subtract(subtract(union(byImpact.MINOR), union(byImpact.MAJOR)), maintenance);
  const majorDown = new Float64Array(STRIP_DAYS);
  const minorDown = new Float64Array(STRIP_DAYS);
  const maintained = new Float64Array(STRIP_DAYS);
  spread(major, first, majorDown);
  spread(minorOnly, first, minorDown);
  // Maintenance counts only within the part of the day the service existed and that has passed.
  const window = (day: number): Span => {
    const dayStart = first + day * DAY_MS;
    return [Math.max(dayStart, serviceCreatedAtMs), Math.min(dayStart + DAY_MS, nowMs)];
  };
  const clippedMaintenance = subtract(maintenance, [
    [Number.NEGATIVE_INFINITY, Math.max(first, serviceCreatedAtMs)],
    [nowMs, Number.POSITIVE_INFINITY],
  ]);
  spread(clippedMaintenance, first, maintained);

  const days: UptimeDay[] = [];
  let running = 0;
  const running3 = { MAJOR: 0, MINOR: 0, MAINTENANCE: 0 };
  let totalUp = 0;
  let totalTime = 0;
  for (let day = 0; day < STRIP_DAYS; day++) {
    running += counts[day]!;
    running3.MAJOR += perImpact.MAJOR[day]!;
    running3.MINOR += perImpact.MINOR[day]!;
    running3.MAINTENANCE += perImpact.MAINTENANCE[day]!;
    let rank = 0;
    if (running3.MAINTENANCE > 0) rank = 1;
    if (running3.MINOR > 0) rank = 2;
    if (running3.MAJOR > 0) rank = 3;
    const [from, to] = window(day);
    const denominator = to - from - maintained[day]!;
    let uptimePercent: number | null = null;
    if (to > from && denominator > 0) {
      const down = Math.min(denominator, majorDown[day]! + MINOR_DOWN_SHARE * minorDown[day]!);
      uptimePercent = round2(100 * (1 - down / denominator));
      totalUp += denominator - down;
      totalTime += denominator;
    }
    days.push({
      date: utcDate(first + day * DAY_MS),
      uptimePercent,
      incidentCount: running,
      worstImpact: IMPACTS_BY_RANK[rank]!,
    });
  }
  return { days, percent90d: totalTime > 0 ? round2((100 * totalUp) / totalTime) : null };
}
