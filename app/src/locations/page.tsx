import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import {
  createLocationKey,
  createPrivateLocation,
  deleteLocationKey,
  deletePrivateLocation,
  getPrivateLocation,
  listAgents,
  listPrivateLocations,
  updatePrivateLocation,
} from '../api/locations.js';
import { FormError, TextField } from '../ui/forms.js';
import { AgentsTable, When } from './agents.js';
import type { PrivateLocation } from '../api/schemas.js';
import {
  Breadcrumbs,
  ConfirmButton,
  errorOf,
  FormButtons,
  formLevelError,
  ListStatus,
  OneTimeSecret,
  slugOf,
} from '../ui/widgets.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { formatDateTime } from '../ui/format.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import './locations.css';

/** How often the pages look again at locations and agents (last seen, connected), ms. */
const POLL_MS = 15_000;

/**
 * Private locations (`/private-locations`) and one of them (`/private-locations/:locationId`): a private
 * location is a job queue of its own, served by agents run on the user's network with one of its keys.
 */
export default function PrivateLocationsPage({ locationId }: { locationId?: string }) {
  return locationId ? <LocationDetail id={locationId} /> : <LocationList />;
}

/** The command that starts an agent for a location, with the key in it. */
function AgentCommand({ rawKey }: { rawKey: string }) {
  return (
    <>
      <p>Start an agent on your network with it:</p>
      <pre class="pl-command">
        <code>{`API_KEY=${rawKey} \\\nSERVICE_URL=${window.location.origin} \\\nnpx outpost agent`}</code>
      </pre>
    </>
  );
}

