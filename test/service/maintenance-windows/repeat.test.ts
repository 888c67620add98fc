import { describe, expect, it } from 'vitest';
import {
  instantOf,
  isIanaZone,
  occurrenceAt,
  occurrencesFrom,
  offsetAt,
  type WindowTimes,
} from '../../../src/service/maintenance-windows/repeat.js';

const at = (text: string) => Date.parse(text);
const iso = (ms: number) => new Date(ms).toISOString();
const spans = (list: { startMs: number; endMs: number }[]) =>
  list.map((o) => `${iso(o.startMs)}/${iso(o.endMs)}`);

/** 02:00–04:00 Berlin time every day from Friday 27 March 2026 (winter time, UTC+1). */
const nightly: WindowTimes = {
  startsAtMs: at('2026-03-27T01:00:00Z'),
  endsAtMs: at('2026-03-27T03:00:00Z'),
  timezone: 'Europe/Berlin',
  repeatUnit: 'DAY',
  repeatInterval: 1,
  repeatEndsOn: null,
};

describe('time zones (Intl)', () => {
  it('knows Berlin is UTC+1 in winter and UTC+2 in summer', () => {
    expect(offsetAt('Europe/Berlin', at('2026-01-15T12:00:00Z'))).toBe(3_600_000);
    expect(offsetAt('Europe/Berlin', at('2026-07-15T12:00:00Z'))).toBe(7_200_000);
    expect(offsetAt('UTC', at('2026-07-15T12:00:00Z'))).toBe(0);
  });

  it('moves a wall time in the spring gap on by the gap; takes the first of a doubled one', () => {
    // 29 March 2026: Berlin skips 02:00–03:00; 02:30 is read as 03:30 summer time (01:30 UTC).
    expect(iso(instantOf('Europe/Berlin', at('2026-03-29T02:30:00Z')))).toBe('2026-03-29T01:30:00.000Z');
    // 25 October 2026: 02:30 happens twice; the first is summer time (00:30 UTC).
    expect(iso(instantOf('Europe/Berlin', at('2026-10-25T02:30:00Z')))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(instantOf('America/New_York', at('2026-07-04T09:00:00Z')))).toBe('2026-07-04T13:00:00.000Z');
  });

  it('accepts named IANA zones only', () => {
    expect(isIanaZone('Europe/Berlin')).toBe(true);
    expect(isIanaZone('UTC')).toBe(true);
    expect(isIanaZone('+05:00')).toBe(false);
    expect(isIanaZone('Mars/Olympus_Mons')).toBe(false);
    expect(isIanaZone('')).toBe(false);
  });
});

