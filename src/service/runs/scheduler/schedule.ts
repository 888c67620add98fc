import { createHash } from 'node:crypto';

/**
 * Pure scheduling rules. Times are epoch milliseconds.
 *
 * The spec gives `frequencyOffset` ranges but not its unit; we read it so each
 * range makes sense (docs/api.md, "frequencyOffset rules"):
 * - frequency 0: the check runs every `frequencyOffset` seconds (10, 20 or 30);
 * - frequency 1–60 minutes: runs start `frequencyOffset` seconds into each period
 *   (at most frequency × 10 s, e.g. 10 minutes → within the first 100 s);
 * - frequency above 60 minutes: runs start `frequencyOffset` minutes into each period
 *   (at most frequency / 60, e.g. 1440 → within the first 24 minutes).
 * Without an offset, a check's phase is derived from its id, so checks of equal
 * frequency spread over the period instead of all firing at its start.
 */
export function periodMs(frequency: number, frequencyOffset: number | null): number {
  if (frequency === 0) return (frequencyOffset ?? 10) * 1000;
  return frequency * 60_000;
}

/** Start of the check's runs inside each period, ms. */
export function phaseMs(checkId: string, frequency: number, frequencyOffset: number | null): number {
  const period = periodMs(frequency, frequencyOffset);
  if (frequency === 0) return 0;
  if (frequencyOffset != null)
    return (frequency <= 60 ? frequencyOffset * 1000 : frequencyOffset * 60_000) % period;
  const hash = createHash('sha256').update(checkId).digest().readUInt32BE(0);
  return hash % period;
}

/** The first scheduled run strictly after `afterMs`. */
export function nextRunAfter(
  afterMs: number,
  checkId: string,
  frequency: number,
  frequencyOffset: number | null,
): number {
  const period = periodMs(frequency, frequencyOffset);
  const phase = phaseMs(checkId, frequency, frequencyOffset);
  const k = Math.floor((afterMs - phase) / period) + 1;
  return k * period + phase;
}

/**
 * When a newly created or re-activated check first runs (its `next_run_at`, epoch ms): at once, so
 * its first result comes in seconds; later runs follow nextRunAfter. Today that is `nowMs` itself;
 * the function stays as the one home of the rule because it may change (e.g. to the check's phase,
 * or spread out so a bulk import does not fire every check in the same second) without touching
 * CheckQueries, which calls it (checks/store.ts).
 */
export function firstRunAt(nowMs: number): number {
  return nowMs;
}
