/**
 * The private locations page (`/private-locations`): the locations, creating one, and every agent.
 */
import { useState } from 'preact/hooks';
import { listAgents, listPrivateLocations } from '../api/locations.js';
import { AgentsTable, When } from './agents.js';
import type { Agent, PrivateLocation } from '../api/schemas.js';
import { ListStatus, OneTimeSecret } from '../ui/widgets.js';
import { PageHeader } from '../ui/page.js';
import { type Loaded, useLoad, useTitle } from '../ui/hooks.js';
import { AgentCommand, POLL_MS } from './shared.js';
import { CreateLocationForm } from './forms.js';
import { useCan } from '../ui/permissions.js';

/** The list of private locations, the form that creates one and the key of the one just created. */
export function LocationList() {
  useTitle('Private locations');
  const locations = useLoad((signal) => listPrivateLocations(signal), [], POLL_MS);
  const agents = useLoad((signal) => listAgents(signal), [], POLL_MS);
  const [creating, setCreating] = useState(false);
  const canAdmin = useCan('admin');
  const [created, setCreated] = useState<PrivateLocation | null>(null);
  const createdKey = created?.keys[0]?.rawKey;

  return (
    <>
      <PageHeader title="Private locations">
        {canAdmin ? (
          <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
            {creating ? 'Close the form' : 'New private location'}
          </button>
        ) : null}
      </PageHeader>
      <p class="muted pl-intro">
        A private location runs checks from your own network: agents you start there with one of its keys
        claim its jobs. Checks run there when their <code>privateLocations</code> name its slug.
      </p>
      {created && createdKey ? (
        <CreatedLocation location={created} rawKey={createdKey} onDismiss={() => setCreated(null)} />
      ) : null}

      {creating && canAdmin ? (
        <CreateLocationForm
          onCreated={(location) => {
            setCreated(location);
            setCreating(false);
            locations.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <LocationsSection locations={locations} />
      <AgentsSection agents={agents} />
    </>
  );
}

/** The key of the location just created, shown once, with the command that starts an agent. */
function CreatedLocation({
  location: created,
  rawKey: createdKey,
  onDismiss,
}: {
  location: PrivateLocation;
  rawKey: string;
  onDismiss: () => void;
}) {
  return (
    <OneTimeSecret
      title={
        <>
          Private location <a href={`/private-locations/${created.id}`}>{created.name}</a> created. Its key:
        </>
      }
      label={`Key of ${created.name}`}
      secret={createdKey}
      onDismiss={onDismiss}
    >
      <AgentCommand rawKey={createdKey} />
    </OneTimeSecret>
  );
}

/** The locations, as a table. */
function LocationsSection({ locations }: { locations: Loaded<PrivateLocation[]> }) {
  const canAdmin = useCan('admin');
  return (
    <section aria-labelledby="pl-locations">
      <h2 id="pl-locations">Locations</h2>
      <ListStatus load={locations} loading="Loading private locations" isEmpty={locations.data?.length === 0}>
        No private location yet.
        {canAdmin ? (
          <>
            {' '}
            Create one with <strong>New private location</strong>, then start an agent on your network with
            the key it shows.
          </>
        ) : null}
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
          <p class="field-hint">Agents: those connected now (a claim within the last 35 seconds).</p>
        </div>
      ) : null}
    </section>
  );
}

/** Every agent of the account. */
function AgentsSection({ agents }: { agents: Loaded<Agent[]> }) {
  return (
    <section aria-labelledby="pl-agents">
      <h2 id="pl-agents">Agents</h2>
      <p class="muted">
        Every agent that claimed jobs for this account. Agents started with a private location's key serve
        that location only: the one <code>outpost up</code> starts with the service serves <code>local</code>,
        this machine. Agents started with an account API key serve data-center locations.
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
  );
}
