/**
 * The account's audit log (`/settings/audit-log`, `GET /v1/audit-log`; docs/web-app.md, "Audit log"): who
 * changed what and when, newest first, filtered by resource type, actor and dates; an entry opens what it
 * changed, field by field, before and after. ADMIN and OWNER only (the service answers 403 to the others,
 * said here).
 */
import { useState } from 'preact/hooks';
import { type AuditEntry, type AuditFilter, type AuditPage, listAuditLog } from '../api/audit-log.js';
import { ApiError } from '../api/client.js';
import { formatDateTime } from '../ui/format.js';
import { Field, SelectField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { PageHeader } from '../ui/page.js';
import { ListStatus, messageOf } from '../ui/widgets.js';
import { diffDocuments, shownValue } from './audit-diff.js';

/** The resource types offered by the filter (docs/teams.md, "Audit log"); the empty one filters nothing. */
const RESOURCE_TYPES = [
  ['', 'Any resource'],
  ['check', 'Checks'],
  ['check-group', 'Check groups'],
  ['alert-channel', 'Alert channels'],
  ['alert-settings', 'Alert settings'],
  ['status-page', 'Status pages'],
  ['incident', 'Incidents'],
  ['variable', 'Variables'],
  ['snippet', 'Snippets'],
  ['maintenance-window', 'Maintenance windows'],
  ['dashboard', 'Dashboards'],
  ['client-certificate', 'Client certificates'],
  ['api-key', 'API keys'],
  ['private-location', 'Private locations'],
  ['private-location-key', 'Private-location keys'],
  ['session', 'Sign-ins and sign-outs'],
] as const;

/** The app's page of a resource, where it has one; null for a deleted resource or one without a page. */
export function resourceHref(
  entry: Pick<AuditEntry, 'action' | 'resourceType' | 'resourceId'>,
): string | null {
  if (entry.resourceId === null || entry.action.endsWith('.delete')) return null;
  const id = encodeURIComponent(entry.resourceId);
  switch (entry.resourceType) {
    case 'check':
      return `/checks/${id}`;
    case 'check-group':
      return `/check-groups/${id}`;
    case 'alert-channel':
      return `/alert-channels/${id}`;
    case 'incident':
      return `/incidents/${id}`;
    case 'private-location':
      return `/private-locations/${id}`;
    case 'variable':
      return '/settings/variables';
    case 'snippet':
      return '/settings/snippets';
    case 'maintenance-window':
      return '/settings/maintenance-windows';
    case 'client-certificate':
      return '/settings/client-certificates';
    case 'api-key':
      return '/settings/api-keys';
    case 'alert-settings':
      return '/settings/alert-settings';
    default:
      return null;
  }
}

/** Who made a change, as a person reads it: the person's email, the key's name, the location's slug. */
function actorText(actor: AuditEntry['actor']): string {
  if (actor.kind === 'user') return actor.name ?? actor.id;
  if (actor.kind === 'private-location') return `Private location ${actor.name ?? actor.id}`;
  return `API key ${actor.name ?? 'First key'}`;
}

/** A date field's day (`2026-03-01`) as the ISO time its day starts in the browser's time zone, shifted by `days`. */
function dayStart(day: string, days: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d + days).toISOString();
}

