import type { ResolvedAlertSettings } from './types.js';

/**
 * The API's `alertSettings` object (docs/api.md, "Alert settings") as it is stored on an account,
 * a check group or a check: every field optional, a missing one takes the default of
 * DEFAULT_ALERT_SETTINGS_DOC. `reminders.interval` is in minutes.
 */
export type AlertSettingsDoc = {
  escalationType?: 'RUN_BASED' | 'TIME_BASED' | undefined;
  runBasedEscalation?: { failedRunThreshold?: number | undefined } | undefined;
  timeBasedEscalation?: { minutesFailingThreshold?: number | undefined } | undefined;
  reminders?: { amount?: number | undefined; interval?: number | undefined } | undefined;
  parallelRunFailureThreshold?:
    | { enabled?: boolean | undefined; percentage?: number | undefined }
    | undefined;
};

/** The alert settings a check has when nobody set any (the field's defaults), in the API's shape. */
export const DEFAULT_ALERT_SETTINGS_DOC = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  timeBasedEscalation: { minutesFailingThreshold: 5 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
} as const satisfies AlertSettingsDoc;

/**
 * `sent` completed with the defaults, field by field (DEFAULT_ALERT_SETTINGS_DOC): what a check, a group or the
 * account stores for the `alertSettings` of a body, so that what a client sent partially (`{escalationType,
 * runBasedEscalation}`, or `timeBasedEscalation: {}`) is answered whole, the same on every read, and a client
 * that compares what it sent with what it reads (a Terraform plan) converges. Pure.
 */
export function completeAlertSettings<T extends AlertSettingsDoc>(sent: T | null | undefined): T {
  const d = DEFAULT_ALERT_SETTINGS_DOC;
  // Each default is a value the body schema allows, so the completed object is still a T.
  return {
    escalationType: sent?.escalationType ?? d.escalationType,
    runBasedEscalation: { ...d.runBasedEscalation, ...defined(sent?.runBasedEscalation) },
    timeBasedEscalation: { ...d.timeBasedEscalation, ...defined(sent?.timeBasedEscalation) },
    reminders: { ...d.reminders, ...defined(sent?.reminders) },
    parallelRunFailureThreshold: {
      ...d.parallelRunFailureThreshold,
      ...defined(sent?.parallelRunFailureThreshold),
    },
  } as T;
}

/** The fields of `part` that are not undefined. */
function defined<T extends object>(part: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(part ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Where a check's alert settings may come from: the check itself or its group. */
export type AlertSettingsSource = {
  alertSettings?: AlertSettingsDoc | null | undefined;
  /** Absent or null means true: the account's settings apply. */
  useGlobalAlertSettings?: boolean | null | undefined;
  muted?: boolean | null | undefined;
};

/**
 * The alert settings that apply to a check. A check in a group takes the group's settings when
 * the group's `useGlobalAlertSettings` is false, else the account's (the check's own are then
 * ignored); a check without a group takes its own when its `useGlobalAlertSettings` is false,
 * else the account's. Each missing field falls back to DEFAULT_ALERT_SETTINGS_DOC on its own, so
 * a partial object is valid. `muted` is the check's or its group's. Pure; never throws.
 *
 * @param account The account's settings (`account_settings`), or null when it has none.
 * @param group The check's group, or null for a check without one.
 * @param check The check.
 */
export function resolveAlertSettings(
  account: AlertSettingsDoc | null,
  group: AlertSettingsSource | null,
  check: AlertSettingsSource & { muted: boolean },
): ResolvedAlertSettings {
  const owner = group ?? check;
  const doc = owner.useGlobalAlertSettings === false ? owner.alertSettings : account;
  const d = DEFAULT_ALERT_SETTINGS_DOC;
  return {
    escalationType: doc?.escalationType === 'TIME_BASED' ? 'TIME_BASED' : d.escalationType,
    failedRunThreshold: num(
      doc?.runBasedEscalation?.failedRunThreshold,
      d.runBasedEscalation.failedRunThreshold,
    ),
    minutesFailingThreshold: num(
      doc?.timeBasedEscalation?.minutesFailingThreshold,
      d.timeBasedEscalation.minutesFailingThreshold,
    ),
    reminders: {
      amount: num(doc?.reminders?.amount, d.reminders.amount),
      intervalMinutes: num(doc?.reminders?.interval, d.reminders.interval),
    },
    parallelRunFailureThreshold: {
      enabled: doc?.parallelRunFailureThreshold?.enabled ?? d.parallelRunFailureThreshold.enabled,
      percentage: num(doc?.parallelRunFailureThreshold?.percentage, d.parallelRunFailureThreshold.percentage),
    },
    muted: check.muted === true || group?.muted === true,
  };
}

// Stored documents were validated by the API, but a hand-edited or older one must not turn a
// threshold into NaN (which would compare false forever and silence the check).
function num(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