describe('occurrences', () => {
  it('keeps a 02:00–04:00 Berlin window at 02:00–04:00 local across the spring change', () => {
    expect(spans(occurrencesFrom(nightly, at('2026-03-27T00:00:00Z'), 4))).toEqual([
      '2026-03-27T01:00:00.000Z/2026-03-27T03:00:00.000Z',
      '2026-03-28T01:00:00.000Z/2026-03-28T03:00:00.000Z',
      // The change night: 02:00 does not exist, so the window runs 03:00–04:00 summer time.
      '2026-03-29T01:00:00.000Z/2026-03-29T02:00:00.000Z',
      // Summer time: 02:00–04:00 local is 00:00–02:00 UTC.
      '2026-03-30T00:00:00.000Z/2026-03-30T02:00:00.000Z',
    ]);
    // 02:30 local on 30 March is inside; 04:30 local (02:30 UTC, inside a window kept in UTC) is not.
    expect(occurrenceAt(nightly, at('2026-03-30T00:30:00Z'))).not.toBeNull();
    expect(occurrenceAt(nightly, at('2026-03-30T02:30:00Z'))).toBeNull();
    expect(occurrenceAt(nightly, at('2026-03-30T01:59:59Z'))).not.toBeNull();
  });

  it('keeps it across the autumn change too, and far from the first occurrence', () => {
    const october = occurrencesFrom(nightly, at('2026-10-24T12:00:00Z'), 2);
    expect(spans(october)).toEqual([
      // 25 October: 02:00 summer time (00:00 UTC) to 04:00 winter time (03:00 UTC).
      '2026-10-25T00:00:00.000Z/2026-10-25T03:00:00.000Z',
      '2026-10-26T01:00:00.000Z/2026-10-26T03:00:00.000Z',
    ]);
    expect(spans(occurrencesFrom(nightly, at('2036-01-01T00:00:00Z'), 1))).toEqual([
      '2036-01-01T01:00:00.000Z/2036-01-01T03:00:00.000Z',
    ]);
  });

  it('repeats every n days, weeks or months, until the last start date (inclusive, local)', () => {
    const weekly = { ...nightly, repeatUnit: 'WEEK' as const, repeatInterval: 2, repeatEndsOn: '2026-04-24' };
    expect(spans(occurrencesFrom(weekly, at('2026-03-01T00:00:00Z'), 10))).toEqual([
      '2026-03-27T01:00:00.000Z/2026-03-27T03:00:00.000Z',
      '2026-04-10T00:00:00.000Z/2026-04-10T02:00:00.000Z',
      '2026-04-24T00:00:00.000Z/2026-04-24T02:00:00.000Z',
    ]);
    // 31 January monthly: the 28th in February, the 31st again in March.
    const monthly: WindowTimes = {
      startsAtMs: at('2026-01-31T22:00:00Z'),
      endsAtMs: at('2026-01-31T23:00:00Z'),
      timezone: 'UTC',
      repeatUnit: 'MONTH',
      repeatInterval: 1,
      repeatEndsOn: null,
    };
    expect(spans(occurrencesFrom(monthly, at('2026-02-01T00:00:00Z'), 3))).toEqual([
      '2026-02-28T22:00:00.000Z/2026-02-28T23:00:00.000Z',
      '2026-03-31T22:00:00.000Z/2026-03-31T23:00:00.000Z',
      '2026-04-30T22:00:00.000Z/2026-04-30T23:00:00.000Z',
    ]);
    const daily3 = { ...monthly, repeatUnit: 'DAY' as const, repeatInterval: 3 };
    expect(occurrenceAt(daily3, at('2026-02-03T22:30:00Z'))).not.toBeNull();
    expect(occurrenceAt(daily3, at('2026-02-01T22:30:00Z'))).toBeNull();
  });

  it('finds an occurrence still in progress when the window is longer than its repeat', () => {
    const long: WindowTimes = {
      startsAtMs: at('2026-01-01T00:00:00Z'),
      endsAtMs: at('2026-01-03T00:00:00Z'),
      timezone: 'UTC',
      repeatUnit: 'DAY',
      repeatInterval: 1,
      repeatEndsOn: '2026-01-05',
    };
    expect(occurrenceAt(long, at('2026-01-06T12:00:00Z'))).toEqual({
      startMs: at('2026-01-05T00:00:00Z'),
      endMs: at('2026-01-07T00:00:00Z'),
    });
    expect(occurrenceAt(long, at('2026-01-07T00:00:00Z'))).toBeNull();
  });

  it('has one occurrence when it does not repeat, and none of zero length', () => {
    const once = { ...nightly, repeatUnit: null, repeatInterval: null };
    expect(occurrencesFrom(once, at('2026-01-01T00:00:00Z'), 5)).toHaveLength(1);
    expect(occurrencesFrom(once, at('2026-03-27T03:00:00Z'), 5)).toHaveLength(0);
    expect(occurrenceAt(once, at('2026-03-27T01:00:00Z'))).not.toBeNull();
    expect(occurrenceAt(once, at('2026-03-27T03:00:00Z'))).toBeNull();
    const empty = { ...nightly, endsAtMs: nightly.startsAtMs };
    expect(occurrencesFrom(empty, at('2026-01-01T00:00:00Z'), 5)).toEqual([]);
  });
});
