/**
 * Maintenance windows of the account (`/settings/maintenance-windows`, `/v1/maintenance-windows`; docs/api.md,
 * "Maintenance windows"): planned work during which the checks a window covers skip their scheduled runs and
 * send no alert. List (on now or next, repeats, what it covers), create, delete.
 */
import { useState } from 'preact/hooks';
import {
  createMaintenanceWindow,
  deleteMaintenanceWindow,
  listMaintenanceWindows,
} from '../api/maintenance-windows.js';
import type { MaintenanceWindow } from '../api/schemas.js';
import { formatDateTime } from '../ui/format.js';
import { Field, FormError, SelectField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { Checkbox, ConfirmButton, errorOf, FormButtons, formLevelError, ListStatus } from '../ui/widgets.js';
import { SettingsTop } from './page-top.js';
import { useCan } from '../ui/permissions.js';

/** The fields the form names errors for. */
const FIELDS = [
  'name',
  'startsAt',
  'endsAt',
  'timezone',
  'repeatUnit',
  'repeatInterval',
  'repeatEndsAt',
  'tags',
];

const UNITS = { DAY: ['day', 'days'], WEEK: ['week', 'weeks'], MONTH: ['month', 'months'] } as const;

/** "Once", "Every day", "Every 2 weeks until 2026-12-31". */
export function repeatText(
  w: Pick<MaintenanceWindow, 'repeatUnit' | 'repeatInterval' | 'repeatEndsAt'>,
): string {
  if (w.repeatUnit === null) return 'Once';
  const n = w.repeatInterval ?? 1;
  const [one, many] = UNITS[w.repeatUnit];
  const every = n === 1 ? `Every ${one}` : `Every ${n} ${many}`;
  return w.repeatEndsAt ? `${every} until ${w.repeatEndsAt.slice(0, 10)}` : every;
}

/** What a window covers, in words: every check, tags, checks and groups by count. */
export function coverText(w: MaintenanceWindow): string {
  if (w.pauseAllChecks) return 'Every check';
  const parts: string[] = [];
  if (w.tags.length > 0) parts.push(`tags ${w.tags.join(', ')}`);
  if (w.checkIds.length > 0) parts.push(`${w.checkIds.length} check${w.checkIds.length === 1 ? '' : 's'}`);
  if (w.groupIds.length > 0) parts.push(`${w.groupIds.length} group${w.groupIds.length === 1 ? '' : 's'}`);
  return parts.length > 0 ? parts.join('; ') : 'No check';
}

/** What a window does while on, in words. */
function effectText(w: MaintenanceWindow): string {
  if (w.pauseRuns && w.silenceAlerts) return 'Runs skipped, alerts silenced';
  if (w.pauseRuns) return 'Runs skipped';
  if (w.silenceAlerts) return 'Alerts silenced';
  return 'Nothing';
}

/** The occurrence on now or next, in words. */
function whenText(w: MaintenanceWindow): string {
  if (!w.nextOccurrence) return 'Over';
  const { startsAt, endsAt } = w.nextOccurrence;
  return w.active
    ? `On now, until ${formatDateTime(endsAt)}`
    : `${formatDateTime(startsAt)} to ${formatDateTime(endsAt)}`;
}

/** The maintenance windows page: the list, and the form that creates one. */
export function MaintenanceWindowsPage() {
  useTitle('Maintenance windows · Settings');
  const windows = useLoad((signal) => listMaintenanceWindows(signal), []);
  const [formOpen, setFormOpen] = useState(false);
  const [status, setStatus] = useState('');
  const canWrite = useCan('write');

  return (
    <>
      <SettingsTop
        title="Maintenance windows"
        formOpen={formOpen}
        newLabel="New maintenance window"
        onToggle={() => {
          setStatus('');
          setFormOpen(!formOpen);
        }}
        status={status}
      >
        Planned work: while a window is on, the checks it covers (by tag, or every check) skip their scheduled
        runs and send no alert. "Run now" still runs them. Repeats keep the local time of the window's time
        zone.
      </SettingsTop>
      {formOpen && canWrite ? (
        <WindowForm
          onSaved={(saved) => {
            setFormOpen(false);
            setStatus(`Created ${saved.name}.`);
            windows.reload();
          }}
          onCancel={() => setFormOpen(false)}
        />
      ) : null}
      <ListStatus load={windows} loading="Loading maintenance windows" isEmpty={windows.data?.length === 0}>
        No maintenance window yet.
        {canWrite ? (
          <>
            {' '}
            Create one with <strong>New maintenance window</strong>.
          </>
        ) : null}
      </ListStatus>
      {windows.data && windows.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table st-table">
            <caption class="visually-hidden">Maintenance windows</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">On now or next</th>
                <th scope="col">Repeats</th>
                <th scope="col">Covers</th>
                <th scope="col">While on</th>
                {canWrite ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {windows.data.map((w) => (
                <tr key={w.id}>
                  <th scope="row">{w.name}</th>
                  <td data-label="On now or next">{whenText(w)}</td>
                  <td data-label="Repeats">
                    {repeatText(w)}
                    {w.repeatUnit !== null ? <span class="muted"> ({w.timezone})</span> : null}
                  </td>
                  <td data-label="Covers">{coverText(w)}</td>
                  <td data-label="While on">{effectText(w)}</td>
                  {canWrite ? (
                    <td class="misc-actions-cell">
                      <ConfirmButton
                        small
                        label={
                          <>
                            Delete <span class="visually-hidden">{w.name}</span>
                          </>
                        }
                        question={
                          <>
                            Delete the maintenance window <strong>{w.name}</strong>? Its checks run and alert
                            as usual again.
                          </>
                        }
                        confirmLabel="Delete window"
                        onConfirm={async () => {
                          await deleteMaintenanceWindow(w.id);
                          setStatus(`Deleted ${w.name}.`);
                          windows.reload();
                        }}
                      />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/** A date or date-and-time input, labelled and wired like the other fields. */
function DateInput({
  label,
  hint,
  error,
  type,
  value,
  onValue,
}: {
  label: string;
  hint?: string;
  error: string | undefined;
  type: 'date' | 'datetime-local';
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type={type}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid ? 'true' : undefined}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** The browser's own time zone, the form's default (UTC when it has none). */
function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Creates a window: name, first occurrence, time zone, repeats, tags, what it does. */
function WindowForm({
  onSaved,
  onCancel,
}: {
  onSaved: (w: MaintenanceWindow) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [startsAt, setStartsAt] = useState('');
  const [endsAt, setEndsAt] = useState('');
  const [timezone, setTimezone] = useState(browserZone());
  const [repeat, setRepeat] = useState<'NONE' | 'DAY' | 'WEEK' | 'MONTH'>('NONE');
  const [every, setEvery] = useState('1');
  const [repeatEndsAt, setRepeatEndsAt] = useState('');
  const [tags, setTags] = useState('');
  const [allChecks, setAllChecks] = useState(false);
  const [pauseRuns, setPauseRuns] = useState(true);
  const [silenceAlerts, setSilenceAlerts] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const repeats = repeat !== 'NONE';
      onSaved(
        await createMaintenanceWindow({
          name: name.trim(),
          startsAt,
          endsAt,
          timezone: timezone.trim(),
          repeatUnit: repeats ? repeat : null,
          repeatInterval: repeats ? Number(every) : null,
          repeatEndsAt: repeats && repeatEndsAt !== '' ? repeatEndsAt : null,
          tags: tags
            .split(',')
            .map((t) => t.trim())
            .filter((t) => t !== ''),
          ...(allChecks ? { pauseAllChecks: true } : {}),
          pauseRuns,
          silenceAlerts,
        }),
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby="st-window-new">
      <h2 id="st-window-new">New maintenance window</h2>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={200}
        value={name}
        onValue={setName}
      />
      <DateInput
        label="Starts"
        type="datetime-local"
        error={errorOf(error, 'startsAt')}
        value={startsAt}
        onValue={setStartsAt}
      />
      <DateInput
        label="Ends"
        type="datetime-local"
        error={errorOf(error, 'endsAt')}
        value={endsAt}
        onValue={setEndsAt}
      />
      <TextField
        label="Time zone"
        hint="An IANA time zone, e.g. Europe/Berlin. The times above are in it, and repeats keep its local time."
        error={errorOf(error, 'timezone')}
        required
        maxLength={64}
        value={timezone}
        onValue={setTimezone}
      />
      <SelectField
        label="Repeats"
        error={errorOf(error, 'repeatUnit')}
        value={repeat}
        onValue={setRepeat}
        options={[
          { value: 'NONE', label: 'Does not repeat' },
          { value: 'DAY', label: 'Daily' },
          { value: 'WEEK', label: 'Weekly' },
          { value: 'MONTH', label: 'Monthly' },
        ]}
      />
      {repeat !== 'NONE' ? (
        <>
          <TextField
            label={`Every how many ${UNITS[repeat][1]}`}
            type="number"
            class="misc-narrow"
            min={1}
            max={365}
            error={errorOf(error, 'repeatInterval')}
            value={every}
            onValue={setEvery}
          />
          <DateInput
            label="Last start on"
            hint="Leave empty to repeat forever."
            type="date"
            error={errorOf(error, 'repeatEndsAt')}
            value={repeatEndsAt}
            onValue={setRepeatEndsAt}
          />
        </>
      ) : null}
      <TextField
        label="Tags"
        hint="Separated by commas: the checks with one of these tags, or in a group with one, are covered."
        error={errorOf(error, 'tags')}
        value={tags}
        onValue={setTags}
      />
      <Checkbox label="Cover every check of the account" checked={allChecks} onChange={setAllChecks} />
      <Checkbox
        label="Skip scheduled runs"
        hint='"Run now" and triggered runs still run.'
        checked={pauseRuns}
        onChange={setPauseRuns}
      />
      <Checkbox
        label="Silence alerts"
        hint="Runs are judged, no one is told."
        checked={silenceAlerts}
        onChange={setSilenceAlerts}
      />
      <FormError error={formLevelError(error, FIELDS)} />
      <FormButtons label="Create maintenance window" busy={busy} onCancel={onCancel} />
    </form>
  );
}
