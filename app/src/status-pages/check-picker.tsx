/**
 * Linking checks to a status-page service (docs/status-pages.md, "Linking checks"): the account's checks by
 * name, each a checkbox that links or unlinks the check at once through its `triggerIncident`.
 */
import { useId, useState } from 'preact/hooks';
import type { Check } from '../api/schemas.js';
import { linkCheck, type ServiceWithChecks, type TriggerSeverity, unlinkCheck } from '../api/status-pages.js';
import { SelectField } from '../ui/forms.js';
import { Checkbox, messageOf } from '../ui/widgets.js';

/** The severities a new link may have, worst last, with what a failure then does to the service. */
const SEVERITIES: readonly { value: TriggerSeverity; label: string }[] = [
  { value: 'MINOR', label: 'Minor: a partial outage' },
  { value: 'MEDIUM', label: 'Medium: a partial outage' },
  { value: 'MAJOR', label: 'Major: a major outage' },
  { value: 'CRITICAL', label: 'Critical: a major outage' },
];

/** The service a check's `triggerIncident` names, or null. */
function linkedServiceOf(check: Check): string | null {
  const trigger = check.triggerIncident as { serviceId?: unknown } | null | undefined;
  return trigger && typeof trigger.serviceId === 'string' ? trigger.serviceId : null;
}

/**
 * The checks of the account as checkboxes: ticked are those linked to `service`. Ticking one links it
 * (`PUT /v1/checks/{id}` with a `triggerIncident` of the severity chosen above the list), unticking it
 * unlinks it; each change is saved at once and said in a polite status line. A check linked to another
 * service says so: linking it here moves it. `checks` is undefined while it loads.
 */
export function CheckPicker({
  service,
  checks,
  serviceNames,
  onChanged,
}: {
  service: ServiceWithChecks;
  checks: readonly Check[] | undefined;
  /** Names of the account's services by id, to say where a check is linked now. */
  serviceNames: ReadonlyMap<string, string>;
  /** A check was linked or unlinked: the services and checks should be read again. */
  onChanged: () => void;
}) {
  const id = useId();
  const [severity, setSeverity] = useState<TriggerSeverity>('MAJOR');
  const [busy, setBusy] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [error, setError] = useState<string | null>(null);
  // What this picker set, by check id (the service linked, or null): shown over the checks as loaded.
  const [saved, setSaved] = useState<ReadonlyMap<string, string | null>>(new Map());
  const linkedTo = (check: Check) => (saved.has(check.id) ? saved.get(check.id)! : linkedServiceOf(check));

  async function toggle(check: Check, on: boolean) {
    setBusy(check.id);
    setError(null);
    setStatus('');
    // The box shows the change at once; it goes back if the save fails.
    const before = saved;
    setSaved(new Map(saved).set(check.id, on ? service.id : null));
    try {
      if (on) await linkCheck(check, service, severity);
      else await unlinkCheck(check);
      setStatus(
        on
          ? `${check.name} is linked to ${service.name}.`
          : `${check.name} is no longer linked to ${service.name}.`,
      );
      onChanged();
    } catch (err) {
      setSaved(before);
      setError(`${check.name} could not be ${on ? 'linked' : 'unlinked'}: ${messageOf(err)}`);
    } finally {
      setBusy(null);
    }
  }

  const sorted = [...(checks ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <div class="sp-check-picker">
      <p class="field-hint">
        A linked check sets the service’s state on the status page when it fails, opens an incident on it, and
        its runs make the service’s uptime strip. Each change is saved at once.
      </p>
      <SelectField
        label="Severity of new links"
        hint="What a failure of a check linked from now on means for the service."
        value={severity}
        onValue={setSeverity}
        options={SEVERITIES}
      />
      <fieldset aria-describedby={error ? `${id}-error` : undefined}>
        <legend>Checks of {service.name}</legend>
        {checks === undefined ? <p class="muted">Loading checks…</p> : null}
        {checks !== undefined && sorted.length === 0 ? (
          <p class="muted">No check yet: create one on the Checks page first.</p>
        ) : null}
        <div class="misc-service-grid">
          {sorted.map((check) => {
            const other = linkedTo(check);
            const elsewhere = other !== null && other !== service.id;
            const hints = [
              elsewhere
                ? `Linked to ${serviceNames.get(other) ?? 'another service'}: ticking moves it here.`
                : '',
              check.activated === false ? 'Paused: its runs do not count until it is resumed.' : '',
            ].filter(Boolean);
            return (
              <Checkbox
                key={check.id}
                label={check.name}
                checked={other === service.id}
                disabled={busy !== null}
                hint={hints.length > 0 ? hints.join(' ') : undefined}
                onChange={(on) => toggle(check, on)}
              />
            );
          })}
        </div>
      </fieldset>
      <p class="sp-check-status" role="status">
        {busy ? 'Saving…' : status}
      </p>
      {error ? (
        <p class="field-error" id={`${id}-error`} role="alert">
          <span aria-hidden="true">✕ </span>
          {error}
        </p>
      ) : null}
    </div>
  );
}
