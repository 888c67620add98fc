import { describe, expect, it } from 'vitest';
import { isNetworkErrorCode, maxRetriesOf, planRetry, retryDelayMs } from '../../src/protocol/retry.js';
import type { JobRetryStrategy, RunOutcome } from '../../src/protocol/index.js';

const strategy = (overrides: Partial<JobRetryStrategy> = {}): JobRetryStrategy => ({
  type: 'FIXED',
  baseBackoffSeconds: 5,
  maxRetries: 3,
  maxDurationSeconds: 600,
  sameRegion: true,
  onlyOn: [],
  ...overrides,
});

const failed = (
  errorCode: string | null,
): Pick<RunOutcome, 'status' | 'httpCheckResult' | 'tcpCheckResult'> => ({
  status: 'FAILED',
  ...(errorCode === null ? {} : { tcpCheckResult: { errorCode } as never }),
});

describe('retry schedule', () => {
  it('spaces retries per strategy type (Checkly: fixed 5,5,5; linear 5,10,15; exponential 5,25,125)', () => {
    const delays = (type: JobRetryStrategy['type']) =>
      [1, 2, 3].map((n) => retryDelayMs(strategy({ type }), n) / 1000);
    expect(delays('FIXED')).toEqual([5, 5, 5]);
    expect(delays('LINEAR')).toEqual([5, 10, 15]);
    expect(delays('EXPONENTIAL')).toEqual([5, 25, 125]);
    expect(delays('SINGLE_RETRY')).toEqual([5, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]);
    expect(delays('NO_RETRIES')).toEqual([
      Number.POSITIVE_INFINITY,
      Number.POSITIVE_INFINITY,
      Number.POSITIVE_INFINITY,
    ]);
    expect(() => retryDelayMs(strategy(), 0)).toThrow(RangeError);
  });

  it('caps the number of retries per type', () => {
    expect(maxRetriesOf(strategy({ maxRetries: 4 }))).toBe(4);
    expect(maxRetriesOf(strategy({ type: 'SINGLE_RETRY', maxRetries: 4 }))).toBe(1);
    expect(maxRetriesOf(strategy({ type: 'NO_RETRIES', maxRetries: 4 }))).toBe(0);
  });

  it('retries a failed attempt until maxRetries, then ends FINAL', () => {
    const plan = (attempt: number) =>
      planRetry({
        strategy: strategy({ maxRetries: 2 }),
        attempt,
        runStartedAtMs: 0,
        nowMs: 1000,
        outcome: failed(null),
      });
    expect(plan(1)).toEqual({ retry: true, retryNumber: 1, delayMs: 5000 });
    expect(plan(2)).toEqual({ retry: true, retryNumber: 2, delayMs: 5000 });
    expect(plan(3)).toMatchObject({ retry: false, reason: '2 retries used' });
  });

  it('never retries a pass, a degraded run, or without a strategy', () => {
    for (const status of ['PASSED', 'DEGRADED'] as const) {
      expect(
        planRetry({ strategy: strategy(), attempt: 1, runStartedAtMs: 0, nowMs: 0, outcome: { status } })
          .retry,
      ).toBe(false);
    }
    expect(
      planRetry({ strategy: null, attempt: 1, runStartedAtMs: 0, nowMs: 0, outcome: failed(null) }).retry,
    ).toBe(false);
  });

  it('with onlyOn NETWORK_ERROR retries only the five network codes (and their undici names)', () => {
    const only = strategy({ onlyOn: ['NETWORK_ERROR'] });
    const retries = (code: string | null) =>
      planRetry({ strategy: only, attempt: 1, runStartedAtMs: 0, nowMs: 0, outcome: failed(code) }).retry;
    for (const code of [
      'ECONNRESET',
      'ENOTFOUND',
      'ETIMEDOUT',
      'EAI_AGAIN',
      'ECONNREFUSED',
      'UND_ERR_CONNECT_TIMEOUT',
    ]) {
      expect(retries(code), code).toBe(true);
    }
    for (const code of [null, 'EHOSTUNREACH', 'CERT_HAS_EXPIRED', 'UND_ERR_HEADERS_TIMEOUT']) {
      expect(retries(code), String(code)).toBe(false);
    }
    expect(isNetworkErrorCode(undefined)).toBe(false);
  });

  it('does not start a retry past maxDurationSeconds from the run start', () => {
    const s = strategy({ type: 'LINEAR', baseBackoffSeconds: 10, maxDurationSeconds: 30 });
    // Retry 1 at 5 s + 10 s = 15 s: inside. Retry 2 at 16 s + 20 s = 36 s: outside.
    expect(
      planRetry({ strategy: s, attempt: 1, runStartedAtMs: 0, nowMs: 5000, outcome: failed(null) }).retry,
    ).toBe(true);
    expect(
      planRetry({ strategy: s, attempt: 2, runStartedAtMs: 0, nowMs: 16_000, outcome: failed(null) }),
    ).toMatchObject({
      retry: false,
    });
  });
});
