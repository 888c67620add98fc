import { Type } from '@sinclair/typebox';
import { badField } from '../../platform/http/errors.js';
import { Ignored, StringEnum } from '../../platform/http/schema-helpers.js';
import {
  cronOf,
  type Expectation,
  HEARTBEAT_UNITS,
  type HeartbeatUnit,
  MAX_SPAN_MS,
  MIN_PERIOD_MS,
  spanMs,
} from '../../heartbeats/index.js';
import { sharedCheckFields, zeroRequest, zeroResponseTime } from './common.js';

const strict = { additionalProperties: false } as const;

/**
 * `heartbeat` of a HEARTBEAT check (docs/heartbeats.md): `period` + `periodUnit` (30 s to 365
 * days) or a 5-field cron `schedule` with its IANA `timezone` (default UTC); `grace` +
 * `graceUnit` (0 to 365 days). `pingToken` is the service's (answered, never changed by a client:
 * a value sent back in an update is ignored).
 */
export const HeartbeatCheckSchema = Type.Object(
  {
    period: Type.Optional(Type.Integer({ minimum: 1 })),
    periodUnit: Type.Optional(StringEnum(HEARTBEAT_UNITS)),
    schedule: Type.Optional(Type.String({ minLength: 9, maxLength: 200 })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    grace: Type.Integer({ minimum: 0 }),
    graceUnit: StringEnum(HEARTBEAT_UNITS),
    pingToken: Type.Optional(Type.String({ maxLength: 64 })),
    pingUrl: Ignored(Type.String({ maxLength: 2048 }), 'the service answers it'),
  },
  strict,
);

/**
 * `POST /v1/checks/heartbeat`: the shared fields and `heartbeat`. A heartbeat check is never run
 * by an agent: its `frequency`, `locations` and the like are stored but not used.
 */
export const CreateHeartbeatCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    heartbeat: HeartbeatCheckSchema,
    // What the hosted API's create body also has, for a check that is never scheduled.
    frequency: Ignored(Type.Integer({ minimum: 0, maximum: 1440 }), 'a heartbeat check is never scheduled'),
    request: zeroRequest,
    degradedResponseTime: zeroResponseTime,
    maxResponseTime: zeroResponseTime,
  },
  strict,
);

/** Longest wait for a schedule's first occurrence, ms: one a year at least (366 days). */
const SCHEDULE_HORIZON_MS = 366 * 86_400_000;

/**
 * The rules of a HEARTBEAT check's `heartbeat` JSON Schema cannot express; returns its
 * expectation. Period mode needs `period` and `periodUnit` (30 s to 365 days); cron mode a
 * 5-field `schedule` that occurs within a year and a valid IANA `timezone`; not both.
 * @throws HttpError 400 naming the field (`heartbeat.period`, `heartbeat.schedule`, …).
 */
export function heartbeatExpectation(heartbeat: unknown, nowMs: number): Expectation {
  if (heartbeat === null || typeof heartbeat !== 'object') {
    throw badField('heartbeat', 'is required for HEARTBEAT checks', 'required');
  }
  const hb = heartbeat as Record<string, unknown>;
  const unitOf = (field: 'periodUnit' | 'graceUnit'): HeartbeatUnit => {
    const unit = hb[field];
    if (!HEARTBEAT_UNITS.includes(unit as HeartbeatUnit)) {
      throw badField(`heartbeat.${field}`, `must be one of ${HEARTBEAT_UNITS.join(', ')}`, 'enum');
    }
    return unit as HeartbeatUnit;
  };
  const integer = (field: 'period' | 'grace'): number => {
    const value = hb[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw badField(`heartbeat.${field}`, 'must be a non-negative integer', 'type');
    }
    return value;
  };
  if (hb.grace === undefined) throw badField('heartbeat.grace', 'is required', 'required');
  const graceMs = spanMs(integer('grace'), unitOf('graceUnit'));
  if (graceMs > MAX_SPAN_MS) throw badField('heartbeat.grace', 'must be at most 365 days', 'maximum');

  if (hb.schedule != null) {
    if (hb.period != null) {
      throw badField('heartbeat.schedule', 'and heartbeat.period exclude each other: give one', 'oneOf');
    }
    const schedule = String(hb.schedule).trim();
    if (schedule.split(/\s+/).length !== 5 || !/^[0-9A-Za-z*/,\-?LW# ]+$/.test(schedule)) {
      throw badField('heartbeat.schedule', 'must be a cron expression of 5 fields', 'cron');
    }
    const timezone = hb.timezone == null ? 'UTC' : String(hb.timezone);
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      throw badField('heartbeat.timezone', 'must be an IANA time zone (e.g. Europe/Amsterdam)', 'timezone');
    }
    let next: Date | null;
    try {
      next = cronOf(schedule, timezone).nextRun(new Date(nowMs));
    } catch (err) {
      throw badField(
        'heartbeat.schedule',
        `is not a valid cron expression: ${(err as Error).message}`,
        'cron',
      );
    }
    if (next === null || next.getTime() - nowMs > SCHEDULE_HORIZON_MS) {
      throw badField('heartbeat.schedule', 'must occur at least once a year', 'cron');
    }
    return { periodMs: null, schedule, timezone, graceMs };
  }
  if (hb.timezone != null) {
    throw badField('heartbeat.timezone', 'is only for a heartbeat.schedule', 'dependencies');
  }
  if (hb.period == null)
    throw badField('heartbeat.period', 'is required (or heartbeat.schedule)', 'required');
  const periodMs = spanMs(integer('period'), unitOf('periodUnit'));
  if (periodMs < MIN_PERIOD_MS || periodMs > MAX_SPAN_MS) {
    throw badField('heartbeat.period', 'must be between 30 seconds and 365 days', 'range');
  }
  return { periodMs, schedule: null, timezone: null, graceMs };
}

/**
 * The `heartbeat` stored in a HEARTBEAT check's document: what the client gave, normalised (a
 * schedule's time zone filled in), and the service's `pingToken`.
 */
export function storedHeartbeat(
  heartbeat: Record<string, unknown>,
  expectation: Expectation,
  pingToken: string,
): Record<string, unknown> {
  const { pingToken: _ignored, ...given } = heartbeat;
  return expectation.schedule === null
    ? {
        period: given.period,
        periodUnit: given.periodUnit,
        grace: given.grace,
        graceUnit: given.graceUnit,
        pingToken,
      }
    : {
        schedule: expectation.schedule,
        timezone: expectation.timezone,
        grace: given.grace,
        graceUnit: given.graceUnit,
        pingToken,
      };
}
