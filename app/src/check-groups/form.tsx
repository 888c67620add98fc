/**
 * The form of a check group (create or edit): name, tags, run locations (public and private), concurrency,
 * activated and muted; its alert settings (the account's or its own); the defaults its API checks inherit,
 * its setup and teardown scripts and its variables (defaults.tsx).
 */
import { useState } from 'preact/hooks';
import { LOCATIONS } from '../../../src/protocol/enums.js';
import { createCheckGroup, updateCheckGroup } from '../api/check-groups.js';
import { listPrivateLocations } from '../api/locations.js';
import { FormError, TextField } from '../ui/forms.js';
import type { CheckGroup, PrivateLocation } from '../api/schemas.js';
import { Checkbox, errorOf, FormButtons, formLevelError, parseList } from '../ui/widgets.js';
import { ErrorNotice } from '../ui/page.js';
import type { Loaded } from '../ui/hooks.js';
import { useLoad } from '../ui/hooks.js';
import { listSnippets } from '../api/references.js';
import {
  type AlertSettingsDraft,
  AlertSettingsFields,
  alertSettingsOfDraft,
  draftOfAlertSettings,
} from '../ui/alert-settings-fields.js';
import {
  DEFAULTS_FIELDS,
  type DefaultsDraft,
  DefaultsFieldsets,
  draftOfDefaults,
  fieldsOfDefaults,
} from './defaults.js';

/** `set` with `value` added (`on`) or removed, as a new set. */
function toggle(set: Set<string>, value: string, on: boolean): Set<string> {
  const next = new Set(set);
  if (on) next.add(value);
  else next.delete(value);
  return next;
}

/** The API's message for a fieldset's field, under the fieldset. */
function FieldsetError({ message }: { message: string | undefined }) {
  return message ? (
    <p class="field-error" role="alert">
      <span aria-hidden="true">✕ </span>
      {message}
    </p>
  ) : null;
}

/**
 * Create (no `group`) or edit a check group: name, tags, run locations (public and private), concurrency,
 * activated and muted. The API's validation messages show next to their fields.
 */
