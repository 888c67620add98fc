/**
 * A channel's notification log (docs/alerting.md): each notification's state and every delivery attempt.
 */
import { useState } from 'preact/hooks';
import { listNotifications } from '../../api/alerting.js';
import { listChecks } from '../../api/checks.js';
import { ScrollRegion } from '../../results/text.js';
import type { AlertNotification, NotificationAttempt } from '../../api/schemas.js';
import { Empty, ErrorNotice, Loading } from '../../ui/page.js';
import { formatDateTime, formatMs } from '../../ui/format.js';
import { useLoad } from '../../ui/hooks.js';
import { ALERT_TYPE_LABELS } from './describe.js';

/** Notifications per page of the log. */
const LOG_PAGE_SIZE = 20;

/** How often the notification log looks again (pending notifications move on), ms. */
const LOG_POLL_MS = 15_000;

/** A notification's state as a badge (text and glyph, the colour only repeats it). */
function StateBadge({ state }: { state: AlertNotification['state'] }) {
  const map = {
    DELIVERED: { cls: 'passing', glyph: '✓', label: 'Delivered' },
    PENDING: { cls: 'pending', glyph: '…', label: 'Pending' },
    SENDING: { cls: 'pending', glyph: '↻', label: 'Sending' },
    FAILED: { cls: 'failing', glyph: '✕', label: 'Failed' },
  } as const;
  const { cls, glyph, label } = map[state];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}

/** An attempt's outcome as a badge. */
function OutcomeBadge({ outcome }: { outcome: NotificationAttempt['outcome'] }) {
  const map = {
    DELIVERED: { cls: 'passing', glyph: '✓', label: 'Delivered' },
    RETRY: { cls: 'degraded', glyph: '↻', label: 'Will retry' },
    FAILED: { cls: 'failing', glyph: '✕', label: 'Failed' },
  } as const;
  const { cls, glyph, label } = map[outcome];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}

/**
 * The attempts of a notification, oldest first: time, outcome, status (the short status text, `HTTP 404 Not
 * Found`, or the code), latency and error. The body of a provider's answer is never kept, so none is shown.
 */
