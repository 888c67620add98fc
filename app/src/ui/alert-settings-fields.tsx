/**
 * The controls of an `alertSettings` object (docs/api.md, "Alert settings"): when to alert (after a number of
 * failed runs or after minutes failing), reminders, and the parallel-run failure threshold. Shared by the
 * account's alert settings page and the check group form. Every choice the API allows is a select or a number
 * input with its unit; nothing is typed as JSON.
 */
import { Checkbox, errorOf } from './widgets.js';
import { SelectField, TextField } from './forms.js';

/** The alert settings as the API takes and answers them (`GET|PUT /v1/alert-settings`, a group's `alertSettings`). */
export type AlertSettingsValue = {
  escalationType?: 'RUN_BASED' | 'TIME_BASED';
  runBasedEscalation?: { failedRunThreshold?: number };
  timeBasedEscalation?: { minutesFailingThreshold?: 5 | 10 | 15 | 30 };
  reminders?: { amount?: 0 | 1 | 2 | 3 | 4 | 5 | 100000; interval?: number };
  parallelRunFailureThreshold?: { enabled?: boolean; percentage?: number };
};

/** What the controls hold: every field as the control shows it (the interval as typed). */
export type AlertSettingsDraft = {
  escalationType: 'RUN_BASED' | 'TIME_BASED';
  failedRunThreshold: string;
  minutesFailingThreshold: string;
  reminderAmount: string;
  reminderInterval: string;
  parallelEnabled: boolean;
  parallelPercentage: string;
};

/** The API's ranges (src/service/checks/types/common.ts, `AlertSettingsSchema`). */
const FAILED_RUNS = ['1', '2', '3', '4', '5'] as const;
const MINUTES_FAILING = ['5', '10', '15', '30'] as const;
const REMINDER_AMOUNTS = ['0', '1', '2', '3', '4', '5', '100000'] as const;
const PERCENTAGES = ['10', '20', '30', '40', '50', '60', '70', '80', '90', '100'] as const;
/** An unlimited number of reminders, as the API spells it. */
const UNLIMITED = '100000';

/**
 * The draft of `settings`, each missing field at the API's default (src/service/alerting/settings.ts,
 * DEFAULT_ALERT_SETTINGS_DOC: after 1 failed run or 5 minutes, no reminder, every 5 minutes, parallel
 * threshold off at 10 %).
 */
export function draftOfAlertSettings(settings: AlertSettingsValue | null | undefined): AlertSettingsDraft {
  const s = settings ?? {};
  return {
    escalationType: s.escalationType === 'TIME_BASED' ? 'TIME_BASED' : 'RUN_BASED',
    failedRunThreshold: String(s.runBasedEscalation?.failedRunThreshold ?? 1),
    minutesFailingThreshold: String(s.timeBasedEscalation?.minutesFailingThreshold ?? 5),
    reminderAmount: String(s.reminders?.amount ?? 0),
    reminderInterval: String(s.reminders?.interval ?? 5),
    parallelEnabled: s.parallelRunFailureThreshold?.enabled ?? false,
    parallelPercentage: String(s.parallelRunFailureThreshold?.percentage ?? 10),
  };
}

/**
 * The `alertSettings` object of `draft`, whole (both escalations, so switching back keeps the other's
 * threshold). The interval is sent as typed when it is not a whole number, for the API to name the field.
 */
export function alertSettingsOfDraft(draft: AlertSettingsDraft): AlertSettingsValue {
  const interval = Number(draft.reminderInterval.trim());
  return {
    escalationType: draft.escalationType,
    runBasedEscalation: { failedRunThreshold: Number(draft.failedRunThreshold) },
    timeBasedEscalation: {
      minutesFailingThreshold: Number(draft.minutesFailingThreshold) as 5 | 10 | 15 | 30,
    },
    reminders: {
      amount: Number(draft.reminderAmount) as 0 | 1 | 2 | 3 | 4 | 5 | 100000,
      interval:
        draft.reminderInterval.trim() !== '' && Number.isFinite(interval)
          ? interval
          : (draft.reminderInterval as unknown as number),
    },
    parallelRunFailureThreshold: {
      enabled: draft.parallelEnabled,
      percentage: Number(draft.parallelPercentage),
    },
  };
}

