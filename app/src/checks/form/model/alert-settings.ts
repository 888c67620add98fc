/**
 * A check's own alert settings (`alertSettings`, `useGlobalAlertSettings`) and incident trigger
 * (`triggerIncident`) as the form offers them: the values the API accepts (docs/api.md, "Alert settings" and
 * "Incident trigger"), the defaults a missing field takes (docs/alerting.md, "Alert settings"), and how the
 * form's choices are written back. No rendering here.
 */
import { type Json, isObject } from './paths.js';

/** `escalationType`: alert after a number of failed runs, or after minutes failing. */
export const ESCALATION_TYPES = ['RUN_BASED', 'TIME_BASED'] as const;
/** `runBasedEscalation.failedRunThreshold`: failed (or degraded) runs in a row before the first alert. */
export const FAILED_RUN_THRESHOLDS = [1, 2, 3, 4, 5] as const;
/** `timeBasedEscalation.minutesFailingThreshold`: minutes since the episode began. */
export const MINUTES_FAILING_THRESHOLDS = [5, 10, 15, 30] as const;
/** `reminders.amount`: reminders until recovery; 100000 means no limit. */
export const REMINDER_AMOUNTS = [0, 1, 2, 3, 4, 5, 100_000] as const;
/** The `reminders.amount` that means "until the check recovers". */
export const UNLIMITED_REMINDERS = 100_000;
/** `reminders.interval`, minutes between reminders: 1 to 1440. */
export const REMINDER_INTERVAL = { min: 1, max: 1440 } as const;
/** `parallelRunFailureThreshold.percentage`: 10 to 100 in steps of 10. */
export const PARALLEL_PERCENTAGES = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100] as const;

/** `triggerIncident.severity`, least to most severe (docs/alerting.md, "Incident trigger"). */
export const INCIDENT_SEVERITIES = ['MINOR', 'MEDIUM', 'MAJOR', 'CRITICAL'] as const;

/** The alert settings a check has when nobody set any, in the API's shape (docs/alerting.md, "Alert settings"). */
export function defaultAlertSettings(): Json {
  return {
    escalationType: 'RUN_BASED',
    runBasedEscalation: { failedRunThreshold: 1 },
    timeBasedEscalation: { minutesFailingThreshold: 5 },
    reminders: { amount: 0, interval: 5 },
    parallelRunFailureThreshold: { enabled: false, percentage: 10 },
  };
}

/**
 * `settings` with every field the form shows filled in: a stored field is kept as it is, a missing one
 * takes its default. A value that is not an object counts as none.
 */
export function completeAlertSettings(settings: unknown): Json {
  const stored = isObject(settings) ? settings : {};
  const defaults = defaultAlertSettings();
  const out: Json = { ...defaults, ...stored };
  for (const part of [
    'runBasedEscalation',
    'timeBasedEscalation',
    'reminders',
    'parallelRunFailureThreshold',
  ]) {
    const given = stored[part];
    out[part] = { ...(defaults[part] as Json), ...(isObject(given) ? given : {}) };
  }
  return out;
}

/** `1 failed run`, `3 failed runs in a row`. */
export function failedRunsLabel(n: number): string {
  return n === 1 ? 'The first failed run' : `${n} failed runs in a row`;
}

/** `No reminders`, `1 reminder`, `Until it recovers`. */
export function remindersLabel(n: number): string {
  if (n === 0) return 'No reminders';
  if (n === UNLIMITED_REMINDERS) return 'Until the check recovers';
  return n === 1 ? '1 reminder' : `${n} reminders`;
}

/** What each severity means for the incident opened (its impact on the status page). */
export const SEVERITY_LABELS: Record<(typeof INCIDENT_SEVERITIES)[number], string> = {
  MINOR: 'Minor (a minor incident)',
  MEDIUM: 'Medium (a minor incident)',
  MAJOR: 'Major (a major incident)',
  CRITICAL: 'Critical (a major incident)',
};

/**
 * A new incident trigger on the status-page service `serviceId` (named `serviceName`), with a name and a
 * description to start from; `keep` is the trigger there was, whose other fields stay.
 */
export function incidentTriggerFor(serviceId: string, serviceName: string, keep: unknown): Json {
  if (isObject(keep)) return { ...keep, serviceId };
  return {
    serviceId,
    severity: 'MAJOR',
    name: `${serviceName} is unavailable`,
    description: 'We are investigating the problem.',
    notifySubscribers: false,
  };
}
