/**
 * Declaring and editing an incident: name, impact, services and the first update.
 */
import { useState } from 'preact/hooks';
import { createIncident, updateIncident } from '../api/incidents.js';
import { FormError, SelectField, TextAreaField, TextField } from '../ui/forms.js';
import { listServices } from '../api/status-pages.js';
import { ServicePicker } from '../status-pages/service-picker.js';
import type { Impact, IncidentView, UpdateStatus } from '../api/schemas.js';
import { Checkbox, errorOf, FormButtons, formLevelError } from '../ui/widgets.js';
import { ErrorNotice, Loading } from '../ui/page.js';
import { useLoad } from '../ui/hooks.js';
import { IMPACT_OPTIONS, STATUS_OPTIONS } from './badges.js';

/** The status select and description textarea of an update, shared by the new-incident and update forms. */
export function UpdateFields({
  status,
  description,
  notify,
  onStatus,
  onDescription,
  onNotify,
  error,
  prefix,
}: {
  status: UpdateStatus;
  description: string;
  notify: boolean;
  onStatus: (status: UpdateStatus) => void;
  onDescription: (text: string) => void;
  onNotify: (on: boolean) => void;
  error: unknown;
  /** Where the API names the update's fields: `` for an update, `incidentUpdates[0].` for a new incident. */
  prefix: string;
}) {
  return (
    <>
      <SelectField
        label="Status"
        error={errorOf(error, `${prefix}status`)}
        value={status}
        onValue={onStatus}
        options={STATUS_OPTIONS}
      />
      <TextAreaField
        label="Description"
        hint="What the visitors of your status pages read. Resolved ends the incident."
        error={errorOf(error, `${prefix}description`)}
        class="inc-text"
        required
        maxLength={10_000}
        value={description}
        onValue={onDescription}
      />
      <Checkbox
        label="Notify subscribers"
        checked={notify}
        onChange={onNotify}
        hint="Tell the subscribers of the status pages showing its services about this update."
      />
    </>
  );
}

/**
 * Create an incident (no `incident`: with its first update) or edit one (name, impact and services; updates
 * are posted on their own).
 */
export function IncidentForm({
  incident,
  onSaved,
  onCancel,
}: {
  incident?: IncidentView;
  onSaved: (incident: { id: string }) => void;
  onCancel: () => void;
}) {
  const services = useLoad(listServices, []);
  const [name, setName] = useState(incident?.name ?? '');
  const [impact, setImpact] = useState<Impact>(incident?.impact ?? 'MINOR');
  const [selected, setSelected] = useState<Set<string>>(new Set(incident?.services.map((s) => s.id) ?? []));
  const [status, setStatus] = useState<UpdateStatus>('INVESTIGATING');
  const [description, setDescription] = useState('');
  const [notify, setNotify] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const base = { name: name.trim(), impact, services: [...selected].map((id) => ({ id })) };
    try {
      if (incident) {
        await updateIncident(incident.id, base);
        onSaved(incident);
      } else {
        const created = await createIncident({
          ...base,
          incidentUpdates: [{ status, description: description.trim(), notifySubscribers: notify }],
        });
        onSaved(created);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = incident ? 'inc-edit' : 'inc-new';
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h2 id={headingId}>{incident ? 'Edit the incident' : 'New incident'}</h2>
      <TextField
        label="Name"
        hint="A short title, e.g. “Checkout API errors”."
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={setName}
      />
      <SelectField
        label="Impact"
        error={errorOf(error, 'impact')}
        value={impact}
        onValue={setImpact}
        options={IMPACT_OPTIONS}
      />
      {services.error ? <ErrorNotice error={services.error} /> : null}
      {services.data ? (
        <ServicePicker
          legend="Affected services"
          services={services.data}
          selected={selected}
          onChange={setSelected}
          error={errorOf(error, 'services')}
          empty={
            <>
              No status-page service yet: <a href="/status-pages">create services</a> to show the incident on
              status pages.
            </>
          }
        />
      ) : (
        <Loading what="Loading services" />
      )}
      {incident ? null : (
        <fieldset>
          <legend>First update</legend>
          <UpdateFields
            status={status}
            description={description}
            notify={notify}
            onStatus={setStatus}
            onDescription={setDescription}
            onNotify={setNotify}
            error={error}
            prefix="incidentUpdates[0]."
          />
        </fieldset>
      )}
      <FormError error={formLevelError(error, ['name', 'impact', 'services', 'incidentUpdates'])} />
      <FormButtons label={incident ? 'Save' : 'Open incident'} busy={busy} onCancel={onCancel} />
    </form>
  );
}