/**
 * The alert settings controls for `draft`. `error` is the API's error of the last save; `prefix` is the
 * path of the settings in the body (`''` for `/v1/alert-settings`, `'alertSettings'` in a group), so each
 * message shows next to its control.
 */
export function AlertSettingsFields({
  draft,
  onChange,
  error,
  prefix = '',
}: {
  draft: AlertSettingsDraft;
  onChange: (draft: AlertSettingsDraft) => void;
  error: unknown;
  prefix?: string;
}) {
  const at = (field: string) => errorOf(error, prefix ? `${prefix}.${field}` : field);
  const set = (patch: Partial<AlertSettingsDraft>) => onChange({ ...draft, ...patch });
  return (
    <>
      <fieldset>
        <legend>When to alert</legend>
        <SelectField
          label="Escalation"
          hint="Alert after a number of failed runs in a row, or once a check has failed for some minutes."
          value={draft.escalationType}
          onValue={(escalationType) => set({ escalationType })}
          error={at('escalationType')}
          options={[
            { value: 'RUN_BASED', label: 'After failed runs' },
            { value: 'TIME_BASED', label: 'After time failing' },
          ]}
        />
        {draft.escalationType === 'RUN_BASED' ? (
          <SelectField
            label="Failed runs before an alert"
            class="misc-narrow"
            value={draft.failedRunThreshold}
            onValue={(failedRunThreshold) => set({ failedRunThreshold })}
            error={at('runBasedEscalation')}
            options={FAILED_RUNS.map((n) => ({ value: n, label: n === '1' ? '1 run' : `${n} runs` }))}
          />
        ) : (
          <SelectField
            label="Minutes failing before an alert"
            class="misc-narrow"
            value={draft.minutesFailingThreshold}
            onValue={(minutesFailingThreshold) => set({ minutesFailingThreshold })}
            error={at('timeBasedEscalation')}
            options={MINUTES_FAILING.map((n) => ({ value: n, label: `${n} minutes` }))}
          />
        )}
      </fieldset>
      <fieldset>
        <legend>Reminders</legend>
        <SelectField
          label="Reminders while a check keeps failing"
          value={draft.reminderAmount}
          onValue={(reminderAmount) => set({ reminderAmount })}
          error={at('reminders.amount')}
          options={REMINDER_AMOUNTS.map((n) => ({
            value: n,
            label:
              n === '0'
                ? 'None'
                : n === UNLIMITED
                  ? 'Until it recovers'
                  : n === '1'
                    ? '1 reminder'
                    : `${n} reminders`,
          }))}
        />
        {draft.reminderAmount !== '0' ? (
          <TextField
            label="Minutes between reminders"
            hint="1 to 1440 minutes (a day)."
            type="number"
            min={1}
            max={1440}
            step={1}
            class="misc-narrow"
            value={draft.reminderInterval}
            onValue={(reminderInterval) => set({ reminderInterval })}
            error={at('reminders.interval')}
          />
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Runs in several locations</legend>
        <Checkbox
          label="Alert only when a share of the locations fails"
          checked={draft.parallelEnabled}
          onChange={(parallelEnabled) => set({ parallelEnabled })}
          hint="For checks that run in several locations at once: one failing location alone raises no alert."
        />
        {draft.parallelEnabled ? (
          <SelectField
            label="Share of locations failing"
            class="misc-narrow"
            value={draft.parallelPercentage}
            onValue={(parallelPercentage) => set({ parallelPercentage })}
            error={at('parallelRunFailureThreshold')}
            options={PERCENTAGES.map((n) => ({ value: n, label: `${n} %` }))}
          />
        ) : null}
      </fieldset>
    </>
  );
}
