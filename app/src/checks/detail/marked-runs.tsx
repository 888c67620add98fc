/**
 * The text alternative of the marks on a response-time chart: the failed and degraded runs it marks, each
 * linking to its result.
 */
import type { CheckResultResponse } from '../../api/schemas.js';
import { formatDateTime, formatMs } from '../../ui/format.js';
import { RunStatusBadge } from '../../ui/status.js';
import './tables.css';

/** Most runs the list shows; the chart marks them all. */
const MOST_LISTED = 50;

/**
 * The failed and degraded runs marked on the chart, newest first, under a disclosure that counts them.
 * @param runs the marked runs, newest first.
 * @param since when the runs read are only the newest of the window: the oldest one's start, epoch ms.
 * @param currentId the run of the page the chart is on (the result page), named so in the list.
 */
export function MarkedRuns({
  checkId,
  runs,
  since,
  currentId,
}: {
  checkId: string;
  runs: readonly CheckResultResponse[];
  since: number | null;
  currentId?: string;
}) {
  const failed = runs.filter((r) => r.status === 'FAILED').length;
  const summary = `Failed and degraded runs marked on the chart: ${failed} failed, ${runs.length - failed} degraded`;
  if (runs.length === 0) {
    return <p class="muted marked-runs-none">No failed or degraded run in this window.</p>;
  }
  const shown = runs.slice(0, MOST_LISTED);
  return (
    <details class="marked-runs">
      <summary>{summary}</summary>
      {since !== null ? <p class="muted">Of the newest runs only, since {formatDateTime(since)}.</p> : null}
      {runs.length > shown.length ? <p class="muted">The newest {MOST_LISTED} are listed.</p> : null}
      <div class="table-wrap">
        <table class="stack-on-phone">
          <caption class="visually-hidden">{summary}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              <th scope="col">Location</th>
              <th scope="col" class="num">
                Response time
              </th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.id}>
                <th scope="row">
                  <a href={`/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(r.id)}`}>
                    <time dateTime={r.startedAt}>{formatDateTime(r.startedAt)}</time>
                  </a>
                  {r.id === currentId ? <span class="muted"> (this run)</span> : null}
                </th>
                <td data-label="Status">
                  <RunStatusBadge status={r.status} />
                </td>
                <td data-label="Location">{r.runLocation}</td>
                <td data-label="Response time" class="num">
                  {formatMs(r.responseTime)}
                </td>
                <td data-label="Error" class="check-error-text">
                  {r.errorMessage ?? <span class="muted">—</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