/** The audit log page: the filters, the entries (50 a page, "Load older" for more) and the open entry. */
export function AuditLogPage() {
  useTitle('Audit log · Settings');
  const [resourceType, setResourceType] = useState('');
  const [actor, setActor] = useState('');
  const [fromDay, setFromDay] = useState('');
  const [toDay, setToDay] = useState('');
  const [older, setOlder] = useState<AuditPage[]>([]);
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<unknown>(null);
  const [open, setOpen] = useState<AuditEntry | null>(null);
  const filter: AuditFilter = {
    resourceType,
    actor: actor.trim(),
    ...(fromDay ? { from: dayStart(fromDay, 0) } : {}),
    ...(toDay ? { to: dayStart(toDay, 1) } : {}),
  };
  const first = useLoad(
    (signal) => {
      setOlder([]);
      setOpen(null);
      return listAuditLog(filter, null, signal);
    },
    [resourceType, actor.trim(), fromDay, toDay],
  );
  const pages = first.data ? [first.data, ...older] : [];
  const entries = pages.flatMap((page) => page.entries);
  const nextId = pages.at(-1)?.nextId ?? null;
  const forbidden = first.error instanceof ApiError && first.error.status === 403;

  async function loadOlder() {
    setLoadingMore(true);
    setMoreError(null);
    try {
      const page = await listAuditLog(filter, nextId);
      setOlder([...older, page]);
    } catch (err) {
      setMoreError(err);
    } finally {
      setLoadingMore(false);
    }
  }

  return (
    <>
      <PageHeader title="Audit log" />
      <p class="muted st-intro">
        Every change to the account, newest first: who made it, when, from where, and what it changed. Secrets
        are never kept: they show as <code>*****</code>.
      </p>
      {forbidden ? (
        <p role="alert" class="card">
          Only an ADMIN or OWNER may read the audit log; this session’s role may not.
        </p>
      ) : (
        <>
          <form
            class="card al-filters"
            aria-label="Filter the audit log"
            onSubmit={(e) => e.preventDefault()}
          >
            <SelectField
              label="Resource"
              value={resourceType}
              onValue={setResourceType}
              options={RESOURCE_TYPES.map(([value, label]) => ({ value, label }))}
            />
            <TextField
              label="Actor id"
              hint="An API key’s or person’s id, from an entry."
              value={actor}
              onValue={setActor}
              maxLength={128}
            />
            <DayField label="From" value={fromDay} onValue={setFromDay} />
            <DayField label="To (included)" value={toDay} onValue={setToDay} />
          </form>
          <ListStatus load={first} loading="Loading the audit log" isEmpty={entries.length === 0}>
            No change is recorded
            {resourceType || actor || fromDay || toDay ? ' that matches the filters' : ''}.
          </ListStatus>
          {entries.length > 0 ? (
            <div class="table-wrap">
              <table class="misc-table st-table">
                <caption class="visually-hidden">Audit log</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Who</th>
                    <th scope="col">Action</th>
                    <th scope="col">Resource</th>
                    <th scope="col">Details</th>
                  </tr>
                </thead>
                <tbody>
                  {entries.map((entry) => {
                    const href = resourceHref(entry);
                    const resource = `${entry.resourceType}${entry.resourceId === null ? '' : ` ${entry.resourceId}`}`;
                    return (
                      <tr key={entry.id} aria-selected={open?.id === entry.id ? 'true' : undefined}>
                        <td data-label="Time">
                          <time dateTime={entry.occurredAt}>{formatDateTime(entry.occurredAt)}</time>
                        </td>
                        <td data-label="Who">
                          {actorText(entry.actor)}
                          {entry.actor.role ? <span class="muted"> ({entry.actor.role})</span> : null}
                        </td>
                        <td data-label="Action">
                          <code>{entry.action}</code>
                        </td>
                        <td data-label="Resource">{href ? <a href={href}>{resource}</a> : resource}</td>
                        <td class="misc-actions-cell">
                          <button
                            type="button"
                            class="small"
                            aria-expanded={open?.id === entry.id}
                            onClick={() => setOpen(open?.id === entry.id ? null : entry)}
                          >
                            {open?.id === entry.id ? 'Close' : 'Open'}{' '}
                            <span class="visually-hidden">
                              {entry.action} at {formatDateTime(entry.occurredAt)}
                            </span>
                          </button>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          ) : null}
          {open ? <EntryView entry={open} onClose={() => setOpen(null)} /> : null}
          {nextId !== null ? (
            <p>
              <button type="button" onClick={loadOlder} disabled={loadingMore}>
                {loadingMore ? 'Loading…' : 'Load older entries'}
              </button>
            </p>
          ) : null}
          {moreError ? <p role="alert">{messageOf(moreError)}</p> : null}
        </>
      )}
    </>
  );
}

/** A labelled date input (`2026-03-01`; empty for none). */
function DayField({
  label,
  value,
  onValue,
}: {
  label: string;
  value: string;
  onValue: (day: string) => void;
}) {
  return (
    <Field label={label}>
      {({ id, describedBy }) => (
        <input
          id={id}
          type="date"
          value={value}
          aria-describedby={describedBy}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** One entry: who, when, from where, and its changes field by field (before → after). */
function EntryView({ entry, onClose }: { entry: AuditEntry; onClose: () => void }) {
  const changes = diffDocuments(entry.before, entry.after);
  return (
    <section class="card al-entry" aria-labelledby="al-entry-title">
      <h2 id="al-entry-title">
        <code>{entry.action}</code> · {formatDateTime(entry.occurredAt)}
      </h2>
      <dl class="al-meta">
        <dt>Who</dt>
        <dd>
          {actorText(entry.actor)} {entry.actor.role ? `(${entry.actor.role})` : ''} · id{' '}
          <code>{entry.actor.id}</code>
        </dd>
        <dt>From</dt>
        <dd>
          {entry.ip ?? 'unknown address'}
          {entry.userAgent ? <span class="muted"> · {entry.userAgent}</span> : null}
        </dd>
      </dl>
      {changes.length === 0 ? (
        <p class="muted">No document was recorded for this entry, or it did not change.</p>
      ) : (
        <div class="table-wrap">
          <table class="misc-table st-table al-diff">
            <caption>Changes</caption>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((change) => (
                <tr key={change.path}>
                  <th scope="row">
                    <code>{change.path}</code>
                  </th>
                  <td data-label="Before" class="al-before">
                    <span class="st-value">{shownValue(change.before)}</span>
                  </td>
                  <td data-label="After" class="al-after">
                    <span class="st-value">{shownValue(change.after)}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </p>
    </section>
  );
}