function LocationList() {
  useTitle('Private locations');
  const locations = useLoad((signal) => listPrivateLocations(signal), [], POLL_MS);
  const agents = useLoad((signal) => listAgents(signal), [], POLL_MS);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<PrivateLocation | null>(null);
  const createdKey = created?.keys[0]?.rawKey;

  return (
    <>
      <PageHeader title="Private locations">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? 'Close the form' : 'New private location'}
        </button>
      </PageHeader>
      <p class="muted pl-intro">
        A private location runs checks from your own network: agents you start there with one of its keys
        claim its jobs. Checks run there when their <code>privateLocations</code> name its slug.
      </p>

      {created && createdKey ? (
        <OneTimeSecret
          title={
            <>
              Private location <a href={`/private-locations/${created.id}`}>{created.name}</a> created. Its
              key:
            </>
          }
          label={`Key of ${created.name}`}
          secret={createdKey}
          onDismiss={() => setCreated(null)}
        >
          <AgentCommand rawKey={createdKey} />
        </OneTimeSecret>
      ) : null}

      {creating ? (
        <CreateLocationForm
          onCreated={(location) => {
            setCreated(location);
            setCreating(false);
            locations.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}

      <section aria-labelledby="pl-locations">
        <h2 id="pl-locations">Locations</h2>
        <ListStatus
          load={locations}
          loading="Loading private locations"
          isEmpty={locations.data?.length === 0}
        >
          No private location yet. Create one with <strong>New private location</strong>, then start an agent
          on your network with the key it shows.
        </ListStatus>
        {locations.data && locations.data.length > 0 ? (
          <div class="table-wrap">
            <table class="misc-table">
              <caption class="visually-hidden">Private locations</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Slug</th>
                  <th scope="col" class="num">
                    Agents
                  </th>
                  <th scope="col">Last seen</th>
                  <th scope="col">Keys</th>
                </tr>
              </thead>
              <tbody>
                {locations.data.map((location) => (
                  <tr key={location.id}>
                    <th scope="row">
                      <a href={`/private-locations/${encodeURIComponent(location.id)}`}>{location.name}</a>
                    </th>
                    <td>
                      <code>{location.slugName}</code>
                    </td>
                    <td class="num">{location.agentCount}</td>
                    <td>
                      <When iso={location.lastSeen} never="never seen" />
                    </td>
                    <td>{location.keys.length}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p class="field-hint">Agents: those seen within the last 2 minutes.</p>
          </div>
        ) : null}
      </section>

      <section aria-labelledby="pl-agents">
        <h2 id="pl-agents">Agents</h2>
        <p class="muted">
          Every agent that claimed jobs for this account: the one <code>outpost up</code> starts with the
          service serves every location of the account; agents started with a private location's key serve
          that location.
        </p>
        <ListStatus load={agents} loading="Loading agents" isEmpty={agents.data?.length === 0}>
          No agent has claimed jobs yet. <code>outpost up</code> starts one with the service; on another
          machine, run <code>outpost agent</code> with <code>API_KEY</code> (a private location's key) and{' '}
          <code>SERVICE_URL</code>.
        </ListStatus>
        {agents.data && agents.data.length > 0 ? (
          <AgentsTable agents={agents.data} caption="Agents of the account" showScope />
        ) : null}
      </section>
    </>
  );
}

/** The icon field of the create and rename forms. */
function IconField({
  value,
  onValue,
  error,
}: {
  value: string;
  onValue: (value: string) => void;
  error: string | undefined;
}) {
  return (
    <TextField
      label="Icon"
      hint="An icon name: lower-case letters, digits and hyphens."
      error={error}
      class="misc-narrow"
      maxLength={64}
      spellcheck={false}
      value={value}
      onValue={onValue}
    />
  );
}

function CreateLocationForm({
  onCreated,
  onCancel,
}: {
  onCreated: (location: PrivateLocation) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [icon, setIcon] = useState('location');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {
        name: name.trim(),
        slugName: slug.trim(),
        ...(icon.trim() ? { icon: icon.trim() } : {}),
      };
      onCreated(await createPrivateLocation(body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby="pl-new">
      <h2 id="pl-new">New private location</h2>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={(value) => {
          setName(value);
          if (!slugEdited) setSlug(slugOf(value));
        }}
      />
      <TextField
        label="Slug"
        hint="Checks name the location by it in privateLocations: lower-case letters, digits and hyphens, unique in the account. It cannot change later."
        error={errorOf(error, 'slugName')}
        required
        maxLength={63}
        spellcheck={false}
        value={slug}
        onValue={(value) => {
          setSlug(value);
          setSlugEdited(true);
        }}
      />
      <IconField value={icon} onValue={setIcon} error={errorOf(error, 'icon')} />
      <FormError error={formLevelError(error, ['name', 'slugName', 'icon'])} />
      <FormButtons label="Create private location" busyLabel="Creating…" busy={busy} onCancel={onCancel} />
    </form>
  );
}

function LocationDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const location = useLoad((signal) => getPrivateLocation(id, signal), [id], POLL_MS);
  const agents = useLoad((signal) => listAgents(signal), [id], POLL_MS);
  const [newKey, setNewKey] = useState<string | null>(null);
  const [keyBusy, setKeyBusy] = useState(false);
  const [keyError, setKeyError] = useState<unknown>(null);
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

  async function addKey() {
    setKeyBusy(true);
    setKeyError(null);
    try {
      const key = await createLocationKey(id);
      setNewKey(key.rawKey ?? null);
      location.reload();
    } catch (err) {
      setKeyError(err);
    } finally {
      setKeyBusy(false);
    }
  }

  return (
    <>
      <Breadcrumbs
        items={[{ href: '/private-locations', label: 'Private locations' }, { label: data.name }]}
      />
      <PageHeader title={data.name}>
        <ConfirmButton
          label="Delete location"
          question={
            <>
              Delete the private location <strong>{data.name}</strong>? Its keys stop working at once; checks
              that name <code>{data.slugName}</code> keep the slug, and their runs there expire unclaimed.
            </>
          }
          confirmLabel="Delete location"
          onConfirm={async () => {
            await deletePrivateLocation(id);
            route('/private-locations');
          }}
        />
      </PageHeader>
      {location.error ? <ErrorNotice error={location.error} title="Could not refresh" /> : null}

      <div class="grid pl-stats">
        <div class="card stat">
          <span class="stat-value">{data.agentCount}</span>
          <span class="stat-label">Agents seen in the last 2 minutes</span>
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
                            Delete the key <code>{key.maskedKey}</code>? Agents using it get 401 from their
                            next request.
                          </>
                        }
                        confirmLabel="Delete key"
                        onConfirm={async () => {
                          await deleteLocationKey(id, key.id);
                          location.reload();
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="pl-served">
        <h2 id="pl-served">Agents serving it</h2>
        <ListStatus load={agents} loading="Loading agents" isEmpty={served.length === 0}>
          No agent has served this location yet. On a machine of your network, run{' '}
          <code>
            API_KEY=&lt;a key of this location&gt; SERVICE_URL={window.location.origin} npx outpost agent
          </code>
          .
        </ListStatus>
        {served.length > 0 ? <AgentsTable agents={served} caption={`Agents serving ${data.name}`} /> : null}
      </section>

      <RenameForm location={data} onSaved={location.reload} key={data.id} />
    </>
  );
}

function RenameForm({ location, onSaved }: { location: PrivateLocation; onSaved: () => void }) {
  const [name, setName] = useState(location.name);
  const [icon, setIcon] = useState(location.icon);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await updatePrivateLocation(location.id, { name: name.trim(), icon: icon.trim() });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form pl-rename" onSubmit={submit} noValidate aria-labelledby="pl-rename">
      <h2 id="pl-rename">Name and icon</h2>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={setName}
      />
      <IconField value={icon} onValue={setIcon} error={errorOf(error, 'icon')} />
      <FormError error={formLevelError(error, ['name', 'icon'])} />
      <FormButtons label="Save" busy={busy} status={saved ? 'Saved.' : ''} />
    </form>
  );
}
