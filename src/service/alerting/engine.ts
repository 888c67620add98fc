import type {
  AlertRun,
  AlertType,
  EngineAlert,
  Evaluation,
  ResolvedAlertSettings,
  RunVerdict,
} from './types.js';

/** What people were told about the current episode: nothing yet, or the state of its last alert. */
type Told = 'NONE' | 'DEGRADED' | 'FAILING';

/**
 * The current episode: the consecutive non-passing FINAL runs since the last passing one.
 * Times are epoch ms.
 */
export type AlertEpisode = {
  /** The `resultId` of the run that opened it. */
  id: string;
  /** `startedAtMs` of the run that opened it (TIME_BASED counts from here). */
  startedAtMs: number;
  /** Non-passing runs so far, degraded and failing alike (RUN_BASED counts these). */
  runs: number;
  told: Told;
  /** Whether the alert that set `told` was notified: its follow-ups notify only if it was. */
  toldNotified: boolean;
  /** Whether an ALERT_FAILURE or ALERT_DEGRADED_FAILURE of the episode was notified (ALERT_RECOVERY needs one). */
  failureNotified: boolean;
  /** Whether a failure alert was raised at all (the recovery is then ALERT_RECOVERY). */
  failureRaised: boolean;
  /** When its last alert was raised (the `nowMs` of that evaluation), null before the first. */
  lastAlertAtMs: number | null;
  /** Reminders raised since `told` last changed. */
  reminders: number;
  /** Alerts raised so far per type: the next alert's `sequence`. */
  raised: Partial<Record<AlertType, number>>;
};

/**
 * The alert engine's state of one check, stored as JSON (`alert_states.doc`): only strings,
 * numbers, booleans, null and plain objects, so `JSON.parse(JSON.stringify(state))` evaluates
 * exactly like `state`.
 */
export type AlertState = { version: 1; episode: AlertEpisode | null };

/** At this many reminders or more, reminders never stop (the field's "unlimited"). */
export const UNLIMITED_REMINDERS = 100_000;

const MINUTE_MS = 60_000;

/**
 * What a run says about a check. One location (not parallel): FAILING if it failed, DEGRADED if
 * it was degraded, else PASSING. Parallel: FAILING when any location failed, or, with
 * `parallelRunFailureThreshold` enabled, when at least one did and failed/all ≥ percentage/100;
 * else DEGRADED when any location failed or was degraded; else PASSING. ATTEMPT runs are not
 * judged here (evaluate ignores them). Pure.
 */
export function runVerdict(run: AlertRun, settings: ResolvedAlertSettings): RunVerdict {
  const failed = run.locations.filter((l) => l.failed).length;
  const degraded = run.locations.some((l) => l.degraded);
  const threshold = settings.parallelRunFailureThreshold;
  if (run.parallel && threshold.enabled) {
    // A 0 % threshold must not fail a run in which nothing failed.
    if (failed > 0 && failed * 100 >= threshold.percentage * run.locations.length) return 'FAILING';
  } else if (failed > 0) {
    return 'FAILING';
  }
  return failed > 0 || degraded ? 'DEGRADED' : 'PASSING';
}

/**
 * Feeds one run to the alert engine of a check and says which alerts it raises (docs/alerting.md).
 *
 * - An ATTEMPT run changes nothing and raises nothing.
 * - A non-passing run opens an episode (id: its `resultId`) or continues one. The first alert
 *   (ALERT_FAILURE or ALERT_DEGRADED, by this run's verdict) comes once the episode reaches the
 *   threshold: `failedRunThreshold` non-passing runs (RUN_BASED), or `nowMs` at least
 *   `minutesFailingThreshold` minutes after the episode's first run started (TIME_BASED, judged at
 *   runs only). Degraded and failing runs count alike, so a flapping check does not dodge it.
 * - After that, a change between degraded and failing alerts at once (ALERT_DEGRADED_FAILURE,
 *   ALERT_FAILURE_DEGRADED); an unchanged state raises a reminder (…_REMAIN) at a run at least
 *   `reminders.intervalMinutes` after the episode's last alert, at most `reminders.amount` per
 *   told state (UNLIMITED_REMINDERS: no limit).
 * - The first passing run closes the episode: ALERT_RECOVERY if a failure alert was raised in it,
 *   else ALERT_DEGRADED_RECOVERY if a degraded one was, else nothing.
 *
 * `notify` is false while muted. A follow-up (reminder, de-escalation, ALERT_DEGRADED_RECOVERY)
 * notifies only if the alert that told people the state it follows was notified, and
 * ALERT_RECOVERY only if a failure alert of the episode was; so unmuting replays nothing.
 * `sequence` counts earlier alerts of the same type in the episode.
 *
 * Pure and deterministic: `previous` is not modified. Never throws.
 *
 * @param previous The stored state, or null for a check never evaluated (or a state of another version).
 * @param run The run that just ended.
 * @param settings The check's resolved settings (resolveAlertSettings).
 * @param nowMs The time of the evaluation, epoch ms.
 */