export function GroupForm({
  group,
  onSaved,
  onCancel,
}: {
  group?: CheckGroup;
  onSaved: (group: CheckGroup) => void;
  onCancel: () => void;
}) {
  const privateLocations = useLoad((signal) => listPrivateLocations(signal), []);
  const [name, setName] = useState(group?.name ?? '');
  const [tags, setTags] = useState((group?.tags ?? []).join(', '));
  const [locations, setLocations] = useState<Set<string>>(new Set(group?.locations ?? []));
  const [privates, setPrivates] = useState<Set<string>>(new Set(group?.privateLocations ?? []));
  const [concurrency, setConcurrency] = useState(String(group?.concurrency ?? 3));
  const [activated, setActivated] = useState(group?.activated ?? true);
  const [muted, setMuted] = useState(group?.muted ?? false);
  const [useGlobalAlerts, setUseGlobalAlerts] = useState(group?.useGlobalAlertSettings !== false);
  const [alertDraft, setAlertDraft] = useState<AlertSettingsDraft>(() =>
    draftOfAlertSettings(group?.alertSettings),
  );
  const [defaults, setDefaults] = useState<DefaultsDraft>(() => draftOfDefaults(group));
  const snippets = useLoad((signal) => listSnippets(signal), []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const fields = {
      name: name.trim(),
      tags: parseList(tags),
      locations: LOCATIONS.filter((l) => locations.has(l)),
      privateLocations: [...privates],
      concurrency: Number(concurrency),
      activated,
      muted,
      useGlobalAlertSettings: useGlobalAlerts,
      // The group's own settings are kept while the account's apply, for when they are chosen again.
      alertSettings: alertSettingsOfDraft(alertDraft),
      ...fieldsOfDefaults(defaults),
    };
    try {
      const saved = group ? await updateCheckGroup(group.id, fields) : await createCheckGroup(fields);
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = group ? 'cg-edit' : 'cg-new';
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h2 id={headingId}>{group ? 'Edit the group' : 'New check group'}</h2>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={setName}
      />
      <TextField
        label="Tags (optional)"
        hint="Separated by commas; the group's checks carry them too."
        error={errorOf(error, 'tags')}
        value={tags}
        onValue={setTags}
      />
      <LocationsFieldset locations={locations} onChange={setLocations} error={errorOf(error, 'locations')} />
      <PrivateLocationsFieldset
        privateLocations={privateLocations}
        privates={privates}
        onChange={setPrivates}
        error={errorOf(error, 'privateLocations')}
      />
      <TextField
        label="Concurrency"
        hint="How many of its checks may run at once when the group is started as a whole (at least 1)."
        error={errorOf(error, 'concurrency')}
        type="number"
        min={1}
        max={1000}
        class="misc-narrow"
        value={concurrency}
        onValue={setConcurrency}
      />
      <Checkbox
        label="Activated"
        checked={activated}
        onChange={setActivated}
        hint="A paused group's checks are not scheduled."
      />
      <Checkbox
        label="Muted"
        checked={muted}
        onChange={setMuted}
        hint="Alerts of its checks are recorded, and nobody is told."
      />
      <fieldset>
        <legend>Alert settings</legend>
        <Checkbox
          label="Use the account's alert settings"
          checked={useGlobalAlerts}
          onChange={setUseGlobalAlerts}
          hint={
            <>
              Set in <a href="/settings/alert-settings">Settings, Alert settings</a>. Untick to give the
              group's checks settings of their own.
            </>
          }
        />
        {useGlobalAlerts ? null : (
          <AlertSettingsFields
            draft={alertDraft}
            onChange={setAlertDraft}
            error={error}
            prefix="alertSettings"
          />
        )}
      </fieldset>
      <DefaultsFieldsets draft={defaults} onChange={setDefaults} snippets={snippets} error={error} />
      <FormError
        error={formLevelError(error, [
          'name',
          'tags',
          'locations',
          'privateLocations',
          'concurrency',
          ...(useGlobalAlerts ? [] : ['alertSettings']),
          ...DEFAULTS_FIELDS,
        ])}
      />
      <FormButtons label={group ? 'Save' : 'Create check group'} busy={busy} onCancel={onCancel} />
    </form>
  );
}

/** The public locations the group's checks run from. */
function LocationsFieldset({
  locations,
  onChange,
  error,
}: {
  locations: Set<string>;
  onChange: (locations: Set<string>) => void;
  error: string | undefined;
}) {
  return (
    <fieldset aria-describedby="cg-locations-hint">
      <legend>Locations</legend>
      <p class="field-hint" id="cg-locations-hint">
        Where the group's checks run. Public locations are served by the account's agents (the one of{' '}
        <code>outpost up</code> serves them all).
      </p>
      <div class="cg-location-grid">
        {LOCATIONS.map((l) => (
          <Checkbox
            key={l}
            label={l}
            checked={locations.has(l)}
            onChange={(on) => onChange(toggle(locations, l, on))}
          />
        ))}
      </div>
      <FieldsetError message={error} />
    </fieldset>
  );
}

/** The private locations the group's checks run from (slugs of removed locations stay, to be unticked). */
function PrivateLocationsFieldset({
  privateLocations,
  privates,
  onChange,
  error,
}: {
  privateLocations: Loaded<PrivateLocation[]>;
  privates: Set<string>;
  onChange: (privates: Set<string>) => void;
  error: string | undefined;
}) {
  const privateList = privateLocations.data ?? [];
  // Slugs the group names that are no longer private locations of the account stay choosable (to remove).
  const unknownPrivates = [...privates].filter((slug) => !privateList.some((p) => p.slugName === slug));
  return (
    <fieldset>
      <legend>Private locations</legend>
      {privateLocations.error ? <ErrorNotice error={privateLocations.error} /> : null}
      {privateLocations.data && privateList.length === 0 && unknownPrivates.length === 0 ? (
        <p class="muted">
          No private location yet: <a href="/private-locations">create one</a> to run checks from your own
          network.
        </p>
      ) : null}
      <div class="cg-location-grid">
        {privateList.map((p) => (
          <Checkbox
            key={p.id}
            label={`${p.name} (${p.slugName})`}
            checked={privates.has(p.slugName)}
            onChange={(on) => onChange(toggle(privates, p.slugName, on))}
          />
        ))}
        {unknownPrivates.map((slug) => (
          <Checkbox
            key={slug}
            label={`${slug} (no such private location)`}
            checked
            onChange={(on) => onChange(toggle(privates, slug, on))}
          />
        ))}
      </div>
      <FieldsetError message={error} />
    </fieldset>
  );
}
