import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, getAllPages } from '../api.js';
import { FormError, SelectField, TextAreaField, TextField } from '../components/forms.js';
import { loadServices, ServicePicker } from '../components/misc-services.js';
import type { Impact, IncidentUpdateView, IncidentView, UpdateStatus } from '../components/misc-types.js';
import {
  Breadcrumbs,
  Checkbox,
  ConfirmButton,
  errorOf,
  FormButtons,
  formLevelError,
  ListStatus,
} from '../components/misc-ui.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../components/page.js';
import { formatDateTime, formatRelative } from '../format.js';
import { useLoad, useTitle } from '../hooks.js';
import './incidents.css';

/** How often the pages look again (an incident a check opened or resolved shows up), ms. */
const POLL_MS = 30_000;

/** Impacts in the form's order, with their words and badge (glyph and colour; the text says it). */
const IMPACTS: Record<Impact, { label: string; cls: string; glyph: string }> = {
  MINOR: { label: 'Minor', cls: 'degraded', glyph: '!' },
  MAJOR: { label: 'Major', cls: 'failing', glyph: '✕' },
  MAINTENANCE: { label: 'Maintenance', cls: 'paused', glyph: '⚙' },
};

/** Update statuses in their usual order, with their words and badge. */
const STATUSES: Record<UpdateStatus, { label: string; cls: string; glyph: string }> = {
  INVESTIGATING: { label: 'Investigating', cls: 'failing', glyph: '?' },
  IDENTIFIED: { label: 'Identified', cls: 'degraded', glyph: '!' },
  MONITORING: { label: 'Monitoring', cls: 'pending', glyph: '…' },
  RESOLVED: { label: 'Resolved', cls: 'passing', glyph: '✓' },
  MAINTENANCE: { label: 'Maintenance', cls: 'paused', glyph: '⚙' },
};

/** The impacts and the update statuses as the options of the form's selects. */
const IMPACT_OPTIONS = (Object.keys(IMPACTS) as Impact[]).map((i) => ({ value: i, label: IMPACTS[i].label }));
const STATUS_OPTIONS = (Object.keys(STATUSES) as UpdateStatus[]).map((s) => ({
  value: s,
  label: STATUSES[s].label,
}));

function ImpactBadge({ impact }: { impact: Impact }) {
  const { label, cls, glyph } = IMPACTS[impact];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
      <span class="visually-hidden"> impact</span>
    </span>
  );
}

function UpdateStatusBadge({ status }: { status: UpdateStatus }) {
  const { label, cls, glyph } = STATUSES[status];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}

/** Whether an incident is over: it stopped, or its latest update resolved it. */
function isResolved(incident: IncidentView): boolean {
  return incident.stoppedAt !== null || incident.incidentUpdates[0]?.status === 'RESOLVED';
}

/**
 * Incidents (`/incidents`) and one of them with every update (`/incidents/:incidentId`): what went wrong on
 * which status-page services, told to the pages' visitors as a series of updates.
 */
export default function IncidentsPage({ incidentId }: { incidentId?: string }) {
  return incidentId ? <IncidentDetail id={incidentId} /> : <IncidentList />;
}

