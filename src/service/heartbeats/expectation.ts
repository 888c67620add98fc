import { Cron } from 'croner';

/** Units of a heartbeat's `period` and `grace`. */
export const HEARTBEAT_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
/** One of HEARTBEAT_UNITS. */
export type HeartbeatUnit = (typeof HEARTBEAT_UNITS)[number];

const UNIT_MS: Record<HeartbeatUnit, number> = {
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
};

/** Shortest period, ms (30 s). */
export const MIN_PERIOD_MS = 30_000;
/** Longest period and grace, ms (365 days). */
export const MAX_SPAN_MS = 365 * 86_400_000;

/** `amount` of `unit` in ms. */
export function spanMs(amount: number, unit: HeartbeatUnit): number {
  return amount * UNIT_MS[unit];
}

/**
 * When a heartbeat expects its pings: every `periodMs` after the last one, or at each occurrence of
 * a 5-field cron `schedule` read in the IANA `timezone`; then `graceMs` more before it is late.
 */
export type Expectation = {
  periodMs: number | null;
  schedule: string | null;
  timezone: string | null;
  graceMs: number;
};

// Parsed schedules by "timezone schedule": a ping reuses its heartbeat's. Bounded: cleared when full.
const crons = new Map<string, Cron>();
const CRON_CACHE_SIZE = 10_000;

/**
 * The cron of a schedule in a time zone, parsed once.
 * @throws TypeError/RangeError from croner for an invalid expression or time zone.
 */
export function cronOf(schedule: string, timezone: string): Cron {
  const key = `${timezone} ${schedule}`;
  let cron = crons.get(key);
  if (!cron) {
    // legacyMode (croner's default): day-of-month and day-of-week combine with OR, as in cron.
    cron = new Cron(schedule, { timezone, paused: true, legacyMode: true });
    if (crons.size >= CRON_CACHE_SIZE) crons.clear();
    crons.set(key, cron);
  }
  return cron;
}

/**
 * When the next ping is expected after one at `atMs` (epoch ms): `atMs + periodMs`, or the cron's
 * next occurrence strictly after `atMs`, computed in the schedule's time zone (a time the
 * spring-forward skips runs at the change, one the fall-back repeats runs once, as cron does)
 * and returned as epoch ms. Null when a schedule has no further occurrence (refused at creation).
 */
export function nextExpectedMs(expectation: Expectation, atMs: number): number | null {
  if (expectation.schedule === null) return atMs + (expectation.periodMs ?? MIN_PERIOD_MS);
  const next = cronOf(expectation.schedule, expectation.timezone ?? 'UTC').nextRun(new Date(atMs));
  return next ? next.getTime() : null;
}

/** The deadline after a ping at `atMs`: the next expected ping plus the grace; null when none is expected. */
export function deadlineAfterMs(expectation: Expectation, atMs: number): number | null {
  const next = nextExpectedMs(expectation, atMs);
  return next === null ? null : next + expectation.graceMs;
}
