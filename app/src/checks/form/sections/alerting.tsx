/**
 * How a check alerts: the alert channels it notifies (`alertChannelSubscriptions`), its alert settings
 * (`useGlobalAlertSettings`, `alertSettings`) and the status-page incident it opens (`triggerIncident`).
 */
import type { CheckType } from '../../../api/schemas.js';
import {
  Checkbox,
  type FormApi,
  NumberInput,
  RadioLine,
  SelectInput,
  TextArea,
  TextInput,
} from '../controls/inputs.js';
import {
  ESCALATION_TYPES,
  FAILED_RUN_THRESHOLDS,
  INCIDENT_SEVERITIES,
  MINUTES_FAILING_THRESHOLDS,
  PARALLEL_PERCENTAGES,
  REMINDER_AMOUNTS,
  REMINDER_INTERVAL,
  SEVERITY_LABELS,
  completeAlertSettings,
  failedRunsLabel,
  incidentTriggerFor,
  remindersLabel,
} from '../model/alert-settings.js';
import { isObject } from '../model/paths.js';
import type { References } from './general.js';

/** What a channel is called in the list: its type and what tells it apart. */
function channelLabel(channel: { id: number; type: string; config: Record<string, unknown> }): string {
  const c = channel.config;
  const name = [c.name, c.address, c.channel, c.serviceName, c.number].find(
    (v) => typeof v === 'string' && v !== '',
  );
  const kind = channel.type.charAt(0) + channel.type.slice(1).toLowerCase();
  return `${kind}: ${typeof name === 'string' ? name : `#${channel.id}`}`;
}

/**
 * `alertChannelSubscriptions` as one checkbox per alert channel of the account. A subscription to a channel
 * not listed (deleted since) is kept as it is.
 */
