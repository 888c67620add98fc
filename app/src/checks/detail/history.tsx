/**
 * The check page's history sections: recent results, error groups and alert history.
 */
import type { ResultItem } from './performance.js';
import { relativeTime } from '../labels.js';
import { Empty, ErrorNotice, Loading } from '../../ui/page.js';
import { RunStatusBadge } from '../../ui/status.js';
import { formatDateTime, formatMs } from '../../ui/format.js';
import type { Loaded } from '../../ui/hooks.js';
import type { CheckAlert, ErrorGroup } from '../../api/schemas.js';
import './tables.css';
import { useCan } from '../../ui/permissions.js';

/** How many recent results, error groups and alerts the page lists. */
export const RECENT = 20;

/** Alert types in words (docs/alerting.md: the change of state each one tells). */
const ALERT_TYPE_TEXT: Record<string, string> = {
  ALERT_FAILURE: 'Failing',
  ALERT_FAILURE_REMAIN: 'Still failing (reminder)',
  ALERT_FAILURE_DEGRADED: 'Failing → degraded',
  ALERT_DEGRADED: 'Degraded',
  ALERT_DEGRADED_REMAIN: 'Still degraded (reminder)',
  ALERT_DEGRADED_FAILURE: 'Degraded → failing',
  ALERT_RECOVERY: 'Recovered',
  ALERT_DEGRADED_RECOVERY: 'Recovered from degraded',
  ALERT_SSL: 'SSL certificate expiring',
};

/** The last results, newest first, each linking to its page. */
export function RecentResults({
  checkId,
  loaded,
  heartbeat,
}: {
  checkId: string;
  loaded: Loaded<ResultItem[]>;
  heartbeat: boolean;
}) {
  const canWrite = useCan('write');
  if (loaded.error && !loaded.data)
    return <ErrorNotice error={loaded.error} title="The results could not be loaded" />;
  if (!loaded.data) return <Loading what="Loading results" />;
  if (loaded.data.length === 0) {
    return (
      <Empty>
        {heartbeat
          ? 'No results yet: one is recorded when a ping comes in, or when one is late.'
          : `No results yet: the check has not run.${canWrite ? ' Press Run now to run it.' : ''}`}
      </Empty>
    );
  }
  const now = Date.now();
  return (
    <div class="table-wrap">
      <table class="check-results stack-on-phone">
        <caption class="visually-hidden">The last {RECENT} results, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Location</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Response time
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {loaded.data.map((r) => (
            <tr key={r.id}>
              <th scope="row">
                <a href={`/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(r.id)}`}>
                  <time dateTime={r.startedAt}>{formatDateTime(r.startedAt)}</time>
                </a>{' '}
                <span class="muted">({relativeTime(Date.parse(r.startedAt), now)})</span>
              </th>
              <td data-label="Location">{r.runLocation}</td>
              <td data-label="Status">
                <RunStatusBadge status={r.status} />
                {r.attempts > 1 ? <span class="muted"> after {r.attempts} attempts</span> : null}
              </td>
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
  );
}

/** The check's error groups: failed runs grouped by their message. */
export function ErrorGroups({ loaded }: { loaded: Loaded<ErrorGroup[]> }) {
  if (loaded.error && !loaded.data)
    return <ErrorNotice error={loaded.error} title="The error groups could not be loaded" />;
  if (!loaded.data) return <Loading what="Loading error groups" />;
  if (loaded.data.length === 0) return <Empty>No errors: no run of this check has failed.</Empty>;
  return (
    <div class="table-wrap">
      <table class="stack-on-phone">
        <caption class="visually-hidden">Error groups, most recently seen first</caption>
        <thead>
          <tr>
            <th scope="col">Error</th>
            <th scope="col">First seen</th>
            <th scope="col">Last seen</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {loaded.data.map((g) => (
            <tr key={g.id}>
              <th scope="row" class="check-error-text">
                {g.cleanedErrorMessage}
                {g.rawErrorMessage && g.rawErrorMessage !== g.cleanedErrorMessage ? (
                  <span class="check-error-raw muted">Latest: {g.rawErrorMessage}</span>
                ) : null}
              </th>
              <td data-label="First seen">
                <time dateTime={g.firstSeen}>{formatDateTime(g.firstSeen)}</time>
              </td>
              <td data-label="Last seen">
                <time dateTime={g.lastSeen}>{formatDateTime(g.lastSeen)}</time>
              </td>
              <td data-label="State">
                {g.archivedForEver
                  ? 'Archived for good'
                  : g.archivedUntilNextEvent
                    ? 'Archived until it happens again'
                    : 'Active'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The check's alerts, newest first: what changed, when, and whether anybody was notified ("Yes" only when a
 * notification went to at least one alert channel: not while muted, nor when no subscribed channel takes it).
 */
export function AlertHistory({ checkId, loaded }: { checkId: string; loaded: Loaded<CheckAlert[]> }) {
  if (loaded.error && !loaded.data)
    return <ErrorNotice error={loaded.error} title="The alerts could not be loaded" />;
  if (!loaded.data) return <Loading what="Loading alerts" />;
  if (loaded.data.length === 0)
    return <Empty>No alerts: this check has not changed state since it was created.</Empty>;
  return (
    <>
      <p class="muted">
        Notified: Yes when the alert went to at least one alert channel; No when the check was muted or no
        subscribed channel takes that alert.
      </p>
      <div class="table-wrap">
        <table class="stack-on-phone">
          <caption class="visually-hidden">The last {RECENT} alerts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Alert</th>
              <th scope="col">Notified</th>
              <th scope="col">Location</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {loaded.data.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <time dateTime={a.created_at}>{formatDateTime(a.created_at)}</time>
                </th>
                <td data-label="Alert">{ALERT_TYPE_TEXT[a.alertType] ?? a.alertType}</td>
                <td data-label="Notified">{a.notified ? 'Yes' : 'No'}</td>
                <td data-label="Location">{a.runLocation ?? <span class="muted">—</span>}</td>
                <td data-label="Detail" class="check-error-text">
                  {a.alertType === 'ALERT_SSL' && a.sslDaysRemaining !== null
                    ? `${a.sslDaysRemaining} days left`
                    : (a.error ?? a.title)}
                  {a.checkResultId ? (
                    <>
                      {' '}
                      <a
                        href={`/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(a.checkResultId)}`}
                        aria-label={`View result of the alert at ${formatDateTime(a.created_at)}`}
                      >
                        View result
                      </a>
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
