/**
 * The checks table: its columns, sortable headers and one memoised row per check.
 */
import { Component } from 'preact';
import { CHECK_TYPE_LABELS, frequencyText, relativeTime } from '../labels.js';
import { Sparkline } from '../../ui/sparkline.js';
import { StatusBadge } from '../../ui/status.js';
import { formatMs, formatPercent } from '../../ui/format.js';
import type { Check, CheckStatus } from '../../api/schemas.js';
import type { CheckDisplayStatus } from '../../ui/status.js';
import { type Row, type SortKey, statusKey } from './sorting.js';
import { SORT_LABELS, SortHeader } from './controls.js';

type Sort = { key: SortKey; desc: boolean };

/** The table of the rows the filters keep. */
export function ChecksTable({
  visible,
  sort,
  onSort,
  statusKnown,
  now,
}: {
  visible: Row[];
  sort: Sort;
  onSort: (value: string) => void;
  statusKnown: boolean;
  now: number;
}) {
  return (
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
          <col class="checks-col-frequency checks-secondary" />
        </colgroup>
        <caption class="visually-hidden">
          Checks, sorted by {SORT_LABELS[sort.key]} {sort.desc ? 'descending' : 'ascending'}
        </caption>
        <ChecksTableHead sort={sort} onSort={onSort} />
        <tbody>
          {visible.map((r) => (
            <CheckRow
              key={r.check.id}
              check={r.check}
              status={r.status}
              display={r.display}
              statusKnown={statusKnown}
              groupName={r.groupName}
              lastRun={r.lastRunMs === null ? null : relativeTime(r.lastRunMs, now)}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ChecksTableHead({ sort, onSort }: { sort: Sort; onSort: (value: string) => void }) {
  return (
    <thead>
      <tr>
        <SortHeader label="Name" column="name" sort={sort} onSort={onSort} />
        <th scope="col">Type</th>
        <SortHeader label="Status" column="status" sort={sort} onSort={onSort} />
        <SortHeader label="Last result" column="lastRun" sort={sort} onSort={onSort} />
        <SortHeader label="Availability (24 h)" column="availability" sort={sort} onSort={onSort} numeric />
        <th scope="col">Response time (24 h)</th>
        <th scope="col">Tags</th>
        <th scope="col">Group</th>
        <th scope="col" class="checks-secondary">
          Frequency
        </th>
      </tr>
    </thead>
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
          {check.unservedLocations && check.unservedLocations.length > 0 ? (
            <span class="checks-unserved">no agent serves {check.unservedLocations.join(', ')}</span>
          ) : null}
        </th>
        <td data-label="Type">{CHECK_TYPE_LABELS[check.checkType] ?? check.checkType}</td>
        <td data-label="Status">{display ? <StatusBadge status={display} /> : pending}</td>
        <td data-label="Last result" class="checks-last">
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
        <td data-label="Availability (24 h)" class="num">
          {pending || formatPercent(status?.availability24h)}
        </td>
        <td data-label="Response time (24 h)" class="checks-sparkline-cell">
          {pending || <Sparkline values={status?.responseTimes24h ?? []} />}
        </td>
        <td data-label="Tags" class={check.tags.length ? undefined : 'checks-empty-cell'}>
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
        <td data-label="Group">{groupName ?? <span class="muted">—</span>}</td>
        <td data-label="Frequency" class="checks-frequency checks-secondary">
          {frequencyText(check)}
        </td>
      </tr>
    );
  }
}
