/**
 * The 90-day uptime strip of a status-page service (docs/status-pages.md, "The 90-day uptime strip"; the
 * rule is UPTIME_RULE, types.ts, printed in every page's footer). A service with linked checks: per UTC day
 * the share of the final runs of its linked, not-paused checks that did not fail (a degraded run counts as
 * up), lowered to what its incidents give when that is less. A service without: the share of the day
 * without an open MAJOR incident, a MINOR one counting {@link MINOR_DOWN_SHARE} of its time as down. Both:
 * maintenance left out of the day; days before the service existed (and, with checks, days without runs)
 * have no data. Pure: times and counts in, numbers out (epoch ms).
 */
import type { Impact } from '../incidents/schema.js';
import type { RunCounts, UptimeDay, UptimeSummary } from './types.js';

/** One UTC day in milliseconds. */
export const DAY_MS = 86_400_000;
/** Days in a service's uptime strip (today last). */
export const STRIP_DAYS = 90;
/** Days the strip shows on a narrow screen (render.ts hides the older ones under 480 CSS pixels). */
export const NARROW_STRIP_DAYS = 30;
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

/** What {@link uptimeStrip} answers: the days, oldest first, and the uptime over the last 90 and 30 of them. */
export type UptimeStrip = { days: UptimeDay[]; last90: UptimeSummary; last30: UptimeSummary };

/**
 * A service's 90-day strip and its uptime over the last 90 and 30 days per UPTIME_RULE. `incidents` are
 * the service's, each with its span (null: not started). `runs` holds, per strip day (oldest first, 90
 * entries), the final runs of the service's linked, not-paused checks; null for a service without such a
 * check (the incident-only rule). The summaries count only days with data (total up time over total time).
 * Linear in incidents (after sorting their spans) plus days.
 */
export function uptimeStrip(
  incidents: { impact: Impact; span: Span | null }[],
  serviceCreatedAtMs: number,
  nowMs: number,
  runs: readonly (RunCounts | undefined)[] | null = null,
): UptimeStrip {
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
  // Incident time counts only within the part of the day the service existed and that has passed: an
  // incident started before the service (a backdated `startedAt`) must not count against its first day.
  const outside: Span[] = [
    [Number.NEGATIVE_INFINITY, Math.max(first, serviceCreatedAtMs)],
    [nowMs, Number.POSITIVE_INFINITY],
  ];
  spread(subtract(major, outside), first, majorDown);
  spread(subtract(minorOnly, outside), first, minorDown);
  spread(subtract(maintenance, outside), first, maintained);
  const window = (day: number): Span => {
    const dayStart = first + day * DAY_MS;
    return [Math.max(dayStart, serviceCreatedAtMs), Math.min(dayStart + DAY_MS, nowMs)];
  };

  const days: UptimeDay[] = [];
  // Per day: the up time and the time counted (ms); both 0 for a day without data.
  const up = new Float64Array(STRIP_DAYS);
  const counted = new Float64Array(STRIP_DAYS);
  let running = 0;
  const running3 = { MAJOR: 0, MINOR: 0, MAINTENANCE: 0 };
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
    const dayRuns = runs === null ? null : (runs[day] ?? { passed: 0, degraded: 0, failed: 0 });
    const runCount = dayRuns ? dayRuns.passed + dayRuns.degraded + dayRuns.failed : 0;
    let uptimePercent: number | null = null;
    // A day has data once the service existed on it, some of it is not maintenance, and (with linked
    // checks) it has runs.
    if (to > from && denominator > 0 && (dayRuns === null || runCount > 0)) {
      const incidentDown = Math.min(denominator, majorDown[day]! + MINOR_DOWN_SHARE * minorDown[day]!);
      const failedShare = dayRuns ? dayRuns.failed / runCount : 0;
      const downShare = Math.max(incidentDown / denominator, failedShare);
      uptimePercent = round2(100 * (1 - downShare));
      up[day] = denominator * (1 - downShare);
      counted[day] = denominator;
    }
    days.push({
      date: utcDate(first + day * DAY_MS),
      uptimePercent,
      incidentCount: running,
      worstImpact: IMPACTS_BY_RANK[rank]!,
      runs: dayRuns && runCount > 0 ? { ...dayRuns } : null,
    });
  }
  return { days, last90: summary(up, counted, STRIP_DAYS), last30: summary(up, counted, NARROW_STRIP_DAYS) };
}

/** The uptime over the last `length` days of a strip: total up time over total time, days with data only. */
function summary(up: Float64Array, counted: Float64Array, length: number): UptimeSummary {
  let totalUp = 0;
  let totalTime = 0;
  let daysWithData = 0;
  for (let day = STRIP_DAYS - length; day < STRIP_DAYS; day++) {
    if (counted[day]! <= 0) continue;
    totalUp += up[day]!;
    totalTime += counted[day]!;
    daysWithData++;
  }
  return {
    days: length,
    daysWithData,
    percent: totalTime > 0 ? round2((100 * totalUp) / totalTime) : null,
  };
}
