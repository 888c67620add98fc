import { describe, expect, it } from 'vitest';
import { iso } from '../../../../src/service/platform/http/pagination.js';

// `iso` writes the time of day by hand (a list of 10,000 statuses writes 30,000 times): its text must be
// toISOString's for every time it takes, and the times it leaves to Date must still give Date's text or error.
describe('iso', () => {
  it('writes what toISOString writes, at the edges of days, years and the range it writes by hand', () => {
    const edges = [
      0,
      1,
      999,
      1000,
      59_999,
      3_599_999,
      86_399_999,
      86_400_000,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2024, 2, 1),
      Date.UTC(2026, 10, 29, 18, 4, 5, 6),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1,
      -1,
      -86_400_001,
      1.5,
      8.64e15,
    ];
    for (const ms of edges) expect(iso(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('writes what toISOString writes for 100,000 random times over two centuries and many days at once', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let i = 0; i < 100_000; i++) {
      const ms = Math.floor(random() * Date.UTC(2170, 0, 1));
      const expected = new Date(ms).toISOString();
      if (iso(ms) !== expected) expect(iso(ms), String(ms)).toBe(expected);
    }
  });

  it('keeps null and undefined as null, reads numeric text, and throws for what is not a time', () => {
    expect(iso(null)).toBeNull();
    expect(iso(undefined)).toBeNull();
    expect(iso('1764439445006' as unknown as number)).toBe(new Date(1_764_439_445_006).toISOString());
    expect(() => iso(Number.NaN)).toThrow(RangeError);
    expect(() => iso(8.64e15 + 1)).toThrow(RangeError);
  });
});
