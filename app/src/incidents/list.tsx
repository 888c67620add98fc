/**
 * The incidents list: open ones first, then resolved ones.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { listIncidents } from '../api/incidents.js';
import type { IncidentView } from '../api/schemas.js';
import { ListStatus } from '../ui/widgets.js';
import { Empty, PageHeader } from '../ui/page.js';
import { formatDateTime } from '../ui/format.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { ImpactBadge, UpdateStatusBadge, isResolved } from './badges.js';
import { POLL_MS } from './badges.js';
import { IncidentForm } from './form.js';
import { useCan } from '../ui/permissions.js';

/** The incidents page: renders open incidents, then resolved ones (polled every {@link POLL_MS} ms), and a form to open a new one. */
export function IncidentList() {
  useTitle('Incidents');
  const { route } = useLocation();
  const incidents = useLoad((signal) => listIncidents(signal), [], POLL_MS);
  const [creating, setCreating] = useState(false);
  const canWrite = useCan('write');
  const open = (incidents.data ?? []).filter((i) => !isResolved(i));
  const resolved = (incidents.data ?? []).filter(isResolved);

  return (
    <>
      <PageHeader title="Incidents">
        {canWrite ? (
          <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
            {creating ? 'Close the form' : 'New incident'}
          </button>
        ) : null}
      </PageHeader>
      <p class="muted inc-intro">
        An incident tells the visitors of your status pages what is wrong with which services, update by
        update. Checks with an incident trigger open and resolve theirs themselves.
      </p>
      {creating && canWrite ? (
        <IncidentForm
          onSaved={(incident) => route(`/incidents/${incident.id}`)}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <ListStatus load={incidents} loading="Loading incidents" isEmpty={incidents.data?.length === 0}>
        No incident yet.
        {canWrite ? (
          <>
            {' '}
            When something goes wrong, open one with <strong>New incident</strong> and post updates as you
            learn more.
          </>
        ) : null}
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
