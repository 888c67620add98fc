import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { LOCATIONS } from '../../../src/protocol/enums.js';
import {
  createCheckGroup,
  deleteCheckGroup,
  getCheckGroup,
  listCheckGroups,
  updateCheckGroup,
} from '../api/check-groups.js';
import { listCheckStatuses, listChecks } from '../api/checks.js';
import { listPrivateLocations } from '../api/locations.js';
import { FormError, TextField } from '../ui/forms.js';
import type { CheckGroup } from '../api/schemas.js';
import {
  Breadcrumbs,
  Checkbox,
  ConfirmButton,
  errorOf,
  FormButtons,
  formLevelError,
  ListStatus,
  parseList,
  YesNo,
} from '../ui/widgets.js';
import { ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { displayStatusOf, StatusBadge } from '../ui/status.js';
import { formatFrequency } from '../ui/format.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import type { Check } from '../api/schemas.js';
import './check-groups.css';

/** How often the group's page looks again at its checks' statuses, ms. */
const STATUS_POLL_MS = 30_000;

/**
 * Check groups (`/check-groups`) and one of them with its checks (`/check-groups/:groupId`): a group lends
 * its checks defaults (tags, locations, muting) and runs them together.
 */
export default function CheckGroupsPage({ groupId }: { groupId?: string }) {
  return groupId ? <GroupDetail id={groupId} /> : <GroupList />;
}

/** The account's groups and checks, loaded together (the list counts each group's checks). */
async function loadGroupsAndChecks(signal: AbortSignal): Promise<{ groups: CheckGroup[]; checks: Check[] }> {
  const [groups, checks] = await Promise.all([listCheckGroups(signal), listChecks(signal)]);
  return { groups, checks };
}

/** A list of short words (tags, locations) as chips, or an em dash. */
function Chips({ items, label }: { items: readonly string[]; label: string }) {
  if (items.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="misc-chips" aria-label={label}>
      {items.map((item) => (
        <li key={item}>{item}</li>
      ))}
    </ul>
  );
}

function GroupList() {
  useTitle('Check groups');
  const { route } = useLocation();
  const loaded = useLoad(loadGroupsAndChecks, []);
  const [creating, setCreating] = useState(false);
  const counts = new Map<number, number>();
  for (const check of loaded.data?.checks ?? []) {
    if (typeof check.groupId === 'number') counts.set(check.groupId, (counts.get(check.groupId) ?? 0) + 1);
  }

  return (
    <>
      <PageHeader title="Check groups">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? 'Close the form' : 'New check group'}
        </button>
      </PageHeader>
      <p class="muted cg-intro">
        A group lends its checks its tags, locations and alerting, pauses or mutes them together, and runs
        them together.
      </p>
      {creating ? (
        <GroupForm
          onSaved={(group) => route(`/check-groups/${group.id}`)}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <ListStatus load={loaded} loading="Loading check groups" isEmpty={loaded.data?.groups.length === 0}>
        No check group yet. Create one with <strong>New check group</strong>, then choose it in the settings
        of the checks that belong together.
      </ListStatus>
      {loaded.data && loaded.data.groups.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table">
            <caption class="visually-hidden">Check groups</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" class="num">
                  Checks
                </th>
                <th scope="col">Activated</th>
                <th scope="col">Muted</th>
                <th scope="col">Tags</th>
                <th scope="col">Locations</th>
                <th scope="col" class="num">
                  Concurrency
                </th>
              </tr>
            </thead>
            <tbody>
              {loaded.data.groups.map((group) => (
                <tr key={group.id}>
                  <th scope="row">
                    <a href={`/check-groups/${group.id}`}>{group.name}</a>
                  </th>
                  <td class="num">{counts.get(group.id) ?? 0}</td>
                  <td>
                    <YesNo value={group.activated} yes="Activated" no="Paused" />
                  </td>
                  <td>
                    <YesNo value={group.muted} yes="Muted" no="Not muted" />
                  </td>
                  <td>
                    <Chips items={group.tags} label={`Tags of ${group.name}`} />
                  </td>
                  <td>
                    <Chips
                      items={[...group.locations, ...(group.privateLocations ?? [])]}
                      label={`Locations of ${group.name}`}
                    />
                  </td>
                  <td class="num">{group.concurrency}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/**
 * Create (no `group`) or edit a check group: name, tags, run locations (public and private), concurrency,
 * activated and muted. The API's validation messages show next to their fields.
 */
function GroupForm({
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
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const toggle = (set: Set<string>, value: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(value);
    else next.delete(value);
    return next;
  };

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
    };
    try {
      const saved = group
        ? await updateCheckGroup(group.id, fields)
        : await createCheckGroup({ ...fields, apiCheckDefaults: {} });
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = group ? 'cg-edit' : 'cg-new';
  const privateList = privateLocations.data ?? [];
  // Slugs the group names that are no longer private locations of the account stay choosable (to remove).
  const unknownPrivates = [...privates].filter((slug) => !privateList.some((p) => p.slugName === slug));
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
              onChange={(on) => setLocations(toggle(locations, l, on))}
            />
          ))}
        </div>
        {errorOf(error, 'locations') ? (
          <p class="field-error" role="alert">
            <span aria-hidden="true">✕ </span>
            {errorOf(error, 'locations')}
          </p>
        ) : null}
      </fieldset>
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
              onChange={(on) => setPrivates(toggle(privates, p.slugName, on))}
            />
          ))}
          {unknownPrivates.map((slug) => (
            <Checkbox
              key={slug}
              label={`${slug} (no such private location)`}
              checked
              onChange={(on) => setPrivates(toggle(privates, slug, on))}
            />
          ))}
        </div>
        {errorOf(error, 'privateLocations') ? (
          <p class="field-error" role="alert">
            <span aria-hidden="true">✕ </span>
            {errorOf(error, 'privateLocations')}
          </p>
        ) : null}
      </fieldset>
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
      <FormError
        error={formLevelError(error, ['name', 'tags', 'locations', 'privateLocations', 'concurrency'])}
      />
      <FormButtons label={group ? 'Save' : 'Create check group'} busy={busy} onCancel={onCancel} />
    </form>
  );
}

function GroupDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const group = useLoad((signal) => getCheckGroup(id, signal), [id]);
  const checks = useLoad(
    async (signal) => {
      const [list, statuses] = await Promise.all([listChecks(signal), listCheckStatuses(signal)]);
      return { list, statuses: new Map(statuses.map((s) => [s.checkId, s])) };
    },
    [id],
    STATUS_POLL_MS,
  );
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const data = group.data;
  useTitle(data ? `${data.name} · Check groups` : 'Check group');

  if (group.error && !data) {
    return (
      <>
        <Breadcrumbs items={[{ href: '/check-groups', label: 'Check groups' }, { label: id }]} />
        <PageHeader title="Check group" />
        <ErrorNotice error={group.error} />
      </>
    );
  }
  if (!data) return <Loading what="Loading the check group" />;
  const members = (checks.data?.list ?? []).filter((c) => c.groupId === data.id);

  return (
    <>
      <Breadcrumbs items={[{ href: '/check-groups', label: 'Check groups' }, { label: data.name }]} />
      <PageHeader title={data.name}>
        <button
          type="button"
          class="button-secondary"
          aria-expanded={editing}
          onClick={() => {
            setSaved(false);
            setEditing(!editing);
          }}
        >
          {editing ? 'Close the form' : 'Edit'}
        </button>
        <ConfirmButton
          label="Delete group"
          question={
            <>
              Delete the check group <strong>{data.name}</strong>? A group that still has checks cannot be
              deleted: move or delete them first.
            </>
          }
          confirmLabel="Delete group"
          onConfirm={async () => {
            await deleteCheckGroup(id);
            route('/check-groups');
          }}
        />
      </PageHeader>
      <p role="status" class="muted">
        {saved ? 'Saved.' : ''}
      </p>

      {editing ? (
        <GroupForm
          group={data}
          onSaved={() => {
            setEditing(false);
            setSaved(true);
            group.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}

      <div class="card cg-summary">
        <dl class="misc-dl">
          <dt>Activated</dt>
          <dd>
            <YesNo value={data.activated} yes="Activated" no="Paused" />
          </dd>
          <dt>Muted</dt>
          <dd>
            <YesNo value={data.muted} yes="Muted" no="Not muted" />
          </dd>
          <dt>Tags</dt>
          <dd>
            <Chips items={data.tags} label="Tags" />
          </dd>
          <dt>Locations</dt>
          <dd>
            <Chips items={data.locations} label="Locations" />
          </dd>
          <dt>Private locations</dt>
          <dd>
            <Chips items={data.privateLocations ?? []} label="Private locations" />
          </dd>
          <dt>Concurrency</dt>
          <dd>{data.concurrency}</dd>
          <dt>Base URL of its API checks</dt>
          <dd>
            {data.apiCheckDefaults.url ? (
              <code>{data.apiCheckDefaults.url}</code>
            ) : (
              <span class="muted">—</span>
            )}
          </dd>
        </dl>
      </div>

      <section aria-labelledby="cg-checks">
        <h2 id="cg-checks">Checks{checks.data ? ` (${members.length})` : ''}</h2>
        <ListStatus load={checks} loading="Loading checks" isEmpty={members.length === 0}>
          No check belongs to this group. Choose the group in a check's settings, or{' '}
          <a href="/checks/new">create a check</a> in it.
        </ListStatus>
        {members.length > 0 ? (
          <div class="table-wrap">
            <table class="misc-table">
              <caption class="visually-hidden">Checks of {data.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Check</th>
                  <th scope="col">Type</th>
                  <th scope="col">State</th>
                  <th scope="col">Frequency</th>
                </tr>
              </thead>
              <tbody>
                {members.map((check) => (
                  <tr key={check.id}>
                    <th scope="row">
                      <a href={`/checks/${encodeURIComponent(check.id)}`}>{check.name}</a>
                    </th>
                    <td>{check.checkType}</td>
                    <td>
                      <StatusBadge status={displayStatusOf(check, checks.data?.statuses.get(check.id))} />
                    </td>
                    <td>
                      {check.checkType === 'HEARTBEAT'
                        ? 'pinged'
                        : formatFrequency(check.frequency, check.frequencyOffset)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </>
  );
}