export function AttemptsTable({ attempts, caption }: { attempts: NotificationAttempt[]; caption: string }) {
  return (
    // Named and focusable while it scrolls sideways (a narrow screen): the keyboard can reach what it hides.
    <ScrollRegion label={caption}>
      <table class="misc-table ac-attempts">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Outcome</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Latency
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a, i) => (
            <tr key={i}>
              <th scope="row">
                <time dateTime={a.startedAt}>{formatDateTime(a.startedAt)}</time>
              </th>
              <td>
                <OutcomeBadge outcome={a.outcome} />
              </td>
              <td>{a.answer ?? a.statusCode ?? <span class="muted">no answer</span>}</td>
              <td class="num">{formatMs(a.latencyMs)}</td>
              <td>{a.error ? <p class="ac-excerpt ac-error">{a.error}</p> : <span class="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/**
 * The notification log of a channel, newest first, a page at a time, optionally of one state: each
 * notification's state, alert type, check and creation, and every attempt in a disclosure.
 */
export function NotificationLog({ channelId, version }: { channelId: number; version: number }) {
  const [page, setPage] = useState(1);
  const [state, setState] = useState('');
  const log = useLoad(
    (signal) =>
      listNotifications(
        { alertChannelId: channelId, limit: LOG_PAGE_SIZE, page, ...(state ? { state } : {}) },
        signal,
      ),
    [channelId, page, state, version],
    LOG_POLL_MS,
  );
  const checks = useLoad((signal) => listChecks(signal), []);
  const checkName = new Map((checks.data ?? []).map((c) => [c.id, c.name]));
  const list = log.data;
  const more = list !== undefined && list.length === LOG_PAGE_SIZE;
  return (
    <section aria-labelledby="ac-log">
      <div class="misc-section-head">
        <h2 id="ac-log">Notification log</h2>
        <StateFilter
          state={state}
          onState={(value) => {
            setState(value);
            setPage(1);
          }}
        />
      </div>
      {log.error ? <ErrorNotice error={log.error} /> : null}
      {!list && !log.error ? <Loading what="Loading notifications" /> : null}
      {list && list.length === 0 ? (
        <Empty>
          {page > 1
            ? 'No more notifications.'
            : state
              ? 'No notification in this state.'
              : 'Nothing was sent through this channel yet. Use Send test notification to try it.'}
        </Empty>
      ) : null}
      {list && list.length > 0 ? <NotificationsTable list={list} checkName={checkName} /> : null}
      {page > 1 || more ? (
        <nav class="misc-buttons ac-pages" aria-label="Notification log pages">
          <button
            type="button"
            class="button-secondary"
            disabled={page === 1}
            onClick={() => setPage((p) => Math.max(1, p - 1))}
          >
            Newer
          </button>
          <span>Page {page}</span>
          <button
            type="button"
            class="button-secondary"
            disabled={!more}
            onClick={() => setPage((p) => p + 1)}
          >
            Older
          </button>
        </nav>
      ) : null}
    </section>
  );
}

/** The select of the state the log shows. */
function StateFilter({ state, onState }: { state: string; onState: (state: string) => void }) {
  return (
    <div class="ac-filter">
      <label for="ac-state">State</label>
      <select id="ac-state" value={state} onChange={(e) => onState(e.currentTarget.value)}>
        <option value="">Every state</option>
        <option value="DELIVERED">Delivered</option>
        <option value="PENDING">Pending</option>
        <option value="SENDING">Sending</option>
        <option value="FAILED">Failed</option>
      </select>
    </div>
  );
}

/** One page of notifications as a table. */
function NotificationsTable({
  list,
  checkName,
}: {
  list: AlertNotification[];
  checkName: Map<string, string>;
}) {
  return (
    <div class="table-wrap ac-log-wrap">
      <table class="misc-table">
        <caption class="visually-hidden">Notifications sent through the channel, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Alert</th>
            <th scope="col">Check</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
          </tr>
        </thead>
        <tbody>
          {list.map((n) => (
            <tr key={n.id}>
              <th scope="row">
                <time dateTime={n.createdAt}>{formatDateTime(n.createdAt)}</time>
              </th>
              <td>
                {ALERT_TYPE_LABELS[n.alertType] ?? n.alertType}
                <br />
                <code class="muted ac-code">{n.alertType}</code>
              </td>
              <td>
                {n.checkId ? (
                  <a href={`/checks/${encodeURIComponent(n.checkId)}`}>
                    {checkName.get(n.checkId) ?? n.checkId}
                  </a>
                ) : (
                  <span class="muted">none (a test)</span>
                )}
              </td>
              <td>
                <StateBadge state={n.state} />
                {n.state === 'PENDING' && n.nextAttemptAt ? (
                  <div class="muted ac-small">next try {formatDateTime(n.nextAttemptAt)}</div>
                ) : null}
                {n.deliveredAt ? <div class="muted ac-small">at {formatDateTime(n.deliveredAt)}</div> : null}
              </td>
              <td>
                {n.attempts.length === 0 ? (
                  <span class="muted">none yet</span>
                ) : (
                  <details class="ac-details">
                    <summary>
                      {n.attempts.length} {n.attempts.length === 1 ? 'attempt' : 'attempts'}
                      <span class="visually-hidden"> of notification {n.id}</span>
                    </summary>
                    <AttemptsTable attempts={n.attempts} caption={`Attempts of notification ${n.id}`} />
                    <p class="muted ac-small">
                      Idempotency key <code>{n.idempotencyKey}</code>
                    </p>
                  </details>
                )}
                {n.lastError && n.state !== 'DELIVERED' ? (
                  <p class="ac-excerpt ac-error ac-small">{n.lastError}</p>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
