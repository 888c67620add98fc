import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoNow } from '../../src/common/clock.js';

describe('isoNow', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is new Date().toISOString() of the current millisecond, and follows the clock', () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-01T10:00:00.123Z') });
    expect(isoNow()).toBe('2026-03-01T10:00:00.123Z');
    expect(isoNow()).toBe('2026-03-01T10:00:00.123Z');

    vi.setSystemTime(Date.parse('2026-03-01T10:00:00.124Z'));
    expect(isoNow()).toBe('2026-03-01T10:00:00.124Z');

    // A clock stepped back is followed too.
    vi.setSystemTime(Date.parse('2025-12-31T23:59:59.999Z'));
    expect(isoNow()).toBe('2025-12-31T23:59:59.999Z');
  });
});
