import { Component } from 'preact';
import { useMemo } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { listCheckGroups } from '../../api/check-groups.js';
import { listCheckStatuses, listChecks } from '../../api/checks.js';
import {
  CHECK_TYPE_LABELS,
  frequencyText,
  NEW_CHECK_CHOICES,
  relativeTime,
  STATUS_ORDER,
  STATUS_WORDS,
} from '../labels.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../../ui/page.js';
import { Sparkline } from '../../ui/sparkline.js';
import { displayStatusOf, StatusBadge } from '../../ui/status.js';
import { formatMs, formatPercent } from '../../ui/format.js';
import { useLoad, useTitle } from '../../ui/hooks.js';
import type { Check, CheckStatus, CheckType } from '../../api/schemas.js';
import type { CheckDisplayStatus } from '../../ui/status.js';
import './list.css';
import { NO_GROUP, type Row, collator, comparator, parseSort, statusKey } from './sorting.js';
import { FilterSelect, NewCheckMenu, SORT_LABELS, SortHeader } from './controls.js';

/** The filters of the page, all kept in the address (`?q=&type=&status=&tag=&group=&sort=`). */
type Filters = { q: string; type: string; status: string; tag: string; group: string; sort: string };

/**
 * The checks page (`/checks`): every check of the account in one table with its status, last result,
 * 24-hour availability and response-time sparkline, refreshed live (`GET /v1/check-statuses` every 10 s,
 * the checks every 60 s) without losing focus or scroll; filters and sort in the address, so a view is
 * shareable. Built for a thousand checks: one request per list, filtering memoised, rows memoised on
 * what they show, sparklines as plain SVG.
 */
