/**
 * The checks table: its columns, sortable headers and one memoised row per check; past WINDOW_FROM rows, only
 * the rows in view (and OVERSCAN_ROWS either side) are in the DOM (useRowWindow).
 */
import { Component } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
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
  whole = true,
  sort,
  onSort,
  statusKnown,
  now,
}: {
  visible: Row[];
  /** False while only the first checks are in: the table's size is unknown (aria-rowcount -1). */
  whole?: boolean;
  sort: Sort;
  onSort: (value: string) => void;
  statusKnown: boolean;
  now: number;
}) {
  const bodyRef = useRef<HTMLTableSectionElement>(null);
  const { start, end, rowPx } = useRowWindow(visible.length, bodyRef);
  const shown = start === 0 && end === visible.length ? visible : visible.slice(start, end);
  return (
    <div class="table-wrap">
      {/* aria-rowcount and aria-rowindex tell screen readers the whole table's size when only a window is drawn;
          -1 (unknown) while more checks are loading. */}
      <table class="checks-table" aria-rowcount={whole ? visible.length + 1 : -1}>
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
        <tbody ref={bodyRef}>
          {start > 0 ? <SpacerRow px={start * rowPx} /> : null}
          {shown.map((r, i) => (
            <CheckRow
              key={r.check.id}
              rowIndex={start + i + 2}
              check={r.check}
              status={r.status}
              display={r.display}
              statusKnown={statusKnown}
              groupName={r.groupName}
              lastRun={r.lastRunMs === null ? null : relativeTime(r.lastRunMs, now)}
            />
          ))}
          {end < visible.length ? <SpacerRow px={(visible.length - end) * rowPx} /> : null}
        </tbody>
      </table>
    </div>
  );
}

/** Tables of more rows than this draw only a window of them (useRowWindow); smaller ones draw every row. */
export const WINDOW_FROM = 150;

/** Rows drawn above and below the ones in view, so scrolling and tabbing find the next rows already there. */
export const OVERSCAN_ROWS = 15;

/** Height (px) a row is taken to have until rows drawn are measured (one line of a wide screen's table). */
const ESTIMATED_ROW_PX = 49;

/**
 * The rows of a table of `count` rows to draw: `start` (inclusive) to `end` (exclusive), and `rowPx`, the mean
 * height (px) of the rows drawn, which sizes the spacers standing for the rows left out. The window follows the
 * page's scroll (the table scrolls with the page, so the header, the filters and the browser's own scrolling
 * stay as they were) and the window's size: the rows whose place meets the viewport, OVERSCAN_ROWS either side.
 * With `count` up to WINDOW_FROM, every row. Keyboard focus moving to a row scrolls it into view, which moves
 * the window before the next key; the rows' places are exact on average only (rows wrap on narrow screens).
 */
export function useRowWindow(
  count: number,
  bodyRef: { current: HTMLTableSectionElement | null },
): { start: number; end: number; rowPx: number } {
  const windowed = count > WINDOW_FROM;
  const [range, setRange] = useState({
    start: 0,
    end: windowed ? 2 * OVERSCAN_ROWS : count,
    rowPx: ESTIMATED_ROW_PX,
  });
  const rangeRef = useRef(range);
  rangeRef.current = range;

  const place = useCallback(() => {
    const body = bodyRef.current;
    if (!body || !windowed) return;
    // The mean height of the check rows drawn (spacers aside); jsdom, which lays nothing out, keeps the estimate.
    const { start, end } = rangeRef.current;
    let rowPx = rangeRef.current.rowPx;
    const drawn = end - start;
    if (drawn > 0) {
      let height = 0;
      for (const row of body.rows)
        if (!row.classList.contains('checks-spacer')) height += row.getBoundingClientRect().height;
      // Taken only when it differs by a tenth: windows of rows of other heights would otherwise move it back
      // and forth.
      const measured = height / drawn;
      if (height > 0 && Math.abs(measured - rowPx) > rowPx / 10) rowPx = measured;
    }
    // The body's top (viewport px) stands `start` rows of `rowPx` above the first row drawn, whatever is drawn.
    const top = body.getBoundingClientRect().top;
    const first = Math.max(0, Math.min(count, Math.floor(-top / rowPx)) - OVERSCAN_ROWS);
    const last = Math.min(count, Math.max(0, Math.ceil((window.innerHeight - top) / rowPx)) + OVERSCAN_ROWS);
    const current = rangeRef.current;
    if (current.start !== first || current.end !== last || current.rowPx !== rowPx) {
      setRange({ start: first, end: Math.max(last, first), rowPx });
    }
  }, [count, windowed, bodyRef]);

  // After each drawing (a new window, new rows, a new sort or filter): measure and place again. It settles once
  // the rows drawn are those the place asks for.
  useLayoutEffect(() => {
    place();
  });

  useEffect(() => {
    if (!windowed) return;
    let frame = 0;
    const onMove = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        place();
      });
    };
    window.addEventListener('scroll', onMove, { passive: true });
    window.addEventListener('resize', onMove);
    return () => {
      window.removeEventListener('scroll', onMove);
      window.removeEventListener('resize', onMove);
      if (frame) cancelAnimationFrame(frame);
    };
  }, [windowed, place]);

  // A short table draws every row at once, also on the drawing where it became short.
  return windowed ? range : { start: 0, end: count, rowPx: range.rowPx };
}

/** Stands for `px` of rows left out of the window; hidden from screen readers (aria-rowcount counts them). */
function SpacerRow({ px }: { px: number }) {
  return (
    // biome-ignore lint/a11y/noAriaHiddenOnFocusable: the row holds nothing focusable (one empty cell); biome takes a row for a widget.
    <tr class="checks-spacer" aria-hidden="true">
      <td colSpan={9} style={{ height: `${px}px` }} />
    </tr>
  );
}

function ChecksTableHead({ sort, onSort }: { sort: Sort; onSort: (value: string) => void }) {
  return (
    <thead>
      <tr aria-rowindex={1}>
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
  /** The row's place in the whole table (aria-rowindex: the header row is 1). */
  rowIndex: number;
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
      a.rowIndex === next.rowIndex &&
      a.display === next.display &&
      a.statusKnown === next.statusKnown &&
      a.groupName === next.groupName &&
      a.lastRun === next.lastRun &&
      statusKey(a.status) === statusKey(next.status)
    );
  }

  override render() {
    const { rowIndex, check, status, display, groupName, lastRun, statusKnown } = this.props;
    // The statuses could not be loaded: say so rather than show a check as never run.
    const pending = !statusKnown && <span class="muted">unknown</span>;
    const href = `/checks/${encodeURIComponent(check.id)}`;
    return (
      <tr aria-rowindex={rowIndex}>
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
