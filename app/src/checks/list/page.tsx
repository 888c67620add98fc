import { useLocation } from 'preact-iso';
import { ErrorNotice, Empty, Loading, PageHeader } from '../../ui/page.js';
import { useTitle } from '../../ui/hooks.js';
import { Can } from '../../ui/permissions.js';
import './list.css';
import { parseSort } from './sorting.js';
import { NewCheckMenu } from './controls.js';
import {
  type Filters,
  filtersOf,
  queryWith,
  useChecksData,
  useCounts,
  useFilterOptions,
  useRows,
  useVisible,
} from './rows.js';
import { NoChecksYet } from './empty.js';
import { ChecksFilters, StatusSummary } from './filters.js';
import { ChecksTable } from './table.js';

/**
 * The checks page (`/checks`): every check of the account in one table with its status, last result,
 * 24-hour availability and response-time sparkline, refreshed live (`GET /v1/check-statuses` every 10 s,
 * the checks every 60 s) without losing focus or scroll; filters and sort in the address, so a view is
 * shareable. Built for ten thousand checks: the table is drawn first from the first checks and their statuses
 * (two small requests), then from every check once the whole lists are in (read in the background, one request
 * per list, polled conditionally: a poll that changed nothing is a 304 and re-renders nothing, api/client.ts);
 * until then the page says the list is loading and what sort and filters cover. Filtering memoised, rows
 * memoised on what they show, only the rows in view drawn (table.tsx, useRowWindow), sparklines as plain SVG.
 */
export default function ChecksList() {
  useTitle('Checks');
  const { query, path, route } = useLocation();
  const filters = filtersOf(query);
  const data = useChecksData();
  const { checks, statuses, groups, shown, whole } = data;
  const rows = useRows(data);
  const counts = useCounts(rows);
  const options = useFilterOptions(rows, groups.data);
  const visible = useVisible(rows, filters);
  const sort = parseSort(filters.sort);

  // The table is drawn when the checks to show and their statuses are in (or the statuses failed) with the
  // groups: drawing the names first and the statuses after costs a second pass over the rows.
  const allIn = Boolean(shown.checks) && Boolean(groups.data || groups.error);
  const shownStatuses = shown.statuses;

  /** Replaces one filter in the address (no new history entry: the view is the same page). */
  const setFilter = (name: keyof Filters, value: string) => {
    const text = queryWith(filters, name, value);
    route(text ? `${path}?${text}` : path, true);
  };
  const hrefWith = (name: keyof Filters, value: string) => {
    const text = queryWith(filters, name, value);
    return text ? `/checks?${text}` : '/checks';
  };
  const now = shownStatuses ? Date.now() : 0;

  const error = checks.error ?? statuses.error;
  const header = (
    <PageHeader title="Checks">
      <Can permission="write">
        <NewCheckMenu />
      </Can>
    </PageHeader>
  );

  if (!shown.checks || !allIn) {
    return (
      <section class="checks-page">
        {header}
        {checks.error && !shown.checks ? (
          <ErrorNotice error={checks.error} title="The checks could not be loaded" />
        ) : (
          <Loading what="Loading checks" />
        )}
      </section>
    );
  }

  if (shown.checks.length === 0) {
    return (
      <section class="checks-page">
        {header}
        <NoChecksYet />
      </section>
    );
  }

  return (
    <section class="checks-page">
      {header}
      {error ? (
        <RefreshError
          error={error}
          statusesMissing={Boolean(statuses.error && !shown.statuses)}
          partial={!whole}
        />
      ) : null}
      <h2 class="visually-hidden">Summary</h2>
      {shownStatuses ? (
        <StatusSummary counts={counts} active={filters.status} hrefFor={(s) => hrefWith('status', s)} />
      ) : (
        <p class="checks-summary muted">No status to summarize.</p>
      )}

      <ChecksFilters
        filters={filters}
        options={options}
        setFilter={setFilter}
        onClear={() => route(path, true)}
      />

      <p class="checks-count" role="status">
        {whole ? (
          `${visible.length} of ${rows.length} checks`
        ) : (
          <>
            {visible.length} of the first {rows.length} checks.{' '}
            <span class="checks-loading">
              Loading every check: until then, the counts, sorting and filters cover these.
            </span>
          </>
        )}
      </p>

      {visible.length === 0 ? (
        <Empty>
          No check matches these filters. <a href="/checks">Show every check</a>.
        </Empty>
      ) : (
        <ChecksTable
          visible={visible}
          whole={whole}
          sort={sort}
          onSort={(v) => setFilter('sort', v)}
          statusKnown={Boolean(shownStatuses)}
          now={now}
        />
      )}
    </section>
  );
}

/**
 * A failed load once the table is drawn: the statuses never loaded, every check could not be loaded (only the
 * first are shown), or the latest refresh failed.
 */
function RefreshError({
  error,
  statusesMissing,
  partial,
}: {
  error: Error;
  statusesMissing: boolean;
  partial: boolean;
}) {
  return (
    <ErrorNotice
      error={error}
      title={
        statusesMissing
          ? 'The status of the checks could not be loaded'
          : partial
            ? 'Every check could not be loaded yet; the first checks are shown, and loading is tried again'
            : 'The latest refresh failed; the figures below may be stale'
      }
    />
  );
}
