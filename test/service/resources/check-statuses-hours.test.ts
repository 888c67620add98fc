import { describe, expect, it } from 'vitest';
import { unpackHours } from '../../../src/service/resources/check-statuses/store.js';

// The rollup rows GET /v1/check-statuses reads packed one text per check (CheckStatusQueries.hourly).

describe('unpackHours', () => {
  it('sums each slot over its rows (one per run location), leaving out other slots', () => {
    const sums = unpackHours('0 6 1 720.0 0 2 0 1.25 23 1 0 1e3 24 5 5 5 7 3 0 0.30000000000000004', 24);
    expect([sums[0], sums[1], sums[2]]).toEqual([8, 1, 721.25]);
    expect([sums[69], sums[70], sums[71]]).toEqual([1, 0, 1000]);
    expect([sums[21], sums[22], sums[23]]).toEqual([3, 0, 0.30000000000000004]);
    expect([...sums].reduce((a, b) => a + b, 0)).toBeCloseTo(8 + 1 + 721.25 + 1 + 1000 + 3 + 0.3);
  });

  it('reads what PostgreSQL and SQLite write for doubles as Number reads it', () => {
    for (const text of ['123.456789012345', '98765.4321', '1234567890123456789', '5e-324', '0.1', '720']) {
      expect(unpackHours(`0 1 0 ${text}`, 1)[2]).toBe(Number(text));
    }
  });

  it('zeroes the array it is handed before filling it', () => {
    const into = new Float64Array(6).fill(9);
    expect([...unpackHours('1 2 0 10', 2, into)]).toEqual([0, 0, 0, 2, 0, 10]);
    expect([...unpackHours('', 2, into)]).toEqual([0, 0, 0, 0, 0, 0]);
  });
});
