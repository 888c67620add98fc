/**
 * One check group (`/check-groups/:groupId`): its settings, editing and deleting it, and its checks with
 * their status.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { deleteCheckGroup, getCheckGroup } from '../api/check-groups.js';
import { listCheckStatuses, listChecks } from '../api/checks.js';
import type { Check, CheckGroup, CheckStatus } from '../api/schemas.js';
import { Breadcrumbs, ConfirmButton, ListStatus, YesNo } from '../ui/widgets.js';
import { ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { displayStatusOf, StatusBadge } from '../ui/status.js';
import { formatFrequency } from '../ui/format.js';
import { type Loaded, useLoad, useTitle } from '../ui/hooks.js';
import { Chips } from './chips.js';
import { useCan } from '../ui/permissions.js';
import { GroupForm } from './form.js';

/** How often the group's page looks again at its checks' statuses, ms. */
const STATUS_POLL_MS = 30_000;
type ChecksAndStatuses = { list: Check[]; statuses: Map<string, CheckStatus> };

/** The account's checks and their statuses by check, polled. */
function useChecksAndStatuses(id: string): Loaded<ChecksAndStatuses> {
  return useLoad(
    async (signal) => {
      const [list, statuses] = await Promise.all([listChecks(signal), listCheckStatuses(signal)]);
      return { list, statuses: new Map(statuses.map((s) => [s.checkId, s])) };
    },
    [id],
    STATUS_POLL_MS,
  );
}

/** One group's page. */
export function GroupDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const group = useLoad((signal) => getCheckGroup(id, signal), [id]);
  const checks = useChecksAndStatuses(id);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const canWrite = useCan('write');
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
        {canWrite ? (
          <>
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
          </>
        ) : null}
      </PageHeader>
      <p role="status" class="muted">
        {saved ? 'Saved.' : ''}
      </p>

      {editing && canWrite ? (
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
      <GroupSummary group={data} />

      <GroupChecks group={data} checks={checks} members={members} />
    </>
  );
}

/** The group's settings. */
function GroupSummary({ group: data }: { group: CheckGroup }) {
  return (
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
  );
}

/** The group's checks with their status and frequency. */
function GroupChecks({
  group: data,
  checks,
  members,
}: {
  group: CheckGroup;
  checks: Loaded<ChecksAndStatuses>;
  members: Check[];
}) {
  const canWrite = useCan('write');
  return (
    <section aria-labelledby="cg-checks">
      <h2 id="cg-checks">Checks{checks.data ? ` (${members.length})` : ''}</h2>
      <ListStatus load={checks} loading="Loading checks" isEmpty={members.length === 0}>
        No check belongs to this group.
        {canWrite ? (
          <>
            {' '}
            Choose the group in a check's settings, or <a href="/checks/new">create a check</a> in it.
          </>
        ) : null}
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
  );
}
