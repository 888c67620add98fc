import { roundMs } from '../../common/clock.js';
import type { Latency } from '../../protocol/index.js';

/**
 * min / avg / max / stdDev of round-trip times in ms, null when there are none. stdDev is the
 * population standard deviation, sqrt(mean(rtt²) − mean(rtt)²), which iputils ping prints as
 * `mdev`.
 */
export function summarizeLatency(rttsMs: readonly number[]): Latency {
  if (rttsMs.length === 0) return { min: null, avg: null, max: null, stdDev: null };
  let sum = 0;
  let sumOfSquares = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const rtt of rttsMs) {
    sum += rtt;
    sumOfSquares += rtt * rtt;
    min = Math.min(min, rtt);
    max = Math.max(max, rtt);
  }
  const avg = sum / rttsMs.length;
  const variance = Math.max(0, sumOfSquares / rttsMs.length - avg * avg);
  return { min: roundMs(min), avg: roundMs(avg), max: roundMs(max), stdDev: roundMs(Math.sqrt(variance)) };
}

/** Lost share of `expected` packets in percent (0–100), rounded to 3 decimals. */
export function packetLossPercent(expected: number, received: number): number {
  if (expected <= 0) return 0;
  return Math.round(((expected - received) / expected) * 100_000) / 1000;
}
