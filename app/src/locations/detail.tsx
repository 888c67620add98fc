/**
 * One private location (`/private-locations/:locationId`): its figures, keys, the agents serving it, and
 * its name and icon.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import {
  createLocationKey,
  deleteLocationKey,
  deletePrivateLocation,
  getPrivateLocation,
  listAgents,
} from '../api/locations.js';
import { FormError } from '../ui/forms.js';
import { AgentsTable, When } from './agents.js';
import type { Agent, PrivateLocation } from '../api/schemas.js';
import { Breadcrumbs, ConfirmButton, ListStatus, OneTimeSecret } from '../ui/widgets.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { formatDateTime } from '../ui/format.js';
import { type Loaded, useLoad, useTitle } from '../ui/hooks.js';
import { AgentCommand, POLL_MS } from './shared.js';
import { RenameForm } from './forms.js';
import { useCan } from '../ui/permissions.js';

/** One private location's page. */
export function LocationDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const location = useLoad((signal) => getPrivateLocation(id, signal), [id], POLL_MS);
  const agents = useLoad((signal) => listAgents(signal), [id], POLL_MS);
  const canAdmin = useCan('admin');
  const data = location.data;
  useTitle(data ? `${data.name} · Private locations` : 'Private location');

  if (location.error && !data) {
    return (
      <>
        <Breadcrumbs items={[{ href: '/private-locations', label: 'Private locations' }, { label: id }]} />
        <PageHeader title="Private location" />
        <ErrorNotice error={location.error} />
      </>
    );
  }
  if (!data) return <Loading what="Loading the private location" />;

  const served = (agents.data ?? []).filter((a) => a.privateLocation?.id === data.id);
  return (
    <>
      <Breadcrumbs
        items={[{ href: '/private-locations', label: 'Private locations' }, { label: data.name }]}
      />
      <PageHeader title={data.name}>
        {canAdmin ? (
          <ConfirmButton
            label="Delete location"
            question={
              <>
                Delete the private location <strong>{data.name}</strong>? Its keys stop working at once;
                checks that name <code>{data.slugName}</code> keep the slug, and their runs there expire
                unclaimed.
              </>
            }
            confirmLabel="Delete location"
            onConfirm={async () => {
              await deletePrivateLocation(id);
              route('/private-locations');
            }}
          />
        ) : null}
      </PageHeader>
      {location.error ? <ErrorNotice error={location.error} title="Could not refresh" /> : null}
      <LocationStats location={data} />

      {/* Its keys are the ADMIN's business: who may serve the location. */}
      {canAdmin ? <KeysSection id={id} location={data} onChanged={location.reload} /> : null}

      <ServedAgents agents={agents} served={served} name={data.name} />

      {canAdmin ? <RenameForm location={data} onSaved={location.reload} key={data.id} /> : null}
    </>
  );
}

/** Its agents connected now, when it was last seen, and its slug. */
function LocationStats({ location: data }: { location: PrivateLocation }) {
  return (
    <div class="grid pl-stats">
      <div class="card stat">
        <span class="stat-value">{data.agentCount}</span>
        <span class="stat-label">Agents connected</span>
      </div>
      <div class="card stat">
        <span class="stat-value">
          <When iso={data.lastSeen} never="Never" />
        </span>
        <span class="stat-label">Last seen</span>
      </div>
      <div class="card stat">
        <span class="stat-value">
          <code>{data.slugName}</code>
        </span>
        <span class="stat-label">Slug (checks name it in privateLocations)</span>
      </div>
    </div>
  );
}

/** Its keys: Add key (two at most), the new key shown once, and each key with its Delete. */
function KeysSection({
  id,
  location: data,
  onChanged,
}: {
  id: string;
  location: PrivateLocation;
  onChanged: () => void;
}) {
  const [newKey, setNewKey] = useState<string | null>(null);
  const [keyBusy, setKeyBusy] = useState(false);
  const [keyError, setKeyError] = useState<unknown>(null);

  async function addKey() {
    setKeyBusy(true);
    setKeyError(null);
    try {
      const key = await createLocationKey(id);
      setNewKey(key.rawKey ?? null);
      onChanged();
    } catch (err) {
      setKeyError(err);
    } finally {
      setKeyBusy(false);
    }
  }

  return (
    <section aria-labelledby="pl-keys">
      <div class="misc-section-head">
        <h2 id="pl-keys">Keys</h2>
        <button
          type="button"
          class="button-secondary"
          disabled={keyBusy || data.keys.length >= 2}
          aria-describedby="pl-keys-hint"
          onClick={addKey}
        >
          {keyBusy ? 'Adding…' : 'Add key'}
        </button>
      </div>
      <p id="pl-keys-hint" class="field-hint">
        To rotate a key, add a second one, move your agents to it, then delete the old one. A location holds
        at most two keys.
      </p>
      <FormError error={keyError} />
      {newKey ? (
        <OneTimeSecret
          title="New key added."
          label={`New key of ${data.name}`}
          secret={newKey}
          onDismiss={() => setNewKey(null)}
        >
          <AgentCommand rawKey={newKey} />
        </OneTimeSecret>
      ) : null}
      {data.keys.length === 0 ? (
        <Empty>
          This location has no key: no agent can serve it. Use <strong>Add key</strong> to make one.
        </Empty>
      ) : (
        <KeysTable id={id} location={data} onDeleted={onChanged} />
      )}
    </section>
  );
}

/** The table of its keys, each with its Delete. */
function KeysTable({
  id,
  location: data,
  onDeleted,
}: {
  id: string;
  location: PrivateLocation;
  onDeleted: () => void;
}) {
  return (
    <div class="table-wrap">
      <table class="misc-table">
        <caption class="visually-hidden">Keys of {data.name}</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {data.keys.map((key) => (
            <tr key={key.id}>
              <th scope="row">
                <code>{key.maskedKey}</code>
              </th>
              <td>{formatDateTime(key.created_at)}</td>
              <td class="misc-actions-cell">
                <ConfirmButton
                  small
                  label={
                    <>
                      Delete key<span class="visually-hidden"> {key.maskedKey}</span>
                    </>
                  }
                  question={
                    <>
                      Delete the key <code>{key.maskedKey}</code>? Agents using it get 401 from their next
                      request.
                    </>
                  }
                  confirmLabel="Delete key"
                  onConfirm={async () => {
                    await deleteLocationKey(id, key.id);
                    onDeleted();
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The agents serving it, or the command that starts one. */
function ServedAgents({ agents, served, name }: { agents: Loaded<Agent[]>; served: Agent[]; name: string }) {
  return (
    <section aria-labelledby="pl-served">
      <h2 id="pl-served">Agents serving it</h2>
      <ListStatus load={agents} loading="Loading agents" isEmpty={served.length === 0}>
        No agent has served this location yet.
        <AgentCommand />
      </ListStatus>
      {served.length > 0 ? <AgentsTable agents={served} caption={`Agents serving ${name}`} /> : null}
    </section>
  );
}