export default function ChecksList() {
  useTitle('Checks');
  const { query, path, route } = useLocation();
  const filters: Filters = {
    q: query.q ?? '',
    type: query.type ?? '',
    status: query.status ?? '',
    tag: query.tag ?? '',
    group: query.group ?? '',
    sort: query.sort ?? '',
  };

  const checks = useLoad((signal) => listChecks(signal), [], 60_000);
  const statuses = useLoad((signal) => listCheckStatuses(signal), [], 10_000);
  const groups = useLoad((signal) => listCheckGroups(signal), [], 60_000);

  const groupNames = useMemo(
    () => (groups.data ? new Map(groups.data.map((g) => [g.id, g.name])) : null),
    [groups.data],
  );

  // The table is drawn once, when the three lists (loaded at once) are in or failed: drawing the names first
  // and the statuses after costs a second pass over a thousand rows, which ends later than one pass does.
  const allIn = Boolean(statuses.data || statuses.error) && Boolean(groups.data || groups.error);
  const shownStatuses = statuses.data;
  const rows = useMemo<Row[]>(() => {
    const byCheck = shownStatuses ? new Map(shownStatuses.map((s) => [s.checkId, s])) : null;
    return (checks.data ?? []).map((check) => {
      const status = byCheck?.get(check.id);
      const lastRunMs = status?.lastRunAt ? Date.parse(status.lastRunAt) : null;
      return {
        check,
        status,
        display: byCheck || !check.activated ? displayStatusOf(check, status) : null,
        groupName:
          check.groupId === null ? null : (groupNames?.get(check.groupId) ?? `Group ${check.groupId}`),
        search: check.name.toLowerCase(),
        lastRunMs: lastRunMs === null || Number.isNaN(lastRunMs) ? null : lastRunMs,
      };
    });
  }, [checks.data, shownStatuses, groupNames]);

  const counts = useMemo(() => {
    const c = new Map<CheckDisplayStatus, number>();
    for (const r of rows) if (r.display) c.set(r.display, (c.get(r.display) ?? 0) + 1);
    return c;
  }, [rows]);

  const options = useMemo(() => {
    const types = new Set<CheckType>();
    const tags = new Set<string>();
    for (const r of rows) {
      types.add(r.check.checkType);
      for (const t of r.check.tags) tags.add(t);
    }
    const sortText = collator.compare;
    return {
      types: [...types].sort(sortText),
      tags: [...tags].sort(sortText),
      groups: [...(groups.data ?? [])].sort((a, b) => sortText(a.name, b.name)),
    };
  }, [rows, groups.data]);

  const sort = parseSort(filters.sort);
  const visible = useMemo(() => {
    const q = filters.q.trim().toLowerCase();
    const groupId = filters.group && filters.group !== NO_GROUP ? Number(filters.group) : null;
    const out = rows.filter(
      (r) =>
        (!q || r.search.includes(q)) &&
        (!filters.type || r.check.checkType === filters.type) &&
        (!filters.status || r.display === filters.status) &&
        (!filters.tag || r.check.tags.includes(filters.tag)) &&
        (!filters.group ||
          (filters.group === NO_GROUP ? r.check.groupId === null : r.check.groupId === groupId)),
    );
    return out.sort(comparator(sort.key, sort.desc));
  }, [rows, filters.q, filters.type, filters.status, filters.tag, filters.group, sort.key, sort.desc]);

  /** Replaces one filter in the address (no new history entry: the view is the same page). */
  const setFilter = (name: keyof Filters, value: string) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...filters, [name]: value })) if (v) params.set(k, v);
    const text = params.toString();
    route(text ? `${path}?${text}` : path, true);
  };
  const hrefWith = (name: keyof Filters, value: string) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...filters, [name]: value })) if (v) params.set(k, v);
    const text = params.toString();
    return text ? `/checks?${text}` : '/checks';
  };
  const filtered = Boolean(filters.q || filters.type || filters.status || filters.tag || filters.group);
  const now = shownStatuses ? Date.now() : 0;

  const error = checks.error ?? statuses.error;
  const header = (
    <PageHeader title="Checks">
      <NewCheckMenu />
    </PageHeader>
  );

  if (!checks.data || !allIn) {
    return (
      <section class="checks-page">
        {header}
        {checks.error ? (
          <ErrorNotice error={checks.error} title="The checks could not be loaded" />
        ) : (
          <Loading what="Loading checks" />
        )}
      </section>
    );
  }

  if (checks.data.length === 0) {
    return (
      <section class="checks-page">
        {header}
        <Empty>
          <h2>No checks yet</h2>
          <p>
            A check watches one thing (an API, a site, a port, a DNS record, a host, a scheduled job) from
            your run locations, on a schedule, and alerts your alert channels when it fails. Create the first
            one:
          </p>
          <ul class="checks-empty-choices">
            {NEW_CHECK_CHOICES.map((c) => (
              <li key={c.type}>
                <a href={`/checks/new?type=${c.type}`}>{c.label}</a> <span class="muted">— {c.hint}</span>
              </li>
            ))}
          </ul>
          <p>
            Checks run on an agent: the service runs one itself, and you can add your own on your network from{' '}
            <a href="/private-locations">Private locations</a>.
          </p>
        </Empty>
      </section>
    );
  }

  return (
    <section class="checks-page">
      {header}
      {error ? (
        <ErrorNotice
          error={error}
          title={
            statuses.error && !statuses.data
              ? 'The status of the checks could not be loaded'
              : 'The latest refresh failed; the figures below may be stale'
          }
        />
      ) : null}
      <h2 class="visually-hidden">Summary</h2>
      {shownStatuses ? (
        <ul class="checks-summary">
          {STATUS_ORDER.filter((s) => counts.get(s)).map((s) => (
            <li key={s}>
              <a
                href={hrefWith('status', filters.status === s ? '' : s)}
                class={`checks-summary-item checks-summary-${s}`}
                aria-current={filters.status === s ? 'true' : undefined}
              >
                <span class="checks-summary-count">
                  {counts.get(s)} {STATUS_WORDS[s]}
                </span>
              </a>
            </li>
          ))}
        </ul>
      ) : (
        <p class="checks-summary muted">No status to summarize.</p>
      )}

      <fieldset class="checks-filters">
        <legend class="visually-hidden">Filter checks</legend>
        <div class="field">
          <label for="checks-q">Search by name</label>
          <input
            id="checks-q"
            type="search"
            value={filters.q}
            autocomplete="off"
            onInput={(e) => setFilter('q', e.currentTarget.value)}
          />
        </div>
        <FilterSelect
          id="checks-type"
          label="Type"
          value={filters.type}
          onChange={(v) => setFilter('type', v)}
          options={options.types.map((t) => [t, CHECK_TYPE_LABELS[t] ?? t])}
        />
        <FilterSelect
          id="checks-status"
          label="Status"
          value={filters.status}
          onChange={(v) => setFilter('status', v)}
          options={STATUS_ORDER.map((s) => [s, STATUS_WORDS[s].replace(/^./, (c) => c.toUpperCase())])}
        />
        <FilterSelect
          id="checks-tag"
          label="Tag"
          value={filters.tag}
          onChange={(v) => setFilter('tag', v)}
          options={options.tags.map((t) => [t, t])}
        />
        <FilterSelect
          id="checks-group"
          label="Group"
          value={filters.group}
          onChange={(v) => setFilter('group', v)}
          options={[
            [NO_GROUP, 'No group'],
            ...options.groups.map((g): [string, string] => [String(g.id), g.name]),
          ]}
        />
        {filtered ? (
          <button type="button" class="button-secondary checks-clear" onClick={() => route(path, true)}>
            Clear filters
          </button>
        ) : null}
      </fieldset>

      <p class="checks-count" role="status">
        {visible.length} of {rows.length} checks
      </p>

      {visible.length === 0 ? (
        <Empty>
          No check matches these filters. <a href="/checks">Show every check</a>.
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="checks-table">
            <colgroup>
              <col class="checks-col-name" />
              <col class="checks-col-type" />
              <col class="checks-col-status" />
              <col class="checks-col-last" />
              <col class="checks-col-availability" />
              <col class="checks-col-sparkline" />
              <col class="checks-col-tags" />
              <col class="checks-col-group" />
              <col class="checks-col-frequency" />
            </colgroup>
            <caption class="visually-hidden">
              Checks, sorted by {SORT_LABELS[sort.key]} {sort.desc ? 'descending' : 'ascending'}
            </caption>
            <thead>
              <tr>
                <SortHeader label="Name" column="name" sort={sort} onSort={(v) => setFilter('sort', v)} />
                <th scope="col">Type</th>
                <SortHeader label="Status" column="status" sort={sort} onSort={(v) => setFilter('sort', v)} />
                <SortHeader
                  label="Last result"
                  column="lastRun"
                  sort={sort}
                  onSort={(v) => setFilter('sort', v)}
                />
                <SortHeader
                  label="Availability (24 h)"
                  column="availability"
                  sort={sort}
                  onSort={(v) => setFilter('sort', v)}
                  numeric
                />
                <th scope="col">Response time (24 h)</th>
                <th scope="col">Tags</th>
                <th scope="col">Group</th>
                <th scope="col">Frequency</th>
              </tr>
            </thead>
            <tbody>
              {visible.map((r) => (
                <CheckRow
                  key={r.check.id}
                  check={r.check}
                  status={r.status}
                  display={r.display}
                  statusKnown={Boolean(shownStatuses)}
                  groupName={r.groupName}
                  lastRun={r.lastRunMs === null ? null : relativeTime(r.lastRunMs, now)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

type RowProps = {
  check: Check;
  status: CheckStatus | undefined;
  display: CheckDisplayStatus | null;
  groupName: string | null;
  lastRun: string | null;
  /** False when the statuses could not be loaded. */
  statusKnown: boolean;
};

/**
 * One check. Re-renders only when what it shows changed (a refresh brings new objects for every check:
 * comparing them by identity would re-render all thousand rows every 10 s).
 */
class CheckRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const a = this.props;
    // A check is the same when its `updated_at` is: every change of a check moves it, and the list is read
    // again every minute into new objects.
    const sameCheck =
      a.check === next.check ||
      (a.check.id === next.check.id && a.check.updated_at === next.check.updated_at);
    return !(
      sameCheck &&
      a.display === next.display &&
      a.statusKnown === next.statusKnown &&
      a.groupName === next.groupName &&
      a.lastRun === next.lastRun &&
      statusKey(a.status) === statusKey(next.status)
    );
  }

  override render() {
    const { check, status, display, groupName, lastRun, statusKnown } = this.props;
    // The statuses could not be loaded: say so rather than show a check as never run.
    const pending = !statusKnown && <span class="muted">unknown</span>;
    const href = `/checks/${encodeURIComponent(check.id)}`;
    return (
      <tr>
        <th scope="row" class="checks-name">
          <a href={href}>{check.name}</a>
        </th>
        <td>{CHECK_TYPE_LABELS[check.checkType] ?? check.checkType}</td>
        <td>{display ? <StatusBadge status={display} /> : pending}</td>
        <td class="checks-last">
          {pending ||
            (status?.lastResultId && status.lastRunAt ? (
              <>
                <a href={`${href}/results/${encodeURIComponent(status.lastResultId)}`}>
                  <time dateTime={status.lastRunAt}>{lastRun}</time>
                </a>
                <span class="muted">{` · ${formatMs(status.longestRun)}`}</span>
              </>
            ) : (
              <span class="muted">never</span>
            ))}
        </td>
        <td class="num">{pending || formatPercent(status?.availability24h)}</td>
        <td>{pending || <Sparkline values={status?.responseTimes24h ?? []} />}</td>
        <td>
          {check.tags.length ? (
            <ul class="checks-tags">
              {check.tags.map((t) => (
                <li key={t} class="tag">
                  {t}
                </li>
              ))}
            </ul>
          ) : null}
        </td>
        <td>{groupName ?? <span class="muted">—</span>}</td>
        <td class="checks-frequency">{frequencyText(check)}</td>
      </tr>
    );
  }
}
