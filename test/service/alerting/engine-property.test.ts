import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AlertState, evaluate, UNLIMITED_REMINDERS } from '../../../src/service/alerting/engine.js';
import {
  ALERT_TYPES,
  type AlertRun,
  type EngineAlert,
  type ResolvedAlertSettings,
  type RunVerdict,
} from '../../../src/service/alerting/types.js';

const MIN = 60_000;

type Step =
  | { kind: 'mute' }
  | {
      kind: 'run';
      final: boolean;
      parallel: boolean;
      locations: { failed: boolean; degraded: boolean }[];
      durationMs: number;
      gapMs: number;
    };

const settingsArb: fc.Arbitrary<Omit<ResolvedAlertSettings, 'muted'>> = fc.record({
  escalationType: fc.constantFrom('RUN_BASED', 'TIME_BASED'),
  failedRunThreshold: fc.integer({ min: 1, max: 5 }),
  minutesFailingThreshold: fc.constantFrom(1, 5, 10, 15, 30),
  reminders: fc.record({
    amount: fc.constantFrom(0, 1, 2, 5, UNLIMITED_REMINDERS),
    intervalMinutes: fc.constantFrom(1, 5, 10, 30),
  }),
  parallelRunFailureThreshold: fc.record({
    enabled: fc.boolean(),
    percentage: fc.constantFrom(0, 10, 50, 75, 100),
  }),
});

// Runs lean toward failing so that thresholds, reminders and changes of state happen often.
const locationArb = fc.oneof(
  fc.constant({ failed: true, degraded: false }),
  fc.constant({ failed: false, degraded: true }),
  fc.constant({ failed: false, degraded: false }),
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'mute' as const }) },
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('run' as const),
      final: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
      parallel: fc.boolean(),
      locations: fc.array(locationArb, { minLength: 1, maxLength: 4 }),
      durationMs: fc.integer({ min: 0, max: 2 * MIN }),
      gapMs: fc.oneof(fc.integer({ min: 0, max: 2 * MIN }), fc.integer({ min: 0, max: 40 * MIN })),
    }),
  },
);
type History = { settings: Omit<ResolvedAlertSettings, 'muted'>; mutedAtStart: boolean; steps: Step[] };
const historyArb: fc.Arbitrary<History> = fc.record({
  settings: settingsArb,
  mutedAtStart: fc.boolean(),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 60 }),
});

/** The verdict, written independently of the engine's runVerdict. */
function verdictOf(step: Extract<Step, { kind: 'run' }>, settings: ResolvedAlertSettings): RunVerdict {
  const failed = step.locations.filter((l) => l.failed).length;
  const share = failed / step.locations.length;
  const threshold = settings.parallelRunFailureThreshold;
  const failing =
    step.parallel && threshold.enabled
      ? failed > 0 && share >= threshold.percentage / 100 - 1e-9
      : failed > 0;
  if (failing) return 'FAILING';
  return step.locations.some((l) => l.failed || l.degraded) ? 'DEGRADED' : 'PASSING';
}

/** Alert types and notify flags the histories produced: the properties were not checked on nothing. */
const seen = new Set<string>();

type Raised = EngineAlert & { atMs: number; muted: boolean };

function play(history: History): void {
  let muted = history.mutedAtStart;
  let state: AlertState | null = null;
  let clockMs = Date.UTC(2026, 0, 1);
  const raised: Raised[] = [];
  const keys = new Set<string>();
  // The independent count of the current episode's non-passing FINAL runs, for RUN_BASED.
  let streak = 0;
  let episodeStartMs = 0;
  let episodeAlerted = false;

  history.steps.forEach((step, index) => {
    if (step.kind === 'mute') {
      muted = !muted;
      return;
    }
    const settings: ResolvedAlertSettings = { ...history.settings, muted };
    const run: AlertRun = {
      resultId: `r${index}`,
      resultType: step.final ? 'FINAL' : 'ATTEMPT',
      parallel: step.parallel,
      locations: step.locations.map((l, i) => ({ location: `loc-${i}`, ...l })),
      startedAtMs: clockMs,
    };
    const nowMs = clockMs + step.durationMs;
    clockMs = nowMs + step.gapMs;

    const before = JSON.stringify(state);
    const result = evaluate(state, run, settings, nowMs);
    // The state survives being stored: the same evaluation from its JSON.
    const fromJson = evaluate(state === null ? null : JSON.parse(before), run, settings, nowMs);
    expect(fromJson).toEqual(result);
    expect(JSON.parse(JSON.stringify(result.state))).toEqual(result.state);
    expect(JSON.stringify(state)).toBe(before);

    if (!step.final) {
      expect(result.alerts).toEqual([]);
      if (state !== null) expect(JSON.stringify(result.state)).toBe(before);
      return;
    }
    state = result.state;

    const verdict = verdictOf(step, settings);
    if (verdict === 'PASSING') {
      streak = 0;
      episodeAlerted = false;
    } else {
      if (streak === 0) episodeStartMs = run.startedAtMs;
      streak += 1;
      const due =
        settings.escalationType === 'RUN_BASED'
          ? streak >= settings.failedRunThreshold
          : nowMs - episodeStartMs >= settings.minutesFailingThreshold * MIN;
      const first = result.alerts.find(
        (a) => a.alertType === 'ALERT_FAILURE' || a.alertType === 'ALERT_DEGRADED',
      );
      if (first) {
        expect(first.alertType).toBe(verdict === 'FAILING' ? 'ALERT_FAILURE' : 'ALERT_DEGRADED');
        expect(episodeAlerted, 'one first alert per episode').toBe(false);
      }
      // The first alert comes at the first run at which the threshold is reached.
      if (!episodeAlerted) expect(first !== undefined).toBe(due);
      if (first) episodeAlerted = true;
    }

    for (const a of result.alerts) {
      const key = `${a.episodeId}/${a.alertType}/${a.sequence}`;
      expect(keys.has(key), `duplicate ${key}`).toBe(false);
      keys.add(key);
      if (muted) expect(a.notify).toBe(false);
      const episode = raised.filter((r) => r.episodeId === a.episodeId);
      if (a.alertType === 'ALERT_RECOVERY' && a.notify) {
        const heard = episode.some(
          (r) => r.notify && (r.alertType === 'ALERT_FAILURE' || r.alertType === 'ALERT_DEGRADED_FAILURE'),
        );
        expect(heard, 'a notified recovery follows a notified failure').toBe(true);
      }
      if (a.isReminder) {
        const last = episode.at(-1);
        expect(last, 'a reminder follows an alert').toBeDefined();
        expect(nowMs - last!.atMs).toBeGreaterThanOrEqual(settings.reminders.intervalMinutes * MIN);
        const sinceChange = episode.length - 1 - episode.findLastIndex((r) => !r.isReminder);
        expect(a.reminderSequence).toBe(sinceChange + 1);
        if (settings.reminders.amount < UNLIMITED_REMINDERS) {
          expect(a.reminderSequence).toBeLessThanOrEqual(settings.reminders.amount);
        }
      }
      raised.push({ ...a, atMs: nowMs, muted });
      seen.add(`${a.alertType} ${a.notify}`);
    }
  });
}

describe('alert engine properties', () => {
  it('hold over random histories (verdicts, locations, FINAL/ATTEMPT, gaps, mute toggles, settings)', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        play(history);
      }),
      { numRuns: 1000 },
    );
    const expected = ALERT_TYPES.filter((t) => t !== 'ALERT_SSL').flatMap((t) => [`${t} true`, `${t} false`]);
    expect([...seen].sort()).toEqual(expected.sort());
  });
});