export function AlertChannelSection({
  fx,
  refs,
  creating,
}: {
  fx: FormApi;
  refs: References;
  creating: boolean;
}) {
  const channels = refs.alertChannels;
  const error = fx.error('alertChannelSubscriptions');
  if (!channels) {
    return (
      <fieldset>
        <legend>Alert channels</legend>
        <p class="notice">
          Alert channels could not be loaded;{' '}
          {creating ? 'the new check is subscribed to every channel.' : 'the check keeps its subscriptions.'}
        </p>
      </fieldset>
    );
  }
  const subscriptions =
    (fx.get('alertChannelSubscriptions') as { alertChannelId: number; activated: boolean }[]) ?? [];
  const isOn = (id: number) => subscriptions.some((s) => s.alertChannelId === id && s.activated);
  const toggle = (id: number, on: boolean) => {
    const known = subscriptions.some((s) => s.alertChannelId === id);
    fx.set(
      'alertChannelSubscriptions',
      known
        ? subscriptions.map((s) => (s.alertChannelId === id ? { ...s, activated: on } : s))
        : [...subscriptions, { alertChannelId: id, activated: on }],
    );
  };
  return (
    <fieldset aria-describedby="alert-channels-hint">
      <legend>Alert channels</legend>
      <p class="field-hint" id="alert-channels-hint">
        Where notifications about this check go. A channel can also alert for it through its group.
      </p>
      {error ? (
        <p class="field-error" role="alert">
          <span aria-hidden="true">✕ </span>
          {error}
        </p>
      ) : null}
      {channels.length === 0 ? (
        <p class="muted">
          No alert channels yet: <a href="/alert-channels">add one</a>.
        </p>
      ) : (
        <ul class="check-grid">
          {channels.map((c, i) => (
            <li key={c.id}>
              <input
                id={`alert-channel-${c.id}`}
                type="checkbox"
                checked={isOn(c.id)}
                aria-invalid={error && i === 0 ? 'true' : undefined}
                onChange={(e) => toggle(c.id, e.currentTarget.checked)}
              />
              <label for={`alert-channel-${c.id}`}>{channelLabel(c)}</label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

/** The check types whose runs read a TLS certificate (docs/alerting.md, "SSL certificate expiry"). */
function readsCertificate(type: CheckType): boolean {
  return ['URL', 'API', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT'].includes(type);
}

/**
 * `useGlobalAlertSettings` and `alertSettings`: the account's settings, or the check's own (escalation after
 * failed runs or minutes failing, reminders, the parallel-run threshold), each a control with its unit.
 * Choosing the check's own fills in every field, at its default when it had none.
 */
export function AlertSettingsSection({ fx }: { fx: FormApi }) {
  const own = fx.get('useGlobalAlertSettings') === false;
  const settings = completeAlertSettings(fx.get('alertSettings'));
  const inGroup = fx.get('groupId') != null;
  const error = fx.error('useGlobalAlertSettings');
  const chooseOwn = (value: boolean) => {
    fx.set('useGlobalAlertSettings', !value);
    if (value) fx.set('alertSettings', settings);
  };
  return (
    <fieldset aria-describedby="alert-settings-hint">
      <legend>Alert settings</legend>
      <p class="field-hint" id="alert-settings-hint">
        When the first alert is sent, and how often it is repeated while the check keeps failing.
      </p>
      {error ? (
        <p class="field-error" role="alert">
          <span aria-hidden="true">✕ </span>
          {error}
        </p>
      ) : null}
      <div class="check-row" role="radiogroup" aria-label="Alert settings to use">
        <RadioLine
          id="alert-settings-global"
          name="alert-settings-source"
          label="The account's alert settings"
          checked={!own}
          onChoose={() => chooseOwn(false)}
        />
        <RadioLine
          id="alert-settings-own"
          name="alert-settings-source"
          label="This check's own settings"
          checked={own}
          onChoose={() => chooseOwn(true)}
        />
      </div>
      {inGroup ? (
        <p class="notice">
          This check is in a group: the group's alert settings apply, or the account's when the group uses
          them. The check's own settings are kept but not used while it is in the group.
        </p>
      ) : null}
      {own ? <OwnAlertSettings fx={fx} settings={settings} /> : null}
      {readsCertificate(fx.type) ? (
        <p class="field-hint">
          Certificate expiry: an alert goes to each channel with SSL certificate alerts turned on, the number
          of days before expiry that channel sets (<a href="/alert-channels">alert channels</a>)
          {fx.type === 'URL' || fx.type === 'API'
            ? '; the certificate is the one of the request URL.'
            : '; the certificate is the one of the SSL check domain above.'}
        </p>
      ) : null}
    </fieldset>
  );
}

/** The check's own `alertSettings`: escalation, reminders and the parallel-run threshold. */
function OwnAlertSettings({ fx, settings }: { fx: FormApi; settings: Record<string, unknown> }) {
  const timeBased = settings.escalationType === 'TIME_BASED';
  const reminders = isObject(settings.reminders) ? settings.reminders : {};
  const parallel = isObject(settings.parallelRunFailureThreshold) ? settings.parallelRunFailureThreshold : {};
  return (
    <div class="alert-settings">
      <p class="alert-settings-label" id="escalation-label">
        Send the first alert
      </p>
      <div class="check-row" role="radiogroup" aria-labelledby="escalation-label">
        <RadioLine
          id="escalation-run"
          name="escalation-type"
          label="After failed runs"
          checked={!timeBased}
          onChoose={() => fx.set('alertSettings.escalationType', ESCALATION_TYPES[0])}
        />
        <RadioLine
          id="escalation-time"
          name="escalation-type"
          label="After minutes failing"
          checked={timeBased}
          onChoose={() => fx.set('alertSettings.escalationType', ESCALATION_TYPES[1])}
        />
      </div>
      <div class="field-pair">
        {timeBased ? (
          <SelectInput
            fx={fx}
            path="alertSettings.timeBasedEscalation.minutesFailingThreshold"
            aliases={['alertSettings.timeBasedEscalation', 'alertSettings.escalationType']}
            label="Alert after (minutes failing)"
            hint="Minutes since the first failed run, checked at each run."
            options={MINUTES_FAILING_THRESHOLDS.map((m) => ({ value: String(m), label: `${m} minutes` }))}
            parse={Number}
          />
        ) : (
          <SelectInput
            fx={fx}
            path="alertSettings.runBasedEscalation.failedRunThreshold"
            aliases={['alertSettings.runBasedEscalation', 'alertSettings.escalationType']}
            label="Alert after (failed runs)"
            hint="Failing or degraded runs in a row before the first alert."
            options={FAILED_RUN_THRESHOLDS.map((n) => ({ value: String(n), label: failedRunsLabel(n) }))}
            parse={Number}
          />
        )}
        <SelectInput
          fx={fx}
          path="alertSettings.reminders.amount"
          aliases={['alertSettings.reminders']}
          label="Reminders"
          hint="Sent while the check keeps failing."
          options={REMINDER_AMOUNTS.map((n) => ({ value: String(n), label: remindersLabel(n) }))}
          parse={Number}
        />
        {reminders.amount !== 0 ? (
          <NumberInput
            fx={fx}
            path="alertSettings.reminders.interval"
            label="Reminder every (minutes)"
            hint={`${REMINDER_INTERVAL.min} to ${REMINDER_INTERVAL.max} minutes.`}
            min={REMINDER_INTERVAL.min}
            max={REMINDER_INTERVAL.max}
            step={1}
          />
        ) : null}
      </div>
      <Checkbox
        fx={fx}
        path="alertSettings.parallelRunFailureThreshold.enabled"
        label="With parallel runs, alert only when enough locations fail"
        hint="For a check that runs in every location at once."
      />
      {parallel.enabled === true ? (
        <SelectInput
          fx={fx}
          path="alertSettings.parallelRunFailureThreshold.percentage"
          aliases={['alertSettings.parallelRunFailureThreshold']}
          label="Share of locations failing (%)"
          hint="The share of a run's locations that must fail before it counts as failed."
          options={PARALLEL_PERCENTAGES.map((p) => ({ value: String(p), label: `${p} %` }))}
          parse={Number}
        />
      ) : null}
    </div>
  );
}

/**
 * `triggerIncident`: a status-page service chosen by name, the severity, the incident's name and first
 * update, and whether subscribers are told. "None" removes the trigger (null). A service no longer listed
 * (deleted since) stays chosen, named as such.
 */
export function IncidentTriggerSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const trigger = fx.get('triggerIncident');
  const current = isObject(trigger) ? trigger : null;
  const services = refs.services;
  const hint = (
    <>
      When the check's alert of a failure is sent, an incident is opened on this service's status pages; it is
      resolved when the check recovers.
    </>
  );
  if (!services) {
    return (
      <fieldset>
        <legend>Status-page incident</legend>
        <p class="notice">
          Status-page services could not be loaded; the check keeps its incident trigger as it is.
        </p>
      </fieldset>
    );
  }
  const serviceId = current ? String(current.serviceId ?? '') : '';
  const known = services.some((s) => s.id === serviceId);
  const serviceOptions = [
    { value: '', label: 'None: open no incident' },
    ...(current && !known ? [{ value: serviceId, label: 'A service that no longer exists' }] : []),
    ...services.map((s) => ({ value: s.id, label: s.name })),
  ];
  return (
    <fieldset>
      <legend>Status-page incident</legend>
      <SelectInput
        fx={fx}
        path="triggerIncident.serviceId"
        aliases={['triggerIncident']}
        label="Status-page service"
        hint={hint}
        options={serviceOptions}
        format={() => serviceId}
        onChoose={(value) => {
          if (value === '') {
            fx.set('triggerIncident', null);
            return;
          }
          const name = services.find((s) => s.id === value)?.name ?? value;
          fx.set('triggerIncident', incidentTriggerFor(value, name, current));
        }}
      />
      {services.length === 0 && !current ? (
        <p class="muted">
          No status-page services yet: <a href="/status-pages">add one</a>.
        </p>
      ) : null}
      {current ? (
        <>
          <SelectInput
            fx={fx}
            path="triggerIncident.severity"
            label="Severity"
            options={INCIDENT_SEVERITIES.map((s) => ({ value: s, label: SEVERITY_LABELS[s] }))}
          />
          <TextInput
            fx={fx}
            path="triggerIncident.name"
            label="Incident name"
            hint="At most 255 characters."
          />
          <TextArea
            fx={fx}
            path="triggerIncident.description"
            label="Incident description"
            hint="The incident's first update, shown on the status page."
            rows={3}
          />
          <Checkbox
            fx={fx}
            path="triggerIncident.notifySubscribers"
            label="Email the status pages' subscribers"
            hint="When the incident is opened and when it is resolved."
          />
        </>
      ) : null}
    </fieldset>
  );
}
