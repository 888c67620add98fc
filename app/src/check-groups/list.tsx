/**
 * The check groups page (`/check-groups`): every group with its number of checks, and creating one.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { listCheckGroups } from '../api/check-groups.js';
import { listChecks } from '../api/checks.js';
import type { Check, CheckGroup } from '../api/schemas.js';
import { ListStatus, YesNo } from '../ui/widgets.js';
import { PageHeader } from '../ui/page.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { Chips } from './chips.js';
import { useCan } from '../ui/permissions.js';
import { GroupForm } from './form.js';

/** The account's groups and checks, loaded together (the list counts each group's checks). */
async function loadGroupsAndChecks(signal: AbortSignal): Promise<{ groups: CheckGroup[]; checks: Check[] }> {
  const [groups, checks] = await Promise.all([listCheckGroups(signal), listChecks(signal)]);
  return { groups, checks };
}
/** The account's groups, and the form that creates one. */
export function GroupList() {
  useTitle('Check groups');
  const { route } = useLocation();
  const loaded = useLoad(loadGroupsAndChecks, []);
  const [creating, setCreating] = useState(false);
  const canWrite = useCan('write');
  const counts = new Map<number, number>();
  for (const check of loaded.data?.checks ?? []) {
    if (typeof check.groupId === 'number') counts.set(check.groupId, (counts.get(check.groupId) ?? 0) + 1);
  }

  return (
    <>
      <PageHeader title="Check groups">
        {canWrite ? (
          <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
            {creating ? 'Close the form' : 'New check group'}
          </button>
        ) : null}
      </PageHeader>
      <p class="muted cg-intro">
        A group lends its checks its tags, locations and alerting, pauses or mutes them together, and runs
        them together.
      </p>
      {creating && canWrite ? (
        <GroupForm
          onSaved={(group) => route(`/check-groups/${group.id}`)}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <ListStatus load={loaded} loading="Loading check groups" isEmpty={loaded.data?.groups.length === 0}>
        No check group yet.
        {canWrite ? (
          <>
            {' '}
            Create one with <strong>New check group</strong>, then choose it in the settings of the checks
            that belong together.
          </>
        ) : null}
      </ListStatus>
      {loaded.data && loaded.data.groups.length > 0 ? (
        <GroupsTable groups={loaded.data.groups} counts={counts} />
      ) : null}
    </>
  );
}

/** The groups as a table: name, number of checks, state, tags, locations and concurrency. */
function GroupsTable({ groups, counts }: { groups: CheckGroup[]; counts: Map<number, number> }) {
  return (
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
          {groups.map((group) => (
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
  );
}