function IncidentList() {
  useTitle('Incidents');
  const { route } = useLocation();
  const incidents = useLoad((signal) => getAllPages<IncidentView>('/v1/incidents', {}, signal), [], POLL_MS);
  const [creating, setCreating] = useState(false);
  const open = (incidents.data ?? []).filter((i) => !isResolved(i));
  const resolved = (incidents.data ?? []).filter(isResolved);

  return (
    <>
      <PageHeader title="Incidents">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? 'Close the form' : 'New incident'}
        </button>
      </PageHeader>
      <p class="muted inc-intro">
        An incident tells the visitors of your status pages what is wrong with which services, update by
        update. Checks with an incident trigger open and resolve theirs themselves.
      </p>
      {creating ? (
        <IncidentForm
          onSaved={(incident) => route(`/incidents/${incident.id}`)}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <ListStatus load={incidents} loading="Loading incidents" isEmpty={incidents.data?.length === 0}>
        No incident yet. When something goes wrong, open one with <strong>New incident</strong> and post
        updates as you learn more.
      </ListStatus>
      {incidents.data && incidents.data.length > 0 ? (
        <>
          <section aria-labelledby="inc-open">
            <h2 id="inc-open">Open ({open.length})</h2>
            {open.length === 0 ? (
              <Empty>No open incident.</Empty>
            ) : (
              <IncidentTable incidents={open} caption="Open incidents" />
            )}
          </section>
          <section aria-labelledby="inc-resolved">
            <h2 id="inc-resolved">Resolved ({resolved.length})</h2>
            {resolved.length === 0 ? (
              <Empty>No resolved incident.</Empty>
            ) : (
              <IncidentTable incidents={resolved} caption="Resolved incidents" />
            )}
          </section>
        </>
      ) : null}
    </>
  );
}

function IncidentTable({ incidents, caption }: { incidents: IncidentView[]; caption: string }) {
  return (
    <div class="table-wrap">
      <table class="misc-table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Incident</th>
            <th scope="col">Impact</th>
            <th scope="col">Latest update</th>
            <th scope="col">Services</th>
            <th scope="col">Started</th>
            <th scope="col">Resolved</th>
          </tr>
        </thead>
        <tbody>
          {incidents.map((incident) => {
            const latest = incident.incidentUpdates[0];
            return (
              <tr key={incident.id}>
                <th scope="row">
                  <a href={`/incidents/${encodeURIComponent(incident.id)}`}>{incident.name}</a>
                </th>
                <td>
                  <ImpactBadge impact={incident.impact} />
                </td>
                <td>
                  {latest ? <UpdateStatusBadge status={latest.status} /> : <span class="muted">none</span>}
                </td>
                <td>{incident.services.map((s) => s.name).join(', ') || <span class="muted">none</span>}</td>
                <td>
                  {incident.startedAt ? (
                    <time dateTime={incident.startedAt}>{formatDateTime(incident.startedAt)}</time>
                  ) : (
                    <span class="muted">not started</span>
                  )}
                </td>
                <td>
                  {incident.stoppedAt ? (
                    <time dateTime={incident.stoppedAt}>{formatDateTime(incident.stoppedAt)}</time>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The status select and description textarea of an update, shared by the new-incident and update forms. */
function UpdateFields({
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
function IncidentForm({
  incident,
  onSaved,
  onCancel,
}: {
  incident?: IncidentView;
  onSaved: (incident: { id: string }) => void;
  onCancel: () => void;
}) {
  const services = useLoad(loadServices, []);
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
        await api.put(`/v1/incidents/${encodeURIComponent(incident.id)}`, base);
        onSaved(incident);
      } else {
        const created = await api.post<IncidentView>('/v1/incidents', {
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

/** A duration between two times as "2 h 5 min", "45 min", "30 s". */
function formatDuration(fromIso: string, toMs: number): string {
  const seconds = Math.max(0, Math.round((toMs - new Date(fromIso).getTime()) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days ${hours % 24} h`;
}

function IncidentDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const path = `/v1/incidents/${encodeURIComponent(id)}`;
  const incident = useLoad(
    (signal) => api.get<IncidentView>(path, { includeAllIncidentUpdates: true }, signal),
    [id],
    POLL_MS,
  );
  const [editing, setEditing] = useState(false);
  const data = incident.data;
  useTitle(data ? `${data.name} · Incidents` : 'Incident');

  if (incident.error && !data) {
    return (
      <>
        <Breadcrumbs items={[{ href: '/incidents', label: 'Incidents' }, { label: id }]} />
        <PageHeader title="Incident" />
        <ErrorNotice error={incident.error} />
      </>
    );
  }
  if (!data) return <Loading what="Loading the incident" />;
  const latest = data.incidentUpdates[0];

  return (
    <>
      <Breadcrumbs items={[{ href: '/incidents', label: 'Incidents' }, { label: data.name }]} />
      <PageHeader title={data.name}>
        <button
          type="button"
          class="button-secondary"
          aria-expanded={editing}
          onClick={() => setEditing(!editing)}
        >
          {editing ? 'Close the form' : 'Edit'}
        </button>
        <ConfirmButton
          label="Delete incident"
          question={
            <>
              Delete the incident <strong>{data.name}</strong> and its {data.incidentUpdates.length} updates?
              It disappears from the status pages.
            </>
          }
          confirmLabel="Delete incident"
          onConfirm={async () => {
            await api.delete(path);
            route('/incidents');
          }}
        />
      </PageHeader>
      {incident.error ? <ErrorNotice error={incident.error} title="Could not refresh" /> : null}

      {editing ? (
        <IncidentForm
          incident={data}
          onSaved={() => {
            setEditing(false);
            incident.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}

      <div class="card inc-summary">
        <dl class="misc-dl">
          <dt>Impact</dt>
          <dd>
            <ImpactBadge impact={data.impact} />
          </dd>
          <dt>Status</dt>
          <dd>
            {latest ? <UpdateStatusBadge status={latest.status} /> : <span class="muted">no update</span>}
          </dd>
          <dt>Services</dt>
          <dd>
            {data.services.length === 0 ? (
              <span class="muted">none: no status page shows it</span>
            ) : (
              <ul class="misc-chips">
                {data.services.map((s) => (
                  <li key={s.id}>{s.name}</li>
                ))}
              </ul>
            )}
          </dd>
          <dt>Started</dt>
          <dd>{data.startedAt ? formatDateTime(data.startedAt) : <span class="muted">not started</span>}</dd>
          <dt>Resolved</dt>
          <dd>{data.stoppedAt ? formatDateTime(data.stoppedAt) : <span class="muted">not yet</span>}</dd>
          {data.startedAt ? (
            <>
              <dt>{data.stoppedAt ? 'Lasted' : 'Going on for'}</dt>
              <dd>
                {formatDuration(
                  data.startedAt,
                  data.stoppedAt ? new Date(data.stoppedAt).getTime() : Date.now(),
                )}
              </dd>
            </>
          ) : null}
        </dl>
      </div>

      <PostUpdate path={path} current={latest?.status} onPosted={incident.reload} />

      <section aria-labelledby="inc-updates">
        <h2 id="inc-updates">Updates ({data.incidentUpdates.length})</h2>
        {data.incidentUpdates.length === 0 ? (
          <Empty>No update yet. Post one above to tell visitors what is happening.</Empty>
        ) : (
          <ol class="inc-timeline">
            {data.incidentUpdates.map((u) => (
              <UpdateItem key={u.id} update={u} />
            ))}
          </ol>
        )}
      </section>
    </>
  );
}

function UpdateItem({ update }: { update: IncidentUpdateView }) {
  return (
    <li class="card inc-update">
      <p class="inc-update-head">
        <UpdateStatusBadge status={update.status} />{' '}
        <time
          dateTime={update.publicIncidentUpdateDate}
          title={formatDateTime(update.publicIncidentUpdateDate)}
        >
          {formatDateTime(update.publicIncidentUpdateDate)}
        </time>{' '}
        <span class="muted">({formatRelative(update.publicIncidentUpdateDate)})</span>
        {update.notifySubscribers ? <span class="muted"> · subscribers notified</span> : null}
      </p>
      <p class="inc-update-text">{update.description}</p>
    </li>
  );
}

/** The form that posts an update (`POST /v1/incidents/{id}/updates`). */
function PostUpdate({
  path,
  current,
  onPosted,
}: {
  path: string;
  current: UpdateStatus | undefined;
  onPosted: () => void;
}) {
  const [status, setStatus] = useState<UpdateStatus>(
    current && current !== 'INVESTIGATING' ? current : 'IDENTIFIED',
  );
  const [description, setDescription] = useState('');
  const [notify, setNotify] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [posted, setPosted] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setPosted(false);
    try {
      await api.post<IncidentUpdateView[]>(`${path}/updates`, {
        status,
        description: description.trim(),
        notifySubscribers: notify,
      });
      setDescription('');
      setNotify(false);
      setPosted(true);
      onPosted();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form inc-post" onSubmit={submit} noValidate aria-labelledby="inc-post">
      <h2 id="inc-post">Post an update</h2>
      <UpdateFields
        status={status}
        description={description}
        notify={notify}
        onStatus={setStatus}
        onDescription={setDescription}
        onNotify={setNotify}
        error={error}
        prefix=""
      />
      <FormError error={formLevelError(error, ['status', 'description'])} />
      <FormButtons
        label="Post update"
        busyLabel="Posting…"
        busy={busy}
        status={posted ? 'Update posted.' : ''}
      />
    </form>
  );
}