export function evaluate(
  previous: AlertState | null,
  run: AlertRun,
  settings: ResolvedAlertSettings,
  nowMs: number,
): Evaluation<AlertState> {
  const prior = previous?.version === 1 ? previous : { version: 1 as const, episode: null };
  if (run.resultType === 'ATTEMPT') return { state: prior, alerts: [] };
  const verdict = runVerdict(run, settings);
  const alerts: EngineAlert[] = [];

  if (verdict === 'PASSING') {
    const ep = prior.episode;
    if (ep && ep.told !== 'NONE') {
      const type = ep.failureRaised ? 'ALERT_RECOVERY' : 'ALERT_DEGRADED_RECOVERY';
      const heard = ep.failureRaised ? ep.failureNotified : ep.toldNotified;
      alerts.push(alert(ep, type, run, !settings.muted && heard));
    }
    return { state: { version: 1, episode: null }, alerts };
  }

  const ep: AlertEpisode = prior.episode
    ? { ...prior.episode, raised: { ...prior.episode.raised }, runs: prior.episode.runs + 1 }
    : {
        id: run.resultId,
        startedAtMs: run.startedAtMs,
        runs: 1,
        told: 'NONE',
        toldNotified: false,
        failureNotified: false,
        failureRaised: false,
        lastAlertAtMs: null,
        reminders: 0,
        raised: {},
      };
  const raise = (type: AlertType, notify: boolean, told: Told, reminder = false) => {
    alerts.push(alert(ep, type, run, notify, reminder ? ep.reminders + 1 : 0));
    ep.raised[type] = (ep.raised[type] ?? 0) + 1;
    ep.lastAlertAtMs = nowMs;
    if (reminder) {
      ep.reminders += 1;
      return;
    }
    ep.told = told;
    ep.toldNotified = notify;
    ep.reminders = 0;
    if (told === 'FAILING') {
      ep.failureRaised = true;
      ep.failureNotified ||= notify;
    }
  };
  const unmuted = !settings.muted;

  if (ep.told === 'NONE') {
    const reached =
      settings.escalationType === 'TIME_BASED'
        ? nowMs - ep.startedAtMs >= settings.minutesFailingThreshold * MINUTE_MS
        : ep.runs >= settings.failedRunThreshold;
    if (reached) {
      if (verdict === 'FAILING') raise('ALERT_FAILURE', unmuted, 'FAILING');
      else raise('ALERT_DEGRADED', unmuted, 'DEGRADED');
    }
  } else if (ep.told !== verdict) {
    // Escalation is news in itself (it notifies even if the degraded alert was muted);
    // de-escalation only makes sense to people who heard of the failure.
    if (verdict === 'FAILING') raise('ALERT_DEGRADED_FAILURE', unmuted, 'FAILING');
    else raise('ALERT_FAILURE_DEGRADED', unmuted && ep.toldNotified, 'DEGRADED');
  } else if (reminderDue(ep, settings, nowMs)) {
    const type = verdict === 'FAILING' ? 'ALERT_FAILURE_REMAIN' : 'ALERT_DEGRADED_REMAIN';
    raise(type, unmuted && ep.toldNotified, ep.told, true);
  }
  return { state: { version: 1, episode: ep }, alerts };
}

function reminderDue(ep: AlertEpisode, settings: ResolvedAlertSettings, nowMs: number): boolean {
  const { amount, intervalMinutes } = settings.reminders;
  if (amount < UNLIMITED_REMINDERS && ep.reminders >= amount) return false;
  return ep.lastAlertAtMs !== null && nowMs - ep.lastAlertAtMs >= intervalMinutes * MINUTE_MS;
}

function alert(
  ep: AlertEpisode,
  alertType: AlertType,
  run: AlertRun,
  notify: boolean,
  reminderSequence = 0,
): EngineAlert {
  return {
    alertType,
    episodeId: ep.id,
    sequence: ep.raised[alertType] ?? 0,
    isReminder: reminderSequence > 0,
    reminderSequence,
    notify,
    resultId: run.resultId,
  };
}
