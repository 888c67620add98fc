/**
 * One incident (`/incidents/:incidentId`): its updates, a new update, editing and deleting it.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { deleteIncident, getIncident, postIncidentUpdate } from '../api/incidents.js';
import { FormError } from '../ui/forms.js';
import type { IncidentUpdateView, IncidentView, UpdateStatus } from '../api/schemas.js';
import { Breadcrumbs, ConfirmButton, FormButtons, formLevelError } from '../ui/widgets.js';
import { useCan } from '../ui/permissions.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { formatDateTime, formatRelative } from '../ui/format.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { ImpactBadge, UpdateStatusBadge } from './badges.js';
import { IncidentForm, UpdateFields } from './form.js';
import { POLL_MS } from './badges.js';

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
/** One incident's page. */
export function IncidentDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const incident = useLoad((signal) => getIncident(id, signal), [id], POLL_MS);
  const [editing, setEditing] = useState(false);
  const data = incident.data;
  const canWrite = useCan('write');
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
        {canWrite ? (
          <>
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
                  Delete the incident <strong>{data.name}</strong> and its {data.incidentUpdates.length}{' '}
                  updates? It disappears from the status pages.
                </>
              }
              confirmLabel="Delete incident"
              onConfirm={async () => {
                await deleteIncident(id);
                route('/incidents');
              }}
            />
          </>
        ) : null}
      </PageHeader>
      {incident.error ? <ErrorNotice error={incident.error} title="Could not refresh" /> : null}

      {editing && canWrite ? (
        <IncidentForm
          incident={data}
          onSaved={() => {
            setEditing(false);
            incident.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <IncidentSummary incident={data} />

      {canWrite ? <PostUpdate incidentId={id} current={latest?.status} onPosted={incident.reload} /> : null}
      <UpdatesTimeline incident={data} />
    </>
  );
}

/** The incident's impact, latest status, services, start, resolution and duration. */
function IncidentSummary({ incident: data }: { incident: IncidentView }) {
  const latest = data.incidentUpdates[0];
  return (
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
  );
}

/** The incident's updates, newest first. */
function UpdatesTimeline({ incident: data }: { incident: IncidentView }) {
  const canWrite = useCan('write');
  return (
    <section aria-labelledby="inc-updates">
      <h2 id="inc-updates">Updates ({data.incidentUpdates.length})</h2>
      {data.incidentUpdates.length === 0 ? (
        <Empty>No update yet.{canWrite ? ' Post one above to tell visitors what is happening.' : ''}</Empty>
      ) : (
        <ol class="inc-timeline">
          {data.incidentUpdates.map((u) => (
            <UpdateItem key={u.id} update={u} />
          ))}
        </ol>
      )}
    </section>
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
  incidentId,
  current,
  onPosted,
}: {
  incidentId: string;
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
      await postIncidentUpdate(incidentId, {
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
