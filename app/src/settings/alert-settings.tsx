/**
 * The account's alert settings (`/settings/alert-settings`, `GET|PUT /v1/alert-settings`): when a failing
 * check alerts, its reminders and the parallel-run threshold, for every check (or group) that uses the
 * account's settings (`useGlobalAlertSettings`). Certificate-expiry alerts are set per alert channel.
 */
import { useState } from 'preact/hooks';
import { getAlertSettings, putAlertSettings } from '../api/alert-settings.js';
import {
  type AlertSettingsDraft,
  AlertSettingsFields,
  alertSettingsOfDraft,
  draftOfAlertSettings,
} from '../ui/alert-settings-fields.js';
import { FormError } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { RoleNotice, useCan } from '../ui/permissions.js';
import { FormButtons, formLevelError } from '../ui/widgets.js';
import type { AlertSettings } from '../api/schemas.js';

/** The alert settings page: the form, filled with the account's settings. */
export function AlertSettingsPage() {
  useTitle('Alert settings · Settings');
  const settings = useLoad((signal) => getAlertSettings(signal), []);
  return (
    <>
      <PageHeader title="Alert settings" />
      <p class="muted st-intro">
        What every check follows unless it or its group has settings of its own. Who is told is chosen per
        check in its alert channels.
      </p>
      {settings.error && !settings.data ? <ErrorNotice error={settings.error} /> : null}
      {settings.data ? (
        <SettingsForm settings={settings.data} />
      ) : settings.error ? null : (
        <Loading what="Loading the alert settings" />
      )}
      <section aria-labelledby="st-ssl" class="st-intro">
        <h2 id="st-ssl">Certificate expiry</h2>
        <p>
          Alerts about TLS certificates about to expire are set per alert channel: its “SSL certificates about
          to expire” option and how many days before (1 to 30).{' '}
          <a href="/alert-channels">Open the alert channels</a>.
        </p>
      </section>
    </>
  );
}

/**
 * The form: the shared alert settings controls and Save. A session that may not change them sees the same
 * controls disabled, without Save, under the role's notice.
 */
function SettingsForm({ settings }: { settings: AlertSettings }) {
  const canWrite = useCan('write');
  const [draft, setDraft] = useState<AlertSettingsDraft>(() => draftOfAlertSettings(settings));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState('');

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      const saved = await putAlertSettings(alertSettingsOfDraft(draft) as AlertSettings);
      setDraft(draftOfAlertSettings(saved));
      setStatus('Saved.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (!canWrite) {
    return (
      <section class="card misc-form" aria-labelledby="st-alert-form">
        <h2 id="st-alert-form">Account alert settings</h2>
        <RoleNotice permission="write" />
        <fieldset class="st-read-only" disabled>
          <legend class="visually-hidden">The account's alert settings, as they are</legend>
          <AlertSettingsFields draft={draft} onChange={setDraft} error={null} />
        </fieldset>
      </section>
    );
  }

  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby="st-alert-form">
      <h2 id="st-alert-form">Account alert settings</h2>
      <AlertSettingsFields draft={draft} onChange={setDraft} error={error} />
      <FormError
        error={formLevelError(error, [
          'escalationType',
          'runBasedEscalation',
          'timeBasedEscalation',
          'reminders',
          'parallelRunFailureThreshold',
        ])}
      />
      <FormButtons label="Save alert settings" busy={busy} status={status} />
    </form>
  );
}
