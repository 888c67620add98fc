/**
 * The check page of a heartbeat monitor: its ping URL with a copy button and `curl` lines to paste into the
 * job, its state, and the pings received (`GET /v1/checks/{id}/heartbeat-pings`), each said on time or late.
 */
import { type HeartbeatPing, listHeartbeatPings } from '../../api/checks.js';
import type { Check } from '../../api/schemas.js';
import { formatBytes, formatDateTime } from '../../ui/format.js';
import { type Loaded, useLoad } from '../../ui/hooks.js';
import { Empty, ErrorNotice, Loading } from '../../ui/page.js';
import { PingUrl } from '../form/sections/heartbeat.js';
import { relativeTime } from '../labels.js';
import { type Punctuality, periodAndGraceMs, pingKindText, punctualityOf } from './pings.js';
import './tables.css';

/** How often the pings are read again while the page is open, ms. */
const PINGS_REFRESH_MS = 10_000;

/** A heartbeat's live state as the check's answer carries it (docs/heartbeats.md, "States"). */
type HeartbeatState = {
  status?: string;
  lastPingAt?: string | null;
  dueAt?: string | null;
};

/** The state of a heartbeat in words. */
const STATE_TEXT: Record<string, string> = {
  NEW: 'waiting for its first ping',
  UP: 'up: the last ping was a success',
  STARTED: 'started: a run began and has not reported yet',
  LATE: 'late: no ping came in time',
  FAILING: 'failing: the last ping reported a failure',
  PAUSED: 'paused: pings are kept, it is never late',
};

/** The ping URL, `curl` lines to use it, and the monitor's state. */
export function HeartbeatPingPanel({ check }: { check: Check }) {
  const url = typeof check.pingUrl === 'string' ? check.pingUrl : '';
  const state = (check.heartbeatState ?? {}) as HeartbeatState;
  return (
    <section aria-labelledby="heartbeat-ping-heading" class="heartbeat-panel card">
      <h2 id="heartbeat-ping-heading">How the job pings this monitor</h2>
      <PingUrl url={url} />
      <figure class="heartbeat-example-figure">
        <figcaption class="heartbeat-example-label">For example, at the end of the job:</figcaption>
        <pre class="heartbeat-example">
          <code>{`curl -fsS --retry 3 "${url}"\n# or report the job's exit code:\n./job.sh; curl -fsS --retry 3 "${url}/$?"`}</code>
        </pre>
      </figure>
      <dl class="heartbeat-state">
        <div>
          <dt>State</dt>
          <dd>{state.status ? (STATE_TEXT[state.status] ?? state.status) : 'unknown'}</dd>
        </div>
        <div>
          <dt>Last ping</dt>
          <dd>
            {state.lastPingAt ? (
              <time dateTime={state.lastPingAt}>{formatDateTime(state.lastPingAt)}</time>
            ) : (
              <span class="muted">none yet</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Late unless pinged by</dt>
          <dd>
            {state.dueAt ? (
              <time dateTime={state.dueAt}>{formatDateTime(state.dueAt)}</time>
            ) : (
              <span class="muted">no deadline now</span>
            )}
          </dd>
        </div>
      </dl>
    </section>
  );
}

/** Reads the pings of a heartbeat monitor, again every 10 s and when `reloadKey` changes. */
export function useHeartbeatPings(checkId: string, enabled: boolean, reloadKey: number) {
  return useLoad(
    (signal) => (enabled ? listHeartbeatPings(checkId, signal) : Promise.resolve([] as HeartbeatPing[])),
    [checkId, enabled, reloadKey],
    enabled ? PINGS_REFRESH_MS : undefined,
  );
}

/** On time or late as a word and a glyph, never colour alone. */
function PunctualityText({ value }: { value: Punctuality | undefined }) {
  if (value === 'late')
    return (
      <span class="ping-late">
        <span aria-hidden="true">✕ </span>Late
      </span>
    );
  if (value === 'on-time')
    return (
      <span class="ping-on-time">
        <span aria-hidden="true">✓ </span>On time
      </span>
    );
  return <span class="muted">—</span>;
}

/** The pings received, newest first: when, what, on time or late, from where and how. */
export function HeartbeatPings({ check, loaded }: { check: Check; loaded: Loaded<HeartbeatPing[]> }) {
  if (loaded.error && !loaded.data)
    return <ErrorNotice error={loaded.error} title="The pings could not be loaded" />;
  if (!loaded.data) return <Loading what="Loading pings" />;
  if (loaded.data.length === 0)
    return <Empty>No ping yet: the monitor waits for the job to call its ping URL.</Empty>;
  const punctuality = punctualityOf(loaded.data, check.heartbeat, check.created_at);
  const cron = periodAndGraceMs(check.heartbeat) === null;
  const now = Date.now();
  return (
    <>
      <div class="table-wrap">
        <table class="heartbeat-pings stack-on-phone">
          <caption class="visually-hidden">The last {loaded.data.length} pings, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Received at</th>
              <th scope="col">Ping</th>
              <th scope="col">On time</th>
              <th scope="col">Source address</th>
              <th scope="col">Method</th>
              <th scope="col" class="secondary-column">
                User agent
              </th>
            </tr>
          </thead>
          <tbody>
            {loaded.data.map((p) => (
              <tr key={p.id}>
                <th scope="row">
                  <time dateTime={p.receivedAt}>{formatDateTime(p.receivedAt)}</time>{' '}
                  <span class="muted">({relativeTime(Date.parse(p.receivedAt), now)})</span>
                </th>
                <td data-label="Ping">
                  {pingKindText(p)}
                  {p.bodySizeBytes > 0 ? (
                    <span class="muted"> · body {formatBytes(p.bodySizeBytes)}</span>
                  ) : null}
                </td>
                <td data-label="On time">
                  <PunctualityText value={punctuality.get(p.id)} />
                </td>
                <td data-label="Source address" class="mono">
                  {p.remoteAddress ?? <span class="muted">unknown</span>}
                </td>
                <td data-label="Method">{p.method}</td>
                <td data-label="User agent" class="secondary-column ping-user-agent">
                  {p.userAgent ?? <span class="muted">none</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="field-hint">
        {cron
          ? 'On time is not worked out for a cron schedule here: the results above say when a ping was missed.'
          : 'On time: received before the deadline the previous ping set (period + grace; after a start, the grace).'}
      </p>
    </>
  );
}
