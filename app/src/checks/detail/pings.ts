/**
 * Whether each ping of a heartbeat monitor came on time, worked out from its expectation as docs/heartbeats.md
 * ("Deadlines and results") sets the deadline. No rendering here.
 */
import type { HeartbeatPing } from '../../api/checks.js';

/** Milliseconds in one `periodUnit` / `graceUnit` of a heartbeat. */
const UNIT_MS: Record<string, number> = {
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
};

/** A ping's punctuality: `on-time`, `late` (after its deadline), or `unknown` (no deadline to compare with). */
export type Punctuality = 'on-time' | 'late' | 'unknown';

/**
 * The period and grace of a heartbeat in milliseconds, or null for a cron schedule (its deadlines depend on
 * the schedule's time zone, which the page does not work out) or a heartbeat it cannot read.
 */
export function periodAndGraceMs(heartbeat: unknown): { periodMs: number; graceMs: number } | null {
  if (typeof heartbeat !== 'object' || heartbeat === null) return null;
  const hb = heartbeat as Record<string, unknown>;
  if (hb.schedule != null) return null;
  const period = Number(hb.period) * (UNIT_MS[String(hb.periodUnit)] ?? Number.NaN);
  const grace = Number(hb.grace ?? 0) * (UNIT_MS[String(hb.graceUnit ?? 'seconds')] ?? Number.NaN);
  return Number.isFinite(period) && Number.isFinite(grace) ? { periodMs: period, graceMs: grace } : null;
}

/**
 * Each ping's punctuality, by id: the deadline after a success or failure ping at t is t + period + grace;
 * after a `start` at t it is t + grace, never earlier than the deadline it had; the check's creation counts as
 * the first ping. Only the kept pings are known (the last 100), so when 100 are kept the oldest has no
 * deadline to compare with (`unknown`), as has every ping of a cron schedule.
 * @param pings newest first, as the API lists them.
 * @param createdAt the check's `created_at` (ISO 8601).
 * @param keptMax how many pings the service keeps (100).
 */
export function punctualityOf(
  pings: readonly HeartbeatPing[],
  heartbeat: unknown,
  createdAt: string,
  keptMax = 100,
): Map<number, Punctuality> {
  const out = new Map<number, Punctuality>();
  const times = periodAndGraceMs(heartbeat);
  const oldestFirst = [...pings].reverse();
  const created = Date.parse(createdAt);
  let due: number | null =
    times && pings.length < keptMax && Number.isFinite(created)
      ? created + times.periodMs + times.graceMs
      : null;
  for (const p of oldestFirst) {
    const t = Date.parse(p.receivedAt);
    out.set(p.id, due === null || !times ? 'unknown' : t > due ? 'late' : 'on-time');
    if (!times) continue;
    if (p.kind === 'start') due = Math.max(t + times.graceMs, due ?? Number.NEGATIVE_INFINITY);
    else due = t + times.periodMs + times.graceMs;
  }
  return out;
}

/** A ping's kind in words: `Success`, `Start`, `Failure`, `Failure (exit code 3)`, `Success (exit code 0)`. */
export function pingKindText(ping: HeartbeatPing): string {
  const base = ping.kind === 'start' ? 'Start' : ping.kind === 'fail' ? 'Failure' : 'Success';
  return ping.exitCode === null ? base : `${base} (exit code ${ping.exitCode})`;
}
